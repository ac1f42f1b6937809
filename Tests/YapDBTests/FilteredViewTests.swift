import Foundation
import Testing
import YapDB

/// Filtered views: registration, reading them as views, following the parent in the same
/// commit, new filters and parent blocks, persistence, unregistering, and their change sets.
@Suite struct FilteredViewTests {
    typealias M = FilteredViewModel
    typealias Item = FilteredViewModel.Item

    /// A database with the "all" view and scores 0..<n in collection "a" (flag: even scores).
    static func populated(_ n: Int) throws -> DatabaseFixture {
        let fixture = try DatabaseFixture(configure: M.configure)
        fixture.database.newConnection().readWrite { tx in
            for i in 0..<n { tx.setObject(Item(score: i, flag: i % 2 == 0), forKey: "k\(i)", inCollection: "a") }
        }
        #expect(fixture.database.register(M.parentView(), withName: "all"))
        return fixture
    }

    static func flagOnly(calls: M.Calls? = nil) -> YapDatabaseViewFiltering {
        .withObjectBlock { _, _, _, _, object in
            calls?.increment()
            return (object as! Item).flag
        }
    }

    static func keys(_ tx: YapDatabaseReadTransaction, _ view: String, _ group: String) -> [String] {
        M.lists(tx, view)[group]!.map(\.key)
    }

