#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
import YapDBStorage
import YapDBIndex
@testable import YapDBEngine
import TestSupport

/// Values read in place from memory maps of the log segments (Engine+SegmentMaps.swift), on
/// real files: sealed segments are mapped whole, the active one never past its synced length;
/// an old snapshot keeps reading a segment compaction retired through its map, which goes
/// with the snapshot; a damaged mapped record is `corrupted`, never a trap; the `.cached` mode
/// and the simulated disk read with `pread` and map nothing.
@Suite struct SegmentMapTests {
    /// Options on real files: 64 KiB segments, no compression (so every value is read where it
    /// lies), values read as `mode` says.
    static func options(_ mode: IndexReadMode, sync: SyncMode = .full) -> EngineOptions {
        var options = EngineOptions()
        options.syncMode = sync
        options.checkpointThreshold = 0
        options.segmentLimit = 64 << 10
        options.indexPageSize = 512
        options.compression = false
        options.indexReadMode = mode
        return options
    }

    /// Row `i`'s value: `size` bytes that differ from row to row.
    static func value(_ i: Int, size: Int = 300) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i &* 7) }
    }

    static func load(_ engine: Engine, _ rows: Range<Int>, size: Int = 300) throws {
        _ = try engine.write { tx in
            for i in rows { try EngineTesting.set(tx, "c", "k\(i)", value(i, size: size)) }
        }
    }

    /// The lines of /proc/self/maps naming `path` (empty where there is no such file).
    static func mapLines(naming path: String) -> [Substring] {
        guard let file = fopen("/proc/self/maps", "r") else { return [] }
        defer { fclose(file) }
        var text: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = fread(&chunk, 1, chunk.count, file)
            if n <= 0 { break }
            text += chunk[0..<n]
        }
        return String(decoding: text, as: UTF8.self).split(separator: "\n").filter { $0.contains(path) }
    }

    @Test func anOldSnapshotReadsARetiredSegmentThroughItsMapUntilItGoes() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let engine = try Engine.open(path: dir.file("db"), options: Self.options(.mapped))
        defer { try? engine.close() }
        // One commit per 40 rows: about 12 KiB each, so the 64 KiB segments roll several times.
        for start in stride(from: 0, to: 800, by: 40) { try Self.load(engine, start..<(start + 40)) }
        var old: EngineSnapshot? = engine.snapshot()
        let active = engine.writer.withLock { $0.log.segmentNumber }
        let sealed = old!.segments.numbers.filter { $0 != active }.sorted()
        try #require(sealed.count >= 3)
        for number in sealed {
            let size = try old!.segments.segments[number]!.file.size()
            #expect(old!.segments.mappedLength(number) == Int(size), "sealed segment \(number) is mapped whole")
        }
        // Three rows in four removed: the sealed segments pass the dead-fraction threshold.
        _ = try engine.write { tx in
            for i in 0..<800 where i % 4 != 0 { _ = try tx.remove(collection: "c", key: "k\(i)") }
        }
        let report = try engine.compact()
        try #require(!report.victims.isEmpty)
        let current = engine.snapshot()
        // `compact()` may also seal and take the segment that was active at the old snapshot;
        // that snapshot saw it unsealed, so it may hold no map of it (it reads it with `pread`).
        let sealedVictims = report.victims.filter { sealed.contains($0) }
        try #require(!sealedVictims.isEmpty)
        for victim in report.victims {
            #expect(current.segments.segments[victim] == nil)
            #expect(PosixFileSystem.shared.kind(of: engine.files.segmentPath(victim)) == .missing, "unlinked")
            if sealed.contains(victim) { #expect(old!.segments.mappedLength(victim) != nil) }
        }
        for output in report.outputs {
            #expect(current.segments.mappedLength(output) == Int(try current.segments.segments[output]!.file.size()))
        }
        // The old snapshot reads every row it knew, the removed ones included, from the
        // unlinked victims' maps; the new one reads the moved copies from the outputs' maps.
        var readFromVictims = 0
        for i in 0..<800 {
            let entry = try #require(try old!.entry(collection: "c", key: "k\(i)"))
            if sealedVictims.contains(entry.object.segment) {
                readFromVictims += 1
                #expect(Int(entry.object.offset + entry.object.length) <= old!.segments.mappedLength(entry.object.segment) ?? 0)
            }
            #expect(try old!.objectBytes(entry) == Self.value(i))
            #expect(try current.object(collection: "c", key: "k\(i)") == (i % 4 == 0 ? Self.value(i) : nil))
        }
        #expect(readFromVictims > 0)
        #if os(Linux)
        // The victims' maps live exactly as long as the snapshot holding them.
        let victimPath = engine.files.segmentPath(sealedVictims[0])
        #expect(!Self.mapLines(naming: victimPath).isEmpty, "mapped while the old snapshot lives")
        old = nil
        #expect(Self.mapLines(naming: victimPath).isEmpty, "unmapped with the last snapshot holding it")
        #endif
        _ = old
        #expect(try engine.verify().isValid)
    }

    @Test(arguments: [SyncMode.normal, .off])
    func theActiveSegmentIsNeverMappedPastItsSyncedLength(sync: SyncMode) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var options = Self.options(.mapped, sync: sync)
        options.segmentLimit = 16 << 20
        let engine = try Engine.open(path: dir.file("db"), options: options)
        defer { try? engine.close() }
        func mapped() -> (length: Int?, synced: LogPosition, end: UInt32, number: UInt32) {
            engine.writer.withLock { state in
                (state.segments.mappedLength(state.log.segmentNumber), state.log.durableThrough, state.log.end, state.log.segmentNumber)
            }
        }
        // `.normal` and `.off`: commits are not synced, so 2 MiB of them leave the active
        // segment unmapped.
        try Self.load(engine, 0..<2000, size: 1000)
        var now = mapped()
        #expect(now.length == nil || now.length! <= Int(now.synced.offset))
        #expect(try engine.snapshot().object(collection: "c", key: "k1999") == Self.value(1999, size: 1000))
        // A checkpoint syncs the log: the active segment is mapped up to its end.
        try engine.checkpoint()
        now = mapped()
        #expect(now.synced == LogPosition(segment: now.number, offset: now.end))
        #expect(now.length == Int(now.end))
        let mappedAfterCheckpoint = now.length!
        // A failed transaction streams more than a megabyte to the file, then is truncated
        // away: the cut is past the map, and every read still works.
        struct Abandon: Error {}
        #expect {
            _ = try engine.write { tx in
                for i in 0..<1500 { try EngineTesting.set(tx, "c", "x\(i)", Self.value(i, size: 1000)) }
                throw Abandon()
            }
        } throws: { EngineTesting.bodyThrew($0, Abandon.self) }
        #expect(try PosixFileSystem.shared.open(engine.files.segmentPath(now.number), mode: .readOnly).size() == Int64(now.end))
        let snapshot = engine.snapshot()
        for i in stride(from: 0, to: 2000, by: 7) {
            #expect(try snapshot.object(collection: "c", key: "k\(i)") == Self.value(i, size: 1000))
        }
        // A small commit: its value lies past the map, read with `pread`.
        try Self.load(engine, 5000..<5001, size: 1000)
        #expect(mapped().length == mappedAfterCheckpoint)
        let entry = try #require(try engine.snapshot().entry(collection: "c", key: "k5000"))
        #expect(Int(entry.object.offset) >= mappedAfterCheckpoint)
        #expect(try engine.snapshot().objectBytes(entry) == Self.value(5000, size: 1000))
        #expect(try engine.verify().isValid)
    }

    @Test func aFullySyncedCommitIsMappedOnceItGrowsTheSegmentByAStep() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var options = Self.options(.mapped)
        options.segmentLimit = 16 << 20
        let engine = try Engine.open(path: dir.file("db"), options: options)
        defer { try? engine.close() }
        try Self.load(engine, 0..<1200, size: 1000)
        let (length, end) = engine.writer.withLock { ($0.segments.mappedLength($0.log.segmentNumber), $0.log.end) }
        #expect(length == Int(end), "a commit past the step maps the active segment up to its synced end")
        let snapshot = engine.snapshot()
        for i in stride(from: 0, to: 1200, by: 11) {
            #expect(try snapshot.object(collection: "c", key: "k\(i)") == Self.value(i, size: 1000))
        }
    }

    @Test func aDamagedMappedRecordIsCorruptedNotATrap() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var engine = try Engine.open(path: dir.file("db"), options: Self.options(.mapped))
        try Self.load(engine, 0..<50)
        try engine.close()
        // Reopened: the active segment is mapped up to its end at open.
        engine = try Engine.open(path: dir.file("db"), options: Self.options(.mapped))
        defer { try? engine.close() }
        let snapshot = engine.snapshot()
        let entry = try #require(try snapshot.entry(collection: "c", key: "k7"))
        let mappedLength = try #require(snapshot.segments.mappedLength(entry.object.segment))
        #expect(Int(entry.object.offset + entry.object.length) <= mappedLength)
        #expect(try snapshot.objectBytes(entry) == Self.value(7))

        // One byte of the value changes on disk; the shared map sees it, the checksum catches it.
        let file = try PosixFileSystem.shared.open(engine.files.segmentPath(entry.object.segment), mode: .readWrite)
        let at = Int64(entry.object.offset + entry.object.length) - 5
        var byte = try file.readExactly(1, at: at)
        byte[0] ^= 0xFF
        try file.write(byte, at: at)
        file.close()
        for _ in 0..<2 {
            let error = #expect(throws: EngineError.self) { try snapshot.objectBytes(entry) }
            if case .corrupted? = error {} else { Issue.record("expected corrupted, got \(String(describing: error))") }
        }
        // The neighbours are intact.
        #expect(try snapshot.object(collection: "c", key: "k6") == Self.value(6))

        // Locations no index should hold: every one is bounds-checked before use.
        let segment = entry.object.segment
        let bad: [ValueLocation] = [
            ValueLocation(segment: segment, offset: 100, length: 3),                                  // shorter than a header
            ValueLocation(segment: segment, offset: entry.object.offset, length: entry.object.length - 1), // wrong length
            ValueLocation(segment: segment, offset: UInt32(mappedLength - 4), length: 64),            // runs past the map
            ValueLocation(segment: segment, offset: UInt32.max - 8, length: UInt32.max),              // far past the file
            ValueLocation(segment: segment + 100, offset: 0, length: 64),                              // no such segment
        ]
        for location in bad {
            let error = #expect(throws: StorageError.self) { try snapshot.segments.withValue(at: location, owner: .object(entry.rowid)) { _ in () } }
            if case .corrupted? = error {} else { Issue.record("\(location): expected corrupted, got \(String(describing: error))") }
        }
        // The mapped reader itself refuses a record past the bytes it is given.
        let mapping = try #require(snapshot.segments.segments[segment]?.mapping)
        let pastEnd = RecordLocation(segment: segment, offset: UInt32(mappedLength - 8), length: 32)
        #expect(throws: StorageError.self) {
            try SegmentReader.withValue(at: pastEnd, inMapped: mapping.bytes, path: "segment") { _ in () }
        }
    }

    @Test(arguments: [false, true])
    func theCachedModeAndTheSimulatedDiskReadWithPread(simulated: Bool) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var options = Self.options(simulated ? .mapped : .cached(pages: 64))
        var path = dir.file("db")
        if simulated {
            options.fileSystem = try EngineTesting.simulated()
            path = "/db/db"
        }
        let engine = try Engine.open(path: path, options: options)
        defer { try? engine.close() }
        for start in stride(from: 0, to: 600, by: 40) { try Self.load(engine, start..<(start + 40)) }
        let old = engine.snapshot()
        _ = try engine.write { tx in
            for i in 0..<600 where i % 4 != 0 { _ = try tx.remove(collection: "c", key: "k\(i)") }
        }
        let report = try engine.compact()
        #expect(!report.victims.isEmpty)
        try engine.checkpoint()
        let current = engine.snapshot()
        for table in [old.segments, current.segments] {
            for number in table.numbers { #expect(table.mappedLength(number) == nil, "segment \(number) is read with pread") }
        }
        for i in 0..<600 {
            #expect(try old.object(collection: "c", key: "k\(i)") == Self.value(i))
            #expect(try current.object(collection: "c", key: "k\(i)") == (i % 4 == 0 ? Self.value(i) : nil))
        }
        #expect(try engine.verify().isValid)
    }
}
