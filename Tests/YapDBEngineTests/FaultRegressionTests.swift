#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
import YapDBStorage
import YapDBSimulatedDisk
import YapDBIndex
@testable import YapDBEngine
import TestSupport

/// Regressions found by the reliability harness's fault matrix (docs/reliability.md): one
/// failing I/O call, then commits that are acknowledged, then a power cut that must keep them.
@Suite struct FaultRegressionTests {
    /// Commits a random (incompressible) 300-byte value, so segments fill and roll.
    static func commit(_ engine: Engine, _ key: String) throws {
        var rng = SeededRandom(seed: key.utf8.reduce(UInt64(17)) { $0 &* 31 &+ UInt64($1) })
        let value = rng.bytes(300)
        _ = try engine.write { tx in try EngineTesting.set(tx, "c", key, value) }
    }

    /// Bug: a compaction whose new segment's header write failed (ENOSPC) left the empty
    /// segment file behind; once a later segment existed, recovery read it as damage before
    /// synced commits and refused to open (`corrupted`), losing every acknowledged commit.
    @Test func aSegmentWhoseHeaderCannotBeWrittenIsRemoved() throws {
        let disk = try EngineTesting.simulated()
        let options = EngineTesting.options(disk, segmentLimit: 2048)
        var engine = try Engine.open(path: "/db/main", options: options)
        for i in 0..<20 { try Self.commit(engine, "k\(i % 10)") }
        disk.inject(Fault(.write, nth: 1, effect: .error(ENOSPC)))
        #expect(throws: EngineError.self) { _ = try engine.compact(force: true) }
        for i in 0..<20 { try Self.commit(engine, "after\(i)") }   // rolls to new segments
        engine.abandon()
        disk.powerCut(seed: 1, mode: .drop)
        engine = try Engine.open(path: "/db/main", options: options)
        #expect(engine.snapshot().number == 40)
        #expect(try engine.verify().isValid)
    }
}

extension FaultRegressionTests {
    /// Bug: open trusted a segment whose name was never made durable (a process that created
    /// it died, or its directory sync failed, before the directory was synced): it synced the
    /// file but not the directory, acknowledged commits into it, and a power cut took the name
    /// and those commits away. Open now syncs the directory before new commits.
    @Test func openMakesASegmentCreatedWithoutADirectorySyncDurable() throws {
        let disk = try EngineTesting.simulated()
        let options = EngineTesting.options(disk, segmentLimit: 1 << 20)
        var engine = try Engine.open(path: "/db/main", options: options)
        try Self.commit(engine, "a")
        let next = engine.writer.withLock { $0.log.segmentNumber } + 1
        let uuid = engine.uuid
        try engine.close()
        // What a process leaves when it dies between creating a segment and syncing its directory.
        let file = try disk.open(engine.files.segmentPath(next), mode: .createNew)
        try file.write(FileHeader(kind: .logSegment, uuid: uuid, fileNumber: next, baseSnapshot: 1).encoded(), at: 0)
        try file.sync()
        file.close()
        engine = try Engine.open(path: "/db/main", options: options)
        try Self.commit(engine, "b")
        engine.abandon()
        disk.powerCut(seed: 2, mode: .drop)
        engine = try Engine.open(path: "/db/main", options: options)
        #expect(engine.snapshot().number == 2, "the commit acknowledged after the reopen survives")
        #expect(try engine.verify().isValid)
    }

    /// Bug: after an fsync failed and marked its pages clean, the reopened engine replayed the
    /// failed commit from the page cache and appended new commits after it; their syncs never
    /// covered the clean pages, so a power cut left a hole before synced commits and recovery
    /// refused to open (corrupted). A failed sync now cuts the log back to the last successful
    /// sync, so nothing builds on bytes that may never reach the disk.
    @Test(arguments: [SyncMode.full, .normal])
    func commitsAfterAFailedSyncSurviveAPowerCut(mode: SyncMode) throws {
        let disk = try EngineTesting.simulated()
        let options = EngineTesting.options(disk, segmentLimit: 1 << 20, sync: mode)
        var engine = try Engine.open(path: "/db/main", options: options)
        try Self.commit(engine, "a")
        try engine.checkpoint()
        try Self.commit(engine, "b")
        disk.inject(Fault(.sync, nth: 1, effect: .syncFailsMarkingClean))
        if mode == .full {
            #expect { try Self.commit(engine, "c") } throws: { EngineTesting.engineError($0) != nil }
        } else {
            try Self.commit(engine, "c")
            #expect(throws: EngineError.self) { try engine.checkpoint() }
        }
        try? engine.close()
        engine = try Engine.open(path: "/db/main", options: options)
        // .full: "b" was synced, "c" (whose sync failed) is gone. .normal: both unsynced, gone.
        let reopened = engine.snapshot().number
        #expect(reopened == (mode == .full ? 2 : 1))
        try Self.commit(engine, "d")
        try engine.checkpoint()
        engine.abandon()
        disk.powerCut(seed: 3, mode: .drop)
        engine = try Engine.open(path: "/db/main", options: options)
        #expect(engine.snapshot().number == reopened + 1, "the commit acknowledged after the reopen survives")
        #expect(try engine.verify().isValid)
    }
}
