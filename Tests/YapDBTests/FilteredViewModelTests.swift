import Foundation
import Testing
import YapDB
import TestSupport

/// Seeded model test of filtered views: random writes (set, replace, metadata, remove, remove
/// many, clear a collection, clear everything, touches, rolled-back transactions, a flipped
/// parent sorting, a new filter) against an array model; after each commit every group of the
/// parent, the filtered view and the filtered view of it is compared with the model, old
/// snapshots held open on other connections still show their contents, and mapping change
/// sets turn the old lists into the new ones; hooks keep a copy of one collection, written in
/// the same transactions. Halfway the database is reopened and the views
/// registered again (reusing their stored images after catching up on writes made meanwhile).
@Suite struct FilteredViewModelTests {
    typealias M = FilteredViewModel

    struct Row {
        var item: M.Item
        var metadata: Int?
    }

    /// One run: the database, the model and the connections watching it.
    final class Run {
        var rng: SeededRandom
        let fixture: DatabaseFixture
        var writer: YapDatabaseConnection
        var model: [YapCollectionKey: Row] = [:]
        var descending = false
        var parentTag = "1"
        var flaggedVersion = 1
        var flaggedTag = "1"
        var tagCounter = 1
        /// Long-lived readers and the lists they showed when they started.
        var readers: [(connection: YapDatabaseConnection, lists: [String: M.Lists])] = []
        /// The "table view" connection, its mappings and what it shows.
        var ui: YapDatabaseConnection?
        var mappings: [String: YapDatabaseViewMappings] = [:]
        var shown: [String: M.Lists] = [:]

        init(seed: UInt64) throws {
            rng = SeededRandom(seed: seed)
            fixture = try DatabaseFixture(configure: M.configure)
            writer = fixture.database.newConnection()
        }

        var database: YapDatabase { fixture.database }

        func random(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }

        // MARK: Writes

        /// One random commit (or rolled-back transaction); the model follows unless rolled back.
        /// Returns the keys it wrote.
        @discardableResult
        func randomCommit() -> Set<YapCollectionKey> {
            var next = model
            var written = Set<YapCollectionKey>()
            let rollBack = random(20) == 0
            writer.readWrite { tx in
                for _ in 0..<(1 + random(4)) { randomWrite(tx, &next, &written) }
                if rollBack { tx.rollback() }
            }
            if !rollBack { model = next }
            return rollBack ? [] : written
        }

        func randomWrite(_ tx: YapDatabaseReadWriteTransaction, _ next: inout [YapCollectionKey: Row], _ written: inout Set<YapCollectionKey>) {
            let collection = M.collections[random(3)]
            let key = "k\(random(50))"
            let ck = YapCollectionKey(collection: collection, key: key)
            let item = M.Item(score: random(30), flag: random(2) == 0)
            let metadata = [nil, 0, 1][random(3)]
            written.insert(ck)
            switch random(1000) {
            case 0..<480:
                if let metadata { tx.setObject(item, forKey: key, inCollection: collection, withMetadata: metadata) }
                else { tx.setObject(item, forKey: key, inCollection: collection) }
                next[ck] = Row(item: item, metadata: metadata)
            case 480..<600:
                tx.replaceObject(item, forKey: key, inCollection: collection)
                next[ck]?.item = item
            case 600..<700:
                tx.replaceMetadata(metadata, forKey: key, inCollection: collection)
                next[ck]?.metadata = metadata
            case 700..<800:
                tx.removeObject(forKey: key, inCollection: collection)
                next[ck] = nil
            case 800..<840:
                let other = "k\(random(50))"
                tx.removeObjects(forKeys: [key, other], inCollection: collection)
                next[ck] = nil
                next[YapCollectionKey(collection: collection, key: other)] = nil
            case 840..<994:
                if random(2) == 0 { tx.touchObject(forKey: key, inCollection: collection) } else { tx.touchRow(forKey: key, inCollection: collection) }
            case 994..<999:
                tx.removeAllObjects(inCollection: collection)
                next = next.filter { $0.key.collection != collection }
            default:
                tx.removeAllObjectsInAllCollections()
                next = [:]
            }
        }

        func newTag() -> String {
            tagCounter += 1
            return "t\(tagCounter)"
        }

        /// Flips the parent's sorting in a commit of its own.
        func flipSorting() {
            descending.toggle()
            parentTag = newTag()
            writer.readWrite { tx in
                (tx.ext("all") as! YapDatabaseAutoViewTransaction).setSorting(M.sorting(descending: descending), versionTag: parentTag)
            }
        }

        /// Swaps the "flagged" filter (version 1 ↔ 2) in a commit of its own.
        func swapFilter() {
            flaggedVersion = 3 - flaggedVersion
            flaggedTag = newTag()
            writer.readWrite { tx in
                let view = tx.ext("flagged") as! YapDatabaseFilteredViewTransaction
                view.setFiltering(M.flaggedFiltering(version: flaggedVersion), versionTag: flaggedTag)
            }
        }

        // MARK: Checks

