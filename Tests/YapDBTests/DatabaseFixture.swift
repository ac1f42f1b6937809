import Foundation
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

/// Collects `YapDatabaseModified` notifications of one database.
final class NotificationRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var received: [Notification] = []
    private var token: (any NSObjectProtocol)?

    init(_ database: YapDatabase) {
        token = NotificationCenter.default.addObserver(forName: .YapDatabaseModified, object: database, queue: nil) { [weak self] note in
            guard let self else { return }
            lock.lock(); received.append(note); lock.unlock()
        }
    }

    var notifications: [Notification] { lock.lock(); defer { lock.unlock() }; return received }

    func reset() { lock.lock(); received.removeAll(); lock.unlock() }

    deinit { if let token { NotificationCenter.default.removeObserver(token) } }
}
