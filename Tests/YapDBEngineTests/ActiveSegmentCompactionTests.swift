import Testing
import YapDBStorage
import YapDBSimulatedDisk
import YapDBIndex
@testable import YapDBEngine
import TestSupport

/// `compact()` takes the active log segment too: a database whose rows all sit in one segment
/// (never rolled) shrinks once half of it is dead, keeps every row, and a power cut at any step
/// of the seal and the compaction loses no commit. Both index read modes.
@Suite struct ActiveSegmentCompactionTests {
    static func options(_ disk: SimulatedDisk, cached: Bool) -> EngineOptions {
        var options = EngineTesting.options(disk, segmentLimit: 1 << 20)
        options.indexReadMode = cached ? .cached(pages: 64) : .mapped
        return options
    }

    /// 120 rows of 300 bytes, then 80 of them removed, in a few commits: everything in the one
    /// segment the database started with.
    static func build(_ disk: SimulatedDisk, cached: Bool) throws -> (Engine, Model) {
        let engine = try Engine.open(path: "/db/main", options: options(disk, cached: cached))
        var model = Model()
        var rng = SeededRandom(seed: 24)
        for batch in 0..<4 {
            _ = try engine.write { tx in
                for i in 0..<30 {
                    let key = "k\(batch * 30 + i)", value = rng.bytes(300)
                    try EngineTesting.set(tx, "c", key, value, metadata: i % 3 == 0 ? [UInt8(i)] : nil)
                    model["c", key] = .init(object: value, metadata: i % 3 == 0 ? [UInt8(i)] : nil)
                }
            }
        }
        _ = try engine.write { tx in
            for i in 0..<120 where i % 3 != 1 {
                try tx.remove(collection: "c", key: "k\(i)")
                model["c", "k\(i)"] = nil
            }
        }
        return (engine, model)
    }

    @Test(arguments: [false, true])
    func compactingADatabaseInOneSegmentShrinksItAndKeepsEveryRow(cached: Bool) throws {
        let disk = try EngineTesting.simulated()
        var (engine, model) = try Self.build(disk, cached: cached)
        let before = try engine.stats()
        #expect(before.segmentCount == 1, "everything is in the active segment")
        let report = try engine.compact()
        let after = try engine.stats()
        #expect(report.victims.count == 1, "the sealed active segment was compacted: \(report)")
        #expect(after.segmentBytes * 2 < before.segmentBytes,
                "log bytes \(before.segmentBytes) → \(after.segmentBytes)")
        #expect(try engine.snapshot().materialize() == model)
        #expect(try engine.verify().isValid)

        // The database goes on in its new segment, and reopens with every row.
        _ = try engine.write { tx in try EngineTesting.set(tx, "c", "after", [7]) }
        model["c", "after"] = .init(object: [7])
        try engine.close()
        engine = try Engine.open(path: "/db/main", options: Self.options(disk, cached: cached))
        #expect(try engine.snapshot().materialize() == model)
        #expect(try engine.verify().isValid)
    }

    @Test(arguments: [false, true])
    func theIndexIsRepackedIntoFullPages(cached: Bool) throws {
        let disk = try EngineTesting.simulated()
        var options = Self.options(disk, cached: cached)
        options.indexPageSize = 512
        let engine = try Engine.open(path: "/db/main", options: options)
        var rng = SeededRandom(seed: 31)
        var model = Model()
        var keys: [String] = []
        for _ in 0..<4 {
            _ = try engine.write { tx in
                for _ in 0..<500 {
                    let key = "k\(rng.next() % 1_000_000_000)", value = rng.bytes(20)
                    try EngineTesting.set(tx, "c", key, value)
                    model["c", key] = .init(object: value)
                    keys.append(key)
                }
            }
        }
        try engine.checkpoint()
        let loaded = try engine.stats()
        _ = try engine.write { tx in
            for (i, key) in keys.enumerated() where i % 2 == 0 {
                try tx.remove(collection: "c", key: key)
                model["c", key] = nil
            }
        }
        _ = try engine.compact()
        let compacted = try engine.stats()
        // Half the rows are gone: repacked, the index takes about half the pages (a node-for-node
        // copy kept every half-empty leaf).
        #expect(compacted.indexPages * 10 < loaded.indexPages * 6,
                "index pages \(loaded.indexPages) after the load, \(compacted.indexPages) after deleting half and compacting")
        #expect(compacted.indexDeadBytes == 0)
        #expect(try engine.snapshot().materialize() == model)
        #expect(try engine.verify().isValid)
    }

    @Test func aSegmentOfLiveRowsOnlyIsNotSealed() throws {
        let disk = try EngineTesting.simulated()
        let engine = try Engine.open(path: "/db/main", options: Self.options(disk, cached: false))
        var rng = SeededRandom(seed: 9)
        _ = try engine.write { tx in
            // Values that do not compress: the commit record is then a tiny part of the segment.
            for i in 0..<50 { try EngineTesting.set(tx, "c", "k\(i)", rng.bytes(200)) }
        }
        let segment = engine.writer.withLock { $0.log.segmentNumber }
        let report = try engine.compact(force: true)
        #expect(report.victims.isEmpty)
        #expect(engine.writer.withLock { $0.log.segmentNumber } == segment, "no roll for a segment with nothing dead")
    }

    @Test func aSnapshotTakenBeforeKeepsReadingTheSealedSegment() throws {
        let disk = try EngineTesting.simulated()
        let (engine, model) = try Self.build(disk, cached: false)
        let old = engine.snapshot()
        _ = try engine.compact()
        #expect(try old.materialize() == model, "the old snapshot reads the removed segment through its handle")
    }

    @Test(arguments: [false, true])
    func everyCrashPointOfTheSealAndCompactionKeepsEveryCommit(cached: Bool) throws {
        let probe = try EngineTesting.simulated()
        let (probeEngine, _) = try Self.build(probe, cached: cached)
        probe.resetOperationCount()
        _ = try probeEngine.compact()
        let steps = probe.operationCount
        #expect(steps > 5)
        for n in 0...steps {
            for mode in [PowerCutMode.drop, .torn, .garble] {
                let disk = try EngineTesting.simulated(seed: UInt64(n))
                var (engine, model) = try Self.build(disk, cached: cached)
                disk.crashAfter(operations: n)
                do { _ = try engine.compact() } catch {}
                engine.abandon()
                disk.powerCut(seed: UInt64(n * 5 + 3), mode: mode)
                engine = try Engine.open(path: "/db/main", options: Self.options(disk, cached: cached))
                #expect(try engine.snapshot().materialize() == model, "crash after \(n) of \(steps) steps, \(mode)")
                let report = try engine.verify()
                #expect(report.isValid, "crash after \(n), \(mode): \(report.problems)")
                // Still usable: a commit, and the compaction done again.
                _ = try engine.write { tx in try EngineTesting.set(tx, "c", "after", [1]) }
                model["c", "after"] = .init(object: [1])
                _ = try engine.compact()
                #expect(try engine.snapshot().materialize() == model)
            }
        }
    }
}
