import Foundation
import Testing
import YapDB

/// Views, ported from YapDatabase's view tests: grouping, sorting, updates in the same commit,
/// snapshot isolation, searches, mappings and their changes.
@Suite struct ViewTests {
    struct Task: Codable, Equatable {
        var title: String
        var priority: Int
        var done: Bool
    }

    static func configure(_ database: YapDatabase) {
        database.registerCodableSerialization(Task.self, forCollection: "tasks")
    }

    /// Tasks grouped by done/todo, sorted by priority then title.
    static func makeView(versionTag: String = "1", calls: CallCounter? = nil) -> YapDatabaseAutoView {
        let grouping = YapDatabaseViewGrouping.withObjectBlock { _, collection, _, object in
            calls?.increment()
            guard collection == "tasks", let task = object as? Task else { return nil }
            return task.done ? "done" : "todo"
        }
        let sorting = YapDatabaseViewSorting.withObjectBlock { _, _, _, _, o1, _, _, o2 in
            let a = o1 as! Task, b = o2 as! Task
            if a.priority != b.priority { return a.priority < b.priority ? .orderedAscending : .orderedDescending }
            return a.title < b.title ? .orderedAscending : (a.title == b.title ? .orderedSame : .orderedDescending)
        }
        return YapDatabaseAutoView(grouping: grouping, sorting: sorting, versionTag: versionTag)
    }

