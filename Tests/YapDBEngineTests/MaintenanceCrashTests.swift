import Testing
import YapDBStorage
import YapDBSimulatedDisk
import YapDBIndex
@testable import YapDBEngine
import TestSupport

/// Cuts power at every I/O step of a checkpoint and of a compaction, on a plain and on an
/// encrypted database (docs/format.md §12); every recovery must hold every commit (all were
/// synced, durability `.full`) and pass `verify()`.
@Suite struct MaintenanceCrashTests {
    static func options(_ disk: SimulatedDisk, encrypted: Bool) -> EngineOptions {
        var options = EngineTesting.options(disk, segmentLimit: 2048)
        if encrypted { options.cipherKey = CipherKeyOptions(key: .raw(Array(repeating: 0x61, count: 32))) }
        return options
    }

    /// Builds a database with sealed segments full of dead records; returns the engine and model.
    static func build(_ disk: SimulatedDisk, encrypted: Bool = false) throws -> (Engine, Model) {
        let engine = try Engine.open(path: "/db/main", options: options(disk, encrypted: encrypted))
        var model = Model()
        var rng = SeededRandom(seed: 77)
        for round in 0..<12 {
            _ = try engine.write { tx in
                for i in 0..<6 {
                    let key = "k\((round * 3 + i) % 10)"
                    let value = rng.bytes(150)
                    try EngineTesting.set(tx, "c", key, value, metadata: i % 2 == 0 ? [UInt8(round)] : nil)
                    model["c", key] = .init(object: value, metadata: i % 2 == 0 ? [UInt8(round)] : nil)
                }
                if round % 4 == 3 {
                    try tx.remove(collection: "c", key: "k1")
                    model["c", "k1"] = nil
                }
            }
        }
        return (engine, model)
    }

    static func run(_ step: String, _ engine: Engine) throws {
        if step == "checkpoint" { try engine.checkpoint() } else { _ = try engine.compact(force: true) }
    }

    @Test(arguments: ["checkpoint", "compact"], [false, true])
    func everyCrashPointRecoversEverySyncedCommit(step: String, encrypted: Bool) throws {
        // Count the I/O steps of the operation.
        let probe = try EngineTesting.simulated()
        let (probeEngine, _) = try Self.build(probe, encrypted: encrypted)
        probe.resetOperationCount()
        try Self.run(step, probeEngine)
        let steps = probe.operationCount
        #expect(steps > 5, "\(step) does I/O")
        var recovered = 0
        let modes: [PowerCutMode] = [.drop, .torn, .garble]
        for n in 0...steps {
            for mode in modes {
                let disk = try EngineTesting.simulated(seed: UInt64(n))
                var (engine, model) = try Self.build(disk, encrypted: encrypted)
                disk.crashAfter(operations: n)
                do { try Self.run(step, engine) } catch {}
                engine.abandon()
                disk.powerCut(seed: UInt64(n * 7 + 1), mode: mode)
                engine = try Engine.open(path: "/db/main", options: Self.options(disk, encrypted: encrypted))
                #expect(try engine.snapshot().materialize() == model, "\(step): crash after \(n) of \(steps) steps, \(mode)")
                #expect(engine.snapshot().number == 12, "\(step): crash after \(n), \(mode)")
                let report = try engine.verify()
                #expect(report.isValid, "\(step): crash after \(n), \(mode): \(report.problems)")
                // The database keeps working: another commit, another maintenance run.
                _ = try engine.write { tx in try EngineTesting.set(tx, "c", "after", [1]) }
                model["c", "after"] = .init(object: [1])
                try Self.run(step, engine)
                #expect(try engine.snapshot().materialize() == model)
                recovered += 1
            }
        }
        print("\(step)\(encrypted ? " (encrypted)" : ""): \(steps) I/O steps, \(recovered) crash recoveries checked")
    }
}
