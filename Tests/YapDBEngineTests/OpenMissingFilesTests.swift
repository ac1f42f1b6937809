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

/// The main file's high-water mark (docs/format.md §2): an open that finds fewer files, or a
/// shorter log, than the mark promises fails with `missingFiles` and changes nothing.
@Suite struct OpenMissingFilesTests {
    static let path = "/db/main"

    /// A database with a checkpoint (so index files exist), commits after it and a reopen
    /// (so the mark covers the log written so far). Returns the disk, closed.
    static func database(sync: SyncMode = .full) throws -> SimulatedDisk {
        let disk = try EngineTesting.simulated()
        let options = EngineTesting.options(disk, segmentLimit: 2048, sync: sync)
        var engine = try Engine.open(path: path, options: options)
        for i in 0..<30 { _ = try engine.write { tx in try EngineTesting.set(tx, "c", "k\(i)", [UInt8](repeating: UInt8(i), count: 200)) } }
        try engine.checkpoint()
        for i in 30..<40 { _ = try engine.write { tx in try EngineTesting.set(tx, "c", "k\(i)", [1, 2, 3]) } }
        try engine.close()
        engine = try Engine.open(path: path, options: options)
        try engine.close()
        return disk
    }

    static func names(_ disk: SimulatedDisk) throws -> [String] { try disk.listDirectory("/db").sorted() }

    /// Bug: a copy of the main file without its other files opened as an empty database and
    /// deleted the index files it found as orphans.
    @Test func theMainFileWithoutItsLogAndCheckpointIsRefused() throws {
        let disk = try Self.database()
        for name in try Self.names(disk) where name.contains("-seg-") || name.contains("-checkpoint-") {
            try disk.remove("/db/" + name)
        }
        let before = try Self.names(disk)
        #expect(before.contains { $0.contains("-index-") }, "index files are left to be deleted")
        do {
            _ = try Engine.open(path: Self.path, options: EngineTesting.options(disk))
            Issue.record("opened a database whose files are missing")
        } catch {
            guard case .missingFiles(let names) = error else { Issue.record("threw \(error)"); return }
            #expect(names.contains { $0.hasPrefix("main-checkpoint-") })
            #expect(names.contains { $0.hasPrefix("main-seg-") })
        }
        #expect(try Self.names(disk) == before, "nothing was deleted or created")
    }

    /// Bug: with the newest checkpoint gone, open used an older state (or none) silently.
    @Test func aMissingNewestCheckpointIsNamed() throws {
        let disk = try Self.database()
        let checkpoints = try Self.names(disk).filter { $0.contains("-checkpoint-") }
        let newest = try #require(checkpoints.last)
        try disk.remove("/db/" + newest)
        #expect(throws: EngineError.missingFiles([newest])) {
            _ = try Engine.open(path: Self.path, options: EngineTesting.options(disk))
        }
    }

    /// Bug: a log segment cut short by another program opened as an older database.
    @Test func aShorterLogThanPromisedIsRefused() throws {
        let disk = try Self.database()
        let segment = try #require(try Self.names(disk).filter { $0.contains("-seg-") }.last)
        let file = try disk.open("/db/" + segment, mode: .readWrite)
        let size = try file.size()
        #expect(size > Int64(Format.headerSize) + 10, "the newest segment holds commits")
        try file.truncate(to: Int64(Format.headerSize) + 10)
        try file.sync()
        file.close()
        do {
            _ = try Engine.open(path: Self.path, options: EngineTesting.options(disk))
            Issue.record("opened a database whose log is shorter than promised")
        } catch {
            guard case .missingFiles(let names) = error else { Issue.record("threw \(error)"); return }
            #expect(names.count == 1 && names[0].hasPrefix(segment) && names[0].contains("promised"))
        }
    }

    /// Missing files are not damage: `corruptAction` `.delete` must not delete the rest.
    @Test func corruptActionsLeaveMissingFilesAlone() throws {
        let disk = try Self.database()
        let newest = try #require(try Self.names(disk).filter { $0.contains("-checkpoint-") }.last)
        try disk.remove("/db/" + newest)
        let before = try Self.names(disk)
        var options = EngineTesting.options(disk)
        options.corruptAction = .delete
        #expect(throws: EngineError.missingFiles([newest])) { _ = try Engine.open(path: Self.path, options: options) }
        #expect(try Self.names(disk) == before)
    }

    /// A missing index file the checkpoint names is `missingFiles` too, not corruption.
    @Test func aMissingIndexFileIsNamed() throws {
        let disk = try Self.database()
        let index = try #require(try Self.names(disk).filter { $0.contains("-index-") }.first)
        try disk.remove("/db/" + index)
        #expect(throws: EngineError.missingFiles([index])) {
            _ = try Engine.open(path: Self.path, options: EngineTesting.options(disk))
        }
    }

    /// The mark follows rolls and checkpoints, so a database that grew since opens.
    @Test(arguments: [SyncMode.full, .normal, .off])
    func aDatabaseThatGrewOpens(sync: SyncMode) throws {
        let disk = try Self.database(sync: sync)
        let options = EngineTesting.options(disk, segmentLimit: 2048, sync: sync)
        let engine = try Engine.open(path: Self.path, options: options)
        for i in 0..<40 { _ = try engine.write { tx in try EngineTesting.set(tx, "d", "k\(i)", [UInt8](repeating: 9, count: 300)) } }
        try engine.checkpoint()
        _ = try engine.compact(force: true)
        try engine.close()
        let again = try Engine.open(path: Self.path, options: options)
        #expect(again.snapshot().number == 80)
        #expect(try again.verify().isValid)
        try again.close()
    }
}
