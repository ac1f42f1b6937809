import Testing
import YapDBStorage
import TestSupport

/// One test per shape of damage (docs/format.md §5): each builds a database of three commits
/// on real files, damages it, and checks the typed outcome.
@Suite struct CorruptionShapeTests {
    let fs = PosixFileSystem.shared

    /// Writes three commits of two keys each and returns the harness, the segment path, and
    /// the end offset of each commit.
    func build(_ dir: TemporaryDirectory) throws -> (LogHarness, String, [UInt32]) {
        let harness = LogHarness(path: dir.file("db"), fs: fs)
        let (opened, state) = try harness.open()
        #expect(state.isEmpty)
        var ends: [UInt32] = []
        for n in 1...3 {
            try LogHarness.commit(opened.writer, [("a\(n)", LogHarness.value(commit: n, key: 0)), ("b\(n)", LogHarness.value(commit: n, key: 1))])
            ends.append(opened.writer.end)
        }
        opened.writer.file.close()
        opened.lock?.unlock()
        return (harness, opened.writer.files.segmentPath(opened.writer.segmentNumber), ends)
    }

    func expected(_ commits: Int) -> [String: [UInt8]] {
        var state: [String: [UInt8]] = [:]
        for n in stride(from: 1, through: commits, by: 1) {
            state["a\(n)"] = LogHarness.value(commit: n, key: 0)
            state["b\(n)"] = LogHarness.value(commit: n, key: 1)
        }
        return state
    }

    func bytes(_ path: String) throws -> [UInt8] {
        let file = try fs.open(path, mode: .readOnly)
        defer { file.close() }
        return try file.readExactly(Int(try file.size()), at: 0)
    }

    func overwrite(_ path: String, _ bytes: [UInt8]) throws {
        let file = try fs.open(path, mode: .readWrite)
        defer { file.close() }
        try file.truncate(to: 0)
        try file.write(bytes, at: 0)
    }

    func isCorrupted(_ error: any Error) -> Bool {
        if case StorageError.corrupted = error { return true }
        return false
    }