    final class CallCounter: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        func increment() { lock.lock(); n += 1; lock.unlock() }
        var value: Int { lock.lock(); defer { lock.unlock() }; return n }
    }

    func titles(_ view: YapDatabaseViewTransaction, _ group: String) -> [String] {
        var titles: [String] = []
        view.iterateKeysAndObjects(inGroup: group) { _, _, object, _, _ in titles.append((object as! Task).title) }
        return titles
    }

    @Test func registrationPopulatesAndCommitsKeepItSorted() throws {
        let fixture = try DatabaseFixture(configure: Self.configure)
        let database = fixture.database!
        let connection = database.newConnection()
        connection.readWrite { tx in
            tx.setObject(Task(title: "b", priority: 2, done: false), forKey: "1", inCollection: "tasks")
            tx.setObject(Task(title: "a", priority: 1, done: false), forKey: "2", inCollection: "tasks")
            tx.setObject(Task(title: "c", priority: 1, done: true), forKey: "3", inCollection: "tasks")
            tx.setObject("not a task", forKey: "x", inCollection: "other")
        }
        #expect(database.register(Self.makeView(), withName: "tasks"))
        #expect(!database.register(Self.makeView(), withName: "tasks"), "a taken name is refused")
        #expect(database.registeredExtension("tasks") is YapDatabaseAutoView)
        connection.read { tx in
            let view = tx.ext("tasks") as! YapDatabaseViewTransaction
            #expect(Set(view.allGroups()) == ["todo", "done"])
            #expect(view.numberOfItemsInAllGroups() == 3)
            #expect(titles(view, "todo") == ["a", "b"])
            #expect(view.group(forKey: "x", inCollection: "other") == nil, "the grouping block left it out")
        }
        connection.readWrite { tx in
            tx.setObject(Task(title: "z", priority: 0, done: false), forKey: "4", inCollection: "tasks")
            tx.setObject(Task(title: "b", priority: 2, done: true), forKey: "1", inCollection: "tasks")
            let view = tx.ext("tasks") as! YapDatabaseAutoViewTransaction
            #expect(titles(view, "todo") == ["z", "a"], "the view follows writes inside the transaction")
        }
        connection.read { tx in
            let view = tx.ext("tasks") as! YapDatabaseViewTransaction
            #expect(titles(view, "todo") == ["z", "a"])
            #expect(titles(view, "done") == ["c", "b"])
            #expect(view.getGroupIndex(forKey: "1", inCollection: "tasks")! == ("done", 1))
            #expect(view.getCollectionKey(atIndex: 0, inGroup: "todo")! == ("tasks", "4"))
            #expect((view.firstObject(inGroup: "done") as? Task)?.title == "c")
            #expect((view.lastObject(inGroup: "todo") as? Task)?.title == "a")
            #expect(view.numberOfItems(inGroup: "nope") == 0 && !view.hasGroup("nope"))
        }
        connection.readWrite { tx in tx.removeObject(forKey: "4", inCollection: "tasks") }
        connection.read { tx in #expect(titles(tx.ext("tasks") as! YapDatabaseViewTransaction, "todo") == ["a"]) }
        connection.readWrite { tx in tx.removeAllObjects(inCollection: "tasks") }
        connection.read { tx in #expect((tx.ext("tasks") as! YapDatabaseViewTransaction).isEmpty()) }
    }

    @Test func equalItemsGoAfterTheirEqualsAndSnapshotsAreIsolated() throws {
        let fixture = try DatabaseFixture(configure: Self.configure)
        let database = fixture.database!
        #expect(database.register(Self.makeView(), withName: "v"))
        let writer = database.newConnection(), reader = database.newConnection()
        writer.readWrite { tx in
            for i in 0..<5 { tx.setObject(Task(title: "same", priority: 1, done: false), forKey: "k\(i)", inCollection: "tasks") }
        }
        reader.beginLongLivedReadTransaction()
        writer.readWrite { tx in tx.setObject(Task(title: "same", priority: 1, done: false), forKey: "k5", inCollection: "tasks") }
        reader.read { tx in
            let view = tx.ext("v") as! YapDatabaseViewTransaction
            #expect(view.numberOfItems(inGroup: "todo") == 5, "the long-lived read sees its own snapshot of the view")
            var keys: [String] = []
            view.iterateKeys(inGroup: "todo") { _, key, _, _ in keys.append(key) }
            #expect(keys == ["k0", "k1", "k2", "k3", "k4"], "equal items keep insertion order")
        }
        reader.beginLongLivedReadTransaction()
        reader.read { tx in
            let view = tx.ext("v") as! YapDatabaseViewTransaction
            #expect(view.getGroupIndex(forKey: "k5", inCollection: "tasks")! == ("todo", 5))
        }
    }

    @Test func findRangeIsABinarySearch() throws {
        let fixture = try DatabaseFixture(configure: Self.configure)
        let database = fixture.database!
        #expect(database.register(Self.makeView(), withName: "v"))
        let connection = database.newConnection()
        connection.readWrite { tx in
            for i in 0..<100 { tx.setObject(Task(title: "t\(i)", priority: i / 10, done: false), forKey: "\(i)", inCollection: "tasks") }
        }
        connection.read { tx in
            let view = tx.ext("v") as! YapDatabaseViewTransaction
            let priority4 = YapDatabaseViewFind.withObjectBlock { _, _, object in
                let p = (object as! Task).priority
                return p < 4 ? .orderedAscending : (p > 4 ? .orderedDescending : .orderedSame)
            }
            #expect(view.findRange(inGroup: "todo", using: priority4) == NSRange(location: 40, length: 10))
            #expect(view.findFirstMatch(inGroup: "todo", using: priority4) == 40)
            let none = YapDatabaseViewFind.withObjectBlock { _, _, _ in .orderedAscending }
            #expect(view.findRange(inGroup: "todo", using: none).location == NSNotFound)
            var indexes: [Int] = []
            view.iterateKeys(inGroup: "todo", reversed: true, range: NSRange(location: 10, length: 3)) { _, _, index, _ in indexes.append(index) }
            #expect(indexes == [12, 11, 10])
        }
    }

    @Test func unregisterDropsTheViewRegistrationRebuildsItAndSetSortingResorts() throws {
        let fixture = try DatabaseFixture(configure: Self.configure)
        let database = fixture.database!
        let connection = database.newConnection()
        connection.readWrite { tx in
            for i in 0..<10 { tx.setObject(Task(title: "t\(i)", priority: i, done: false), forKey: "\(i)", inCollection: "tasks") }
        }
        let first = CallCounter()
        #expect(database.register(Self.makeView(versionTag: "1", calls: first), withName: "v"))
        #expect(first.value == 10)
        database.unregisterExtension(withName: "v")
        #expect(database.registeredExtension("v") == nil)
        connection.read { tx in #expect(tx.ext("v") == nil) }
        let rebuilt = CallCounter()
        #expect(database.register(Self.makeView(versionTag: "2", calls: rebuilt), withName: "v"))
        #expect(rebuilt.value == 10, "a registration rebuilds from the rows")
        connection.readWrite { tx in
            let view = tx.ext("v") as! YapDatabaseAutoViewTransaction
            view.setSorting(YapDatabaseViewSorting.withKeyBlock { _, _, _, k1, _, k2 in k1 > k2 ? .orderedAscending : (k1 == k2 ? .orderedSame : .orderedDescending) },
                            versionTag: "3")
        }
        connection.read { tx in
            let view = tx.ext("v") as! YapDatabaseViewTransaction
            #expect(view.getCollectionKey(atIndex: 0, inGroup: "todo")! == ("tasks", "9"))
        }
    }

    @Test func mappingsAndConsolidatedChanges() throws {
        let fixture = try DatabaseFixture(configure: Self.configure)
        let database = fixture.database!
        #expect(database.register(Self.makeView(), withName: "v"))
        let ui = database.newConnection(), writer = database.newConnection()
        writer.readWrite { tx in
            tx.setObject(Task(title: "a", priority: 1, done: false), forKey: "a", inCollection: "tasks")
            tx.setObject(Task(title: "b", priority: 2, done: false), forKey: "b", inCollection: "tasks")
            tx.setObject(Task(title: "c", priority: 3, done: false), forKey: "c", inCollection: "tasks")
        }
        ui.beginLongLivedReadTransaction()
        let mappings = YapDatabaseViewMappings(groups: ["todo", "done"], view: "v")
        mappings.setIsDynamicSection(true, forGroup: "done")
        ui.read { tx in mappings.update(with: tx) }
        #expect(mappings.numberOfSections() == 1, "the empty dynamic section is hidden")
        #expect(mappings.numberOfItems(inGroup: "todo") == 3)

        writer.readWrite { tx in
            tx.setObject(Task(title: "c", priority: 0, done: false), forKey: "c", inCollection: "tasks")    // moves to the top
            tx.setObject(Task(title: "b", priority: 2, done: true), forKey: "b", inCollection: "tasks")     // into "done"
            tx.setObject(Task(title: "d", priority: 9, done: false), forKey: "d", inCollection: "tasks")    // inserted
            tx.setObject(Task(title: "e", priority: 9, done: false), forKey: "e", inCollection: "tasks")    // inserted then deleted
        }
        writer.readWrite { tx in
            tx.removeObject(forKey: "e", inCollection: "tasks")
            tx.touchObject(forKey: "a", inCollection: "tasks")
        }
        let notifications = ui.beginLongLivedReadTransaction()
        let viewConnection = try #require(ui.ext("v") as? YapDatabaseViewConnection)
        let (sections, rows) = viewConnection.getChanges(forNotifications: notifications, withMappings: mappings)
        #expect(sections.map { "\($0.type) \($0.index) \($0.group)" } == ["insert 1 done"])
        let byKey = Dictionary(uniqueKeysWithValues: rows.map { ($0.collectionKey.key, $0) })
        #expect(byKey["e"] == nil, "inserted then deleted: nothing")
        #expect(byKey["d"]?.type == .insert && byKey["d"]?.newIndexPath == IndexPath(indexes: [0, 2]))
        #expect(byKey["c"]?.type == .move && byKey["c"]?.indexPath == IndexPath(indexes: [0, 2]) && byKey["c"]?.newIndexPath == IndexPath(indexes: [0, 0]))
        #expect(byKey["b"]?.type == .move && byKey["b"]?.originalGroup == "todo" && byKey["b"]?.finalGroup == "done",
                "a change of group stays one move, also into a section inserted by the same change")
        #expect(byKey["b"]?.indexPath == IndexPath(indexes: [0, 1]) && byKey["b"]?.newIndexPath == IndexPath(indexes: [1, 0]))
        #expect(byKey["a"]?.type == .update, "a touched row that stays is an update")
        #expect(mappings.numberOfSections() == 2 && mappings.numberOfItems(inSection: 0) == 3)
        #expect(mappings.collectionKey(atRow: 0, inSection: 0)?.key == "c")
        mappings.setIsReversed(true, forGroup: "todo")
        #expect(mappings.collectionKey(atRow: 0, inSection: 0)?.key == "d")
    }
}

@Suite struct ViewPersistenceTests {
    @Test func reopeningWithTheSameTagReusesTheStoredViewWithoutRerunningTheBlocks() throws {
        let fixture = try DatabaseFixture(configure: ViewTests.configure)
        var connection = fixture.database.newConnection()
        let first = ViewTests.CallCounter()
        #expect(fixture.database.register(ViewTests.makeView(versionTag: "1", calls: first), withName: "v"))
        connection.readWrite { tx in
            for i in 0..<50 { tx.setObject(ViewTests.Task(title: "t\(i)", priority: 50 - i, done: i % 5 == 0), forKey: "\(i)", inCollection: "tasks") }
        }
        #expect(first.value == 50)

        try fixture.reopen(configure: ViewTests.configure)
        let second = ViewTests.CallCounter()
        #expect(fixture.database.register(ViewTests.makeView(versionTag: "1", calls: second), withName: "v"))
        #expect(second.value == 0, "the stored view is reused: no block runs")
        connection = fixture.database.newConnection()
        connection.read { tx in
            let view = tx.ext("v") as! YapDatabaseViewTransaction
            #expect(view.numberOfItems(inGroup: "todo") == 40 && view.numberOfItems(inGroup: "done") == 10)
            #expect(view.getCollectionKey(atIndex: 0, inGroup: "todo")! == ("tasks", "49"))
        }

        // Writes made before the view registers (after a reopen) are caught up row by row.
        try fixture.reopen(configure: ViewTests.configure)
        connection = fixture.database.newConnection()
        connection.readWrite { tx in
            tx.setObject(ViewTests.Task(title: "first", priority: -1, done: false), forKey: "new", inCollection: "tasks")
            tx.removeObject(forKey: "49", inCollection: "tasks")
            tx.setObject(ViewTests.Task(title: "t3", priority: 47, done: true), forKey: "3", inCollection: "tasks")
        }
        let third = ViewTests.CallCounter()
        #expect(fixture.database.register(ViewTests.makeView(versionTag: "1", calls: third), withName: "v"))
        #expect(third.value == 2, "only the two rows written since the checkpoint ran the grouping block")
        connection.read { tx in
            let view = tx.ext("v") as! YapDatabaseViewTransaction
            #expect(view.getCollectionKey(atIndex: 0, inGroup: "todo")! == ("tasks", "new"))
            #expect(view.group(forKey: "49", inCollection: "tasks") == nil)
            #expect(view.group(forKey: "3", inCollection: "tasks") == "done")
            #expect(view.numberOfItemsInAllGroups() == 50)
        }

        // A new tag rebuilds from the rows.
        try fixture.reopen(configure: ViewTests.configure)
        let fourth = ViewTests.CallCounter()
        #expect(fixture.database.register(ViewTests.makeView(versionTag: "2", calls: fourth), withName: "v"))
        #expect(fourth.value == 50)
    }
}
