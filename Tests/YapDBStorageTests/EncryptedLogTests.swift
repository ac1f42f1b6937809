#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
import YapDBCrypto
import YapDBStorage
import YapDBSimulatedDisk

/// The log of an encrypted database (docs/format.md §12): the writer seals every record (after
/// LZ4), the scanner, the segment readers and recovery open them; a torn or damaged sealed
/// record is a torn tail or damage exactly as a plain one is; and no rewrite of an offset ever
/// reuses a nonce.
@Suite struct EncryptedLogTests {
    static let key = CipherKeyOptions(key: .raw(Array(repeating: 0x5A, count: 32)))
    static let marker = "MARKER-KEY-7f3e"
    static let valueMarker = Array("MARKER-VALUE-91c2".utf8)

    static func harness(_ disk: SimulatedDisk, segmentLimit: Int = Format.defaultSegmentSize) throws -> LogHarness {
        try? disk.mkdir("/db")
        var harness = LogHarness(path: "/db/main", fs: disk)
        harness.cipherKey = key
        harness.segmentLimit = segmentLimit
        return harness
    }

    static func close(_ opened: LogStore.Opened) {
        opened.writer.file.close()
        opened.lock?.unlock()
    }

    static func value(_ n: Int) -> [UInt8] { valueMarker + Array(repeating: UInt8(n % 251), count: 300) + valueMarker }

    /// Every byte of every file of the database.
    static func allBytes(_ disk: SimulatedDisk) throws -> [[UInt8]] {
        try disk.listDirectory("/db").compactMap { disk.currentBytes(of: "/db/" + $0) }
    }

    @Test func sealedCommitsReadBackAcrossSegmentsAndNothingIsInTheClear() throws {
        let disk = SimulatedDisk(seed: 11)
        let harness = try Self.harness(disk, segmentLimit: 4096)
        let (opened, _) = try harness.open()
        var expected: [String: [UInt8]] = [:]
        for n in 0..<40 {
            let key = "\(Self.marker)-\(n)"
            try LogHarness.commit(opened.writer, [(key, Self.value(n))], compress: n % 2 == 0)
            expected[key] = Self.value(n)
        }
        #expect(opened.writer.segmentNumber > 2)
        Self.close(opened)
        let (reopened, state) = try harness.open()
        #expect(state == expected)
        #expect(reopened.report.commits == 40 && reopened.report.tornAt == nil)
        Self.close(reopened)
        for bytes in try Self.allBytes(disk) {
            #expect(!bytes.contains(subsequence: Array(Self.marker.utf8)))
            #expect(!bytes.contains(subsequence: Self.valueMarker))
            #expect(!bytes.contains(subsequence: Array("c".utf8) + Array(Self.marker.utf8)))
        }
    }

    @Test func aTornSealedTailIsCutOffAsAPlainOneIs() throws {
        let disk = SimulatedDisk(seed: 12)
        let harness = try Self.harness(disk)
        let (opened, _) = try harness.open()
        for n in 0..<3 { try LogHarness.commit(opened.writer, [("k\(n)", Self.value(n))]) }
        let goodEnd = opened.writer.end
        try LogHarness.commit(opened.writer, [("k3", Self.value(3))])
        let path = opened.writer.file.path
        let fullEnd = opened.writer.end
        Self.close(opened)
        // Torn inside the last commit's frames.
        let file = try disk.open(path, mode: .readWrite)
        try file.truncate(to: Int64(fullEnd) - 20)
        file.close()
        let (recovered, state) = try harness.open()
        #expect(state.count == 3 && state["k2"] == Self.value(2) && state["k3"] == nil)
        #expect(recovered.report.tornAt?.offset == goodEnd)
        #expect(recovered.writer.end == goodEnd)
        Self.close(recovered)
    }

