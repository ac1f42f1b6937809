import Foundation
import Testing
import YapDB

/// Behaviours ported from YapDatabase's tests: connections, caches, notifications, long-lived
/// reads, the pool, completion order and Swift concurrency.
@Suite struct ConnectionTests {
    final class Box: NSObject, NSCopying {
        let value: String
        init(_ value: String) { self.value = value }
        func copy(with zone: NSZone? = nil) -> Any { Box(value) }
    }

    static func boxSerialization(_ database: YapDatabase) {
        database.registerSerializer({ _, _, object in Data((object as! Box).value.utf8) }, forCollection: "boxes")
        database.registerDeserializer({ _, _, data in Box(String(decoding: data, as: UTF8.self)) }, forCollection: "boxes")
    }

    @Test(arguments: [YapDatabasePolicy.containment, .share, .copy])
    func cacheCoherenceUnderEachPolicy(policy: YapDatabasePolicy) throws {
        let fixture = try DatabaseFixture { database in
            Self.boxSerialization(database)
            database.setObjectPolicy(policy, forCollection: "boxes")
        }
        let database = fixture.database!
        let writer = database.newConnection(), reader = database.newConnection()
        writer.readWrite { tx in tx.setObject(Box("v1"), forKey: "k", inCollection: "boxes") }
        let first = reader.read { tx in tx.object(forKey: "k", inCollection: "boxes") as? Box }
        #expect(first?.value == "v1")
        let written = Box("v2")
        writer.readWrite { tx in tx.setObject(written, forKey: "k", inCollection: "boxes") }
        let second = reader.read { tx in tx.object(forKey: "k", inCollection: "boxes") as? Box }
        #expect(second?.value == "v2", "the other connection never reads a stale cached object")
        switch policy {
        case .share: #expect(second === written, ".share hands over the writer's instance")
        case .copy: #expect(second !== written, ".copy hands over a copy")
        case .containment: #expect(second !== written && second !== first, ".containment evicts; the reader decodes anew")
        }
        // Removal and clears evict.
        writer.readWrite { tx in tx.removeObject(forKey: "k", inCollection: "boxes") }
        #expect(reader.read { tx in tx.object(forKey: "k", inCollection: "boxes") } == nil)
        // Touches leave caches alone (the object did not change).
        writer.readWrite { tx in tx.setObject(Box("v3"), forKey: "t", inCollection: "boxes") }
        let cached = reader.read { tx in tx.object(forKey: "t", inCollection: "boxes") as? Box }
        writer.readWrite { tx in tx.touchObject(forKey: "t", inCollection: "boxes") }
        let afterTouch = reader.read { tx in tx.object(forKey: "t", inCollection: "boxes") as? Box }
        #expect(afterTouch === cached, "a touch leaves the reader's cache alone")
    }

    @Test func collectionClearSeenFromTwoConnections() throws {
        let fixture = try DatabaseFixture()
        let database = fixture.database!
        let a = database.newConnection(), b = database.newConnection()
        a.readWrite { tx in
            for i in 0..<10 { tx.setObject("v\(i)", forKey: "k\(i)", inCollection: "c") }
            tx.setObject("x", forKey: "k", inCollection: "other")
        }
        b.read { tx in for i in 0..<10 { _ = tx.object(forKey: "k\(i)", inCollection: "c") } }   // fill b's cache
        a.readWrite { tx in tx.removeAllObjects(inCollection: "c") }
        b.read { tx in
            #expect(tx.numberOfKeys(inCollection: "c") == 0)
            #expect(tx.object(forKey: "k3", inCollection: "c") == nil, "b's cache was cleared for the collection")
            #expect(tx.object(forKey: "k", inCollection: "other") as? String == "x")
        }
    }

