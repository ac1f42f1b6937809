import Foundation
import Testing
import YapDB
import YapDBSimulatedDisk

/// `hasChanges(forNotifications:)` on a view connection answers from the view's own changes
/// (issue 10, item 2): false for commits that did not touch the view.
@Suite struct ViewHasChangesTests {
    typealias Task = ViewTests.Task

    /// A UI connection in a long-lived read, and a writer. The "tasks" view holds every Task
    /// of "tasks" (grouped by done/todo); its grouping leaves out other collections and
    /// non-Task values in "tasks".
    func setUp(_ database: YapDatabase) -> (ui: YapDatabaseConnection, writer: YapDatabaseConnection, view: YapDatabaseViewConnection) {
        #expect(database.register(ViewTests.makeView(), withName: "tasks"))
        let ui = database.newConnection(), writer = database.newConnection()
        ui.beginLongLivedReadTransaction()
        return (ui, writer, ui.ext("tasks") as! YapDatabaseViewConnection)
    }

    @Test func commitsOutsideTheViewReportNoChange() throws {
        let fixture = try DatabaseFixture(configure: ViewTests.configure)
        let (ui, writer, view) = setUp(fixture.database)
        writer.readWrite { tx in tx.setObject("x", forKey: "a", inCollection: "other") }
        var notifications = ui.beginLongLivedReadTransaction()
        #expect(notifications.count == 1)
        #expect(!view.hasChanges(forNotifications: notifications), "a commit to a collection the grouping leaves out")

        writer.readWrite { tx in tx.setObject("not a task", forKey: "s", inCollection: "tasks") }
        notifications = ui.beginLongLivedReadTransaction()
        #expect(!view.hasChanges(forNotifications: notifications), "a row of the view's collection that the grouping leaves out")

        writer.readWrite { tx in
            tx.touchObject(forKey: "a", inCollection: "other")
            tx.removeObject(forKey: "s", inCollection: "tasks")
            tx.removeAllObjects(inCollection: "other")
        }
        notifications = ui.beginLongLivedReadTransaction()
        #expect(notifications.count == 1)
        #expect(!view.hasChanges(forNotifications: notifications), "touches, removals and clears of rows outside the view")
    }

    @Test func commitsThatTouchTheViewReportAChange() throws {
        let fixture = try DatabaseFixture(configure: ViewTests.configure)
        let (ui, writer, view) = setUp(fixture.database)
        func changed(_ body: @escaping (YapDatabaseReadWriteTransaction) -> Void) -> Bool {
            writer.readWrite { tx in body(tx) }
            let notifications = ui.beginLongLivedReadTransaction()
            return view.hasChanges(forNotifications: notifications)
        }
        #expect(changed { $0.setObject(Task(title: "a", priority: 1, done: false), forKey: "1", inCollection: "tasks") }, "insert")
        #expect(changed { $0.setObject(Task(title: "a", priority: 1, done: true), forKey: "1", inCollection: "tasks") }, "group change")
        #expect(changed { $0.setObject(Task(title: "a2", priority: 1, done: true), forKey: "1", inCollection: "tasks") }, "update in place")
        #expect(changed { $0.touchObject(forKey: "1", inCollection: "tasks") }, "touch of a row in the view")
        #expect(changed { $0.setObject("no longer a task", forKey: "1", inCollection: "tasks") }, "the row leaves the view")
        #expect(!changed { $0.removeObject(forKey: "1", inCollection: "tasks") }, "removing a row the view no longer holds")
        #expect(changed { $0.setObject(Task(title: "b", priority: 2, done: false), forKey: "2", inCollection: "tasks") })
        #expect(changed { $0.removeAllObjects(inCollection: "tasks") }, "a clear that empties the view")
        #expect(!changed { $0.removeAllObjectsInAllCollections(); $0.setObject("y", forKey: "b", inCollection: "other") },
                "a clear of a database whose view is already empty")
    }

    @Test func aMixOfCommitsReportsAChangeIfAnyTouchedTheView() throws {
        let fixture = try DatabaseFixture(configure: ViewTests.configure)
        let (ui, writer, view) = setUp(fixture.database)
        writer.readWrite { tx in tx.setObject("x", forKey: "a", inCollection: "other") }
        writer.readWrite { tx in tx.setObject(Task(title: "t", priority: 0, done: false), forKey: "1", inCollection: "tasks") }
        writer.readWrite { tx in tx.setObject("z", forKey: "b", inCollection: "other") }
        let notifications = ui.beginLongLivedReadTransaction()
        #expect(notifications.count == 3)
        #expect(view.hasChanges(forNotifications: notifications))
        #expect(!view.hasChanges(forNotifications: [notifications[0], notifications[2]]))
        #expect(!view.hasChanges(forNotifications: []))
    }

    @Test func aFilteredViewAnswersFromItsOwnRowsNotItsParents() throws {
        let fixture = try DatabaseFixture(configure: ViewTests.configure)
        let database = fixture.database!
        let (ui, writer, parent) = setUp(database)
        let urgentOnly = YapDatabaseViewFiltering.withObjectBlock { _, _, _, _, object in (object as? Task)?.priority == 0 }
        #expect(database.register(YapDatabaseFilteredView(parentViewName: "tasks", filtering: urgentOnly, versionTag: "1"), withName: "urgent"))
        ui.beginLongLivedReadTransaction()
        let urgent = ui.ext("urgent") as! YapDatabaseViewConnection
        func changes(_ body: @escaping (YapDatabaseReadWriteTransaction) -> Void) -> (parent: Bool, urgent: Bool) {
            writer.readWrite { tx in body(tx) }
            let notifications = ui.beginLongLivedReadTransaction()
            return (parent.hasChanges(forNotifications: notifications), urgent.hasChanges(forNotifications: notifications))
        }
        #expect(changes { $0.setObject(Task(title: "later", priority: 3, done: false), forKey: "1", inCollection: "tasks") } == (true, false),
                "a row the filter leaves out changes only the parent")
        #expect(changes { $0.touchObject(forKey: "1", inCollection: "tasks") } == (true, false))
        #expect(changes { $0.setObject(Task(title: "now", priority: 0, done: false), forKey: "2", inCollection: "tasks") } == (true, true))
        #expect(changes { $0.touchObject(forKey: "2", inCollection: "tasks") } == (true, true))
        #expect(changes { $0.setObject(Task(title: "now", priority: 5, done: false), forKey: "2", inCollection: "tasks") } == (true, true),
                "a row leaving the filtered view")
        #expect(changes { $0.setObject("x", forKey: "a", inCollection: "other") } == (false, false))
        #expect(changes { $0.removeAllObjects(inCollection: "tasks") } == (true, false), "the filtered view was already empty")
    }
}


