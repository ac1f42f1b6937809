import Foundation
import Testing
import YapDB

/// View change sets as YapDatabase produces them (its YapDatabaseViewChange.m and
/// YapDatabaseAutoViewTransaction.m, and its tests TestViewChangeLogic.m and
/// TestYapDatabaseView.m): rows of inserted and deleted sections, moves between groups, rebuilds
/// by setGrouping/setSorting, rows that keep their index when updated, and views kept in memory
/// only.
@Suite struct ViewChangeSetTests {
    typealias Task = ViewTests.Task

    /// A database with the "v" view of `ViewTests` (groups "todo"/"done", by priority then title).
    static func database(calls: ViewTests.CallCounter? = nil, options: YapDatabaseViewOptions? = nil) throws -> DatabaseFixture {
        let fixture = try DatabaseFixture(configure: ViewTests.configure)
        let view = ViewTests.makeView(calls: calls)
        let registered = options.map { YapDatabaseAutoView(grouping: view.grouping, sorting: view.sorting, versionTag: "1", options: $0) } ?? view
        #expect(fixture.database.register(registered, withName: "v"))
        return fixture
    }

    static func put(_ tx: YapDatabaseReadWriteTransaction, _ key: String, _ priority: Int, done: Bool = false, title: String? = nil) {
        tx.setObject(Task(title: title ?? key, priority: priority, done: done), forKey: key, inCollection: "tasks")
    }

    /// Moves `ui` to the newest commit and returns the change set of `mappings` on `view`.
    static func changes(_ ui: YapDatabaseConnection, _ mappings: YapDatabaseViewMappings, view: String = "v")
        -> (sections: [String], rows: [String]) {
        let notifications = ui.beginLongLivedReadTransaction()
        let connection = ui.ext(view) as! YapDatabaseViewConnection
        let (sections, rows) = connection.getChanges(forNotifications: notifications, withMappings: mappings)
        return (sections.map { "\($0.type) \($0.index) \($0.group)" }, rows.map(describe).sorted())
    }

    /// "insert c → [1, 0]", "delete a [0, 0]", "move b [0, 1] → [1, 0]", "update a [0, 0]".
    static func describe(_ change: YapDatabaseViewRowChange) -> String {
        let key = change.collectionKey.key
        func path(_ p: IndexPath?) -> String { p.map { "[\($0[0]), \($0[1])]" } ?? "-" }
        switch change.type {
        case .insert: return "insert \(key) → \(path(change.newIndexPath))"
        case .delete: return "delete \(key) \(path(change.indexPath))"
        case .move: return "move \(key) \(path(change.indexPath)) → \(path(change.newIndexPath))"
        case .update: return "update \(key) \(path(change.indexPath))"
        }
    }

    /// Checks the three behaviours of sections on `mappings` (dynamic for all groups, sections
    /// in the order "todo", "done"): rows of a new section are inserts beside the section insert,
    /// a change of group is one move, rows of a deleted section are deletes beside it.
    static func checkSectionRows(_ database: YapDatabase, _ mappings: YapDatabaseViewMappings, view: String) {
        let writer = database.newConnection(), ui = database.newConnection()
        writer.readWrite { tx in
            put(tx, "a", 1)
            put(tx, "b", 2)
        }
        ui.beginLongLivedReadTransaction()
        ui.read { tx in mappings.update(with: tx) }
        #expect(mappings.numberOfSections() == 1)

        writer.readWrite { tx in
            put(tx, "c", 1, done: true)
            put(tx, "d", 2, done: true)
        }
        var (sections, rows) = changes(ui, mappings, view: view)
        #expect(sections == ["insert 1 done"])
        #expect(rows == ["insert c → [1, 0]", "insert d → [1, 1]"], "the rows of the inserted section come beside it")

        writer.readWrite { tx in put(tx, "b", 0, done: true) }
        (sections, rows) = changes(ui, mappings, view: view)
        #expect(sections == [])
        #expect(rows == ["move b [0, 1] → [1, 0]"], "a change of group is one move; the rows it pushes down are not listed")

        writer.readWrite { tx in tx.removeObject(forKey: "a", inCollection: "tasks") }
        (sections, rows) = changes(ui, mappings, view: view)
        #expect(sections == ["delete 0 todo"])
        #expect(rows == ["delete a [0, 0]"], "the rows of the deleted section come beside it")

        writer.readWrite { tx in put(tx, "c", 5, done: false) }
        (sections, rows) = changes(ui, mappings, view: view)
        #expect(sections == ["insert 0 todo"])
        #expect(rows == ["move c [0, 1] → [0, 0]"], "a move into an inserted section stays one move")
    }

