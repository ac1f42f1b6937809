import Testing
import YapDBStorage
import YapDBSimulatedDisk
import YapDBIndex
@testable import YapDBEngine
import TestSupport

/// Index checkpoints: the key directory written as pages across several index files, released
/// from memory, and reopened from its roots without a rebuild.
@Suite struct IndexCheckpointTests {
    static func options(_ disk: SimulatedDisk) -> EngineOptions {
        var options = EngineTesting.options(disk, segmentLimit: 64 << 10, sync: .normal)
        options.indexPageSize = 512
        options.indexFileSizeLimit = 16 << 10    // a few checkpoints per index file
        return options
    }

    @Test func checkpointsSpanIndexFilesAndReopenFromTheRoots() throws {
        let disk = try EngineTesting.simulated()
        var rng = SeededRandom(seed: 11)
        var model = Model()
        var engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        for round in 0..<12 {
            _ = try engine.write { tx in
                for _ in 0..<150 {
                    let key = "k\(rng.next() % 900)"
                    if rng.next() % 5 == 0 {
                        try tx.remove(collection: "c\(round % 3)", key: key)
                        model["c\(round % 3)", key] = nil
                    } else {
                        let value = rng.bytes(Int(rng.next() % 40) + 1)
                        try EngineTesting.set(tx, "c\(round % 3)", key, value)
                        model["c\(round % 3)", key] = .init(object: value)
                    }
                }
            }
            try engine.checkpoint()
            #expect(!engine.snapshot().keydir.hasUnwrittenChanges, "round \(round): written nodes are released")
            if round % 4 == 3 {
                try engine.close()
                engine = try Engine.open(path: "/db/main", options: Self.options(disk))
                #expect(engine.openReport.commitsReplayed == 0, "a clean open replays nothing")
                #expect(!engine.snapshot().keydir.hasUnwrittenChanges, "the directory is read from its pages")
            }
            #expect(try engine.snapshot().materialize() == model, "round \(round)")
        }
        #expect(try disk.listDirectory("/db").filter { $0.hasPrefix("main-index-") }.count > 1, "the index rolled to more files")
        let report = try engine.verify()
        #expect(report.isValid, "\(report.problems)")
        try engine.close()
    }
}
