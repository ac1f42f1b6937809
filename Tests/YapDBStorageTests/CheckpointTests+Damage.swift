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

    static func info(snapshot: UInt64 = 5, reservedRows: UInt64 = 0, reservedCount: UInt32 = 0, reserved: UInt32 = 0,
                     nextRowid: UInt64 = 1_000) -> [UInt8] {
        var p: [UInt8] = []
        p.appendLE(snapshot); p.appendLE(nextRowid); p.appendLE(UInt32(4)); p.appendLE(UInt32(64))
        p.appendLE(reservedRows); p.appendLE(reservedCount); p.appendLE(reserved)
        return record(.checkpointInfo, p)
    }

    static func usage(_ pairs: [(UInt64, UInt64)], count: UInt64? = nil) -> [UInt8] {
        var p: [UInt8] = []
        p.appendVarint(count ?? UInt64(pairs.count))
        for (segment, live) in pairs { p.appendVarint(segment); p.appendVarint(live) }
        return record(.checkpointSegmentUsage, p)
    }

    /// A pending-extension record (type 23); `count` falsifies the record count.
    static func pending(_ name: String, flags: UInt8 = 0, _ records: [[UInt8]], count: UInt64? = nil, trailing: [UInt8] = []) -> [UInt8] {
        var p: [UInt8] = []
        p.appendString(name); p.append(flags); p.appendVarint(count ?? UInt64(records.count))
        for r in records { p.appendVarint(UInt64(r.count)); p += r }
        return record(.checkpointPendingExtension, p + trailing)
    }

    static func root(_ bytes: [UInt8] = Array(0..<40)) -> [UInt8] { record(.checkpointIndexRoot, bytes) }

    /// A valid file: segment usage, two carried extensions (one lost its row changes), a root.
    static let valid = CraftedCheckpoint(records: [
        info(), usage([(4, 90), (5, 12)]),
        pending("view:a", [[1, 2, 3], []]), pending("relationship:b", flags: 1, []),
        root(),
    ])

    /// Offset of record `index` (`records.count` is where the end record goes).
    func offset(_ index: Int) -> Int64 {
        Int64(Format.headerSize + records.prefix(index).reduce(0) { $0 + $1.count })
    }

    /// Header, records, then an end record counting them and checksumming them (its reserved
    /// field `endRows`), unless `end` is false; `count`/`crcDelta` falsify the end record's fields.
    func bytes(endRows: UInt64 = 0, end: Bool = true, count: UInt32? = nil, crcDelta: UInt32 = 0) -> [UInt8] {
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
        #expect(image.info == CheckpointInfo(snapshot: 5, nextRowid: 1_000, replay: LogPosition(segment: 4, offset: 64)))
        #expect(image.usage == [4: 90, 5: 12])
        #expect(image.pending == [CheckpointPendingExtension(name: "view:a", rowChangesLost: false, records: [[1, 2, 3], []]),
                                  CheckpointPendingExtension(name: "relationship:b", rowChangesLost: true, records: [])])
        #expect(image.root == Array(0..<40))
    }

    @Test func structuralDamageIsCorruptedAtTheBadRecord() throws {
        var v = C.valid
        typealias Case = (label: String, bytes: [UInt8], offset: Int64, fragment: String)
        var cases: [Case] = []
        func with(_ index: Int, _ record: [UInt8]) -> CraftedCheckpoint { var c = v; c.records[index] = record; return c }
        func inserting(_ record: [UInt8], at index: Int) -> CraftedCheckpoint { var c = v; c.records.insert(record, at: index); return c }
        let end = v.offset(v.records.count)

        cases.append(("usage first", C(records: Array(v.records.dropFirst())).bytes(), 64, "info record"))
        cases.append(("info reserved rows", with(0, C.info(reservedRows: 3)).bytes(), 64, "reserved"))
        cases.append(("info reserved count", with(0, C.info(reservedCount: 2)).bytes(), 64, "reserved"))
        cases.append(("info reserved", with(0, C.info(reserved: 1)).bytes(), 64, "reserved"))
        cases.append(("end reserved", v.bytes(endRows: 4), end, "reserved"))
        cases.append(("end record count", v.bytes(count: 9), end, "records"))
        cases.append(("end checksum", v.bytes(crcDelta: 1), end, "checksum"))
        cases.append(("missing end", v.bytes(end: false), end, "missing end record"))
        let endEnd = end + 26
        cases.append(("a byte after the end", v.bytes() + [0], endEnd, "after the end record"))
        cases.append(("a record after the end", v.bytes() + C.usage([]), endEnd, "after the end record"))
        var noUsage = v; noUsage.records.remove(at: 1)
        cases.append(("no segment usage", noUsage.bytes(), noUsage.offset(1), "before the segment-usage record"))
        let twoUsage = inserting(C.usage([]), at: 2)
        cases.append(("second segment usage", twoUsage.bytes(), twoUsage.offset(2), "second"))
        var early = v; early.records.swapAt(1, 2)
        cases.append(("pending before usage", early.bytes(), early.offset(1), "before the segment-usage record"))
        let late = inserting(C.pending("late", []), at: 5)
        cases.append(("pending after the root", late.bytes(), late.offset(5), "after the index root"))
        let twoRoots = inserting(C.root(), at: 5)
        cases.append(("second root", twoRoots.bytes(), twoRoots.offset(5), "second index root"))
        let twoPending = inserting(C.pending("view:a", []), at: 4)
        cases.append(("second pending of a name", twoPending.bytes(), twoPending.offset(4), "second pending"))
        let twoInfo = inserting(C.info(), at: 1)
        cases.append(("second info", twoInfo.bytes(), 64 + Int64(C.info().count), "second info"))
        var commit: [UInt8] = []
        RecordCodec.appendCommit(CommitInfo(snapshot: 1, recordCount: 0, recordsChecksum: 0, recordsLength: 0, durableThrough: .zero), into: &commit)
        let withCommit = inserting(commit, at: 3)
        cases.append(("commit record", withCommit.bytes(), withCommit.offset(3), "log record type 6"))
        for retired: UInt8 in [17, 18, 21, 99] {
            let unknown = inserting([UInt8](repeating: 0, count: 4) + [retired, 0, 0, 0, 0, 0], at: 3)
            cases.append(("type \(retired)", unknown.bytes(), unknown.offset(3), "unknown record type \(retired)"))
        }
        cases.append(("pending flag 1", with(2, C.record(.checkpointPendingExtension, flags: 1, [1, 97, 0, 0])).bytes(), v.offset(2), "flags"))
        cases.append(("info short", with(0, C.record(.checkpointInfo, [UInt8](repeating: 0, count: 39))).bytes(), 64, "payload length of 39"))
        v.header.baseSnapshot = 6
        cases.append(("header snapshot", v.bytes(), 64, "header snapshot 6"))
        v = C.valid
        cases.append(("usage out of order", with(1, C.usage([(5, 1), (4, 1)])).bytes(), v.offset(1), "out of order"))
        cases.append(("usage duplicate", with(1, C.usage([(4, 1), (4, 1)])).bytes(), v.offset(1), "out of order"))
        cases.append(("pending empty name", with(2, C.pending("", [])).bytes(), v.offset(2), "empty extension name"))
        cases.append(("pending unknown flag", with(2, C.pending("view:a", flags: 2, [])).bytes(), v.offset(2), "unknown flags"))
        cases.append(("pending trailing bytes", with(2, C.pending("view:a", [[1]], trailing: [0])).bytes(), v.offset(2), "bytes after"))
        cases.append(("pending invalid UTF-8", with(2, C.record(.checkpointPendingExtension, [2, 0xC3, 0x28, 0, 0])).bytes(), v.offset(2), "UTF-8"))
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
        let hugeRoot = C.record(.checkpointIndexRoot, [UInt8](repeating: 0, count: Format.rootBodyOffset + Format.rootMaximumSize + 5))
        cases.append(("root record over its maximum", with(4, hugeRoot), v.offset(4), "payload length"))
        cases.append(("usage count 2^60", with(1, C.usage([], count: 1 << 60)), v.offset(1), "over limit"))
        cases.append(("usage count past the payload", with(1, C.usage([(1, 1)], count: 1_000)), v.offset(1), "over limit"))
        cases.append(("pending name 2^40", with(2, C.record(.checkpointPendingExtension, varint(1 << 40) + [1])), v.offset(2), "over limit"))
        cases.append(("pending count 2^60", with(2, C.pending("view:a", [], count: 1 << 60)), v.offset(2), "over limit"))
        cases.append(("pending count past the payload", with(2, C.pending("view:a", [[1]], count: 1_000)), v.offset(2), "over limit"))
        cases.append(("pending record 2^40", with(2, C.record(.checkpointPendingExtension, [1, 97, 0, 1] + varint(1 << 40))), v.offset(2), "over limit"))
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
        let path = try F.write(CheckpointImage.make(extensions: 6, seed: 21), fs: disk, files: files, blockLimit: 200)
        let good = try #require(disk.currentBytes(of: path))
        let records = F.records(good)
        #expect(Set(records.map(\.type)) == Set([16, 19, 20, 22, 23]), "every record kind is present")
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
        let path = try F.write(CheckpointImage.make(extensions: 6, seed: 22), fs: disk, files: files, blockLimit: 200)
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
        let path = try F.write(CheckpointImage.make(extensions: 3, seed: 23), fs: disk, files: files)
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
        expectCorrupted(try readCrafted(with(1, C.usage([(4, Format.maxSegmentUsage + 1), (5, 12)]))), at: v.offset(1), file: Self.name, "over a segment")
        expectCorrupted(try readCrafted(with(1, C.usage([(4, 90), (5, .max)]))), at: v.offset(1), file: Self.name, "over a segment")
        #expect(try readCrafted(with(0, C.info(nextRowid: Format.rowidLimit))) == nil, "the largest next row id reads")
        #expect(try readCrafted(with(1, C.usage([(4, Format.maxSegmentUsage), (5, 12)]))) == nil, "a full segment's usage reads")
    }
}
