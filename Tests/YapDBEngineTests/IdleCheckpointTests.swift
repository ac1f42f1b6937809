import Testing
import Foundation
import YapDBStorage
import YapDBSimulatedDisk
@testable import YapDBEngine
import TestSupport

/// The idle checkpoint: once commits stop for `idleCheckpointDelay`, a background checkpoint
/// writes the index changes held in memory, so a crash after a quiet spell replays nothing.
/// The waits are bounded polls (the background queue may be slow under load), never timings.
@Suite struct IdleCheckpointTests {
    static func options(_ disk: SimulatedDisk, idle: Duration?) -> EngineOptions {
        var options = EngineTesting.options(disk)
        options.idleCheckpointDelay = idle
        return options
    }

    static func write(_ engine: Engine, rows: Range<Int>) throws {
        _ = try engine.write { tx in
            for i in rows { try EngineTesting.set(tx, "c", "k\(i)", [UInt8](repeating: 7, count: 40)) }
        }
    }

    /// Polls `condition` every 10 ms for up to 20 s.
    static func eventually(_ condition: () throws -> Bool) rethrows -> Bool {
        for _ in 0..<2000 {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return try condition()
    }

    @Test func aQuietDatabaseWritesItsIndexChangesAndACrashThenReplaysNothing() throws {
        let disk = try EngineTesting.simulated()
        let engine = try Engine.open(path: "/db/main", options: Self.options(disk, idle: .milliseconds(20)))
        for batch in 0..<5 { try Self.write(engine, rows: batch * 50..<(batch + 1) * 50) }
        let written = try Self.eventually { try !engine.stats().hasUnwrittenIndexChanges }
        #expect(written, "the idle checkpoint wrote the index changes")
        engine.abandon()   // a crash: nothing more is written or synced
        disk.powerCut(seed: 1, mode: .drop)
        let reopened = try Engine.open(path: "/db/main", options: Self.options(disk, idle: nil))
        #expect(reopened.openReport.commitsReplayed == 0, "the idle checkpoint covered every commit")
        #expect(try reopened.verify().isValid)
        let snapshot = reopened.snapshot()
        #expect(try snapshot.keydir.count(inCollection: "c") == 250)
        try reopened.close()
    }

    @Test func withoutTheDelayTheChangesStayInMemoryUntilACheckpoint() throws {
        let disk = try EngineTesting.simulated()
        let engine = try Engine.open(path: "/db/main", options: Self.options(disk, idle: nil))
        try Self.write(engine, rows: 0..<50)
        Thread.sleep(forTimeInterval: 0.2)
        #expect(try engine.stats().hasUnwrittenIndexChanges)
        try engine.checkpoint()
        #expect(try !engine.stats().hasUnwrittenIndexChanges)
        try engine.close()
    }

    /// A check that fires after close finds the engine closed and does nothing (no trap, no
    /// write to a closed file).
    @Test func aCheckAfterCloseDoesNothing() throws {
        let disk = try EngineTesting.simulated()
        let engine = try Engine.open(path: "/db/main", options: Self.options(disk, idle: .milliseconds(30)))
        try Self.write(engine, rows: 0..<10)
        try engine.close()
        let operations = disk.operationCount
        Thread.sleep(forTimeInterval: 0.3)
        #expect(disk.operationCount == operations, "no I/O after close")
    }
}
