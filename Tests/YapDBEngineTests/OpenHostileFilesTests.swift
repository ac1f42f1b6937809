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

/// What other programs and full disks do to the files: names that merely resemble ours,
/// another creator at work, damage set aside, rolls and commits that fail for want of room or
/// descriptors (docs/reliability.md, "Files other programs touch").
@Suite struct OpenHostileFilesTests {
    static let path = "/db/main"

    static func plant(_ disk: SimulatedDisk, _ name: String) throws {
        let file = try disk.open("/db/" + name, mode: .createNew)
        try file.write([1, 2, 3], at: 0)
        try file.sync()
        file.close()
    }

    /// Bug: open removed every file that started with the database's name and ended in
    /// `.tmp`, other programs' files included.
    @Test func onlyTheEnginesOwnTemporaryNamesAreRemoved() throws {
        let disk = try EngineTesting.simulated()
        try Engine.open(path: Self.path, options: EngineTesting.options(disk)).close()
        let others = ["main.tmp", "main.backup.tmp", "main-seg-0000000001.tmp", "main-checkpoint-1.tmp",
                      "main-checkpoint-0000000001.tmp.tmp", "main-notes.tmp", "main-root.tmp"]
        let ours = ["main-checkpoint-0000000007.tmp", "main-creating"]
        for name in others + ours { try Self.plant(disk, name) }
        try Engine.open(path: Self.path, options: EngineTesting.options(disk)).close()
        let left = Set(try disk.listDirectory("/db"))
        for name in others { #expect(left.contains(name), "\(name) is another program's file") }
        for name in ours { #expect(!left.contains(name), "\(name) is an interrupted write of ours") }
    }

    /// Bug: creating a database removed a `-creating` file before taking any lock, so a
    /// second creator destroyed the first one's file mid-creation.
    @Test func anotherCreatorsFileIsNotRemoved() throws {
        let disk = try EngineTesting.simulated()
        try Self.plant(disk, "main-creating")
        let otherCreator = try disk.lock("/db/main-creating")
        defer { otherCreator.unlock() }
        #expect(throws: EngineError.locked(path: Self.path)) {
            _ = try Engine.open(path: Self.path, options: EngineTesting.options(disk))
        }
        // The lock file, taken before the creation, is the one file the failed open leaves.
        #expect(try disk.listDirectory("/db").sorted() == ["main-creating", "main-lock"])
    }

    /// A `-creating` file nobody holds is a dead creator's: it is replaced.
    @Test func aDeadCreatorsFileIsReplaced() throws {
        let disk = try EngineTesting.simulated()
        try Self.plant(disk, "main-creating")
        let engine = try Engine.open(path: Self.path, options: EngineTesting.options(disk))
        #expect(!(try disk.listDirectory("/db")).contains("main-creating"))
        try engine.close()
    }

    /// Bug: `.rename` left the index files behind (the next open deleted
    /// them as orphans), and renamed after the lock was released.
    @Test func renameSetsAsideEveryFileUnderTheLock() throws {
        let disk = try EngineTesting.simulated()
        let options = EngineTesting.options(disk, segmentLimit: 1 << 20)
        let engine = try Engine.open(path: Self.path, options: options)
        for i in 0..<20 { _ = try engine.write { tx in try EngineTesting.set(tx, "c", "k\(i)", [UInt8](repeating: 1, count: 100)) } }
        try engine.checkpoint()
        try engine.close()
        // The lock file is never set aside: every open locks the same file.
        let before = try disk.listDirectory("/db").sorted().filter { $0 != "main-lock" }
        #expect(before.contains { $0.contains("-index-") })
        // Damage the checkpoint: the open fails `corrupted`.
        let checkpoint = try #require(before.first { $0.contains("-checkpoint-") })
        let file = try disk.open("/db/" + checkpoint, mode: .readWrite)
        try file.write([UInt8](repeating: 0xEE, count: 64), at: 100)
        try file.sync()
        file.close()
        var renaming = options
        renaming.corruptAction = .rename
        let fresh = try Engine.open(path: Self.path, options: renaming)
        let after = Set(try disk.listDirectory("/db"))
        for name in before { #expect(after.contains(name + ".1.corrupt"), "\(name) was set aside") }
        #expect(after.contains("main-lock") && !after.contains("main-lock.1.corrupt"))
        #expect(fresh.openReport.corruptFilesHandled.count == before.count)
        try fresh.close()
        // The lock was taken before the renames and held through them and the new database's
        // creation: released only at close.
        let log = disk.log
        let locked = try #require(log.lastIndex { $0 == "locked /db/main-lock" })
        let renamed = try #require(log.lastIndex { $0.hasPrefix("renamed /db/main ->") })
        let released = try #require(log.lastIndex { $0 == "unlocked /db/main-lock" })
        #expect(locked < renamed && renamed < released)
    }

    /// Bug: `EMFILE` while creating the next segment poisoned the engine for good.
    @Test(arguments: [EMFILE, ENFILE, ENOSPC, EDQUOT])
    func aRollThatCannotOpenItsSegmentDoesNotPoison(code: Int32) throws {
        let disk = try EngineTesting.simulated()
        let options = EngineTesting.options(disk, segmentLimit: 2048)
        let engine = try Engine.open(path: Self.path, options: options)
        var committed = 0
        func commit() throws { _ = try engine.write { tx in try EngineTesting.set(tx, "c", "k\(committed)", [UInt8](repeating: 3, count: 300)) }; committed += 1 }
        let first = engine.writer.withLock { $0.log.segmentNumber }
        while engine.writer.withLock({ $0.log.end }) < 2048 { try commit() }
        disk.inject(Fault(.open, pathContains: "-seg-", effect: .error(code)))
        #expect { try commit() } throws: { EngineTesting.engineError($0) != nil }
        #expect(!engine.isPoisoned)
        try commit()
        #expect(engine.writer.withLock { $0.log.segmentNumber } == first + 1, "the roll reused the number")
        engine.abandon()
        let again = try Engine.open(path: Self.path, options: options)
        #expect(again.snapshot().number == UInt64(committed))
        try again.close()
    }

    /// Bug: `EDQUOT` (over quota) poisoned the writer, while `ENOSPC` did not.
    @Test func anOverQuotaCommitDoesNotPoison() throws {
        let disk = try EngineTesting.simulated()
        let engine = try Engine.open(path: Self.path, options: EngineTesting.options(disk, segmentLimit: 1 << 20))
        _ = try engine.write { tx in try EngineTesting.set(tx, "c", "a", [1]) }
        disk.inject(Fault(.write, effect: .error(EDQUOT)))
        do {
            _ = try engine.write { tx in try EngineTesting.set(tx, "c", "b", [2]) }
            Issue.record("the over-quota commit succeeded")
        } catch {
            guard case .io(let errno, _, _)? = EngineTesting.engineError(error) else { Issue.record("threw \(error)"); return }
            #expect(errno == EDQUOT)
        }
        #expect(!engine.isPoisoned)
        _ = try engine.write { tx in try EngineTesting.set(tx, "c", "c", [3]) }
        #expect(engine.snapshot().number == 2)
        try engine.close()
    }
}
