import Foundation
import Testing
import YapDB
import TestSupport

/// Views on index pages (issue 9, item 8): groups are paged order-statistic trees written by
/// the index checkpoint; a reopen and re-registration with the same tag reads nothing until
/// asked; old snapshots keep their view across checkpoints and index compaction.
@Suite struct ViewPagesTests {
    /// A database on real files with 512-byte index pages (groups split early) that counts the
    /// pages views read.
    final class Fixture: @unchecked Sendable {
        let directory = TemporaryDirectory("yapdb-view-pages")
        var path: String { directory.file("test.yapdb") }
        var database: YapDatabase!

        init() throws { try open() }

        func open() throws {
            let options = YapDatabaseOptions()
            options.durability = .full
            options.checkpointThreshold = 0
            database = try YapDatabase.open(path: path, options: options,
                                            indexPageSize: 512, countsExtensionPageReads: true)
        }

        func reopen() throws {
            try database.close()
            database = nil
            try open()
        }

        /// Stops using the files without a checkpoint, as a crash would (every commit was synced).
        func crashAndReopen() throws {
            database.abandon()
            database = nil
            try open()
        }

        deinit {
            try? database?.close()
            directory.remove()
        }
    }

    /// Rows "k<n>" → n in collection "c"; groups "g<n % groups>"; sorted by value descending, so
    /// an insert in key order lands anywhere in the group.
    static func view(tag: String = "1", groups: Int = 4, calls: ViewTests.CallCounter? = nil) -> YapDatabaseAutoView {
        YapDatabaseAutoView(grouping: .withObjectBlock { _, collection, _, object in
            calls?.increment()
            guard collection == "c", let n = object as? Int else { return nil }
            return "g\(n % groups)"
        }, sorting: .withObjectBlock { _, _, _, _, a, _, _, b in
            let x = a as! Int, y = b as! Int
            return x == y ? .orderedSame : (x > y ? .orderedAscending : .orderedDescending)
        }, versionTag: tag)
    }

    static func write(_ database: YapDatabase, _ values: [Int?], keys: [Int]) {
        database.newConnection().readWrite { tx in
            for (key, value) in zip(keys, values) {
                if let value { tx.setObject(value, forKey: "k\(key)", inCollection: "c") } else { tx.removeObject(forKey: "k\(key)", inCollection: "c") }
            }
        }
    }

    /// What the view must hold for `model` (key → value).
    static func expected(_ model: [Int: Int], groups: Int = 4) -> [String: [Int]] {
        var out: [String: [Int]] = [:]
        for value in model.values { out["g\(value % groups)", default: []].append(value) }
        return out.mapValues { $0.sorted(by: >) }
    }

    static func contents(_ tx: YapDatabaseReadTransaction, _ name: String = "v") -> [String: [Int]] {
        let view = tx.ext(name) as! YapDatabaseViewTransaction
        var out: [String: [Int]] = [:]
        for group in view.allGroups() {
            view.iterateKeysAndObjects(inGroup: group) { _, _, object, _, _ in out[group, default: []].append(object as! Int) }
        }
        return out
    }

    @Test func groupsSplitAndSurviveCheckpointsAndReopenWithoutAPageReadAtRegistration() throws {
        let fixture = try Fixture()
        var rng = SeededRandom(seed: 11)
        var model: [Int: Int] = [:]
        #expect(fixture.database.register(Self.view(), withName: "v"))
        for round in 0..<6 {
            var keys: [Int] = [], values: [Int?] = []
            for _ in 0..<400 {
                let key = Int(rng.next() % 1500)
                let value: Int? = rng.next() % 7 == 0 ? nil : Int(rng.next() % 100_000)
                keys.append(key)
                values.append(value)
                model[key] = value
            }
            Self.write(fixture.database, values, keys: keys)
            if round % 2 == 1 { try fixture.database.checkpoint() }
        }
        fixture.database.newConnection().read { tx in
            #expect(Self.contents(tx) == Self.expected(model))
            let height = (tx.ext("v") as! YapDatabaseViewTransaction).checkIndexInvariants()
            #expect(height >= 2, "512-byte pages: the groups split (height \(height))")
        }
        try fixture.reopen()

        let before = try #require(fixture.database.extensionPagesRead)
        let snapshot = fixture.database.snapshot
        #expect(fixture.database.register(Self.view(), withName: "v"))
        #expect(fixture.database.extensionPagesRead == before, "re-registering with the same tag read no page")
        #expect(fixture.database.snapshot == snapshot, "nothing to catch up: no commit (and no sync) either")
        let connection = fixture.database.newConnection()
        connection.read { tx in
            let view = tx.ext("v") as! YapDatabaseViewTransaction
            #expect(view.numberOfItemsInAllGroups() == UInt(model.count))
            #expect(view.numberOfGroups() == 4)
            #expect(fixture.database.extensionPagesRead == before, "counts come from the roots")
            let first = view.object(atIndex: 0, inGroup: "g1") as? Int
            #expect(first == Self.expected(model)["g1"]!.first)
            let read = fixture.database.extensionPagesRead! - before
            #expect(read > 0 && read <= 8, "the first row read one path: \(read) pages")
            #expect(Self.contents(tx) == Self.expected(model))
            _ = view.checkIndexInvariants()
        }
        let report = try fixture.database.verify()
        #expect(report.isValid, "\(report.problems)")
    }

