import Testing
import YapDBStorage
import TestSupport

/// Checkpoint files built by hand from docs/format.md §4, independently of `CheckpointWriter`,
/// so the tests can write what the writer never would.
struct CraftedCheckpoint {
    var header = FileHeader(kind: .checkpoint, uuid: CheckpointFixture.uuid, fileNumber: 3, baseSnapshot: 5, createdAtMilliseconds: 0)
    var records: [[UInt8]]

    static func record(_ type: RecordType, flags: UInt8 = 0, _ payload: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        let start = RecordCodec.begin(type, flags: flags, in: &bytes)
        bytes += payload
        _ = RecordCodec.finish(&bytes, start: start)
        return bytes
    }

    static func info(snapshot: UInt64 = 5, rows: UInt64 = 3, collections: UInt32 = 2, reserved: UInt32 = 0, nextRowid: UInt64 = 1_000) -> [UInt8] {
        var p: [UInt8] = []
        p.appendLE(snapshot); p.appendLE(nextRowid); p.appendLE(UInt32(4)); p.appendLE(UInt32(64))
        p.appendLE(rows); p.appendLE(collections); p.appendLE(reserved)
        return record(.checkpointInfo, p)
    }

    static func collection(_ name: String, rows: UInt64) -> [UInt8] {
        var p: [UInt8] = []
        p.appendString(name); p.appendVarint(rows)
        return record(.checkpointCollection, p)
    }

    /// The raw bytes of one entry; `metadata` nil writes has-metadata 0.
    static func entry(_ key: String, rowid: UInt64, object: [UInt64] = [4, 64, 30], metadata: [UInt64]? = nil) -> [UInt8] {
        var p: [UInt8] = []
        p.appendString(key); p.appendVarint(rowid)
        for v in object { p.appendVarint(v) }
        p.append(metadata == nil ? 0 : 1)
        for v in metadata ?? [] { p.appendVarint(v) }
        return p
    }

    static func entries(_ raw: [UInt8], compressed: Bool = false) -> [UInt8] {
        guard compressed else { return record(.checkpointEntries, raw) }
        var p: [UInt8] = []
        p.appendVarint(UInt64(raw.count))
        p += raw.withUnsafeBytes { LZ4.compress($0) ?? [] }
        return record(.checkpointEntries, flags: Format.flagCompressed, p)
    }

    static func usage(_ pairs: [(UInt64, UInt64)], count: UInt64? = nil) -> [UInt8] {
        var p: [UInt8] = []
        p.appendVarint(count ?? UInt64(pairs.count))
        for (segment, live) in pairs { p.appendVarint(segment); p.appendVarint(live) }
        return record(.checkpointSegmentUsage, p)
    }

    /// A valid file: rows a/1, a/2 (with metadata), b/3, in two collections.
    static let valid = CraftedCheckpoint(records: [
        info(), collection("a", rows: 2),
        entries(entry("k1", rowid: 1) + entry("k2", rowid: 2, metadata: [5, 100, 12])),
        collection("b", rows: 1), entries(entry("k3", rowid: 3), compressed: false),
        usage([(4, 90), (5, 12)]),
    ])

    /// Offset of record `index` (`records.count` is where the end record goes).
    func offset(_ index: Int) -> Int64 {
        Int64(Format.headerSize + records.prefix(index).reduce(0) { $0 + $1.count })
    }

    /// Header, records, then an end record counting them and checksumming them, with the given
    /// row count, unless `end` is false; `count`/`crcDelta` falsify the end record's fields.
    func bytes(endRows: UInt64 = 3, end: Bool = true, count: UInt32? = nil, crcDelta: UInt32 = 0) -> [UInt8] {
        let body = records.flatMap { $0 }
        guard end else { return header.encoded() + body }
        var p: [UInt8] = []
        p.appendLE(endRows); p.appendLE(count ?? UInt32(records.count)); p.appendLE(CRC32C.mask(CRC32C.checksum(body) &+ crcDelta))
        return header.encoded() + body + Self.record(.checkpointEnd, p)
    }
}

