import Testing
import YapDBStorage
import YapDBSimulatedDisk
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A checkpoint's whole content: what the writer is given and the reader must give back.
struct CheckpointImage: Equatable {
    var info: CheckpointInfo
    var usage: [UInt32: UInt64]
    /// Carried extension states (record 23), in the order written.
    var pending: [CheckpointPendingExtension]
    /// The index root record's bytes (opaque to this layer), or nil for none.
    var root: [UInt8]?

    /// A seeded image: `extensions` carried extension states of up to 40 records of up to
    /// 2,000 bytes each (some empty), names in several scripts, extreme usage values, and an
    /// index root of a few KiB.
    static func make(extensions: Int, seed: UInt64, snapshot: UInt64 = 77) -> CheckpointImage {
        var rng = SeededRandom(seed: seed)
        func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) } }
        let scripts = ["view:", "relationship:🗝 ключи-", "fullTextSearch:", "x"]
        var pending: [CheckpointPendingExtension] = []
        for index in 0..<extensions {
            let count = index % 5 == 0 ? 0 : Int(rng.next() % 40) + 1
            let records = (0..<count).map { _ in bytes(Int(rng.next() % 2_000)) }
            pending.append(CheckpointPendingExtension(name: scripts[index % scripts.count] + "\(index)", rowChangesLost: index % 2 == 1,
                                                      records: records))
        }
        let info = CheckpointInfo(snapshot: snapshot, nextRowid: Format.rowidLimit, replay: LogPosition(segment: 41, offset: 12_345))
        let usage: [UInt32: UInt64] = [1: 500, 2: 0, 7: 1 << 31, UInt32.max: Format.maxSegmentUsage]
        return CheckpointImage(info: info, usage: usage, pending: pending, root: bytes(1_000 + Int(rng.next() % 4_000)))
    }

    /// The carried bytes, all records together (for sizing checks).
    var pendingBytes: Int { pending.reduce(0) { $0 + $1.encodedSize } }
}

/// Helpers shared by the checkpoint tests.
enum CheckpointFixture {
    static let uuid: [UInt8] = Array(1...16)

    /// Writes `image` as checkpoint `number` and returns the final path.
    @discardableResult
    static func write(_ image: CheckpointImage, fs: any FileSystem, files: DatabaseFiles, number: UInt32 = 3,
                      blockLimit: Int = Format.checkpointBlockSize) throws(StorageError) -> String {
        let writer = try CheckpointWriter(files: files, fileSystem: fs, uuid: uuid, number: number, info: image.info)
        writer.blockLimit = blockLimit
        try writer.setSegmentUsage(image.usage)
        for pending in image.pending { try writer.addPendingExtension(pending) }
        if let root = image.root { try writer.setIndexRoot(root) }
        return try writer.finish()
    }

    /// Reads checkpoint `number` back into an image.
    static func read(fs: any FileSystem, files: DatabaseFiles, number: UInt32 = 3, uuid: [UInt8] = uuid) throws(StorageError) -> CheckpointImage {
        var pending: [CheckpointPendingExtension] = []
        var root: [UInt8]?
        let (info, usage) = try CheckpointReader.read(
            files: files, fileSystem: fs, uuid: uuid, number: number,
            indexRoot: { root = $0 }, pendingExtension: { pending.append($0) })
        return CheckpointImage(info: info, usage: usage, pending: pending, root: root)
    }

    /// The error reading checkpoint `number` throws, or nil when it reads.
    static func readError(fs: any FileSystem, files: DatabaseFiles, number: UInt32 = 3, uuid: [UInt8] = uuid) -> StorageError? {
        do { _ = try read(fs: fs, files: files, number: number, uuid: uuid); return nil } catch { return error }
    }

    /// A fresh simulated disk with directory "/d"; the database's main path is "/d/db".
    static func disk(seed: UInt64 = 1) throws -> (SimulatedDisk, DatabaseFiles) {
        let disk = SimulatedDisk(seed: seed)
        try disk.mkdir("/d")
        return (disk, DatabaseFiles(mainPath: "/d/db"))
    }

