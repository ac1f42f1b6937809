import Foundation
import Testing
import YapDB

/// `YapDatabaseModified` is posted as YapDatabase posts it: queued on `notificationQueue`, once
/// per commit, in commit order, and no commit ever waits for an observer. Registrations run one
/// at a time in the order they were made. Every wait here is bounded: a deadlock fails the test
/// by timeout (its threads are then left blocked) instead of hanging the run.
@Suite struct NotificationDeliveryTests {
    /// Snapshots in the order observers saw them, and anything else a test logs.
    final class Log<Item: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [Item] = []
        func add(_ item: Item) { lock.lock(); items.append(item); lock.unlock() }
        var all: [Item] { lock.lock(); defer { lock.unlock() }; return items }
    }

    static func snapshot(_ note: Notification) -> UInt64 { note.userInfo?["snapshot"] as? UInt64 ?? 0 }

    /// An observer on a busy serial "UI" queue (as `queue: .main` is in an app), commits from that
    /// queue and from a background thread at once: 100 each. Posting synchronously from the
    /// committing call deadlocks here (the background post waits for the UI queue, whose commit
    /// waits for the background post). Every notification arrives once, in commit order.
    @Test func observerOnABusyQueueAndCommitsFromTwoThreads() throws {
        let fixture = try DatabaseFixture()
        let database = fixture.database!
        let perSide = 100
        let uiQueue = DispatchQueue(label: "test.ui")
        let uiOperations = OperationQueue()
        uiOperations.underlyingQueue = uiQueue
        uiOperations.maxConcurrentOperationCount = 1
        let seen = Log<UInt64>()
        let token = NotificationCenter.default.addObserver(forName: .YapDatabaseModified, object: database,
                                                           queue: uiOperations) { note in
            seen.add(Self.snapshot(note))
        }
        defer { NotificationCenter.default.removeObserver(token) }

        let ui = database.newConnection(), background = database.newConnection()
        let group = DispatchGroup()
        for i in 0..<perSide {
            group.enter()
            uiOperations.addOperation {
                ui.readWrite { tx in tx.setObject(i, forKey: "ui\(i)", inCollection: "c") }
                group.leave()
            }
        }
        group.enter()
        Thread.detachNewThread {
            for i in 0..<perSide { background.readWrite { tx in tx.setObject(i, forKey: "bg\(i)", inCollection: "c") } }
            group.leave()
        }
        guard group.wait(timeout: .now() + 120) == .success else {
            // Deadlocked: leave the database open (closing it would wait for the stuck commit).
            _ = Unmanaged.passRetained(fixture)
            Issue.record("the commits did not return within 120 s: a commit is waiting for an observer")
            return
        }
        #expect(database.snapshot == UInt64(2 * perSide))

        // Every notification is posted (bounded), then delivered on the UI queue behind it.
        #expect(drainNotifications(database))
        let delivered = DispatchSemaphore(value: 0)
        uiOperations.addOperation { delivered.signal() }
        try #require(delivered.wait(timeout: .now() + 60) == .success)
        #expect(seen.all == (1...UInt64(2 * perSide)).map { $0 }, "each once, in commit order")
    }

    /// `database.changes` gives every commit once, in commit order, with commits from two
    /// threads at once.
    @Test func changeStreamKeepsCommitOrder() async throws {
        let fixture = try DatabaseFixture()
        let database = fixture.database!
        let stream = database.changes
        let a = database.newConnection(), b = database.newConnection()
        async let first: Void = Task.detached {
            for i in 0..<50 { a.readWrite { tx in tx.setObject(i, forKey: "a\(i)", inCollection: nil) } }
        }.value
        async let second: Void = Task.detached {
            for i in 0..<50 { b.readWrite { tx in tx.setObject(i, forKey: "b\(i)", inCollection: nil) } }
        }.value
        _ = await (first, second)
        var streamed: [UInt64] = []
        for await changeset in stream {
            streamed.append(changeset.snapshot)
            if streamed.count == 100 { break }
        }
        #expect(streamed == (1...100).map { UInt64($0) })
    }

    /// A commit returns while an observer is still busy with an earlier notification; the
    /// notifications then arrive in order.
    @Test func aCommitNeverWaitsForAnObserver() throws {
        let fixture = try DatabaseFixture()
        let database = fixture.database!
        let release = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        let seen = Log<UInt64>()
        let token = NotificationCenter.default.addObserver(forName: .YapDatabaseModified, object: database, queue: nil) { note in
            let snapshot = Self.snapshot(note)
            if snapshot == 1 {
                entered.signal()
                _ = release.wait(timeout: .now() + 120)
            }
            seen.add(snapshot)
        }
        defer { NotificationCenter.default.removeObserver(token) }

        let connection = database.newConnection()
        let committed = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            for i in 0..<10 { connection.readWrite { tx in tx.setObject(i, forKey: "k\(i)", inCollection: nil) } }
            committed.signal()
        }
        let allCommitted = committed.wait(timeout: .now() + 60) == .success
        #expect(entered.wait(timeout: .now() + 60) == .success, "the first notification reached the observer")
        #expect(allCommitted, "ten commits returned while the observer held the first notification")
        #expect(seen.all.isEmpty)
        release.signal()
        if !allCommitted { _ = committed.wait(timeout: .now() + 60) }
        #expect(drainNotifications(database))
        #expect(seen.all == (1...10).map { UInt64($0) })
    }

    /// `notificationQueue` is the main queue on Apple platforms and a serial queue of the
    /// database elsewhere; observers added with `queue: nil` run on it, and completion blocks
    /// given no queue run there after the commit's notification.
    @Test func notificationsPrecedeDefaultCompletionBlocksOnTheNotificationQueue() throws {
        let fixture = try DatabaseFixture()
        let database = fixture.database!
        #if canImport(Darwin)
        #expect(database.notificationQueue === DispatchQueue.main)
        #else
        #expect(database.notificationQueue !== DispatchQueue.main)
        #endif
        let order = Log<String>()
        let token = NotificationCenter.default.addObserver(forName: .YapDatabaseModified, object: database, queue: nil) { note in
            order.add("notification \(Self.snapshot(note))")
        }
        defer { NotificationCenter.default.removeObserver(token) }
        let done = DispatchSemaphore(value: 0)
        database.newConnection().asyncReadWrite({ tx in tx.setObject("x", forKey: "k", inCollection: nil) },
                                                completionBlock: { order.add("completion"); done.signal() })
        #if !canImport(Darwin)
        try #require(done.wait(timeout: .now() + 60) == .success)
        #expect(order.all == ["notification 1", "completion"])
        #endif
    }

    /// asyncRegister runs registrations in the order they were made: a view, a filtered view of
    /// it and a filtered view of that, each registered asynchronously without waiting, all
    /// succeed, in order; a sync `register` of a fourth made right after waits its turn.
    @Test func asyncRegistrationsRunInOrder() throws {
        let fixture = try DatabaseFixture()
        let database = fixture.database!
        database.newConnection().readWrite { tx in
            for i in 0..<200 { tx.setObject(i, forKey: "k\(i)", inCollection: "numbers") }
        }
        let grouping = YapDatabaseViewGrouping.withObjectBlock { _, _, _, object in (object as? Int).map { $0 % 2 == 0 ? "even" : "odd" } }
        let sorting = YapDatabaseViewSorting.withObjectBlock { _, _, _, _, a, _, _, b in
            let x = a as? Int ?? 0, y = b as? Int ?? 0
            return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        }
        let results = Log<String>()
        let group = DispatchGroup()
        let completions = DispatchQueue(label: "test.completions")
        func asyncRegister(_ ext: YapDatabaseExtension, _ name: String) {
            group.enter()
            database.asyncRegister(ext, withName: name, completionQueue: completions) { ok in
                results.add("\(name) \(ok)")
                group.leave()
            }
        }
        asyncRegister(YapDatabaseAutoView(grouping: grouping, sorting: sorting, versionTag: "1"), "all")
        asyncRegister(YapDatabaseFilteredView(parentViewName: "all", filtering: .withObjectBlock { _, _, _, _, object in
            (object as? Int ?? 0) < 100
        }), "small")
        asyncRegister(YapDatabaseFilteredView(parentViewName: "small", filtering: .withObjectBlock { _, _, _, _, object in
            (object as? Int ?? 0) % 10 == 0
        }), "tens")
        let fourth = database.register(YapDatabaseFilteredView(parentViewName: "tens", filtering: .withKeyBlock { _, group, _, _ in
            group == "even"
        }), withName: "evenTens")
        #expect(fourth, "a sync registration waits for the async ones made before it")
        try #require(group.wait(timeout: .now() + 120) == .success)
        #expect(results.all == ["all true", "small true", "tens true"], "all registered, in the order made")
        database.newConnection().read { tx in
            let tens = tx.ext("tens") as? YapDatabaseViewTransaction
            let evenTens = tx.ext("evenTens") as? YapDatabaseViewTransaction
            #expect(tens?.numberOfItemsInAllGroups() == 10)
            #expect(evenTens?.numberOfItemsInAllGroups() == 10)
            #expect(evenTens?.numberOfItems(inGroup: "odd") == 0)
        }
        // Unregistration takes its turn too: the dependents go first, and a registration made
        // after it sees the name free.
        database.asyncUnregisterExtension(withName: "all", completionQueue: DispatchQueue.global(), completionBlock: nil)
        #expect(database.register(YapDatabaseAutoView(grouping: grouping, sorting: sorting, versionTag: "2"), withName: "all"))
        #expect(database.registeredExtension("small") == nil && database.registeredExtension("evenTens") == nil)
    }
}
