import Testing
import YapDBStorage
import YapDBSimulatedDisk
import YapDBIndex
@testable import YapDBEngine
import TestSupport

/// Index compaction: the key directory copied into a new index file, the older index files
/// removed; snapshots taken before keep reading the removed files; a crash at any step loses
/// nothing.
@Suite struct IndexCompactionTests {
    static func options(_ disk: SimulatedDisk, slack: Int64 = .max) -> EngineOptions {
        var options = EngineTesting.options(disk, segmentLimit: 64 << 10)
        options.indexPageSize = 512
        options.indexFileSizeLimit = 24 << 10    // the copy itself rolls across files
        options.indexCompactionSlack = slack
        return options
    }

    /// `rounds` rounds of random updates over a fixed key set, each followed by a checkpoint.
    static func churn(_ engine: Engine, _ model: inout Model, _ rng: inout SeededRandom, rounds: Int) throws {
        for _ in 0..<rounds {
            _ = try engine.write { tx in
                for _ in 0..<40 {
                    let key = "k\(rng.next() % 600)"
                    if rng.next() % 6 == 0 {
                        try tx.remove(collection: "c", key: key)
                        model["c", key] = nil
                    } else {
                        let value = rng.bytes(Int(rng.next() % 30) + 1)
                        try EngineTesting.set(tx, "c", key, value)
                        model["c", key] = .init(object: value)
                    }
                }
            }
            try engine.checkpoint()
        }
    }

    static func indexFiles(_ disk: SimulatedDisk) throws -> [String] {
        try disk.listDirectory("/db").filter { $0.hasPrefix("main-index-") }.sorted()
    }

    @Test func compactionShrinksTheIndexFilesAndOldSnapshotsStillRead() throws {
        let disk = try EngineTesting.simulated()
        var rng = SeededRandom(seed: 5)
        var model = Model()
        var engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        // A full directory first, then many small random updates, each checkpointed: every
        // checkpoint appends new versions of the changed pages.
        _ = try engine.write { tx in
            for i in 0..<600 {
                let value = rng.bytes(20)
                try EngineTesting.set(tx, "c", "k\(i)", value)
                model["c", "k\(i)"] = .init(object: value)
            }
        }
        try Self.churn(engine, &model, &rng, rounds: 40)
        let before = try engine.stats().indexFileBytes
        let filesBefore = try Self.indexFiles(disk)
        #expect(filesBefore.count > 2, "the churn rolled the index across files")
        let oldSnapshot = engine.snapshot(), oldModel = model

        try engine.compactIndex()
        let after = try engine.stats().indexFileBytes
        #expect(after * 3 < before, "index files: \(before) bytes before, \(after) after")
        print("index compaction: \(before) → \(after) index bytes, \(filesBefore.count) → \(try Self.indexFiles(disk).count) files")
        let filesAfter = try Self.indexFiles(disk)
        #expect(Set(filesAfter).isDisjoint(with: filesBefore), "the old index files are removed: \(filesBefore) → \(filesAfter)")
        #expect(try engine.snapshot().materialize() == model)
        // A snapshot from before reads the removed files through the handles it holds.
        #expect(try oldSnapshot.materialize() == oldModel)
        let report = try engine.verify()
        #expect(report.isValid, "\(report.problems)")

        // The directory keeps working on the new files: writes, checkpoints, reopen.
        try Self.churn(engine, &model, &rng, rounds: 3)
        try engine.close()
        engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        #expect(engine.openReport.commitsReplayed == 0)
        #expect(try engine.snapshot().materialize() == model)
        #expect(try engine.verify().isValid)
        try engine.close()
    }

    @Test func checkpointsCompactTheIndexPastTheThreshold() throws {
        // The same workload with and without the automatic rule.
        func run(slack: Int64) throws -> (bytes: Int64, model: Model, materialized: Model) {
            let disk = try EngineTesting.simulated()
            var rng = SeededRandom(seed: 8)
            var model = Model()
            let engine = try Engine.open(path: "/db/main", options: Self.options(disk, slack: slack))
            try Self.churn(engine, &model, &rng, rounds: 60)
            let bytes = try engine.stats().indexFileBytes
            #expect(try engine.verify().isValid)
            return (bytes, model, try engine.snapshot().materialize())
        }
        let never = try run(slack: .max)
        let automatic = try run(slack: 16 << 10)
        #expect(never.materialized == never.model)
        #expect(automatic.materialized == automatic.model)
        #expect(automatic.bytes * 2 < never.bytes, "with the rule \(automatic.bytes) bytes, without \(never.bytes)")
        print("index compaction rule: \(automatic.bytes) index bytes with it, \(never.bytes) without")
    }

    /// A database whose index has dead pages, across several files, and a log tail.
    static func build(_ disk: SimulatedDisk) throws -> (Engine, Model) {
        let engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        var model = Model()
        var rng = SeededRandom(seed: 21)
        try Self.churn(engine, &model, &rng, rounds: 8)
        _ = try engine.write { tx in
            try EngineTesting.set(tx, "c", "tail", [7])
            model["c", "tail"] = .init(object: [7])
        }
        return (engine, model)
    }

    @Test func everyCrashPointOfAnIndexCompactionRecovers() throws {
        let probe = try EngineTesting.simulated()
        let (probeEngine, _) = try Self.build(probe)
        probe.resetOperationCount()
        try probeEngine.compactIndex()
        let steps = probe.operationCount
        #expect(steps > 5)
        let modes: [PowerCutMode] = [.drop, .torn, .garble]
        var recovered = 0
        for n in 0...steps {
            for mode in modes {
                let disk = try EngineTesting.simulated(seed: UInt64(n))
                var (engine, model) = try Self.build(disk)
                let number = engine.snapshot().number
                disk.crashAfter(operations: n)
                do { try engine.compactIndex() } catch {}
                engine.abandon()
                disk.powerCut(seed: UInt64(n * 5 + 3), mode: mode)
                engine = try Engine.open(path: "/db/main", options: Self.options(disk))
                let context = "crash after \(n) of \(steps) steps, \(mode)"
                #expect(try engine.snapshot().materialize() == model, "\(context)")
                #expect(engine.snapshot().number == number, "\(context)")
                let report = try engine.verify()
                #expect(report.isValid, "\(context): \(report.problems)")
                // Index files no root names are gone after the open.
                let named = Set(engine.index.published.map { Paths.fileName(of: engine.files.indexPath($0.number)) })
                #expect(Set(try Self.indexFiles(disk)) == named, "\(context)")
                // It keeps working: a commit and another index compaction.
                _ = try engine.write { tx in try EngineTesting.set(tx, "c", "after", [1]) }
                model["c", "after"] = .init(object: [1])
                try engine.compactIndex()
                #expect(try engine.snapshot().materialize() == model, "\(context)")
                try engine.close()
                recovered += 1
            }
        }
        print("index compaction: \(steps) I/O steps, \(recovered) crash recoveries checked")
    }
}
