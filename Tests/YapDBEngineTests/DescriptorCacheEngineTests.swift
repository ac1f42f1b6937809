#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
import YapDBStorage
import YapDBIndex
@testable import YapDBEngine
import TestSupport

/// The engine reads sealed segments and index files through a bounded descriptor cache
/// (reliability finding F14), on real files: the descriptors it holds do not grow with its
/// segments, and a snapshot keeps reading segments a compaction retired and removed.
@Suite struct DescriptorCacheEngineTests {
    /// Options on real files: 8 KiB segments, values read with `pread` (`.cached`: every value
    /// read goes through a descriptor), a cache of `limit` descriptors.
    static func options(limit: Int) -> EngineOptions {
        var options = SegmentMapTests.options(.cached(pages: 16))
        options.segmentLimit = 8 << 10
        options.descriptorCacheLimit = limit
        return options
    }

    @Test func manySegmentsAreReadThroughTwoDescriptors() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let engine = try Engine.open(path: dir.file("db"), options: Self.options(limit: 2))
        for start in stride(from: 0, to: 900, by: 20) { try SegmentMapTests.load(engine, start..<(start + 20)) }
        let snapshot = engine.snapshot()
        #expect(snapshot.segments.numbers.count >= 20)
        // Every sealed segment is read through the cache; only the active one is not.
        let uncached = snapshot.segments.segments.values.filter { !($0.file is CachedFile) }
        #expect(uncached.count == 1)
        for i in 0..<900 { #expect(try snapshot.object(collection: "c", key: "k\(i)") == SegmentMapTests.value(i)) }
        let counts = try #require(engine.descriptors).counts
        #expect(counts.open <= 2 && counts.reopens > 0, "\(counts)")
        // (The descriptors of the whole process are counted in a child process of its own,
        // `InterferenceTests.manySegmentsAreReadThroughABoundedSetOfDescriptors`: here other
        // tests run alongside.)
        try engine.close()
    }

    /// Compaction removes its victims while an old snapshot still reaches them: their
    /// descriptors are pinned open first, so the old snapshot reads every row it knew, however
    /// many other files are read meanwhile.
    @Test func anOldSnapshotReadsRetiredSegmentsAfterTheirRemoval() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let engine = try Engine.open(path: dir.file("db"), options: Self.options(limit: 2))
        defer { try? engine.close() }
        for start in stride(from: 0, to: 400, by: 20) { try SegmentMapTests.load(engine, start..<(start + 20)) }
        let old = engine.snapshot()
        _ = try engine.write { tx in
            for i in 0..<400 where i % 4 != 0 { _ = try tx.remove(collection: "c", key: "k\(i)") }
        }
        let report = try engine.compact()
        try #require(report.victims.count >= 3)
        for victim in report.victims {
            #expect(PosixFileSystem.shared.kind(of: engine.files.segmentPath(victim)) == .missing, "removed")
        }
        let current = engine.snapshot()
        for round in 0..<2 {
            for i in 0..<400 {
                #expect(try old.object(collection: "c", key: "k\(i)") == SegmentMapTests.value(i), "round \(round) row \(i)")
                #expect(try current.object(collection: "c", key: "k\(i)") == (i % 4 == 0 ? SegmentMapTests.value(i) : nil))
            }
        }
    }

    /// A sealed segment replaced behind the engine's back while its descriptor was closed is a
    /// typed error on the next read, never the other file's bytes.
    @Test func aSegmentReplacedWhileItsDescriptorWasClosedIsAnError() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let engine = try Engine.open(path: dir.file("db"), options: Self.options(limit: 1))
        defer { try? engine.close() }
        for start in stride(from: 0, to: 200, by: 20) { try SegmentMapTests.load(engine, start..<(start + 20)) }
        let snapshot = engine.snapshot()
        let entry = try #require(try snapshot.entry(collection: "c", key: "k0"))
        let path = engine.files.segmentPath(entry.object.segment)
        // Read every row, so the first segment's descriptor is closed by the others' opens.
        for i in 0..<200 { _ = try snapshot.object(collection: "c", key: "k\(i)") }
        // A copy of the same bytes renamed over it: the bytes would even read right.
        let copy = path + ".copy"
        #expect(FileManager.default.fileExists(atPath: path))
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        #expect(rename(copy, path) == 0)
        #expect(throws: EngineError.self) { _ = try snapshot.object(collection: "c", key: "k0") }
    }
}