    @Test func rowsOfInsertedAndDeletedSectionsAndMovesBetweenGroups() throws {
        let fixture = try Self.database()
        let mappings = YapDatabaseViewMappings(groups: ["todo", "done"], view: "v")
        mappings.setIsDynamicSectionForAllGroups(true)
        Self.checkSectionRows(fixture.database, mappings, view: "v")
    }

    @Test func theSameWithGroupFilterAndSortBlocks() throws {
        let fixture = try Self.database()
        let mappings = YapDatabaseViewMappings(groupFilterBlock: { _, _ in true },
                                               sortBlock: { g1, g2, _ in g2.compare(g1) }, view: "v")
        Self.checkSectionRows(fixture.database, mappings, view: "v")
    }

    @Test func theSameForAFilteredView() throws {
        let fixture = try Self.database()
        let filtering = YapDatabaseViewFiltering.withObjectBlock { _, _, _, _, object in (object as! Task).priority < 100 }
        #expect(fixture.database.register(YapDatabaseFilteredView(parentViewName: "v", filtering: filtering), withName: "f"))
        let mappings = YapDatabaseViewMappings(groups: ["todo", "done"], view: "f")
        mappings.setIsDynamicSectionForAllGroups(true)
        Self.checkSectionRows(fixture.database, mappings, view: "f")
    }

    // MARK: setGrouping / setSorting

    static let byTitleDescending = YapDatabaseViewSorting.withObjectBlock { _, _, _, _, o1, _, _, o2 in
        (o2 as! Task).title.compare((o1 as! Task).title)
    }

    static func keys(_ connection: YapDatabaseConnection, _ group: String) -> [String] {
        connection.read { tx in
            var keys: [String] = []
            (tx.ext("v") as! YapDatabaseViewTransaction).iterateKeys(inGroup: group) { _, key, _, _ in keys.append(key) }
            return keys
        }
    }

    @Test func setGroupingAndSetSortingWithTheSameTagChangeNothing() throws {
        let fixture = try Self.database()
        let writer = fixture.database.newConnection(), ui = fixture.database.newConnection()
        writer.readWrite { tx in for (i, key) in ["a", "b", "c"].enumerated() { Self.put(tx, key, i) } }
        let mappings = YapDatabaseViewMappings(groups: ["todo"], view: "v")
        ui.beginLongLivedReadTransaction()
        ui.read { tx in mappings.update(with: tx) }
        let before = ViewTests.makeView()
        writer.readWrite { tx in
            let view = tx.ext("v") as! YapDatabaseAutoViewTransaction
            view.setSorting(Self.byTitleDescending, versionTag: "1")
            view.setGrouping(YapDatabaseViewGrouping.withKeyBlock { _, _, _ in "other" }, sorting: before.sorting, versionTag: "1")
        }
        #expect(Self.keys(writer, "todo") == ["a", "b", "c"], "the view's own tag: nothing happens")
        #expect((fixture.database.registeredExtension("v") as! YapDatabaseAutoView).versionTag == "1")
        let (sections, rows) = Self.changes(ui, mappings)
        #expect(sections.isEmpty && rows.isEmpty)
    }

