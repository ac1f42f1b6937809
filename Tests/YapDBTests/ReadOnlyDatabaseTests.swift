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
        #expect(!database.register(ViewTests.makeView(), withName: "view"), "registering writes")
        try database.close()
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