extension CheckpointTests {
    typealias C = CraftedCheckpoint
    static let name = "db-checkpoint-0000000003"

    /// Puts `bytes` in place of checkpoint 3 on a fresh simulated disk and reads it.
    func readCrafted(_ bytes: [UInt8], uuid: [UInt8] = CheckpointFixture.uuid) throws -> StorageError? {
        let (disk, files) = try F.disk()
        try F.put(bytes, files.checkpointPath(3), fs: disk)
        return F.readError(fs: disk, files: files, uuid: uuid)
    }

    @Test func handCraftedFileFollowingTheFormatDocReads() throws {
        let (disk, files) = try F.disk()
        try F.put(C.valid.bytes(), files.checkpointPath(3), fs: disk)
        let image = try F.read(fs: disk, files: files)
        #expect(image.info == CheckpointInfo(snapshot: 5, nextRowid: 1_000, replay: LogPosition(segment: 4, offset: 64), rowCount: 3, collectionCount: 2))
        #expect(image.collections.map(\.name) == ["a", "b"])
        #expect(image.collections.map { $0.rows.map(\.key) } == [["k1", "k2"], ["k3"]])
        #expect(image.collections[0].rows[1].metadata == RecordLocation(segment: 5, offset: 100, length: 12))
        #expect(image.usage == [4: 90, 5: 12])
        var compressed = C.valid
        let longKey = String(repeating: "k", count: 300)
        compressed.records[2] = C.entries(C.entry(longKey, rowid: 1) + C.entry("k2", rowid: 2, metadata: [5, 100, 12]), compressed: true)
        #expect(compressed.records[2].count < 100, "the hand-made block is compressed")
        try F.put(compressed.bytes(), files.checkpointPath(3), fs: disk)
        #expect(try F.read(fs: disk, files: files).collections[0].rows.map(\.key) == [longKey, "k2"], "an LZ4 entries record decodes")
    }