    @Test func aNewGroupingReportsEveryRowStillShownAsAMove() throws {
        let fixture = try Self.database()
        let writer = fixture.database.newConnection(), ui = fixture.database.newConnection()
        writer.readWrite { tx in
            for (i, key) in ["a", "b", "c"].enumerated() { Self.put(tx, key, i) }
            Self.put(tx, "x", 0, done: true)
        }
        let mappings = YapDatabaseViewMappings(groups: ["todo", "done"], view: "v")
        ui.beginLongLivedReadTransaction()
        ui.read { tx in mappings.update(with: tx) }
        let view = ViewTests.makeView()
        writer.readWrite { tx in
            (tx.ext("v") as! YapDatabaseAutoViewTransaction).setGrouping(view.grouping, sorting: view.sorting, versionTag: "2")
        }
        let (sections, rows) = Self.changes(ui, mappings)
        #expect(sections.isEmpty)
        #expect(rows == ["move a [0, 0] → [0, 0]", "move b [0, 1] → [0, 1]", "move c [0, 2] → [0, 2]", "move x [1, 0] → [1, 0]"],
                "YapDatabase takes every row out and puts it back: each is a move, here to its own place")
    }

    @Test func aNewSortingReportsUpdatesWhereRowsKeptTheirPlaceAndMovesElsewhere() throws {
        let fixture = try Self.database()
        let writer = fixture.database.newConnection(), ui = fixture.database.newConnection()
        writer.readWrite { tx in for (i, key) in ["a", "b", "c"].enumerated() { Self.put(tx, key, i) } }
        let mappings = YapDatabaseViewMappings(groups: ["todo"], view: "v")
        ui.beginLongLivedReadTransaction()
        ui.read { tx in mappings.update(with: tx) }
        writer.readWrite { tx in (tx.ext("v") as! YapDatabaseAutoViewTransaction).setSorting(Self.byTitleDescending, versionTag: "2") }
        #expect(Self.keys(writer, "todo") == ["c", "b", "a"])
        let notifications = ui.beginLongLivedReadTransaction()
        let (_, rowChanges) = (ui.ext("v") as! YapDatabaseViewConnection).getChanges(forNotifications: notifications, withMappings: mappings)
        #expect(Set(rowChanges.map(\.collectionKey.key)) == ["a", "b", "c"], "every row is reported")
        #expect(rowChanges.filter { $0.type == .update }.count == 1 && rowChanges.filter { $0.type == .move }.count == 2)
        for change in rowChanges where change.type == .update {
            #expect(change.changes == [.changedObject, .changedMetadata], "a resorted row that kept its place is an update")
        }
    }

    @Test func setFilteringReportsOnlyTheRowsThatCameOrWent() throws {
        let fixture = try Self.database()
        let below = { (limit: Int) in
            YapDatabaseViewFiltering.withObjectBlock { _, _, _, _, object in (object as! Task).priority < limit }
        }
        #expect(fixture.database.register(YapDatabaseFilteredView(parentViewName: "v", filtering: below(3), versionTag: "3"), withName: "f"))
        let writer = fixture.database.newConnection(), ui = fixture.database.newConnection()
        writer.readWrite { tx in for i in 0..<6 { Self.put(tx, "k\(i)", i) } }
        let mappings = YapDatabaseViewMappings(groups: ["todo"], view: "f")
        ui.beginLongLivedReadTransaction()
        ui.read { tx in mappings.update(with: tx) }

        writer.readWrite { tx in (tx.ext("f") as! YapDatabaseFilteredViewTransaction).setFiltering(below(5), versionTag: "3") }
        var (_, rows) = Self.changes(ui, mappings, view: "f")
        #expect(rows.isEmpty, "the view's own tag: nothing happens")

        writer.readWrite { tx in (tx.ext("f") as! YapDatabaseFilteredViewTransaction).setFiltering(below(5), versionTag: "5") }
        (_, rows) = Self.changes(ui, mappings, view: "f")
        #expect(rows == ["insert k3 → [0, 3]", "insert k4 → [0, 4]"], "as YapDatabase's filtered view: rows kept are not reported")
        writer.readWrite { tx in (tx.ext("f") as! YapDatabaseFilteredViewTransaction).setFiltering(below(2), versionTag: "2") }
        (_, rows) = Self.changes(ui, mappings, view: "f")
        #expect(rows == ["delete k2 [0, 2]", "delete k3 [0, 3]", "delete k4 [0, 4]"])
    }

    // MARK: Updated rows keep their index

    @Test func anUpdatedRowKeepsItsIndexWhileItSortsBetweenItsNeighbours() throws {
        let fixture = try Self.database()
        let writer = fixture.database.newConnection(), ui = fixture.database.newConnection()
        writer.readWrite { tx in for key in ["k0", "k1", "k2"] { Self.put(tx, key, 1, title: "same") } }
        let mappings = YapDatabaseViewMappings(groups: ["todo"], view: "v")
        ui.beginLongLivedReadTransaction()
        ui.read { tx in mappings.update(with: tx) }

        writer.readWrite { tx in Self.put(tx, "k1", 1, title: "same") }
        #expect(Self.keys(writer, "todo") == ["k0", "k1", "k2"], "an updated row equal to its neighbours keeps its index")
        var (_, rows) = Self.changes(ui, mappings)
        #expect(rows == ["update k1 [0, 1]"])

        writer.readWrite { tx in (tx.ext("v") as! YapDatabaseAutoViewTransaction).touchRow(forKey: "k0", inCollection: "tasks") }
        #expect(Self.keys(writer, "todo") == ["k0", "k1", "k2"], "a row touched through the view keeps its index too")
        (_, rows) = Self.changes(ui, mappings)
        #expect(rows == ["update k0 [0, 0]"])

        writer.readWrite { tx in Self.put(tx, "k3", 1, title: "same") }
        #expect(Self.keys(writer, "todo") == ["k0", "k1", "k2", "k3"], "a new row goes after its equals")
        (_, rows) = Self.changes(ui, mappings)
        #expect(rows == ["insert k3 → [0, 3]"])

        // Sort values that change but stay between the neighbours': still in place.
        writer.readWrite { tx in
            Self.put(tx, "p1", 10)
            Self.put(tx, "p2", 20)
            Self.put(tx, "p3", 30)
        }
        _ = Self.changes(ui, mappings)
        writer.readWrite { tx in Self.put(tx, "p2", 25, title: "p2") }
        (_, rows) = Self.changes(ui, mappings)
        #expect(rows == ["update p2 [0, 5]"])
        writer.readWrite { tx in Self.put(tx, "p2", 35, title: "p2") }
        (_, rows) = Self.changes(ui, mappings)
        #expect(rows == ["move p2 [0, 5] → [0, 6]"], "past its neighbour: a move")
    }

    // MARK: Views kept in memory only

    @Test func aViewThatIsNotPersistentIsRebuiltAtEveryRegistrationAndWritesNoPages() throws {
        let options = YapDatabaseViewOptions()
        options.isPersistent = false
        let first = ViewTests.CallCounter()
        let fixture = try Self.database(calls: first, options: options)
        let plain = try DatabaseFixture(configure: ViewTests.configure)
        for database in [fixture.database!, plain.database!] {
            database.newConnection().readWrite { tx in for i in 0..<200 { Self.put(tx, "k\(i)", i % 7, done: i % 3 == 0) } }
        }
        #expect(first.value == 200)
        try fixture.reopen(configure: ViewTests.configure)
        try plain.reopen(configure: ViewTests.configure)
        #expect(try fixture.database.stats().indexPages == plain.database.stats().indexPages,
                "the checkpoint wrote no page for the view: the same pages as a database without it")

        let second = ViewTests.CallCounter()
        let view = ViewTests.makeView(calls: second)
        #expect(fixture.database.register(YapDatabaseAutoView(grouping: view.grouping, sorting: view.sorting, versionTag: "1", options: options),
                                          withName: "v"))
        #expect(second.value == 200, "registered again with the same tag: rebuilt from the rows")
        fixture.database.newConnection().read { tx in
            #expect((tx.ext("v") as! YapDatabaseViewTransaction).numberOfItemsInAllGroups() == 200)
        }
        #expect(try fixture.database.verify().isValid)
    }

    @Test func aFilteredViewThatIsNotPersistentIsFilteredAgainAtEveryRegistration() throws {
        let calls = ViewTests.CallCounter()
        func filtered() -> YapDatabaseFilteredView {
            let options = YapDatabaseViewOptions()
            options.isPersistent = false
            let filtering = YapDatabaseViewFiltering.withObjectBlock { _, _, _, _, object in
                calls.increment()
                return (object as! Task).priority > 2
            }
            return YapDatabaseFilteredView(parentViewName: "v", filtering: filtering, versionTag: "1", options: options)
        }
        let fixture = try Self.database()
        #expect(fixture.database.register(filtered(), withName: "f"))
        fixture.database.newConnection().readWrite { tx in for i in 0..<20 { Self.put(tx, "k\(i)", i % 5) } }
        try fixture.reopen(configure: ViewTests.configure)
        #expect(fixture.database.register(ViewTests.makeView(), withName: "v"))
        let before = calls.value
        #expect(fixture.database.register(filtered(), withName: "f"))
        #expect(calls.value - before == 20, "the filter ran for every row of the parent again")
        fixture.database.newConnection().read { tx in
            #expect((tx.ext("f") as! YapDatabaseViewTransaction).numberOfItemsInAllGroups() == 8)
        }
    }
}