    static func bytes(_ path: String, fs: any FileSystem) throws -> [UInt8] {
        let file = try fs.open(path, mode: .readOnly)
        defer { file.close() }
        return try file.readExactly(Int(try file.size()), at: 0)
    }

    /// Replaces the whole content of `path`.
    static func put(_ bytes: [UInt8], _ path: String, fs: any FileSystem) throws {
        let file = try fs.open(path, mode: .create)
        defer { file.close() }
        try file.truncate(to: 0)
        try file.write(bytes, at: 0)
    }

    /// (offset, type byte, payload length) of every record after the header, walking lengths.
    static func records(_ bytes: [UInt8]) -> [(offset: Int, type: UInt8, length: Int)] {
        var out: [(Int, UInt8, Int)] = []
        var offset = Format.headerSize
        while offset + Format.recordHeaderSize <= bytes.count {
            let length = bytes.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: offset + Format.recordLengthOffset, as: UInt32.self))) }
            out.append((offset, bytes[offset + Format.recordTypeOffset], length))
            offset += Format.recordHeaderSize + length
        }
        return out
    }
}

/// Checks that `error` is `corrupted` at `offset` with a reason naming `file` (and holding
/// `fragment`, when given).
func expectCorrupted(_ error: StorageError?, at offset: Int64, file: String, _ fragment: String? = nil,
                     sourceLocation: SourceLocation = #_sourceLocation) {
    guard case .corrupted(let actual, let reason)? = error else {
        Issue.record("expected corrupted at \(offset), got \(String(describing: error))", sourceLocation: sourceLocation)
        return
    }
    #expect(actual == offset, "reason: \(reason)", sourceLocation: sourceLocation)
    #expect(reason.hasPrefix(file + ": "), "reason: \(reason)", sourceLocation: sourceLocation)
    if let fragment { #expect(reason.contains(fragment), "reason: \(reason)", sourceLocation: sourceLocation) }
}

@Suite struct CheckpointTests {
    typealias F = CheckpointFixture

    @Test func roundTripOnRealFiles() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let files = DatabaseFiles(mainPath: dir.file("db"))
        let image = CheckpointImage.make(extensions: 50, seed: 11)
        let path = try F.write(image, fs: PosixFileSystem.shared, files: files)
        #expect(path == files.checkpointPath(3))
        #expect(PosixFileSystem.shared.kind(of: path + Format.temporarySuffix) == .missing)
        let back = try F.read(fs: PosixFileSystem.shared, files: files)
        #expect(back == image)
        #expect(back.pending.contains { $0.records.isEmpty } && back.pending.contains { $0.rowChangesLost })
        // The records in the order §4 gives: info, segment usage, carried extensions, index root, end.
        let types = F.records(try F.bytes(path, fs: PosixFileSystem.shared)).map(\.type)
        let expected = [RecordType.checkpointInfo, .checkpointSegmentUsage] + Array(repeating: .checkpointPendingExtension, count: 50)
            + [.checkpointIndexRoot, .checkpointEnd]
        #expect(types == expected.map(\.rawValue))
    }

    @Test func roundTripOnSimulatedDiskWithSmallBlocksIsDurable() throws {
        let (disk, files) = try F.disk()
        let image = CheckpointImage.make(extensions: 40, seed: 12)
        for number in [UInt32(1), 2] {
            let path = try F.write(image, fs: disk, files: files, number: number, blockLimit: 1_000)
            let durable = disk.durableBytes(of: path) == disk.currentBytes(of: path)
            #expect(durable, "synced and renamed durably")
            #expect(try F.read(fs: disk, files: files, number: number) == image)
        }
        #expect(disk.pendingOperationCount == 0)
    }

    @Test func segmentUsageAndEmptyCheckpointsRoundTrip() throws {
        let (disk, files) = try F.disk()
        var image = CheckpointImage.make(extensions: 0, seed: 1)
        image.root = nil
        for (number, usage) in [(UInt32(1), [:]), (2, [5: 9]), (3, Dictionary(uniqueKeysWithValues: (1...3_000).map { (UInt32($0 * 7), UInt64($0) << 20) })),
                                (4, [0: 0, UInt32.max: Format.maxSegmentUsage])] as [(UInt32, [UInt32: UInt64])] {
            image.usage = usage
            try F.write(image, fs: disk, files: files, number: number)
            let back = try F.read(fs: disk, files: files, number: number)
            #expect(back.usage == usage)
            #expect(back == image)
        }
    }

    /// The writer streams: before `finish`, everything but about a block of records is already
    /// in the file.
    @Test func writerStreamsInBlocks() throws {
        let (disk, files) = try F.disk()
        let image = CheckpointImage.make(extensions: 200, seed: 13)
        #expect(image.pendingBytes > 3 * Format.checkpointBlockSize)
        let writer = try CheckpointWriter(files: files, fileSystem: disk, uuid: F.uuid, number: 1, info: image.info)
        try writer.setSegmentUsage(image.usage)
        for pending in image.pending { try writer.addPendingExtension(pending) }
        let before = try #require(disk.currentBytes(of: writer.temporaryPath)).count
        try writer.setIndexRoot(try #require(image.root))
        let path = try writer.finish()
        let after = try #require(disk.currentBytes(of: path))
        let largest = image.pending.map(\.encodedSize).max() ?? 0
        #expect(after.count - before <= Format.checkpointBlockSize + largest + (image.root?.count ?? 0) + 200,
                "at most a block of records was buffered")
        #expect(try F.read(fs: disk, files: files, number: 1) == image)
    }

    /// Crash at every mutating call of a checkpoint write, then every power-cut mode: the final
    /// name is either missing or a complete, correct checkpoint.
    @Test func crashAtEveryStepNeverLeavesAPartialCheckpoint() throws {
        let image = CheckpointImage.make(extensions: 12, seed: 14)
        let (probe, probeFiles) = try F.disk()
        try F.write(image, fs: probe, files: probeFiles, blockLimit: 512)
        let total = probe.operationCount
        #expect(total > 10, "the write spans many calls (\(total))")
        var outcomes: [Bool: Int] = [:]
        for n in 0...total {
            for (m, mode) in PowerCutMode.allCases.enumerated() {
                let (disk, files) = try F.disk(seed: UInt64(n))
                disk.crashAfter(operations: n)
                let completed = (try? F.write(image, fs: disk, files: files, blockLimit: 512)) != nil
                #expect(completed == (n == total), "n \(n)")
                disk.powerCut(seed: UInt64(n * 8 + m), mode: mode)
                let exists = disk.kind(of: files.checkpointPath(3)) == .file
                outcomes[exists, default: 0] += 1
                if completed { #expect(exists, "a finished checkpoint survives any power cut (\(mode))") }
                if exists {
                    do { let same = try F.read(fs: disk, files: files) == image; #expect(same, "n \(n) \(mode)") } catch {
                        Issue.record("n \(n) \(mode): a checkpoint under its final name fails to read: \(error)")
                    }
                }
            }
        }
        #expect(outcomes[true, default: 0] >= PowerCutMode.allCases.count && outcomes[false, default: 0] > total,
                "both outcomes occur: \(outcomes)")
    }

    /// The simulated disk never persists an unsynced rename, so the crash test cannot see a
    /// rename that comes before the data sync (real file systems may persist it with a later
    /// journal commit). Check the order of the calls instead: every write, then the file sync,
    /// then the rename, then the directory sync, and nothing after.
    @Test func callsComeInTheCrashSafeOrder() throws {
        let (disk, files) = try F.disk()
        try F.write(CheckpointImage.make(extensions: 12, seed: 20), fs: disk, files: files, blockLimit: 512)
        let calls = disk.log.filter { $0.hasPrefix("#") }.map { String($0.drop { $0 != " " }.dropFirst()) }
        let tmp = files.checkpointPath(3) + Format.temporarySuffix
        #expect(calls.first == "open(createNew)(\(tmp))")
        #expect(Array(calls.suffix(3)) == ["sync(\(tmp))", "rename(\(tmp) -> \(files.checkpointPath(3)))", "syncDirectory(/d)"])
        #expect(calls.dropFirst().dropLast(3).allSatisfy { $0.hasPrefix("write ") && $0.hasSuffix("(\(tmp))") })
        #expect(calls.count > 8, "several streamed writes: \(calls.count) calls")
    }

    @Test func abandonLeavesNoFileAtAnyStage() throws {
        let image = CheckpointImage.make(extensions: 20, seed: 15)
        for stage in 0..<3 {
            let (disk, files) = try F.disk()
            let writer = try CheckpointWriter(files: files, fileSystem: disk, uuid: F.uuid, number: 9, info: image.info)
            writer.blockLimit = 256
            #expect(disk.kind(of: writer.temporaryPath) == .file)
            if stage >= 1 {
                try writer.setSegmentUsage(image.usage)
                for pending in image.pending.prefix(10) { try writer.addPendingExtension(pending) }
            }
            if stage == 2 {
                disk.inject(Fault(.syncDirectory))
                for pending in image.pending.dropFirst(10) { try writer.addPendingExtension(pending) }
                try writer.setIndexRoot(try #require(image.root))
                #expect(throws: StorageError.self) { try writer.finish() }
                #expect(disk.kind(of: files.checkpointPath(9)) == .file, "renamed before the directory sync failed")
            }
            writer.abandon()
            #expect(try disk.listDirectory("/d") == [], "stage \(stage)")
            #expect(throws: StorageError.self, "an abandoned writer refuses work") { try writer.finish() }
        }
    }

    @Test func failedWriteIsTypedAndPoisonsTheWriter() throws {
        let (disk, files) = try F.disk()
        let image = CheckpointImage.make(extensions: 40, seed: 16)
        disk.inject(Fault(.write, nth: 2, effect: .shortWrite(ENOSPC)))
        let writer = try CheckpointWriter(files: files, fileSystem: disk, uuid: F.uuid, number: 1, info: image.info)
        writer.blockLimit = 300
        var thrown: StorageError?
        do {
            try writer.setSegmentUsage(image.usage)
            for pending in image.pending { try writer.addPendingExtension(pending) }
        } catch { thrown = error }
        guard case .io(let failure)? = thrown else { Issue.record("expected io, got \(String(describing: thrown))"); return }
        #expect(failure.errno == ENOSPC)
        #expect(throws: StorageError.io(failure), "later calls rethrow the failure") { try writer.finish() }
        writer.abandon()
        #expect(try disk.listDirectory("/d") == [])
    }

    @Test func existingCheckpointIsNeverOverwrittenAndAStaleTemporaryIsReplaced() throws {
        let (disk, files) = try F.disk()
        let image = CheckpointImage.make(extensions: 5, seed: 17)
        let stale = files.checkpointPath(3) + Format.temporarySuffix
        try F.put([1, 2, 3], stale, fs: disk)
        try F.write(image, fs: disk, files: files)
        #expect(disk.kind(of: stale) == .missing)
        let written = disk.currentBytes(of: files.checkpointPath(3))
        #expect(throws: StorageError.io(IOFailure(errno: EEXIST, operation: "create checkpoint", path: files.checkpointPath(3)))) {
            try F.write(CheckpointImage.make(extensions: 1, seed: 18), fs: disk, files: files)
        }
        #expect(disk.currentBytes(of: files.checkpointPath(3)) == written)
    }

    @Test func readFailuresAreIOAndCallbackErrorsPassThrough() throws {
        let (disk, files) = try F.disk()
        guard case .io(let missing)? = F.readError(fs: disk, files: files) else { Issue.record("missing file must be io"); return }
        #expect(missing.errno == ENOENT)
        try F.write(CheckpointImage.make(extensions: 10, seed: 19), fs: disk, files: files)
        disk.inject(Fault(.read, nth: 1, effect: .error(EIO)))
        guard case .io(let failure)? = F.readError(fs: disk, files: files) else { Issue.record("read fault must be io"); return }
        #expect(failure.errno == EIO)
        let mine = StorageError.tooLarge("stop here")
        var seen = 0
        #expect(throws: mine) {
            _ = try CheckpointReader.read(files: files, fileSystem: disk, uuid: F.uuid, number: 3,
                                          pendingExtension: { _ throws(StorageError) in seen += 1; if seen == 5 { throw mine } })
        }
        #expect(seen == 5)
    }
}
