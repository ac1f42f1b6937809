import Testing
import TestSupport
@testable import YapDBStorage
import YapDBSimulatedDisk

/// The root record's bytes (docs/format.md §10): a round trip, then hostile records — every
/// truncation, every flipped bit, a newer version, another database, bodies whose crc is right
/// but whose fields break a rule, files shorter than the record vouches for. Each gets a typed
/// error, never a trap.
@Suite struct IndexRootTests {
    static let uuid = IndexFileHarness.uuid

    static func sample() -> IndexRoot {
        IndexRoot(uuid: uuid, pageSize: 4096, sequence: 7, snapshot: 1234, replay: LogPosition(segment: 3, offset: 9000),
                  nextRowID: 55,
                  trees: [IndexRoot.Tree(name: "catalog", root: IndexPageID(file: 1, page: 2), count: 3, height: 1),
                          IndexRoot.Tree(name: "rows", root: IndexPageID(file: 2, page: 1), count: 1000, height: 3),
                          IndexRoot.Tree(name: "view:é", root: .none, count: 0, height: 0)],
                  files: [IndexRoot.File(number: 1, length: 3 * 4096, liveBytes: 4096, deadBytes: 4096),
                          IndexRoot.File(number: 2, length: 2 * 4096, liveBytes: 4096, deadBytes: 0)])
    }

    static func decode(_ bytes: [UInt8], uuid: [UInt8] = uuid) throws(IndexFileError) -> IndexRoot {
        try IndexRoot.decode(bytes, path: "/db/main-root", uuid: uuid)
    }

    /// The reason of a `.corrupted` error, or nil.
    static func reason(_ bytes: [UInt8]) -> IndexDamage? {
        do throws(IndexFileError) {
            _ = try decode(bytes)
            return nil
        } catch {
            if case .corrupted(_, _, let reason) = error { return reason }
            return nil
        }
    }

    /// `bytes` with the body changed by `edit` and the crc made right again.
    static func rewritten(_ bytes: [UInt8], _ edit: (inout [UInt8]) -> Void) -> [UInt8] {
        var body = Array(bytes[Format.rootBodyOffset..<(bytes.count - 4)])
        edit(&body)
        var out = Array(bytes[0..<Format.rootBodyLengthOffset])
        out.appendLE(UInt32(body.count))
        out += body
        out.appendLE(CRC32C.mask(CRC32C.checksum(Array(out[Format.rootBodyLengthOffset...]))))
        return out
    }

