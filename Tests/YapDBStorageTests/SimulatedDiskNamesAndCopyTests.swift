import Testing
import TestSupport
import YapDBStorage
import YapDBSimulatedDisk

/// The power-cut option that lets unsynced creates and renames persist, and disk copies.
@Suite struct SimulatedDiskNamesAndCopyTests {
    /// Creates `/db/new` (data synced, directory not) and renames a synced `/db/old` to
    /// `/db/renamed`, then cuts power with `names`; returns which names survived.
    static func cut(seed: UInt64, names: UnsyncedNames) throws -> Set<String> {
        let disk = try makeDisk()
        try makeDurableFile(disk, "/db/old", [1, 2, 3])
        let file = try disk.open("/db/new", mode: .createNew)
        try file.write([7, 7], at: 0)
        try file.sync()
        try disk.rename("/db/old", to: "/db/renamed")
        disk.powerCut(seed: seed, mode: .drop, names: names)
        return Set(try disk.listDirectory("/db"))
    }

    @Test func byDefaultUnsyncedCreatesAndRenamesAreLost() throws {
        for seed in UInt64(0)..<32 {
            #expect(try Self.cut(seed: seed, names: .needDirectorySync) == ["old"], "seed \(seed)")
        }
    }

    @Test func seededNamesPersistOrNotEachByTheSeedAndDeterministically() throws {
        var outcomes: Set<Set<String>> = []
        for seed in UInt64(0)..<64 {
            let names = try Self.cut(seed: seed, names: .seeded)
            #expect(names == (try Self.cut(seed: seed, names: .seeded)), "seed \(seed): same seed, same outcome")
            #expect(names.contains("old") != names.contains("renamed"), "seed \(seed): a rename is all or nothing: \(names)")
            outcomes.insert(names)
        }
        // Every combination of (create kept?, rename kept?) shows up.
        #expect(outcomes == [["old"], ["renamed"], ["old", "new"], ["renamed", "new"]])
    }

    @Test func aPersistingCreateKeepsOnlyTheFilesSyncedData() throws {
        for seed in UInt64(0)..<32 {
            let disk = try makeDisk()
            let file = try disk.open("/db/f", mode: .createNew)
            try file.write([1, 2, 3, 4], at: 0)
            try file.sync()
            try file.write([9, 9], at: 4)   // never synced
            disk.powerCut(seed: seed, mode: .drop, names: .seeded)
            if let bytes = disk.currentBytes(of: "/db/f") {
                #expect(bytes == [1, 2, 3, 4] || bytes == [1, 2, 3, 4, 9, 9], "seed \(seed): \(bytes)")
            }
        }
    }

    @Test func aCopyIsIndependentAndCutsLikeTheOriginal() throws {
        let disk = try makeDisk()
        let file = try makeDurableFile(disk, "/db/a", [1, 2, 3])
        try file.write([4, 5], at: 3)
        let copy = disk.copy()
        #expect(copy.currentBytes(of: "/db/a") == [1, 2, 3, 4, 5])
        #expect(copy.durableBytes(of: "/db/a") == [1, 2, 3])
        #expect(copy.pendingOperationCount == disk.pendingOperationCount)
        #expect(copy.operationCount == disk.operationCount)
        // The same cut on both gives the same bytes.
        let other = disk.copy()
        copy.powerCut(seed: 5, mode: .torn)
        other.powerCut(seed: 5, mode: .torn)
        #expect(copy.currentBytes(of: "/db/a") == other.currentBytes(of: "/db/a"))
        // The original is untouched, and its handles still work; the copy's lock is free.
        #expect(disk.currentBytes(of: "/db/a") == [1, 2, 3, 4, 5])
        try file.write([6], at: 5)
        #expect(disk.currentBytes(of: "/db/a") == [1, 2, 3, 4, 5, 6])
        let lock = try disk.lock("/db/a")
        let copied = disk.copy()
        _ = try copied.lock("/db/a")
        lock.unlock()
    }

    @Test func aCopyOfAStoppedDiskIsStoppedUntilItsPowerCut() throws {
        let disk = try makeDisk()
        disk.crashAfter(operations: 0)
        let copy = disk.copy()
        #expect(copy.isStopped)
        copy.powerCut(seed: 1, mode: .drop)
        #expect(!copy.isStopped)
        #expect(disk.isStopped, "the original stays stopped")
    }
}