    @Test func registrationNeedsTheParentAndTheViewReadsLikeAView() throws {
        let fixture = try Self.populated(12)
        let database = fixture.database!
        #expect(!database.register(YapDatabaseFilteredView(parentViewName: "missing", filtering: Self.flagOnly()), withName: "f"),
                "no parent view: refused")
        #expect(database.registeredExtension("f") == nil)
        let view = YapDatabaseFilteredView(parentViewName: "all", filtering: Self.flagOnly(), versionTag: "1")
        #expect(view.parentViewName == "all" && view.versionTag == "1")
        #expect(database.register(view, withName: "f"))
        let connection = database.newConnection()
        connection.read { tx in
            let filtered = try! #require(tx.ext("f") as? YapDatabaseFilteredViewTransaction)
            #expect(tx.filteredViewTransaction("f") === filtered)
            #expect(filtered.filteredView === view)
            #expect(Int(filtered.numberOfItemsInAllGroups()) == 6)
            #expect(Set(filtered.allGroups()) == ["g0", "g1", "g2"])
            #expect(Self.keys(tx, "f", "g0") == ["k0", "k6"] && Self.keys(tx, "f", "g1") == ["k4", "k10"])
            #expect(filtered.group(forKey: "k3", inCollection: "a") == nil, "filtered out")
            #expect(filtered.group(forKey: "k10", inCollection: "a") == "g1")
            #expect((filtered.firstObject(inGroup: "g2") as? Item)?.score == 2)
            let atLeast8 = YapDatabaseViewFind.withObjectBlock { _, _, object in (object as! Item).score < 8 ? .orderedAscending : .orderedSame }
            #expect(filtered.findRange(inGroup: "g2", using: atLeast8) == NSRange(location: 1, length: 1), "binary search with the parent's sorting")
        }
        #expect(connection.ext("f") is YapDatabaseFilteredViewConnection)
        #expect((connection.ext("f") as? YapDatabaseFilteredViewConnection)?.filteredView === view)
    }

    @Test func theFilteredViewChangesInTheSameCommitAsItsParent() throws {
        let fixture = try Self.populated(6)
        let database = fixture.database!
        #expect(database.register(YapDatabaseFilteredView(parentViewName: "all", filtering: Self.flagOnly()), withName: "f"))
        #expect(database.register(YapDatabaseFilteredView(parentViewName: "f", filtering: .withKeyBlock { _, _, _, key in key != "k9" }), withName: "ff"))
        let writer = database.newConnection(), reader = database.newConnection()
        reader.beginLongLivedReadTransaction()
        writer.readWrite { tx in
            tx.setObject(Item(score: 9, flag: true), forKey: "k9", inCollection: "a")      // passes f, not ff
            tx.setObject(Item(score: 3, flag: true), forKey: "k3", inCollection: "a")      // now passes
            tx.replaceObject(Item(score: 0, flag: false), forKey: "k0", inCollection: "a") // no longer passes
            tx.setObject(Item(score: 12, flag: true), forKey: "k12", inCollection: "c")    // not in the parent
            #expect(Self.keys(tx, "f", "g0") == ["k3", "k9"], "inside the transaction the filtered view already follows")
            #expect(Self.keys(tx, "ff", "g0") == ["k3"])
        }
        reader.read { tx in #expect(Self.keys(tx, "f", "g0") == ["k0"], "an older snapshot keeps the older filtered view") }
        writer.read { tx in
            #expect(Self.keys(tx, "f", "g0") == ["k3", "k9"])
            #expect(Self.keys(tx, "ff", "g0") == ["k3"])
        }
        writer.readWrite { tx in tx.removeAllObjects(inCollection: "a") }
        writer.read { tx in #expect((tx.ext("f") as! YapDatabaseViewTransaction).isEmpty() && (tx.ext("ff") as! YapDatabaseViewTransaction).isEmpty()) }
    }

    @Test func newFiltersAndNewParentBlocksRefilter() throws {
        let fixture = try Self.populated(9)
        let database = fixture.database!
        #expect(database.register(YapDatabaseFilteredView(parentViewName: "all", filtering: Self.flagOnly(), versionTag: "1"), withName: "f"))
        #expect(database.register(YapDatabaseFilteredView(parentViewName: "f", filtering: .withKeyBlock { _, _, _, key in key != "k6" }), withName: "ff"))
        let connection = database.newConnection()
        connection.readWrite { tx in
            let f = tx.ext("f") as! YapDatabaseFilteredViewTransaction
            f.setFiltering(.withKeyBlock { _, _, _, _ in false }, versionTag: "1")
            #expect(Int(f.numberOfItemsInAllGroups()) == 5, "the same tag: nothing happens")
            f.setFiltering(.withMetadataBlock { _, group, _, _, metadata in metadata == nil && group != "g1" }, versionTag: "2")
            #expect(f.filteredView.versionTag == "2")
        }
        connection.read { tx in
            #expect(Self.keys(tx, "f", "g0") == ["k0", "k3", "k6"] && Self.keys(tx, "f", "g1").isEmpty)
            #expect(Self.keys(tx, "ff", "g0") == ["k0", "k3"], "the view below follows")
        }
        connection.readWrite { tx in
            let all = tx.ext("all") as! YapDatabaseAutoViewTransaction
            all.setGrouping(.withKeyBlock { _, _, _ in "one" }, sorting: M.sorting(descending: true), versionTag: "2")
        }
        connection.read { tx in
            let f = tx.ext("f") as! YapDatabaseViewTransaction
            var keys: [String] = []
            f.iterateKeys(inGroup: "one") { _, key, _, _ in keys.append(key) }
            #expect(keys == ["k8", "k7", "k6", "k5", "k4", "k3", "k2", "k1", "k0"], "the parent's new grouping and sorting")
            var deep: [String] = []
            (tx.ext("ff") as! YapDatabaseViewTransaction).iterateKeys(inGroup: "one") { _, key, _, _ in deep.append(key) }
            #expect(deep == keys.filter { $0 != "k6" })
        }
    }

    @Test func aTouchFiltersTheRowAgain() throws {
        let fixture = try Self.populated(3)
        let database = fixture.database!
        // The filter reads another row: only a touch tells the view to look again (a key
        // block runs on insert only unless its options name the touch).
        let filtering = YapDatabaseViewFiltering.withOptions(.ifObjectTouched, keyBlock: { tx, _, _, key in
            (tx.object(forKey: "hidden", inCollection: "settings") as? String) != key
        })
        database.registerCodableSerialization(String.self, forCollection: "settings")
        #expect(database.register(YapDatabaseFilteredView(parentViewName: "all", filtering: filtering), withName: "f"))
        let connection = database.newConnection()
        connection.readWrite { tx in tx.setObject("k1", forKey: "hidden", inCollection: "settings") }
        connection.read { tx in #expect(Self.keys(tx, "f", "g1") == ["k1"], "not yet looked at again") }
        connection.readWrite { tx in tx.touchObject(forKey: "k1", inCollection: "a") }
        connection.read { tx in #expect(Self.keys(tx, "f", "g1").isEmpty) }
        connection.readWrite { tx in
            tx.setObject("nobody", forKey: "hidden", inCollection: "settings")
            (tx.ext("all") as! YapDatabaseAutoViewTransaction).touchRow(forKey: "k1", inCollection: "a")
        }
        connection.read { tx in #expect(Self.keys(tx, "f", "g1") == ["k1"], "a view-level touch of the parent reaches the filtered view") }
    }

    @Test func storedFilteredViewsAreReusedUntilAVersionTagAboveThemChanges() throws {
        let fixture = try Self.populated(30)
        #expect(fixture.database.register(YapDatabaseFilteredView(parentViewName: "all", filtering: Self.flagOnly(), versionTag: "1"), withName: "f"))
        func register(parentTag: String, filterTag: String) -> M.Calls {
            let calls = M.Calls()
            #expect(fixture.database.register(M.parentView(versionTag: parentTag), withName: "all"))
            #expect(fixture.database.register(YapDatabaseFilteredView(parentViewName: "all", filtering: Self.flagOnly(calls: calls),
                                                                      versionTag: filterTag), withName: "f"))
            return calls
        }
        try fixture.reopen(configure: M.configure)
        #expect(register(parentTag: "1", filterTag: "1").value == 0, "same tags: the stored view is reused")
        fixture.database.newConnection().read { tx in #expect(Self.keys(tx, "f", "g0") == ["k0", "k6", "k12", "k18", "k24"]) }
        try fixture.reopen(configure: M.configure)
        #expect(register(parentTag: "1", filterTag: "2").value == 30, "a new filter tag filters anew")
        try fixture.reopen(configure: M.configure)
        #expect(register(parentTag: "2", filterTag: "2").value == 30, "a new parent tag: the stored filtered view is stale")
        fixture.database.newConnection().read { tx in #expect(Self.keys(tx, "f", "g0") == ["k0", "k6", "k12", "k18", "k24"]) }
    }

    @Test func aReusedStoredFilteredViewTakesTheOrderOfARebuiltParent() throws {
        let fixture = try DatabaseFixture(configure: M.configure)
        #expect(fixture.database.register(M.parentView(), withName: "all"))
        #expect(fixture.database.register(YapDatabaseFilteredView(parentViewName: "all", filtering: Self.flagOnly()), withName: "f"))
        fixture.database.newConnection().readWrite { tx in
            for i in 0..<20 { tx.setObject(Item(score: 0, flag: i % 4 != 0), forKey: "k\(i)", inCollection: "a") }
        }
        let inserted = (0..<20).map { "k\($0)" }
        fixture.database.newConnection().read { tx in #expect(Self.keys(tx, "all", "g0") == inserted, "equal rows in insertion order") }

        try fixture.reopen(configure: M.configure)
        let database = fixture.database!
        #expect(database.register(M.parentView(), withName: "all"))
        database.unregisterExtension(withName: "all")
        #expect(database.register(M.parentView(), withName: "all"), "same tag, image already taken: rebuilt from the rows")
        let calls = M.Calls()
        #expect(database.register(YapDatabaseFilteredView(parentViewName: "all", filtering: Self.flagOnly(calls: calls)), withName: "f"))
        #expect(calls.value == 0, "the stored filtered view is reused")
        database.newConnection().read { tx in
            let parent = Self.keys(tx, "all", "g0")
            #expect(parent != inserted, "the rebuilt parent ordered its equal rows differently")
            #expect(Self.keys(tx, "f", "g0") == parent.filter { Int($0.dropFirst())! % 4 != 0 }, "the filtered view follows the parent's order")
        }
    }

    @Test func unregisteringTheParentUnregistersItsFilteredViews() throws {
        let fixture = try Self.populated(4)
        let database = fixture.database!
        #expect(database.register(YapDatabaseFilteredView(parentViewName: "all", filtering: Self.flagOnly()), withName: "f"))
        #expect(database.register(YapDatabaseFilteredView(parentViewName: "f", filtering: Self.flagOnly()), withName: "ff"))
        database.unregisterExtension(withName: "all")
        #expect(database.registeredExtensions().isEmpty)
        database.newConnection().read { tx in #expect(tx.ext("f") == nil && tx.ext("ff") == nil) }
    }

    @Test func changeSetsOfAFilteredViewAreConsolidatedAndAddUp() throws {
        let fixture = try Self.populated(10)
        let database = fixture.database!
        #expect(database.register(YapDatabaseFilteredView(parentViewName: "all", filtering: Self.flagOnly(), versionTag: "1"), withName: "f"))
        let ui = database.newConnection(), writer = database.newConnection()
        ui.beginLongLivedReadTransaction()
        let mappings = YapDatabaseViewMappings(groups: M.groups, view: "f")
        var shown: M.Lists = [:]
        ui.read { tx in
            mappings.update(with: tx)
            shown = M.lists(tx, "f")
        }
        #expect(shown["g0"]!.map(\.key) == ["k0", "k6"] && shown["g2"]!.map(\.key) == ["k2", "k8"])
        func advance() -> [YapDatabaseViewRowChange] {
            let notifications = ui.beginLongLivedReadTransaction()
            let viewConnection = ui.ext("f") as! YapDatabaseViewConnection
            let (sections, rows) = viewConnection.getChanges(forNotifications: notifications, withMappings: mappings)
            let now = ui.read { M.lists($0, "f") }
            #expect(sections.isEmpty)
            #expect(M.apply(rows, to: shown, new: now) == now, "the change set adds up to the new lists")
            shown = now
            return rows
        }
        writer.readWrite { tx in
            tx.setObject(Item(score: 3, flag: true), forKey: "k3", inCollection: "a")       // enters g0: insert
            tx.setObject(Item(score: 6, flag: false), forKey: "k6", inCollection: "a")      // leaves: delete
            tx.setObject(Item(score: 11, flag: true), forKey: "k2", inCollection: "a")      // after k8 in g2: a move
            tx.setObject(Item(score: 21, flag: true), forKey: "k21", inCollection: "a")     // inserted ...
        }
        writer.readWrite { tx in
            tx.removeObject(forKey: "k21", inCollection: "a")                               // ... then deleted: nothing
            tx.touchObject(forKey: "k4", inCollection: "a")                                 // touched: update
            tx.touchObject(forKey: "k5", inCollection: "a")                                 // not in the view: nothing
        }
        let rows = advance()
        let byKey = Dictionary(uniqueKeysWithValues: rows.map { ($0.collectionKey.key, $0.type) })
        #expect(byKey["k3"] == .insert && byKey["k6"] == .delete && byKey["k4"] == .update)
        #expect(byKey["k21"] == nil && byKey["k5"] == nil, "inserted then deleted, or outside the view: nothing")
        #expect(byKey["k2"] == .move || byKey["k8"] == .move, "k2 and k8 swapped places")

        // A new filter: only rows that appear or disappear, nothing for rows that stay.
        writer.readWrite { tx in
            (tx.ext("f") as! YapDatabaseFilteredViewTransaction).setFiltering(.withObjectBlock { _, _, _, _, object in (object as! Item).score < 5 },
                                                                            versionTag: "2")
        }
        let refiltered = advance()
        #expect(Set(refiltered.map(\.type)).isSubset(of: [.insert, .delete]))
        #expect(Set(refiltered.map(\.collectionKey.key)) == ["k1", "k8", "k2"], "k0, k3, k4 stay; k1 appears; k8 and k2 (now 11) leave")
    }
}
