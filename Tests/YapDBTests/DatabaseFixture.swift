import Foundation
import Testing
import YapDB
import TestSupport

/// A database in a fresh temporary folder, removed afterwards.
final class DatabaseFixture: @unchecked Sendable {
    let directory = TemporaryDirectory("yapdb-api")
    var url: URL { URL(fileURLWithPath: directory.file("test.yapdb")) }
    private(set) var database: YapDatabase!

    init(options: YapDatabaseOptions = DatabaseFixture.fastOptions(), configure: (YapDatabase) -> Void = { _ in }) throws {
        database = try YapDatabase.open(url: url, options: options)
        configure(database)
    }

    /// Durability `.normal`: tests do not need an fsync per commit. The index read mode is
    /// the environment's (`YAPDB_TEST_INDEX_READ_MODE`, `make test`'s cached-mode step).
    static func fastOptions() -> YapDatabaseOptions {
        let options = YapDatabaseOptions()
        options.durability = .normal
        if let pages = TestEnvironment.cachedIndexPages { options.indexReadMode = .cached(pages: pages) }
        return options
    }

    /// Closes and reopens the database (same options).
    func reopen(options: YapDatabaseOptions = DatabaseFixture.fastOptions(), configure: (YapDatabase) -> Void = { _ in }) throws {
        try database.close()
        database = nil
        database = try YapDatabase.open(url: url, options: options)
        configure(database)
    }

    deinit {
        try? database?.close()
        database = nil
        directory.remove()
    }
}

/// Collects the `YapDatabaseModified` notifications of the commits one database makes after the
/// recorder was created. Commits only queue their notifications (on
/// `database.notificationQueue`), so the recorder starts by waiting for those already queued,
/// and `notifications` first waits until every commit made so far has been posted.
final class NotificationRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var received: [Notification] = []
    private var token: (any NSObjectProtocol)?
    private weak var database: YapDatabase?

    init(_ database: YapDatabase) {
        self.database = database
        #expect(drainNotifications(database), "earlier notifications posted within the bound")
        token = NotificationCenter.default.addObserver(forName: .YapDatabaseModified, object: database, queue: nil) { [weak self] note in
            guard let self else { return }
            lock.lock(); received.append(note); lock.unlock()
        }
    }

    /// What was posted, once the notifications of every commit made so far have been.
    var notifications: [Notification] {
        if let database { #expect(drainNotifications(database), "notifications posted within the bound") }
        lock.lock(); defer { lock.unlock() }
        return received
    }

    /// Forgets what was posted, once the notifications of every commit made so far have been
    /// (so a commit made before the reset never shows up after it).
    func reset() {
        if let database { #expect(drainNotifications(database), "notifications posted within the bound") }
        lock.lock(); received.removeAll(); lock.unlock()
    }

    deinit { if let token { NotificationCenter.default.removeObserver(token) } }
}

/// Waits (at most `timeout` seconds) until every notification queued on
/// `database.notificationQueue` so far has been posted; false on timeout. On the main thread
/// with the main queue as the notification queue (Apple platforms) it runs the main run loop
/// instead of blocking it.
func drainNotifications(_ database: YapDatabase, timeout: TimeInterval = 60) -> Bool {
    let done = DispatchSemaphore(value: 0)
    database.notificationQueue.async { done.signal() }
    if Thread.isMainThread && database.notificationQueue === DispatchQueue.main {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            if done.wait(timeout: .now()) == .success { return true }
            RunLoop.main.run(until: Date(timeIntervalSinceNow: 0.01))
        }
        return false
    }
    return done.wait(timeout: .now() + timeout) == .success
}