    @Test func wrongMagicIsNotADatabase() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let (harness, _, _) = try build(dir)
        var main = try bytes(harness.path)
        main[0] = UInt8(ascii: "S"); main[Format.mainHeaderCopyOffset] = UInt8(ascii: "S")
        try overwrite(harness.path, main)
        #expect(throws: StorageError.notADatabase(path: harness.path)) { try harness.open() }
        #expect(try bytes(harness.path) == main, "the file is left unchanged")
    }

    @Test func newerVersionIsUnsupported() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let (harness, _, _) = try build(dir)
        var main = try bytes(harness.path)
        let newer = UInt8(Format.version + 1)
        main[Format.headerVersionOffset] = newer; main[Format.mainHeaderCopyOffset + Format.headerVersionOffset] = newer
        try overwrite(harness.path, main)
        #expect(throws: StorageError.unsupportedVersion(found: Int(newer), supported: Int(Format.version))) { try harness.open() }
    }

    /// A database of format 1 (whose index was rebuilt from checkpoint images at every open)
    /// is refused with `unsupportedVersion`, found 1: format 2 keeps the index in pages.
    @Test func olderVersionIsUnsupported() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let (harness, _, _) = try build(dir)
        var main = try bytes(harness.path)
        main[Format.headerVersionOffset] = 1; main[Format.mainHeaderCopyOffset + Format.headerVersionOffset] = 1
        try overwrite(harness.path, main)
        #expect(throws: StorageError.unsupportedVersion(found: 1, supported: Int(Format.version))) { try harness.open() }
    }

    @Test func headerChecksumDamageInBothCopiesIsCorruptButOneCopyIsSurvivable() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let (harness, _, _) = try build(dir)
        var main = try bytes(harness.path)
        main[Format.headerUUIDOffset] ^= 0x10
        try overwrite(harness.path, main)
        let (opened, state) = try harness.open()
        #expect(opened.damagedHeaderCopy == 0)
        #expect(state == expected(3))
        opened.lock?.unlock()
        main[Format.mainHeaderCopyOffset + Format.headerUUIDOffset] ^= 0x10
        try overwrite(harness.path, main)
        #expect { try harness.open() } throws: { isCorrupted($0) }
    }

    @Test func truncatedHeaderIsNotADatabase() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let (harness, _, _) = try build(dir)
        let main = try bytes(harness.path)
        try overwrite(harness.path, Array(main[0..<40]))
        #expect(throws: StorageError.notADatabase(path: harness.path)) { try harness.open() }
    }

    @Test func tornFinalCommitCutAtEveryByteRecoversThePrefix() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let (harness, segment, ends) = try build(dir)
        let full = try bytes(segment)
        for cut in Int(ends[1])..<Int(ends[2]) {
            try overwrite(segment, Array(full[0..<cut]))
            let (opened, state) = try harness.open()
            #expect(state == expected(2), "cut at \(cut)")
            #expect(opened.report.truncatedBytes == Int64(cut) - Int64(ends[1]), "cut at \(cut)")
            #expect(opened.report.lastSnapshot == 2)
            #expect(try fs.open(segment, mode: .readOnly).size() == Int64(ends[1]), "the torn tail is truncated")
            opened.lock?.unlock()
        }
    }

    @Test func flippedPayloadBitInTheLastCommitIsATornTailAndInAnEarlierOneIsCorruption() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let (harness, segment, ends) = try build(dir)
        let full = try bytes(segment)
        var damaged = full
        damaged[Int(ends[1]) + 30] ^= 0x04
        try overwrite(segment, damaged)
        let (opened, state) = try harness.open()
        #expect(state == expected(2))
        #expect(opened.report.truncatedBytes == Int64(ends[2] - ends[1]))
        opened.lock?.unlock()

        damaged = full
        damaged[Int(ends[0]) + 30] ^= 0x04
        try overwrite(segment, damaged)
        #expect { try harness.open() } throws: { isCorrupted($0) }
        #expect(try bytes(segment) == damaged, "corruption leaves the file unchanged")
    }

    @Test func flippedLengthBitIsDetected() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let (harness, segment, ends) = try build(dir)
        var damaged = try bytes(segment)
        damaged[Int(ends[1]) + Format.recordLengthOffset + 1] ^= 0x01
        try overwrite(segment, damaged)
        let (opened, state) = try harness.open()
        #expect(state == expected(2))
        #expect(opened.report.tornAt == LogPosition(segment: 1, offset: ends[1]))
        opened.lock?.unlock()
    }

    @Test func zeroedTailIsTruncated() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let (harness, segment, ends) = try build(dir)
        var damaged = try bytes(segment)
        for i in Int(ends[2]) - 20..<Int(ends[2]) { damaged[i] = 0 }
        damaged += [UInt8](repeating: 0, count: 4096)
        try overwrite(segment, damaged)
        let (opened, state) = try harness.open()
        #expect(state == expected(2))
        #expect(opened.report.truncatedBytes == Int64(damaged.count) - Int64(ends[1]))
        opened.lock?.unlock()
    }

    @Test func garbageTailIsTruncated() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let (harness, segment, ends) = try build(dir)
        var rng = SeededRandom(seed: 11)
        let damaged = try bytes(segment) + rng.bytes(10_000)
        try overwrite(segment, damaged)
        let (opened, state) = try harness.open()
        #expect(state == expected(3))
        #expect(opened.report.truncatedBytes == 10_000)
        #expect(opened.report.tornAt == LogPosition(segment: 1, offset: ends[2]))
        opened.lock?.unlock()
        // New commits go after the last valid one and survive a reopen.
        let (again, _) = try harness.open()
        try LogHarness.commit(again.writer, [("z", [1, 2, 3])])
        again.lock?.unlock()
        var after = expected(3); after["z"] = [1, 2, 3]
        let (third, state3) = try harness.open()
        #expect(state3 == after)
        third.lock?.unlock()
    }

    @Test func damageFollowedByAValidCommitIsCorruption() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let (harness, segment, ends) = try build(dir)
        var damaged = try bytes(segment)
        for i in Int(ends[0])..<Int(ends[0]) + 12 { damaged[i] = 0xAA }
        try overwrite(segment, damaged)
        #expect { try harness.open() } throws: { error in
            guard case StorageError.corrupted(let offset, let reason) = error else { return false }
            return offset == Int64(ends[0]) && reason.contains("snapshot 3")
        }
    }

    @Test func segmentHeaderChecksumDamageWithSyncedCommitsIsCorruption() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let (harness, segment, _) = try build(dir)
        var damaged = try bytes(segment)
        damaged[Format.headerBaseSnapshotOffset] ^= 0x01
        try overwrite(segment, damaged)
        #expect { try harness.open() } throws: { isCorrupted($0) }
    }

    @Test func missingFileWithoutCreateIsFileNotFound() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let harness = LogHarness(path: dir.file("absent"), fs: fs)
        #expect(throws: StorageError.fileNotFound(path: dir.file("absent"))) { try harness.open(create: false) }
    }

    @Test func lockedWhileOpen() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let harness = LogHarness(path: dir.file("db"), fs: fs)
        let (opened, _) = try harness.open()
        #expect(throws: StorageError.locked(path: harness.path)) { try harness.open() }
        opened.lock?.unlock()
        let (again, _) = try harness.open()
        again.lock?.unlock()
    }
}