        /// The views as the writer sees them now, checked against the model.
        @discardableResult
        func checkViews(_ step: Int) -> [String: M.Lists] {
            let lists = writer.read { M.allLists($0) }
            let shadow = model.filter { $0.key.collection == "a" }.map { YapCollectionKey(collection: "\($0.value.item.score)", key: $0.key.key) }
            #expect(lists["shadow"]!["rows"]! == shadow.sorted { $0.key < $1.key }, "step \(step): the hooks' copy of collection a committed with it")
            for group in M.groups {
                let parent = lists["all"]![group]!
                let expected = Set(model.compactMap { ck, row in M.group(collection: ck.collection, item: row.item) == group ? ck : nil })
                #expect(Set(parent) == expected && parent.count == expected.count, "step \(step): \(group) of the parent holds the model's rows")
                let scores = parent.map { model[$0]?.item.score ?? -1 }
                #expect(scores == scores.sorted(by: { descending ? $0 > $1 : $0 < $1 }), "step \(step): \(group) is sorted")
                let flagged = parent.filter { ck in model[ck].map { M.flaggedKeeps(version: flaggedVersion, item: $0.item, metadata: $0.metadata) } ?? false }
                #expect(lists["flagged"]![group]! == flagged, "step \(step): \(group) of the filtered view is the parent's, filtered, in its order")
                #expect(lists["deep"]![group]! == flagged.filter { M.deepKeeps(key: $0.key) }, "step \(step): \(group) of the filtered filtered view")
            }
            return lists
        }

        /// Every long-lived reader still sees the lists it started with.
        func checkReaders(_ step: Int) {
            for reader in readers {
                let lists = reader.connection.read { M.allLists($0) }
                #expect(lists == reader.lists, "step \(step): an old snapshot keeps its view contents")
            }
        }

        func maybeChangeReaders(current: [String: M.Lists]) {
            if readers.count < 3 && random(12) == 0 {
                let connection = database.newConnection()
                connection.beginLongLivedReadTransaction()
                readers.append((connection, current))
            }
            if !readers.isEmpty && random(20) == 0 {
                _ = readers.remove(at: random(readers.count)).connection.endLongLivedReadTransaction()
            }
        }

        func startUI() {
            let ui = database.newConnection()
            ui.beginLongLivedReadTransaction()
            for view in ["flagged", "deep"] {
                let mappings = YapDatabaseViewMappings(groups: M.groups, view: view)
                ui.read { tx in
                    mappings.update(with: tx)
                    shown[view] = M.lists(tx, view)
                }
                self.mappings[view] = mappings
            }
            self.ui = ui
        }

        /// Moves the UI connection to the newest commit and checks that each view's change set
        /// turns what it showed into what it shows now.
        func checkChangeSets(_ step: Int) {
            guard let ui else { return }
            let notifications = ui.beginLongLivedReadTransaction()
            for view in ["flagged", "deep"] {
                let viewConnection = ui.ext(view) as! YapDatabaseViewConnection
                let (sections, rows) = viewConnection.getChanges(forNotifications: notifications, withMappings: mappings[view]!)
                let now = ui.read { M.lists($0, view) }
                #expect(sections.isEmpty, "step \(step): fixed sections never change")
                #expect(M.apply(rows, to: shown[view]!, new: now) == now, "step \(step): \(view)'s change set leads from the old lists to the new")
                shown[view] = now
            }
        }

        // MARK: Registration and reopening

        func registerViews(flaggedCalls: M.Calls? = nil, deepCalls: M.Calls? = nil) {
            #expect(!database.register(YapDatabaseFilteredView(parentViewName: "flagged", filtering: M.deepFiltering(), versionTag: "1"),
                                       withName: "deep"), "no parent registered yet: refused")
            #expect(database.register(M.parentView(descending: descending, versionTag: parentTag), withName: "all"))
            #expect(database.register(YapDatabaseFilteredView(parentViewName: "all",
                                                              filtering: M.flaggedFiltering(version: flaggedVersion, calls: flaggedCalls),
                                                              versionTag: flaggedTag), withName: "flagged"))
            #expect(database.register(YapDatabaseFilteredView(parentViewName: "flagged", filtering: M.deepFiltering(calls: deepCalls),
                                                              versionTag: "1"), withName: "deep"))
        }

        func registerHooks() {
            #expect(database.register(M.shadowHooks(), withName: "hooks"))
        }

        func reopen(step: Int) throws {
            for reader in readers { _ = reader.connection.endLongLivedReadTransaction() }
            readers = []
            ui = nil
            try fixture.reopen(configure: M.configure)
            writer = database.newConnection()
            registerHooks()
            // Writes before the views register: the stored images catch up on these rows only.
            var written = Set<YapCollectionKey>()
            for _ in 0..<3 { written.formUnion(randomCommit()) }
            let flaggedCalls = M.Calls(), deepCalls = M.Calls()
            registerViews(flaggedCalls: flaggedCalls, deepCalls: deepCalls)
            #expect(flaggedCalls.value <= written.count && deepCalls.value <= written.count,
                    "step \(step): the stored filtered views are reused, filtering only rows written since (\(flaggedCalls.value), \(deepCalls.value) calls for \(written.count) rows, \(model.count) in all)")
            checkViews(step)
            startUI()
        }
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func randomWritesAgainstAFilteredSortedModel(seed: UInt64) throws {
        let run = try Run(seed: seed)
        run.registerViews()
        run.registerHooks()
        run.startUI()
        let steps = 600
        for step in 0..<steps {
            if step == steps / 2 { try run.reopen(step: step) }
            switch step % 60 {
            case 29: run.flipSorting()
            case 59: run.swapFilter()
            default: run.randomCommit()
            }
            let lists = run.checkViews(step)
            run.checkReaders(step)
            run.maybeChangeReaders(current: lists)
            if run.random(3) == 0 { run.checkChangeSets(step) }
        }
        #expect(run.model.count > 20, "the run kept a fair number of rows (\(run.model.count))")
    }
}