    @Test func structuralDamageIsCorruptedAtTheBadRecord() throws {
        var v = C.valid
        typealias Case = (label: String, bytes: [UInt8], offset: Int64, fragment: String)
        var cases: [Case] = []
        func with(_ index: Int, _ record: [UInt8]) -> CraftedCheckpoint { var c = v; c.records[index] = record; return c }
        func inserting(_ record: [UInt8], at index: Int) -> CraftedCheckpoint { var c = v; c.records.insert(record, at: index); return c }

        var early = v; early.records.swapAt(1, 2)
        cases.append(("entries before a collection", early.bytes(), early.offset(1), "outside a collection"))
        cases.append(("collection first", C(records: Array(v.records.dropFirst())).bytes(), 64, "info record"))
        let short = with(1, C.collection("a", rows: 3))
        cases.append(("collection short of its rows", short.bytes(), short.offset(3), "short"))
        let over = with(1, C.collection("a", rows: 1))
        cases.append(("more entries than announced", over.bytes(), over.offset(2), "more entries"))
        cases.append(("info row count too high", with(0, C.info(rows: 4)).bytes(), v.offset(6), "rows"))
        cases.append(("collection passes info rows", with(0, C.info(rows: 2)).bytes(), v.offset(3), "passes"))
        cases.append(("too few collections", with(0, C.info(collections: 3)).bytes(), v.offset(6), "collections"))
        cases.append(("too many collections", with(0, C.info(collections: 1)).bytes(), v.offset(3), "more collections"))
        cases.append(("end row count", v.bytes(endRows: 4), v.offset(6), "end record"))
        cases.append(("end record count", v.bytes(count: 5), v.offset(6), "records"))
        cases.append(("end checksum", v.bytes(crcDelta: 1), v.offset(6), "checksum"))
        cases.append(("missing end", v.bytes(end: false), v.offset(6), "missing end record"))
        let endEnd = v.offset(6) + 26
        cases.append(("a byte after the end", v.bytes() + [0], endEnd, "after the end record"))
        cases.append(("a record after the end", v.bytes() + C.usage([]), endEnd, "after the end record"))
        var noUsage = v; noUsage.records.removeLast()
        cases.append(("no segment usage", noUsage.bytes(), noUsage.offset(5), "segment-usage"))
        let twoUsage = inserting(C.usage([]), at: 6)
        cases.append(("second segment usage", twoUsage.bytes(), twoUsage.offset(6), "second"))
        let lateCollection = inserting(C.collection("c", rows: 0), at: 6)
        cases.append(("collection after usage", lateCollection.bytes(), lateCollection.offset(6), "after the segment usage"))
        let twoInfo = inserting(C.info(), at: 1)
        cases.append(("second info", twoInfo.bytes(), 64 + Int64(C.info().count), "second info"))
        var commit: [UInt8] = []
        RecordCodec.appendCommit(CommitInfo(snapshot: 1, recordCount: 0, recordsChecksum: 0, recordsLength: 0, durableThrough: .zero), into: &commit)
        let withCommit = inserting(commit, at: 3)
        cases.append(("commit record", withCommit.bytes(), withCommit.offset(3), "log record type 6"))
        let unknown = inserting([UInt8](repeating: 0, count: 4) + [99, 0, 0, 0, 0, 0], at: 3)
        cases.append(("unknown type", unknown.bytes(), unknown.offset(3), "unknown record type 99"))
        cases.append(("entries flag 2", with(2, C.record(.checkpointEntries, flags: 2, C.entry("k1", rowid: 1) + C.entry("k2", rowid: 2))).bytes(), v.offset(2), "flags"))
        cases.append(("info reserved", with(0, C.info(reserved: 1)).bytes(), 64, "reserved"))
        cases.append(("info short", with(0, C.record(.checkpointInfo, [UInt8](repeating: 0, count: 39))).bytes(), 64, "payload length of 39"))
        v.header.baseSnapshot = 6
        cases.append(("header snapshot", v.bytes(), 64, "header snapshot 6"))
        v = C.valid
        cases.append(("has-metadata 2", with(4, C.entries(Array(C.entry("k3", rowid: 3).dropLast()) + [2])).bytes(), v.offset(4), "has-metadata byte 2"))
        cases.append(("usage out of order", with(5, C.usage([(5, 1), (4, 1)])).bytes(), v.offset(5), "out of order"))
        cases.append(("usage duplicate", with(5, C.usage([(4, 1), (4, 1)])).bytes(), v.offset(5), "out of order"))
        cases.append(("empty entries", inserting(C.entries([]), at: 5).bytes(), v.offset(5), "empty entries"))
        cases.append(("collection trailing bytes", with(3, C.record(.checkpointCollection, [1, 98, 1, 0])).bytes(), v.offset(3), "trailing"))
        cases.append(("invalid UTF-8 key", with(4, C.entries([2, 0xC3, 0x28, 3, 4, 64, 30, 0])).bytes(), v.offset(4), "UTF-8"))
        for c in cases {
            let error = try readCrafted(c.bytes)
            expectCorrupted(error, at: c.offset, file: Self.name, c.fragment)
            if error == nil { Issue.record("\(c.label): read succeeded") }
        }
        #expect(try readCrafted(v.bytes()) == nil, "the base file is valid")
    }

