#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
import YapDBStorage
import YapDBSimulatedDisk
@testable import YapDBEngine
import TestSupport

/// `Engine.write(_:runsBodyWhenRefused:)`: a closed or poisoned engine refuses the transaction;
/// by default before the body runs, with the flag after it — the body reads the newest state,
/// every write it tries throws the refusal, and nothing reaches the disk.
@Suite struct RefusedWriteTests {
    static func engine(_ disk: SimulatedDisk) throws -> Engine {
        let engine = try Engine.open(path: "/db/main", options: EngineTesting.options(disk))
        _ = try engine.write { tx in try EngineTesting.set(tx, "c", "k", [1, 2, 3]) }
        return engine
    }

    /// Runs a body that reads "c"/"k" and tries a write; returns what it read and the write's error.
    static func attempt(_ engine: Engine, runsBodyWhenRefused: Bool) -> (ran: Bool, read: [UInt8]?, writeError: EngineError?, thrown: (any Error)?) {
        var ran = false, read: [UInt8]?, writeError: EngineError?
        do {
            _ = try engine.write({ tx in
                ran = true
                read = try tx.object(collection: "c", key: "k")
                do { try EngineTesting.set(tx, "c", "k2", [9]) } catch { writeError = error as? EngineError }
                _ = try? tx.touch(collection: "c", key: "k", object: true, metadata: false)
            }, runsBodyWhenRefused: runsBodyWhenRefused)
            return (ran, read, writeError, nil)
        } catch {
            return (ran, read, writeError, error)
        }
    }

    @Test(arguments: [false, true])
    func aClosedEngineRefuses(runsBodyWhenRefused: Bool) throws {
        let disk = try EngineTesting.simulated()
        let engine = try Self.engine(disk)
        try engine.close()
        let operations = disk.operationCount
        let outcome = Self.attempt(engine, runsBodyWhenRefused: runsBodyWhenRefused)
        #expect(outcome.thrown.flatMap(EngineTesting.engineError) == .closed)
        #expect(outcome.ran == runsBodyWhenRefused)
        if runsBodyWhenRefused {
            #expect(outcome.read == [1, 2, 3], "the body reads the last state")
            #expect(outcome.writeError == .closed, "its writes throw the refusal")
        }
        #expect(disk.operationCount == operations, "nothing touched the disk")
    }

    @Test(arguments: [false, true])
    func aPoisonedEngineRefuses(runsBodyWhenRefused: Bool) throws {
        let disk = try EngineTesting.simulated()
        let engine = try Self.engine(disk)
        disk.inject(Fault(.write, effect: .error(EIO)))
        #expect { _ = try engine.write { tx in try EngineTesting.set(tx, "c", "x", [0]) } } throws: { EngineTesting.engineError($0) != nil }
        disk.clearFaults()
        #expect(engine.isPoisoned)
        let operations = disk.operationCount
        let outcome = Self.attempt(engine, runsBodyWhenRefused: runsBodyWhenRefused)
        #expect(outcome.thrown.flatMap(EngineTesting.engineError) == .poisoned)
        #expect(outcome.ran == runsBodyWhenRefused)
        if runsBodyWhenRefused {
            #expect(outcome.read == [1, 2, 3])
            #expect(outcome.writeError == .poisoned)
        }
        #expect(disk.operationCount == operations)
        #expect(engine.snapshot().number == 1, "nothing was published, not even the touch")
        engine.abandon()
    }
}
