import Foundation
import Synchronization

/// An extension that tells this process when another process changed the database: each time
/// this process catches up with commits another process made, `YapDatabaseModifiedExternally`
/// (`Notification.Name.YapDatabaseModifiedExternally`) is posted with the database as its
/// object, on ``YapDatabase/notificationQueue`` (the main queue on Apple platforms, as in
/// YapDatabase). The notification carries no `userInfo`: another process's changes come
/// without a key list, and every connection's caches are emptied for them.
///
/// Useful with ``YapDatabaseOptions/enableMultiProcessSupport``; without it no other process
/// can change the database and nothing is ever posted. Every process should register it.
///
/// ```swift
/// let options = YapDatabaseOptions()
/// options.enableMultiProcessSupport = true
/// let database = try YapDatabase.open(url: url, options: options)
/// database.register(YapDatabaseCrossProcessNotification(identifier: "group.example.db"), withName: "crossProcess")
/// ```
///
/// How a change is noticed: at the start of any transaction of this process, and by a watch
/// that looks at the shared state every ``pollInterval`` seconds (one load of shared memory)
/// while the extension is registered. (YapDatabase used Darwin notifications named after
/// `identifier`; YapDB keeps the identifier for them and reads the shared state on every
/// platform.)
///
/// `@unchecked Sendable` (inherited): the one mutable field, the watch timer, is guarded by its
/// `Mutex`.
public final class YapDatabaseCrossProcessNotification: YapDatabaseExtension, @unchecked Sendable {
    /// Names the database among the processes that share it; every process must use the same
    /// one (YapDatabase's channel name).
    public let identifier: String

    /// Seconds between two looks at the shared state while no transaction runs.
    public static let pollInterval: TimeInterval = 0.1

    private let watch = Mutex<DispatchSourceTimer?>(nil)

    /// The extension for the database that the processes sharing it call `identifier`.
    public init(identifier: String) {
        self.identifier = identifier
        super.init()
    }

    deinit { stopWatching() }

    override func prepare(name: String, transaction: YapDatabaseReadWriteTransaction) -> Bool {
        startWatching(transaction.connection.database)
        return true
    }

    override func dropState(name: String, transaction: YapDatabaseReadWriteTransaction) {
        stopWatching()
    }

    /// Starts the timer that catches up with other processes' commits while this process is
    /// idle (the catch-up posts the notification). It holds the database weakly.
    private func startWatching(_ database: YapDatabase) {
        guard database.engine.sharesProcesses else { return }
        let interval = DispatchTimeInterval.milliseconds(Int(Self.pollInterval * 1000))
        watch.withLock { current in
            current?.cancel()
            let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global(qos: .utility))
            timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(20))
            timer.setEventHandler { [weak database] in
                guard let database, !database.isClosed else { return }
                database.engine.catchUpIfBehind()
            }
            timer.resume()
            current = timer
        }
    }

    private func stopWatching() {
        watch.withLock { timer in
            timer?.cancel()
            timer = nil
        }
    }
}

extension YapDatabase {
    /// Called by the engine after this process caught up with another process's commits:
    /// posts `YapDatabaseModifiedExternally` when a ``YapDatabaseCrossProcessNotification`` is
    /// registered. Never waits for observers.
    func didCatchUpExternally() {
        guard extensionRegistry.all.contains(where: { $0.ext is YapDatabaseCrossProcessNotification }) else { return }
        notificationQueue.async { [self] in
            NotificationCenter.default.post(name: .YapDatabaseModifiedExternally, object: self)
        }
    }
}