    @Test func hostileLengthsAreRejectedBeforeAllocating() throws {
        let v = C.valid
        func with(_ index: Int, _ record: [UInt8]) -> [UInt8] { var c = v; c.records[index] = record; return c.bytes() }
        func varint(_ value: UInt64) -> [UInt8] { var p: [UInt8] = []; p.appendVarint(value); return p }
        var cases: [(String, [UInt8], Int64, String)] = []
        for index in 0...v.records.count {
            var damaged = v.bytes()
            let at = Int(v.offset(index)) + Format.recordLengthOffset
            damaged.replaceSubrange(at..<(at + 4), with: [0xFF, 0xFF, 0xFF, 0xFF])
            cases.append(("length 4 GiB in record \(index)", damaged, v.offset(index), "payload length"))
            var past = v.bytes()
            past.replaceSubrange(at..<(at + 4), with: [0xF0, 0x00, 0, 0])
            cases.append(("length past the end in record \(index)", past, v.offset(index), index == 0 || index == v.records.count ? "payload length" : "past the end"))
        }
        let huge = C.record(.checkpointEntries, [UInt8](repeating: 0, count: Format.checkpointBlockSize + 1))
        cases.append(("entries record over a block", with(2, huge), v.offset(2), "payload length"))
        for declared: UInt64 in [1 << 40, UInt64(Format.checkpointBlockSize) + 1, .max] {
            let record = C.record(.checkpointEntries, flags: Format.flagCompressed, varint(declared) + [0x10, 0x41])
            cases.append(("declared raw length \(declared)", with(2, record), v.offset(2), "over limit"))
        }
        cases.append(("garbage LZ4", with(2, C.record(.checkpointEntries, flags: Format.flagCompressed, varint(100) + [0xFF, 0xFF, 1, 2])), v.offset(2), "LZ4"))
        cases.append(("key length 2^62", with(2, C.entries(varint(1 << 62) + [1, 2, 3])), v.offset(2), "over limit"))
        cases.append(("key length past the block", with(2, C.entries(varint(60_000) + [1, 2, 3])), v.offset(2), "60000 bytes"))
        cases.append(("collection name 2^40", with(1, C.record(.checkpointCollection, varint(1 << 40) + [1])), v.offset(1), "over limit"))
        cases.append(("usage count 2^60", with(5, C.usage([], count: 1 << 60)), v.offset(5), "over limit"))
        cases.append(("usage count past the payload", with(5, C.usage([(1, 1)], count: 1_000)), v.offset(5), "over limit"))
        let maxRecord = UInt64(Format.recordHeaderSize + Format.maxRecordPayload)
        cases.append(("location length over the maximum", with(4, C.entries(C.entry("k3", rowid: 3, object: [4, 64, maxRecord + 1]))), v.offset(4), "over limit"))
        cases.append(("location length under a header", with(4, C.entries(C.entry("k3", rowid: 3, object: [4, 64, 9]))), v.offset(4), "below a record header"))
        cases.append(("location segment over UInt32", with(4, C.entries(C.entry("k3", rowid: 3, object: [1 << 32, 64, 30]))), v.offset(4), "over limit"))
        cases.append(("metadata offset over UInt32", with(4, C.entries(C.entry("k3", rowid: 3, metadata: [1, 1 << 33, 30]))), v.offset(4), "over limit"))
        var enormous = C(records: [C.info(rows: .max, collections: 1), C.collection("a", rows: .max), C.usage([])])
        enormous.header.baseSnapshot = 5
        cases.append(("row count 2^64-1", enormous.bytes(endRows: .max), enormous.offset(1), "out of range"))
        for (label, bytes, offset, fragment) in cases {
            let error = try readCrafted(bytes)
            expectCorrupted(error, at: offset, file: Self.name, fragment)
            if error == nil { Issue.record("\(label): read succeeded") }
        }
    }

    /// A bit flipped in any byte of any record is reported at that record; in the header it
    /// is a typed header error.
    @Test func aBitFlipAnywhereIsATypedErrorAtItsRecord() throws {
        let (disk, files) = try F.disk()
        let path = try F.write(CheckpointImage.make(rows: 60, seed: 21), fs: disk, files: files, blockLimit: 200)
        let good = try #require(disk.currentBytes(of: path))
        let records = F.records(good)
        #expect(Set(records.map(\.type)) == Set((16...20).map(UInt8.init)), "every record kind is present")
        for index in good.indices {
            var bad = good
            bad[index] ^= 1 << UInt8(index % 8)
            try disk.setBytes(bad, of: path)
            let error = F.readError(fs: disk, files: files)
            if index < Format.headerSize {
                switch error {
                case .notADatabase?, .unsupportedVersion?, .corrupted?: break
                default: Issue.record("header byte \(index): \(String(describing: error))")
                }
            } else {
                let record = try #require(records.last { $0.offset <= index })
                expectCorrupted(error, at: Int64(record.offset), file: Self.name)
            }
        }
    }