    @Test func aCrashBetweenCheckpointsIsCaughtUpAtRegistration() throws {
        let fixture = try Fixture()
        var model: [Int: Int] = [:]
        #expect(fixture.database.register(Self.view(), withName: "v"))
        let keys = Array(0..<600)
        Self.write(fixture.database, keys.map { $0 * 3 }, keys: keys)
        for key in keys { model[key] = key * 3 }
        try fixture.database.checkpoint()
        // After the checkpoint: updates that move rows between groups, removals, new rows and
        // a whole collection cleared.
        Self.write(fixture.database, [1, 2, nil, nil, 7], keys: [0, 1, 2, 3, 700])
        model[0] = 1; model[1] = 2; model[2] = nil; model[3] = nil; model[700] = 7
        fixture.database.newConnection().readWrite { tx in
            tx.setObject(5, forKey: "x", inCollection: "gone")
            tx.setObject(9, forKey: "k800", inCollection: "c")
        }
        model[800] = 9
        fixture.database.newConnection().readWrite { tx in
            for key in 10..<20 { tx.removeObject(forKey: "k\(key)", inCollection: "c") }
        }
        for key in 10..<20 { model[key] = nil }
        try fixture.crashAndReopen()

        let before = fixture.database.extensionPagesRead!
        #expect(fixture.database.register(Self.view(), withName: "v"))
        #expect(fixture.database.extensionPagesRead! - before < 200, "the catch-up touched only the changed rows' paths")
        fixture.database.newConnection().read { tx in
            #expect(Self.contents(tx) == Self.expected(model))
            _ = (tx.ext("v") as! YapDatabaseViewTransaction).checkIndexInvariants()
        }
        // And the caught-up view is written by the next checkpoint and read back.
        try fixture.reopen()
        #expect(fixture.database.register(Self.view(), withName: "v"))
        fixture.database.newConnection().read { tx in #expect(Self.contents(tx) == Self.expected(model)) }
    }

    @Test func oldSnapshotsSeeTheirViewAcrossCheckpointsAndIndexCompaction() throws {
        let fixture = try Fixture()
        var model: [Int: Int] = [:]
        #expect(fixture.database.register(Self.view(), withName: "v"))
        var held: [(YapDatabaseConnection, [String: [Int]])] = []
        for round in 0..<5 {
            let keys = (0..<300).map { ($0 * 7 + round * 31) % 900 }
            let values = keys.map { round % 2 == 0 ? $0 + round : ($0 % 5 == 0 ? nil : $0 * 2) }
            Self.write(fixture.database, values, keys: keys)
            for (key, value) in zip(keys, values) { model[key] = value }
            let reader = fixture.database.newConnection()
            _ = reader.beginLongLivedReadTransaction()
            held.append((reader, Self.expected(model)))
            try fixture.database.checkpoint()
            if round == 2 { try fixture.database.compact() }
        }
        try fixture.database.compact()
        for (reader, expected) in held {
            reader.read { tx in
                #expect(Self.contents(tx) == expected)
                _ = (tx.ext("v") as! YapDatabaseViewTransaction).checkIndexInvariants()
            }
        }
        fixture.database.newConnection().read { tx in #expect(Self.contents(tx) == Self.expected(model)) }
        try fixture.reopen()
        #expect(fixture.database.register(Self.view(), withName: "v"))
        fixture.database.newConnection().read { tx in #expect(Self.contents(tx) == Self.expected(model)) }
    }

    @Test func aDifferentTagRebuildsAndAnEmptiedViewStaysEmpty() throws {
        let fixture = try Fixture()
        #expect(fixture.database.register(Self.view(), withName: "v"))
        Self.write(fixture.database, Array(0..<200), keys: Array(0..<200))
        try fixture.reopen()
        #expect(fixture.database.register(Self.view(tag: "2", groups: 3), withName: "v"))
        var model: [Int: Int] = [:]
        for i in 0..<200 { model[i] = i }
        fixture.database.newConnection().read { tx in #expect(Self.contents(tx) == Self.expected(model, groups: 3)) }
        fixture.database.newConnection().readWrite { tx in tx.removeAllObjectsInAllCollections() }
        try fixture.reopen()
        #expect(fixture.database.register(Self.view(tag: "2", groups: 3), withName: "v"))
        fixture.database.newConnection().read { tx in
            let view = tx.ext("v") as! YapDatabaseViewTransaction
            #expect(view.isEmpty() && view.numberOfGroups() == 0 && view.allGroups().isEmpty)
        }
    }

    @Test func statsCountTheViewsPages() throws {
        let fixture = try Fixture()
        Self.write(fixture.database, Array(0..<300), keys: Array(0..<300))
        try fixture.database.checkpoint()
        let before = try fixture.database.stats()
        #expect(before.unwrittenIndexPages == 0 && !before.hasUnwrittenIndexChanges)
        #expect(fixture.database.register(Self.view(), withName: "v"))
        let dirty = try fixture.database.stats()
        #expect(dirty.unwrittenIndexPages > 4 && dirty.hasUnwrittenIndexChanges, "the built view is held in memory")
        try fixture.database.checkpoint()
        let after = try fixture.database.stats()
        #expect(after.unwrittenIndexPages == 0 && !after.hasUnwrittenIndexChanges)
        #expect(after.indexLiveBytes - before.indexLiveBytes >= Int64(dirty.unwrittenIndexPages * 512),
                "the view's written pages count as live: \(before.indexLiveBytes) → \(after.indexLiveBytes)")
    }

    @Test func aFilteredViewReRegisteredAfterACleanReopenReadsNothing() throws {
        let fixture = try Fixture()
        let filtered = { YapDatabaseFilteredView(parentViewName: "v", filtering: .withKeyBlock { _, _, _, key in key.hasSuffix("5") }, versionTag: "f") }
        #expect(fixture.database.register(Self.view(), withName: "v"))
        #expect(fixture.database.register(filtered(), withName: "f"))
        Self.write(fixture.database, Array(0..<400), keys: Array(0..<400))
        try fixture.reopen()
        let before = fixture.database.extensionPagesRead!, snapshot = fixture.database.snapshot
        #expect(fixture.database.register(Self.view(), withName: "v"))
        #expect(fixture.database.register(filtered(), withName: "f"))
        #expect(fixture.database.extensionPagesRead == before && fixture.database.snapshot == snapshot)
        var model: [Int: Int] = [:]
        for i in 0..<400 where i % 10 == 5 { model[i] = i }
        fixture.database.newConnection().read { tx in #expect(Self.contents(tx, "f") == Self.expected(model)) }
        // A change after the reopen, before the filtered view registers: it catches up.
        try fixture.reopen()
        #expect(fixture.database.register(Self.view(), withName: "v"))
        Self.write(fixture.database, [nil, 1_000], keys: [5, 15])
        #expect(fixture.database.register(filtered(), withName: "f"))
        model[5] = nil
        model[15] = 1_000
        fixture.database.newConnection().read { tx in #expect(Self.contents(tx, "f") == Self.expected(model)) }
    }

    @Test func filteredViewsAreOnPagesToo() throws {
        let fixture = try Fixture()
        #expect(fixture.database.register(Self.view(), withName: "v"))
        let filtered = { YapDatabaseFilteredView(parentViewName: "v", filtering: .withKeyBlock { _, _, _, key in key.hasSuffix("0") }, versionTag: "f") }
        #expect(fixture.database.register(filtered(), withName: "f"))
        Self.write(fixture.database, Array(0..<500), keys: Array(0..<500))
        try fixture.database.checkpoint()
        Self.write(fixture.database, [nil, 10_000], keys: [10, 20])
        try fixture.crashAndReopen()
        #expect(fixture.database.register(Self.view(), withName: "v"))
        #expect(fixture.database.register(filtered(), withName: "f"))
        var model: [Int: Int] = [:]
        for i in 0..<500 where i % 10 == 0 && i != 10 { model[i] = i }
        model[20] = 10_000
        fixture.database.newConnection().read { tx in
            #expect(Self.contents(tx, "f") == Self.expected(model))
            _ = (tx.ext("f") as! YapDatabaseViewTransaction).checkIndexInvariants()
        }
    }
}

import YapDBSimulatedDisk

/// Power cuts at every I/O call of an index checkpoint and of an index compaction that write a
/// view's trees: after the reopen, the re-registered view equals the committed rows.
@Suite struct ViewPagesCrashTests {
    typealias T = ViewPagesTests

    /// A database on `disk` with the view and two rounds of rows, the first checkpointed; returns
    /// it and the committed model.
    static func build(_ disk: SimulatedDisk) throws -> (YapDatabase, [Int: Int]) {
        try disk.mkdir("/db")
        let options = YapDatabaseOptions()
        options.durability = .full
        options.checkpointThreshold = 0
        let database = try YapDatabase.open(path: "/db/main", options: options, fileSystem: disk, indexPageSize: 512)
        #expect(database.register(T.view(), withName: "v"))
        var model: [Int: Int] = [:]
        T.write(database, (0..<300).map { $0 * 5 }, keys: Array(0..<300))
        for key in 0..<300 { model[key] = key * 5 }
        try database.checkpoint()
        let keys = (0..<120).map { ($0 * 7) % 350 }
        let values: [Int?] = keys.map { $0 % 4 == 0 ? nil : $0 * 11 }
        T.write(database, values, keys: keys)
        for (key, value) in zip(keys, values) { model[key] = value }
        return (database, model)
    }

    static func reopen(_ disk: SimulatedDisk) throws -> YapDatabase {
        let options = YapDatabaseOptions()
        options.durability = .full
        options.checkpointThreshold = 0
        return try YapDatabase.open(path: "/db/main", options: options, fileSystem: disk, indexPageSize: 512)
    }

    @Test(arguments: [false, true])
    func everyCrashPointOfACheckpointWithAViewRecovers(compacting: Bool) throws {
        let probe = SimulatedDisk(seed: 1)
        let (probeDatabase, _) = try Self.build(probe)
        probe.resetOperationCount()
        if compacting { try probeDatabase.compact() } else { try probeDatabase.checkpoint() }
        let steps = probe.operationCount
        #expect(steps > 5)
        probeDatabase.abandon()
        var recovered = 0
        for n in stride(from: 0, through: steps, by: 1) {
            for mode in [PowerCutMode.drop, .torn, .garble] {
                let disk = SimulatedDisk(seed: UInt64(n + 1))
                let (database, model) = try Self.build(disk)
                disk.crashAfter(operations: n)
                if compacting { try? database.compact() } else { try? database.checkpoint() }
                database.abandon()
                disk.powerCut(seed: UInt64(n * 5 + 3), mode: mode)
                let reopened = try Self.reopen(disk)
                let context = "\(compacting ? "compaction" : "checkpoint"): crash after \(n) of \(steps) steps, \(mode)"
                let calls = ViewTests.CallCounter()
                #expect(reopened.register(T.view(calls: calls), withName: "v"), "\(context)")
                #expect(calls.value <= 120, "\(context): the written trees were reused, only the rows since re-placed (\(calls.value))")
                reopened.newConnection().read { tx in
                    #expect(T.contents(tx) == T.expected(model), "\(context)")
                    _ = (tx.ext("v") as! YapDatabaseViewTransaction).checkIndexInvariants()
                }
                let report = try reopened.verify()
                #expect(report.isValid, "\(context): \(report.problems)")
                try reopened.close()
                recovered += 1
            }
        }
        #expect(recovered == 3 * (steps + 1))
    }
}