/// A view registered again after a reopen, over rows written while it was not registered: its
/// registering commit (which places those rows into the trees the checkpoint wrote) is a
/// change of the view for a connection with mappings on it.
@Suite struct ViewRegistrationChangeTests {
    typealias Task = ViewTests.Task

    static func open(_ disk: SimulatedDisk) throws -> YapDatabase {
        let options = YapDatabaseOptions()
        options.durability = .full
        let database = try YapDatabase.open(path: "/vr/db", options: options, fileSystem: disk, segmentLimit: 16384)
        ViewTests.configure(database)
        return database
    }

    @Test func aCatchUpAtRegistrationIsAChangeOfTheView() throws {
        let disk = SimulatedDisk(seed: 41)
        try disk.mkdir("/vr")
        var database = try Self.open(disk)
        #expect(database.register(ViewTests.makeView(), withName: "tasks"))
        database.newConnection().readWrite { tx in tx.setObject(Task(title: "a", priority: 1, done: false), forKey: "1", inCollection: "tasks") }
        try database.checkpoint()
        try database.close()

        database = try Self.open(disk)
        let ui = database.newConnection()
        ui.beginLongLivedReadTransaction()
        database.newConnection().readWrite { tx in tx.setObject(Task(title: "b", priority: 2, done: false), forKey: "2", inCollection: "tasks") }
        #expect(database.register(ViewTests.makeView(), withName: "tasks"))
        let notifications = ui.beginLongLivedReadTransaction()
        let view = try #require(ui.ext("tasks") as? YapDatabaseViewConnection)
        #expect(view.hasChanges(forNotifications: notifications), "the registration placed row 2")
        ui.read { tx in #expect((tx.ext("tasks") as? YapDatabaseViewTransaction)?.numberOfItemsInAllGroups() == 2) }
        database.abandon()
    }

    static func urgent() -> YapDatabaseFilteredView {
        YapDatabaseFilteredView(parentViewName: "tasks", filtering: .withObjectBlock { _, _, _, _, object in (object as? Task)?.priority == 0 },
                                versionTag: "1")
    }

    @Test func aFilteredViewsCatchUpAtRegistrationIsAChangeOfIt() throws {
        let disk = SimulatedDisk(seed: 42)
        try disk.mkdir("/vr")
        var database = try Self.open(disk)
        #expect(database.register(ViewTests.makeView(), withName: "tasks"))
        #expect(database.register(Self.urgent(), withName: "urgent"))
        database.newConnection().readWrite { tx in tx.setObject(Task(title: "a", priority: 0, done: false), forKey: "1", inCollection: "tasks") }
        try database.checkpoint()
        try database.close()

        database = try Self.open(disk)
        #expect(database.register(ViewTests.makeView(), withName: "tasks"))
        let ui = database.newConnection()
        ui.beginLongLivedReadTransaction()
        database.newConnection().readWrite { tx in tx.setObject(Task(title: "b", priority: 0, done: false), forKey: "2", inCollection: "tasks") }
        #expect(database.register(Self.urgent(), withName: "urgent"))
        let notifications = ui.beginLongLivedReadTransaction()
        let view = try #require(ui.ext("urgent") as? YapDatabaseViewConnection)
        #expect(view.hasChanges(forNotifications: [notifications.last!]), "the registration placed row 2")
        ui.read { tx in #expect((tx.ext("urgent") as? YapDatabaseViewTransaction)?.numberOfItemsInAllGroups() == 2) }
        database.abandon()
    }
}