    /// Cut anywhere: a short header is not a database, a cut at a record boundary misses the
    /// end record, a cut inside a record is reported at that record.
    @Test func truncationAtEveryOffsetIsTyped() throws {
        let (disk, files) = try F.disk()
        let path = try F.write(CheckpointImage.make(rows: 60, seed: 22), fs: disk, files: files, blockLimit: 200)
        let good = try #require(disk.currentBytes(of: path))
        let starts = F.records(good).map(\.offset)
        for cut in 0..<good.count {
            try disk.setBytes(Array(good[..<cut]), of: path)
            let error = F.readError(fs: disk, files: files)
            if cut < Format.headerSize {
                #expect(error == .notADatabase(path: path), "cut \(cut)")
            } else if starts.contains(cut) || cut == Format.headerSize {
                expectCorrupted(error, at: Int64(cut), file: Self.name, "missing end record")
            } else {
                expectCorrupted(error, at: Int64(try #require(starts.last { $0 < cut })), file: Self.name)
            }
        }
    }

    @Test func headerOfAnotherDatabaseFileOrKindIsCorrupted() throws {
        let (disk, files) = try F.disk()
        let path = try F.write(CheckpointImage.make(rows: 20, seed: 23), fs: disk, files: files)
        expectCorrupted(F.readError(fs: disk, files: files, uuid: Array(repeating: 9, count: 16)),
                        at: Int64(Format.headerUUIDOffset), file: Self.name, "another database")
        let bytes = try #require(disk.currentBytes(of: path))
        try F.put(bytes, files.checkpointPath(8), fs: disk)
        expectCorrupted(F.readError(fs: disk, files: files, number: 8), at: Int64(Format.headerFileNumberOffset),
                        file: "db-checkpoint-0000000008", "names checkpoint 3")
        var segment = C.valid
        segment.header.kind = .logSegment
        expectCorrupted(try readCrafted(segment.bytes()), at: Int64(Format.headerKindOffset), file: Self.name, "not a checkpoint")
        var newer = bytes
        newer[Format.headerVersionOffset] = UInt8(Format.version + 1)
        try disk.setBytes(newer, of: path)
        #expect(F.readError(fs: disk, files: files) == .unsupportedVersion(found: Int(Format.version) + 1, supported: Int(Format.version)))
    }

    /// Counters the engine adds to (the next row id, a segment's live bytes) are bounded when
    /// read, so a checkpoint whose checksums were recomputed over huge values cannot make a
    /// later insert, `stats()` or `compact()` overflow: up to the bound reads, past it is
    /// `corrupted` at the record.
    @Test func countersPastTheirBoundsAreCorrupted() throws {
        let v = C.valid
        func with(_ index: Int, _ record: [UInt8]) -> [UInt8] { var c = v; c.records[index] = record; return c.bytes() }
        expectCorrupted(try readCrafted(with(0, C.info(nextRowid: Format.rowidLimit + 1))), at: 64, file: Self.name, "next row id")
        expectCorrupted(try readCrafted(with(0, C.info(nextRowid: .max))), at: 64, file: Self.name, "next row id")
        expectCorrupted(try readCrafted(with(5, C.usage([(4, Format.maxSegmentUsage + 1), (5, 12)]))), at: v.offset(5), file: Self.name, "over a segment")
        expectCorrupted(try readCrafted(with(5, C.usage([(4, 90), (5, .max)]))), at: v.offset(5), file: Self.name, "over a segment")
        #expect(try readCrafted(with(0, C.info(nextRowid: Format.rowidLimit))) == nil, "the largest next row id reads")
        #expect(try readCrafted(with(5, C.usage([(4, Format.maxSegmentUsage), (5, 12)]))) == nil, "a full segment's usage reads")
    }
}