    @Test func cacheLimitsCanChangeAnyTimeEvenInsideATransaction() throws {
        let fixture = try DatabaseFixture()
        let connection = fixture.database.newConnection()
        connection.readWrite { tx in for i in 0..<100 { tx.setObject("v\(i)", forKey: "k\(i)", inCollection: nil) } }
        connection.objectCacheLimit = 10
        #expect(connection.objectCacheLimit == 10)
        connection.read { tx in
            for i in 0..<100 { #expect(tx.object(forKey: "k\(i)", inCollection: nil) as? String == "v\(i)") }
            connection.objectCacheLimit = 1
            connection.objectCacheEnabled = false
            #expect(tx.object(forKey: "k5", inCollection: nil) as? String == "v5")
            connection.objectCacheEnabled = true
            connection.objectCacheLimit = 0
            #expect(tx.object(forKey: "k6", inCollection: nil) as? String == "v6")
        }
        let people = [1, 2, 3]
        connection.objectCacheLimit = UInt(people.count)   // UInt, as Swift imports YapDatabase's NSUInteger
        #expect(connection.objectCacheLimit == 3)
    }

    @Test func notificationContentsForEachKindOfChange() throws {
        let fixture = try DatabaseFixture()
        let database = fixture.database!
        let connection = database.newConnection()
        let recorder = NotificationRecorder(database)
        func last() -> [AnyHashable: Any] { recorder.notifications.last?.userInfo ?? [:] }
        let k = YapCollectionKey(collection: "c", key: "k")

        connection.readWrite { tx in
            tx.setObject("o", forKey: "k", inCollection: "c")
            tx.yapDatabaseModifiedNotificationCustomObject = "custom!"
        }
        #expect(recorder.notifications.count == 1, "posted once, after the commit")
        #expect(recorder.notifications.last?.object as? YapDatabase === database)
        #expect(last()["snapshot"] as? UInt64 == 1)
        #expect(last()["custom"] as? String == "custom!")
        #expect(last()["connection"] as? YapDatabaseConnection === connection)
        #expect(last()["objectChanges"] as? Set<YapCollectionKey> == [k])
        #expect(last()["metadataChanges"] as? Set<YapCollectionKey> == [k])
        #expect(last()["insertedKeys"] as? Set<YapCollectionKey> == [k])

        connection.readWrite { tx in tx.replaceObject("o2", forKey: "k", inCollection: "c") }
        #expect(last()["objectChanges"] as? Set<YapCollectionKey> == [k])
        #expect(last()["metadataChanges"] as? Set<YapCollectionKey> == [])
        #expect(last()["insertedKeys"] as? Set<YapCollectionKey> == [])

        connection.readWrite { tx in tx.touchMetadata(forKey: "k", inCollection: "c") }
        #expect(last()["metadataChanges"] as? Set<YapCollectionKey> == [k])
        #expect(last()["objectChanges"] as? Set<YapCollectionKey> == [])

        connection.readWrite { tx in tx.removeObject(forKey: "k", inCollection: "c") }
        #expect(last()["removedKeys"] as? Set<YapCollectionKey> == [k])

        connection.readWrite { tx in tx.setObject("x", forKey: "a", inCollection: "d") }
        connection.readWrite { tx in tx.removeAllObjects(inCollection: "d") }
        #expect(last()["removedCollections"] as? Set<String> == ["d"])

        connection.readWrite { tx in tx.setObject("x", forKey: "a", inCollection: "e") }
        connection.readWrite { tx in tx.removeAllObjectsInAllCollections() }
        #expect(last()["allKeysRemoved"] as? Bool == true)

        let notes = recorder.notifications
        #expect(notes.count == 8)
        #expect(notes.map { $0.userInfo?["snapshot"] as? UInt64 } == (1...8).map { UInt64($0) }, "in commit order")
        #expect(connection.hasChange(forKey: "k", inCollection: "c", in: Array(notes[0...0])))
        #expect(connection.hasObjectChange(forKey: "k", inCollection: "c", in: Array(notes[1...1])))
        #expect(!connection.hasObjectChange(forKey: "k", inCollection: "c", in: Array(notes[2...2])))
        #expect(connection.hasMetadataChange(forKey: "k", inCollection: "c", in: Array(notes[2...2])))
        #expect(connection.didClearCollection("d", in: notes))
        #expect(connection.didClearAllCollections(in: notes))
        #expect(connection.hasChange(forCollection: "e", inNotifications: notes))
    }

    @Test func longLivedReadsReturnExactlyTheSkippedNotifications() throws {
        let fixture = try DatabaseFixture()
        let database = fixture.database!
        let ui = database.newConnection(), writer = database.newConnection()
        #expect(ui.beginLongLivedReadTransaction().isEmpty)
        #expect(ui.isInLongLivedReadTransaction())
        for i in 1...3 { writer.readWrite { tx in tx.setObject("v\(i)", forKey: "k", inCollection: nil) } }
        ui.read { tx in #expect(tx.object(forKey: "k", inCollection: nil) == nil, "the long-lived read stays on its snapshot") }
        let skipped = ui.beginLongLivedReadTransaction()
        #expect(skipped.map { $0.userInfo?["snapshot"] as? UInt64 } == [1, 2, 3])
        #expect(ui.hasChange(forKey: "k", inCollection: nil, in: skipped))
        ui.read { tx in #expect(tx.object(forKey: "k", inCollection: nil) as? String == "v3") }
        writer.readWrite { tx in tx.setObject("v4", forKey: "k", inCollection: nil) }
        #expect(ui.beginLongLivedReadTransaction().map { $0.userInfo?["snapshot"] as? UInt64 } == [4])
        writer.readWrite { tx in tx.setObject("v5", forKey: "k", inCollection: nil) }
        #expect(ui.endLongLivedReadTransaction().count == 1)
        #expect(!ui.isInLongLivedReadTransaction())
        ui.read { tx in #expect(tx.object(forKey: "k", inCollection: nil) as? String == "v5") }
    }

    @Test func poolReusesIdleConnectionsAndHonoursTheLimit() throws {
        let fixture = try DatabaseFixture()
        let pool = YapDatabaseConnectionPool(database: fixture.database)
        #expect(pool.connectionLimit == 3)
        pool.connectionLimit = 0
        #expect(pool.connectionLimit == 3, "0 restores the default")
        let created = CreatedCounter()
        pool.didCreateNewConnectionBlock = { _ in created.increment() }
        let first = pool.connection()
        #expect(pool.connection() === first, "an idle connection is reused")
        pool.connectionLimit = 2
        let gate = DispatchSemaphore(value: 0)
        first.asyncRead { _ in gate.wait() }
        let second = pool.connection()
        #expect(second !== first, "a busy connection is not idle: a new one under the limit")
        second.asyncRead { _ in gate.wait() }
        second.asyncRead { _ in gate.wait() }
        let third = pool.connection()
        #expect(third === first, "at the limit: the one with the fewest pending transactions")
        #expect(created.value == 2)
        for _ in 0..<3 { gate.signal() }
    }

    final class CreatedCounter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func increment() { lock.lock(); count += 1; lock.unlock() }
        var value: Int { lock.lock(); defer { lock.unlock() }; return count }
    }

    @Test func completionsRunInOrderAfterTheirCommits() throws {
        let fixture = try DatabaseFixture()
        let database = fixture.database!
        let connection = database.newConnection()
        let order = OrderLog()
        let done = DispatchSemaphore(value: 0)
        let queue = DispatchQueue(label: "test.completions")
        for i in 0..<10 {
            connection.asyncReadWrite({ tx in
                tx.setObject(i, forKey: "k", inCollection: nil)
                tx.addCompletionQueue(queue) { order.append("tx \(i)") }
            }, completionQueue: queue, completionBlock: { order.append("done \(i)") })
        }
        connection.asyncRead({ tx in order.append("read sees \(tx.object(forKey: "k", inCollection: nil) as? Int ?? -1)") },
                             completionQueue: queue, completionBlock: { done.signal() })
        done.wait()
        let entries = order.entries
        let completions = entries.filter { $0.hasPrefix("done") }
        #expect(completions == (0..<10).map { "done \($0)" })
        #expect(entries.contains("read sees 9"), "the async read runs after the queued writes")
        #expect(database.snapshot == 10)
        let flushed = DispatchSemaphore(value: 0)
        connection.flushTransactions(completionQueue: queue) { flushed.signal() }
        flushed.wait()
        #expect(connection.pendingTransactionCount == 0)
    }

    final class OrderLog: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [String] = []
        func append(_ s: String) { lock.lock(); list.append(s); lock.unlock() }
        var entries: [String] { lock.lock(); defer { lock.unlock() }; return list }
    }

    @Test func asyncAwaitReadsAndWrites() async throws {
        let fixture = try DatabaseFixture()
        let database = fixture.database!
        let connection = database.newConnection()
        try await connection.write { tx in tx.setObject("hello", forKey: "k", inCollection: nil) }
        let value = try await connection.read { tx in tx.object(forKey: "k", inCollection: nil) as? String }
        #expect(value == "hello")
        async let a: UInt = connection.read { tx in tx.numberOfKeysInAllCollections() }
        async let b: UInt = database.newConnection().read { tx in tx.numberOfKeysInAllCollections() }
        #expect(try await a + b == 2)
        struct Nope: Error {}
        await #expect(throws: Nope.self) {
            try await connection.write { tx in
                tx.setObject("no", forKey: "k", inCollection: nil)
                throw Nope()
            }
        }
        #expect(try await connection.read { tx in tx.object(forKey: "k", inCollection: nil) as? String } == "hello")
    }

    @Test func changesStreamDeliversCommitsInOrder() async throws {
        let fixture = try DatabaseFixture()
        let database = fixture.database!
        let stream = database.changes
        let connection = database.newConnection()
        for i in 0..<3 { connection.readWrite { tx in tx.setObject(i, forKey: "k\(i)", inCollection: "c") } }
        var seen: [UInt64] = []
        for await change in stream {
            seen.append(change.snapshot)
            #expect(change.insertedKeys == [YapCollectionKey(collection: "c", key: "k\(seen.count - 1)")])
            if seen.count == 3 { break }
        }
        #expect(seen == [1, 2, 3])
    }

    @Test func openingTwiceAndMissingFilesGiveTypedErrors() throws {
        let fixture = try DatabaseFixture()
        #expect(throws: YapDatabaseError.alreadyOpen) { try YapDatabase.open(url: fixture.url) }
        #expect(YapDatabase(url: fixture.url) == nil, "the compatible form returns nil")
        let missing = fixture.url.deletingLastPathComponent().appendingPathComponent("missing.yapdb")
        let options = YapDatabaseOptions()
        options.createIfMissing = false
        #expect(throws: YapDatabaseError.fileNotFound) { try YapDatabase.open(url: missing, options: options) }
        try fixture.database.close()
        let connection = fixture.database.newConnection()
        #expect(throws: YapDatabaseError.closed) { try connection.write { tx in tx.setObject("x", forKey: "k", inCollection: nil) } }
    }
}

@Suite struct ConnectionLifetimeTests {
    /// A connection whose last reference is held by a retained commit notification goes away
    /// when the changeset is dropped, without re-entering the registry's lock.
    @Test func connectionsReleasedByDroppedChangesetsDeinitCleanly() throws {
        let fixture = try DatabaseFixture()
        let database = fixture.database!
        var lagging: YapDatabaseConnection? = database.newConnection()
        do {
            let writer = database.newConnection()
            writer.readWrite { tx in tx.setObject("v", forKey: "k", inCollection: nil) }
        }
        // The writer is now referenced only by its commit's notification, retained because
        // `lagging` has not caught up. Dropping `lagging` prunes it.
        lagging = nil
        #expect(lagging == nil)
        let fresh = database.newConnection()
        #expect(fresh.read { $0.object(forKey: "k", inCollection: nil) as? String } == "v")
    }
}

@Suite struct TouchSemanticsTests {
    /// A key written and touched in one transaction is a real change for other caches, even
    /// with the writer's caches off; a key only touched leaves them alone.
    @Test func writtenThenTouchedIsAChangeTouchedOnlyIsNot() throws {
        let fixture = try DatabaseFixture()
        let database = fixture.database!
        let writer = database.newConnection(), reader = database.newConnection()
        writer.objectCacheEnabled = false
        writer.readWrite { tx in
            tx.setObject("a1", forKey: "a", inCollection: nil)
            tx.setObject("b1", forKey: "b", inCollection: nil)
        }
        reader.read { tx in _ = tx.object(forKey: "a", inCollection: nil); _ = tx.object(forKey: "b", inCollection: nil) }
        writer.readWrite { tx in
            tx.setObject("a2", forKey: "a", inCollection: nil)
            tx.touchObject(forKey: "a", inCollection: nil)
            tx.touchObject(forKey: "b", inCollection: nil)
        }
        reader.read { tx in
            #expect(tx.object(forKey: "a", inCollection: nil) as? String == "a2", "written then touched: the reader's cache was evicted")
            #expect(tx.object(forKey: "b", inCollection: nil) as? String == "b1")
        }
    }
}

@Suite struct NotificationReentrancyTests {
    final class Log: @unchecked Sendable {
        let lock = NSLock()
        var snapshots: [UInt64] = []
        func add(_ s: UInt64) { lock.lock(); snapshots.append(s); lock.unlock() }
        var all: [UInt64] { lock.lock(); defer { lock.unlock() }; return snapshots }
    }

    /// An observer that commits from inside a notification does not deadlock (its commit only
    /// queues its own notification), and every notification is posted once, in commit order.
    @Test func anObserverMayCommitFromInsideANotification() throws {
        let fixture = try DatabaseFixture()
        let database = fixture.database!
        let follower = database.newConnection()
        let log = Log()
        let token = NotificationCenter.default.addObserver(forName: .YapDatabaseModified, object: database, queue: nil) { note in
            let snapshot = note.userInfo?["snapshot"] as? UInt64 ?? 0
            log.add(snapshot)
            if snapshot == 1 {
                follower.readWrite { tx in tx.setObject("echo", forKey: "echo", inCollection: nil) }
            }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        database.newConnection().readWrite { tx in tx.setObject("first", forKey: "k", inCollection: nil) }
        // The first drain runs the first notification, whose observer commits and queues the
        // second behind the drain's marker; the second drain waits for that one.
        #expect(drainNotifications(database) && drainNotifications(database))
        #expect(log.all == [1, 2])
        #expect(database.snapshot == 2)
    }
}