    @Test func aFlippedBitInTheLastCommitIsATornTailAndEarlierIsCorruption() throws {
        let disk = SimulatedDisk(seed: 13)
        let harness = try Self.harness(disk)
        let (opened, _) = try harness.open()
        let firstRecord = Int(opened.writer.end)
        try LogHarness.commit(opened.writer, [("k0", Self.value(0))])
        let secondStart = Int(opened.writer.end)
        try LogHarness.commit(opened.writer, [("k1", Self.value(1))])
        let path = opened.writer.file.path
        Self.close(opened)
        let original = try #require(disk.currentBytes(of: path))

        // A bit of the last commit's ciphertext: never synced as far as the log can prove.
        var last = original
        last[secondStart + 40] ^= 0x04
        try disk.setBytes(last, of: path)
        let (recovered, state) = try harness.open()
        #expect(state == ["k0": Self.value(0)])
        #expect(recovered.report.tornAt?.offset == UInt32(secondStart))
        Self.close(recovered)

        // A bit of the first commit, followed by a commit that proves it was synced.
        var first = original
        first[firstRecord + 40] ^= 0x04
        try disk.setBytes(first, of: path)
        #expect { try harness.open() } throws: { error in
            guard case StorageError.corrupted(let offset, _) = error else { return false }
            return offset == Int64(firstRecord)
        }
    }

    @Test func aSealedRecordReadAtItsLocationRefusesDamageAndMoves() throws {
        let disk = SimulatedDisk(seed: 14)
        let harness = try Self.harness(disk)
        let (opened, _) = try harness.open()
        try opened.writer.begin()
        let a = try Self.value(1).withUnsafeBytes { try opened.writer.appendValue(.object, rowid: 1, collection: "c", key: "a", value: $0, noMetadata: true, compress: false) }
        let b = try Self.value(2).withUnsafeBytes { try opened.writer.appendValue(.object, rowid: 2, collection: "c", key: "b", value: $0, noMetadata: true, compress: false) }
        // A staged record reads back plain.
        let staged = try #require(opened.writer.stagedRecord(at: a))
        #expect(try SegmentReader.decodeValue(staged, offset: Int64(a.offset), path: "x").1 == Self.value(1))
        _ = try opened.writer.commit(snapshot: 1)
        let file = opened.writer.file
        let sealing = try RecordSealing.read(file, cipher: try #require(opened.cipher), unitType: .logRecord)
        #expect(a.length == b.length)
        #expect(try SegmentReader.value(at: a, in: file, sealing: sealing).1 == Self.value(1))
        // b's frame read at a's place (a swap) does not authenticate.
        let bFrame = try file.readExactly(Int(b.length), at: Int64(b.offset))
        try file.write(bFrame, at: Int64(a.offset))
        #expect(throws: StorageError.self) { try SegmentReader.value(at: a, in: file, sealing: sealing) }
        let reader = SequentialRecordReader(file: file, sealing: sealing)
        #expect(throws: StorageError.self) { try reader.withRecord(at: a) { _, _ in () } }
        #expect(try reader.withRecord(at: b) { raw, frame in frame.type } == .object)
        Self.close(opened)
    }

    /// The nonce trap (docs/format.md §12): a rollback and recovery's torn-tail cut make the
    /// writer write new bytes at offsets it wrote before; each gets a fresh nonce.
    @Test func rewrittenOffsetsNeverRepeatANonce() throws {
        let disk = SimulatedDisk(seed: 15)
        let harness = try Self.harness(disk)
        var nonces: [Int: Set<[UInt8]>] = [:]
        var writes = 0
        func record(_ file: any StorageFile, _ offset: Int) throws {
            let nonce = try file.readExactly(CipherFormat.nonceSize, at: Int64(offset + Format.sealedRecordLengthSize))
            nonces[offset, default: []].insert(nonce)
            writes += 1
        }
        var (opened, _) = try harness.open()
        opened.writer.flushThreshold = 1   // stream every record to the file at once
        let start = Int(opened.writer.end)
        for round in 0..<3 {
            // Rollback: streamed records truncated away, the same offset written again.
            try opened.writer.begin()
            _ = try Self.value(round).withUnsafeBytes { try opened.writer.appendValue(.object, rowid: 1, collection: "c", key: "a", value: $0, noMetadata: true, compress: false) }
            try record(opened.writer.file, start)
            opened.writer.rollback()
        }
        try LogHarness.commit(opened.writer, [("a", Self.value(9))])
        try record(opened.writer.file, start)
        let path = opened.writer.file.path
        var end = opened.writer.end
        Self.close(opened)
        for round in 0..<3 {
            // Torn tail: recovery cuts the last commit, the next commit rewrites its offset.
            let file = try disk.open(path, mode: .readWrite)
            try file.truncate(to: Int64(end) - 5)
            file.close()
            (opened, _) = try harness.open()
            #expect(Int(opened.writer.end) == start)
            try LogHarness.commit(opened.writer, [("a", Self.value(20 + round))])
            try record(opened.writer.file, start)
            end = opened.writer.end
            Self.close(opened)
        }
        #expect(writes == 7 && nonces[start]?.count == 7)
    }

    /// The cut-back after a failed sync: the commit's bytes are truncated away and the next
    /// commit (after a reopen) is written at the same offset, with a new nonce.
    @Test func theCutBackAfterAFailedSyncNeverRepeatsANonce() throws {
        let disk = SimulatedDisk(seed: 16)
        let harness = try Self.harness(disk)
        var (opened, _) = try harness.open()
        try LogHarness.commit(opened.writer, [("a", Self.value(0))])
        let start = Int(opened.writer.end)
        var nonces: Set<[UInt8]> = []
        func nonce(_ file: any StorageFile) throws -> [UInt8] {
            try file.readExactly(CipherFormat.nonceSize, at: Int64(start + Format.sealedRecordLengthSize))
        }
        for round in 0..<3 {
            opened.writer.flushThreshold = 1
            disk.inject(Fault(.sync, pathContains: "-seg-", effect: .error(EIO)))
            try opened.writer.begin()
            _ = try Self.value(round).withUnsafeBytes { try opened.writer.appendValue(.object, rowid: 1, collection: "c", key: "b", value: $0, noMetadata: true, compress: false) }
            nonces.insert(try nonce(opened.writer.file))
            #expect(throws: StorageError.self) { try opened.writer.commit(snapshot: opened.writer.lastSnapshot + 1) }
            #expect(try opened.writer.file.size() == Int64(start))
            disk.clearFaults()
            Self.close(opened)
            (opened, _) = try harness.open()
        }
        try LogHarness.commit(opened.writer, [("b", Self.value(9))])
        nonces.insert(try nonce(opened.writer.file))
        Self.close(opened)
        #expect(nonces.count == 4)
    }
}
