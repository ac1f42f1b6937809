import Testing
import Foundation
import Synchronization
import YapDBStorage
import YapDBSimulatedDisk
@testable import YapDBEngine
import TestSupport

/// A failed checkpoint (reliability finding F16) leaves what made it due in place: `close()`,
/// the idle timer and the next automatic checkpoint try again, and a failure nobody else sees
/// is reported through `EngineOptions.reportFailure`.
@Suite struct CheckpointRetryTests {
    static func write(_ engine: Engine, rows: Range<Int>) throws {
        _ = try engine.write { tx in
            for i in rows { try EngineTesting.set(tx, "c", "k\(i)", [UInt8](repeating: 7, count: 40)) }
        }
    }

    @Test func closeRetriesAFailedCheckpoint() throws {
        let disk = try EngineTesting.simulated()
        let options = EngineTesting.options(disk)
        let engine = try Engine.open(path: "/db/main", options: options)
        try Self.write(engine, rows: 0..<100)
        disk.inject(Fault(.write, nth: 1, pathContains: "-index-", effect: .error(ENOSPC)))
        #expect(throws: EngineError.self) { try engine.checkpoint() }
        disk.clearFaults()
        try engine.close()
        disk.powerCut(seed: 1, mode: .drop)
        let reopened = try Engine.open(path: "/db/main", options: options)
        #expect(reopened.openReport.commitsReplayed == 0, "close wrote the checkpoint that failed")
        #expect(try reopened.snapshot().keydir.count(inCollection: "c") == 100)
        try reopened.close()
    }

    @Test func theIdleTimerRetriesAFailedCheckpointAndReportsTheFailure() throws {
        let disk = try EngineTesting.simulated()
        let reports = Mutex<[String]>([])
        var options = EngineTesting.options(disk)
        options.idleCheckpointDelay = .milliseconds(20)
        options.reportFailure = { message in reports.withLock { $0.append(message) } }
        let engine = try Engine.open(path: "/db/main", options: options)
        disk.inject(Fault(.write, nth: 1, pathContains: "-index-", effect: .error(ENOSPC)))
        try Self.write(engine, rows: 0..<100)
        var written = false
        for _ in 0..<2000 where !written {
            Thread.sleep(forTimeInterval: 0.01)
            written = try !engine.stats().hasUnwrittenIndexChanges
        }
        #expect(written, "a later idle check wrote the index changes")
        let seen = reports.withLock { $0 }
        #expect(seen.count == 1 && seen[0].contains("idle checkpoint failed") && seen[0].contains("retried"), "\(seen)")
        engine.abandon()
        disk.powerCut(seed: 2, mode: .drop)
        let reopened = try Engine.open(path: "/db/main", options: EngineTesting.options(disk))
        #expect(reopened.openReport.commitsReplayed == 0)
        try reopened.close()
    }

    /// A checkpoint whose file became durable under its final name but whose index files could
    /// not then be opened for reading is not installed; the next checkpoint takes the same
    /// number, so it must replace that file rather than fail with `EEXIST` until a reopen.
    @Test func aCheckpointDurableButNotInstalledDoesNotBlockTheNext() throws {
        let disk = try EngineTesting.simulated()
        let options = EngineTesting.options(disk)
        let engine = try Engine.open(path: "/db/main", options: options)
        try Self.write(engine, rows: 0..<100)
        // The first open of an index file creates it for the writer; the second is the page
        // store's read handle, taken once the checkpoint file is durable.
        disk.inject(Fault(.open, nth: 2, pathContains: "-index-", effect: .error(EMFILE)))
        #expect(throws: EngineError.self) { try engine.checkpoint() }
        #expect(disk.kind(of: DatabaseFiles(mainPath: "/db/main").checkpointPath(1)) == .file,
                "the failed checkpoint's file is complete under its final name")
        disk.clearFaults()
        try Self.write(engine, rows: 100..<150)
        try engine.checkpoint()
        try Self.write(engine, rows: 150..<160)
        try engine.checkpoint()
        engine.abandon()
        disk.powerCut(seed: 3, mode: .drop)
        let reopened = try Engine.open(path: "/db/main", options: options)
        #expect(try reopened.snapshot().keydir.count(inCollection: "c") == 160)
        #expect(try reopened.verify().problems.isEmpty)
        try reopened.close()
    }
}
