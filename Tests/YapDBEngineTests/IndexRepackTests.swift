import Testing
import YapDBStorage
import YapDBSimulatedDisk
import YapDBIndex
@testable import YapDBEngine
import TestSupport

/// Index compaction repacks the key directory, and commits made between its capture and its
/// install are carried onto the repacked copy (`Keydir.rebasing`): nothing they wrote is lost,
/// and nothing reads the old index files afterwards. The environment's index read mode.
@Suite struct IndexRepackTests {
    static func options(_ disk: SimulatedDisk) -> EngineOptions {
        var options = EngineTesting.options(disk, segmentLimit: 1 << 20)
        options.indexPageSize = 512
        return options
    }

    @Test(arguments: [0, 1, 300])
    func commitsBetweenTheCaptureAndTheInstallAreKept(changes: Int) throws {
        let disk = try EngineTesting.simulated()
        var engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        var rng = SeededRandom(seed: 40 + UInt64(changes))
        var model = Model()
        _ = try engine.write { tx in
            for i in 0..<1200 {
                let value = rng.bytes(16)
                try EngineTesting.set(tx, "c", "k\(i)", value)
                model["c", "k\(i)"] = .init(object: value)
            }
        }
        try engine.checkpoint()
        _ = try engine.write { tx in
            for i in stride(from: 0, to: 1200, by: 2) {
                try tx.remove(collection: "c", key: "k\(i)")
                model["c", "k\(i)"] = nil
            }
        }
        // The index compaction's capture, then commits, then its writing and install.
        let source = try #require(try engine.captureForCheckpoint(onlyIfLogGrew: false, copyIndex: true))
        if changes > 0 {
            _ = try engine.write { tx in
                for _ in 0..<changes {
                    let i = Int(rng.next() % 1400)
                    switch rng.next() % 3 {
                    case 0:
                        try tx.remove(collection: "c", key: "k\(i)")
                        model["c", "k\(i)"] = nil
                    default:
                        let value = rng.bytes(12)
                        try EngineTesting.set(tx, "c", "k\(i)", value)
                        model["c", "k\(i)"] = .init(object: value)
                    }
                }
            }
        }
        try engine.writeAndInstallCheckpoint(source)
        #expect(try engine.snapshot().materialize() == model)
        #expect(try engine.verify().isValid)
        let stats = try engine.stats()
        #expect(stats.hasUnwrittenIndexChanges == (changes > 0), "only the later commits are left to write")

        // Checkpointed and reopened from the new files alone.
        try engine.checkpoint()
        try engine.close()
        engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        #expect(try engine.snapshot().materialize() == model)
        #expect(try engine.verify().isValid)
    }
}
