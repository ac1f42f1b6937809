import Foundation
import Testing
@testable import YapDB
import TestSupport

/// `YapDatabaseOptions.readOnly` and `busyTimeout` through the public API: what each write
/// API does on a database opened read-only.
@Suite struct ReadOnlyDatabaseTests {
    static func readOnly() -> YapDatabaseOptions {
        let options = DatabaseFixture.fastOptions()
        options.readOnly = true
        return options
    }

    /// A fixture holding rows a, b; reopened read-only.
    static func readOnlyFixture() throws -> DatabaseFixture {
        let fixture = try DatabaseFixture()
        try fixture.database.newConnection().write { tx in
            tx.setObject("1", forKey: "a", inCollection: "c")
            tx.setObject("2", forKey: "b", inCollection: "c")
        }
        try fixture.reopen(options: readOnly())
        return fixture
    }

    @Test func theOptionsDefaultToAReadWriteOpenThatDoesNotWait() {
        let options = YapDatabaseOptions()
        #expect(!options.readOnly)
        #expect(options.busyTimeout == 0)
        options.readOnly = true
        options.busyTimeout = 2.5
        let copy = options.copy()
        #expect(copy.readOnly && copy.busyTimeout == 2.5)
        #expect(YapDatabaseOptions.busyTimeoutDuration(2.5) == .milliseconds(2500))
        for wild in [-1, .nan, 0] { #expect(YapDatabaseOptions.busyTimeoutDuration(wild) == .zero, "\(wild)") }
        #expect(YapDatabaseOptions.busyTimeoutDuration(.infinity) == .seconds(86_400))
    }

    @Test func everyWriteIsRefusedAndReadsWork() throws {
        let fixture = try Self.readOnlyFixture()
        let database = fixture.database!
        let connection = database.newConnection()
        #expect(connection.read { $0.object(forKey: "b", inCollection: "c") as? String } == "2")
        #expect(throws: YapDatabaseError.readOnly) {
            try connection.write { tx in tx.setObject("3", forKey: "a", inCollection: "c") }
        }
        // The compatible form runs its block with the writes refused, and logs the refusal.
        let log = LogCapture { $0.message.contains(database.databaseURL.path) }
        defer { log.stop() }
        let value = connection.readWrite { tx -> Int in
            tx.setObject("4", forKey: "a", inCollection: "c")
            return 7
        }
        #expect(value == 7)
        #expect(log.messages.contains { $0.level == .error && $0.message.contains("read-only") }, "\(log.messages.map(\.message))")
        #expect(connection.read { $0.object(forKey: "a", inCollection: "c") as? String } == "1", "nothing applied")
        #expect(database.snapshot == 1)
        #expect(throws: YapDatabaseError.readOnly) { try database.checkpoint() }
        #expect(throws: YapDatabaseError.readOnly) { try database.compact() }
        #expect(try database.verify().isValid)
        #expect(try database.stats().rowCount == 2)
        #expect(!database.register(ViewTests.makeView(), withName: "view"), "a view that must be built")
        try connection.write { tx in _ = tx.object(forKey: "a", inCollection: "c") }   // writes nothing: fine
        try database.close()
    }

    /// A persistent view stored by the last read-write close registers over its trees without
    /// writing anything; one with another version tag (it would rebuild) does not register.
    @Test func aStoredViewRegistersReadOnly() throws {
        let fixture = try DatabaseFixture(configure: ViewTests.configure)
        try fixture.database.newConnection().write { tx in
            tx.setObject(ViewTests.Task(title: "b", priority: 2, done: false), forKey: "1", inCollection: "tasks")
            tx.setObject(ViewTests.Task(title: "a", priority: 1, done: false), forKey: "2", inCollection: "tasks")
            tx.setObject(ViewTests.Task(title: "c", priority: 1, done: true), forKey: "3", inCollection: "tasks")
        }
        #expect(fixture.database.register(ViewTests.makeView(), withName: "tasks"))
        try fixture.reopen(options: Self.readOnly(), configure: ViewTests.configure)
        let database = fixture.database!
        let files = try Self.sizes(fixture.directory.path)
        let snapshot = database.snapshot
        #expect(!database.register(ViewTests.makeView(versionTag: "2"), withName: "other"), "would rebuild")
        #expect(database.register(ViewTests.makeView(), withName: "tasks"))
        database.newConnection().read { tx in
            let view = tx.ext("tasks") as! YapDatabaseViewTransaction
            #expect(view.numberOfItems(inGroup: "todo") == 2)
            #expect(view.numberOfItems(inGroup: "done") == 1)
        }
        #expect(database.snapshot == snapshot)
        try database.close()
        #expect(try Self.sizes(fixture.directory.path) == files, "nothing written")
    }

    static func sizes(_ directory: String) throws -> [String: Int] {
        var sizes: [String: Int] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            sizes[name] = (try FileManager.default.attributesOfItem(atPath: directory + "/" + name)[.size] as? NSNumber)?.intValue
        }
        return sizes
    }

    @Test func aMissingDatabaseIsNotCreated() throws {
        let directory = TemporaryDirectory("yapdb-ro")
        defer { directory.remove() }
        let url = URL(fileURLWithPath: directory.file("none"))
        #expect(throws: YapDatabaseError.fileNotFound) { _ = try YapDatabase.open(url: url, options: Self.readOnly()) }
        #expect(YapDatabase(url: url, options: Self.readOnly()) == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }
}