    @Test func roundTrip() throws {
        let root = Self.sample()
        let bytes = root.encoded()
        #expect(bytes.count == Format.rootBodyOffset + Format.rootFixedBodySize
                + (7 + 4 + 7) + 3 * Format.rootTreeEntryFixedSize + 2 * Format.rootFileEntrySize + 4)
        #expect(try Self.decode(bytes) == root)
        #expect(root.tree(named: "rows")?.count == 1000)
    }

    @Test func everyTruncationIsATypedError() {
        let bytes = Self.sample().encoded()
        for length in 0..<bytes.count {
            let prefix = Array(bytes.prefix(length))
            do throws(IndexFileError) {
                _ = try Self.decode(prefix)
                Issue.record("a root record cut to \(length) bytes decoded")
            } catch {
                switch error {
                case .notADatabase: #expect(length < Format.headerSize)
                case .corrupted(_, _, let reason): #expect(reason == .truncated, "length \(length): \(reason)")
                default: Issue.record("length \(length): \(error)")
                }
            }
        }
    }

    @Test func everyFlippedBitIsATypedError() {
        let bytes = Self.sample().encoded()
        for index in 0..<bytes.count {
            for bit in [0, 3, 7] {
                var damaged = bytes
                damaged[index] ^= UInt8(1 << bit)
                do throws(IndexFileError) {
                    _ = try Self.decode(damaged)
                    Issue.record("a flip of bit \(bit) of byte \(index) decoded")
                } catch {
                    switch error {
                    case .notADatabase, .unsupportedVersion, .corrupted: break
                    default: Issue.record("byte \(index) bit \(bit): \(error)")
                    }
                }
            }
        }
    }

    @Test func aNewerVersionIsUnsupportedAndAnotherDatabaseIsRefused() {
        var bytes = Self.sample().encoded()
        #expect(throws: IndexFileError.corrupted(path: "/db/main-root", offset: Int64(Format.headerUUIDOffset), reason: .wrongDatabase)) {
            try Self.decode(bytes, uuid: [UInt8](repeating: 9, count: 16))
        }
        bytes[Format.headerVersionOffset] = UInt8(Format.version + 1)
        #expect(throws: IndexFileError.unsupportedVersion(found: Int(Format.version) + 1, supported: Int(Format.version))) {
            try Self.decode(bytes)
        }
    }

    @Test func aSegmentHeaderOrAnUnknownKindIsTheWrongKindAndADamagedHeaderIsNot() {
        var bytes = Self.sample().encoded()
        bytes.replaceSubrange(0..<Format.headerSize, with: FileHeader(kind: .logSegment, uuid: Self.uuid, fileNumber: 0, baseSnapshot: 1234).encoded())
        #expect(Self.reason(bytes) == .wrongKind(FileKindByte.logSegment.rawValue))
        // Kind 99 with a checksum that matches it.
        bytes[Format.headerKindOffset] = 99
        bytes.storeLE(CRC32C.mask(CRC32C.checksum(Array(bytes[0..<Format.headerChecksumOffset]))), at: Format.headerChecksumOffset)
        #expect(Self.reason(bytes) == .wrongKind(99))
        bytes[Format.headerCreatedAtOffset] ^= 1
        #expect(Self.reason(bytes) == .headerChecksum)
    }

    @Test func bodyFieldsBreakingARuleAreNamed() {
        let bytes = Self.sample().encoded()
        // Offsets inside the body (docs/format.md §10).
        func u32(_ value: UInt32, at offset: Int) -> [UInt8] {
            Self.rewritten(bytes) { $0.storeLE(value, at: offset) }
        }
        #expect(Self.reason(u32(1000, at: 0)) == .badPageSize(1000))
        #expect(Self.reason(u32(1, at: 4)) == .invalidField("reserved"))
        #expect(Self.reason(u32(UInt32(Format.rootMaximumTrees + 1), at: 40)) == .overLimit)
        #expect(Self.reason(u32(1_000, at: 40)) == .truncated)
        #expect(Self.reason(u32(3, at: 44)) == .truncated)
        #expect(Self.reason(Self.rewritten(bytes) { $0.append(0) }) == .trailingBytes)

        var root = Self.sample()
        root.trees[1].name = "catalog"
        #expect(Self.reason(Self.rewritten(bytes) { $0 = root.bodyBytes() }) == .duplicateTreeName("catalog"))

        root = Self.sample()
        root.files.swapAt(0, 1)
        #expect(Self.reason(Self.rewritten(bytes) { $0 = root.bodyBytes() }) == .filesOutOfOrder)

        root = Self.sample()
        root.trees[0].root = IndexPageID(file: 1, page: 3)
        #expect(Self.reason(Self.rewritten(bytes) { $0 = root.bodyBytes() }) == .rootOutsideFiles(IndexPageID(file: 1, page: 3)))

        root = Self.sample()
        root.files[1].liveBytes = 3 * 4096
        #expect(Self.reason(Self.rewritten(bytes) { $0 = root.bodyBytes() }) == .invalidField("file byte counters"))

        root = Self.sample()
        root.files[0].length = 4096 + 1
        #expect(Self.reason(Self.rewritten(bytes) { $0 = root.bodyBytes() }) == .invalidField("file length"))

        // A tree claims no more entries than the files have bytes (each takes at least one):
        // a crafted count of 2^48 over a few pages is refused before a walk trusts it.
        root = Self.sample()
        let bytesOfFiles = UInt64(root.files.reduce(0) { $0 + $1.length })
        root.trees[1].count = bytesOfFiles
        #expect(Self.reason(Self.rewritten(bytes) { $0 = root.bodyBytes() }) != .invalidField("tree entry count"))
        root.trees[1].count = bytesOfFiles + 1
        #expect(Self.reason(Self.rewritten(bytes) { $0 = root.bodyBytes() }) == .invalidField("tree entry count"))
        root.trees[1].count = 1 << 48
        #expect(Self.reason(Self.rewritten(bytes) { $0 = root.bodyBytes() }) == .invalidField("tree entry count"))

        // The header's snapshot must be the body's.
        root = Self.sample()
        root.snapshot += 1
        #expect(Self.reason(Self.rewritten(bytes) { $0 = root.bodyBytes() }) == .invalidField("header snapshot"))
    }

    @Test func randomBodiesWithARepairedChecksumDecodeValidOrGetATypedReason() {
        var random = SeededRandom(seed: 42)
        let bytes = Self.sample().encoded()
        var valid = 0
        for round in 0..<3000 {
            let mutated = Self.rewritten(bytes) { body in
                for _ in 0..<(1 + Int(random.next() % 3)) {
                    switch random.next() % 3 {
                    case 0: body[Int(random.next() % UInt64(body.count))] = UInt8(truncatingIfNeeded: random.next())
                    case 1: body.removeLast(min(body.count - 1, Int(random.next() % 8)))
                    default: body += random.bytes(Int(random.next() % 8))
                    }
                }
            }
            do throws(IndexFileError) {
                let root = try Self.decode(mutated)
                // Only a record that passes every rule decodes, and it is exactly the bytes.
                #expect(root.damage() == nil)
                #expect(root.bodyBytes() == Array(mutated[Format.rootBodyOffset..<(mutated.count - 4)]), "round \(round)")
                valid += 1
            } catch {
                guard case .corrupted = error else {
                    Issue.record("round \(round): \(error)")
                    continue
                }
            }
        }
        // Most mutations break a rule; some (a counter, a name byte) do not.
        #expect(valid > 0 && valid < 3000)
    }

    @Test func filesShorterThanTheRecordVouchesForAreRefusedBeforeMapping() throws {
        let disk = SimulatedDisk(seed: 3)
        try disk.mkdir("/db")
        let harness = IndexFileHarness(fs: disk, mainPath: "/db/main")
        let (published, writer) = try harness.cycle(after: nil, count: 3)
        writer.close()
        var root = published.root
        root.files[0].length += Int64(harness.pageSize)
        for mode in IndexFileTests.modes {
            #expect(throws: IndexFileError.corrupted(path: harness.files.indexPath(1), offset: 1024,
                                                     reason: .fileTooShort(number: 1, expected: 1280, found: 1024))) {
                try harness.store(root, mode: mode)
            }
        }
        root = published.root
        root.files.append(IndexRoot.File(number: 4, length: 512))
        #expect(throws: IndexFileError.corrupted(path: harness.files.indexPath(4), offset: 0, reason: .fileMissing(4))) {
            try harness.store(root, mode: .mapped)
        }
        // A file of another database, and one whose header page is damaged.
        let other = try disk.open(harness.files.indexPath(4), mode: .createNew)
        try other.write(IndexFileHeader.encoded(uuid: [UInt8](repeating: 7, count: 16), number: 4, sequence: 1, pageSize: 256), at: 0)
        try other.write([UInt8](repeating: 0, count: 256), at: 256)
        #expect(throws: IndexFileError.corrupted(path: harness.files.indexPath(4), offset: Int64(Format.headerUUIDOffset), reason: .wrongDatabase)) {
            try harness.store(root, mode: .mapped)
        }
        var page = IndexFileHeader.encoded(uuid: IndexFileHarness.uuid, number: 4, sequence: 1, pageSize: 256)
        page[Format.indexPageSizeOffset] ^= 1
        try other.write(page, at: 0)
        #expect(throws: IndexFileError.corrupted(path: harness.files.indexPath(4), offset: Int64(Format.indexHeaderChecksumOffset), reason: .checksumMismatch)) {
            try harness.store(root, mode: .cached(pages: 4))
        }
        // A page size other than the store's.
        let wrongSize = IndexFileHeader.encoded(uuid: IndexFileHarness.uuid, number: 4, sequence: 1, pageSize: 128)
        try other.write(wrongSize + wrongSize + wrongSize + wrongSize, at: 0)
        #expect(throws: IndexFileError.corrupted(path: harness.files.indexPath(4), offset: Int64(Format.indexPageSizeOffset), reason: .badPageSize(128))) {
            try harness.store(root, mode: .mapped)
        }
    }

    @Test func aDamagedRootRecordInTheCheckpointIsRefused() throws {
        let disk = SimulatedDisk(seed: 4)
        try disk.mkdir("/db")
        let harness = IndexFileHarness(fs: disk, mainPath: "/db/main")
        #expect(try harness.load() == nil)
        let (published, writer) = try harness.cycle(after: nil, count: 3)
        writer.close()
        #expect(try harness.load() == published.root)
        var next = published.root
        next.sequence += 1
        try harness.publish(next, bytes: Array(next.encoded().prefix(10)))
        #expect(throws: IndexFileError.notADatabase(path: harness.files.checkpointPath(2))) { try harness.load() }
        var flipped = next.encoded()
        flipped[flipped.count - 1] ^= 1
        next.sequence += 1
        try harness.publish(next, bytes: flipped)
        #expect(throws: IndexFileError.self) { try harness.load() }
    }
}
