import Foundation
import YapDBEngine
import YapDBIndex

/// What the public layer attaches to each commit: the public changeset, the notification,
/// and the writer's objects for collections whose policy is `.share` or `.copy`.
///
/// `@unchecked Sendable`: immutable after creation. The `Any` values it carries are the
/// writer's objects that the `.share`/`.copy` policies hand to other connections — sharing
/// them across threads is what those policies mean (as in YapDatabase).
final class CommitRecord: @unchecked Sendable {
    let changeset: YapDatabaseChangeset
    let notification: Notification
    let sharedObjects: [YapCollectionKey: Any]
    let sharedMetadata: [YapCollectionKey: Any]
    /// Keys whose object (metadata) was only touched: caches keep what they hold.
    let touchedObjects: Set<CollectionKeyPair>
    let touchedMetadata: Set<CollectionKeyPair>

    init(changeset: YapDatabaseChangeset, notification: Notification, sharedObjects: [YapCollectionKey: Any],
         sharedMetadata: [YapCollectionKey: Any], touchedObjects: Set<CollectionKeyPair>, touchedMetadata: Set<CollectionKeyPair>) {
        self.changeset = changeset
        self.notification = notification
        self.sharedObjects = sharedObjects
        self.sharedMetadata = sharedMetadata
        self.touchedObjects = touchedObjects
        self.touchedMetadata = touchedMetadata
    }
}

extension YapDatabase {
    /// Every committed change, in commit order, from now on; each access gives a new stream.
    /// The stream finishes when the database closes.
    public var changes: AsyncStream<YapDatabaseChangeset> {
        let id = nextStreamID.add(1, ordering: .relaxed).oldValue
        let (stream, continuation) = AsyncStream<YapDatabaseChangeset>.makeStream()
        continuation.onTermination = { [weak self] _ in
            _ = self?.changeStreams.withLock { $0.removeValue(forKey: id) }
        }
        changeStreams.withLock { $0[id] = continuation }
        return stream
    }

    /// Called by the engine after a commit is durable and published, under the writer lock:
    /// queues the notification (in commit order) and feeds the change streams.
    func didCommit(_ record: CommitRecord) {
        pendingNotifications.withLock { $0.append(NotificationBox(record.notification)) }
        let continuations = changeStreams.withLock { Array($0.values) }
        for continuation in continuations { continuation.yield(record.changeset) }
    }

    /// Posts every queued notification, in commit order, on the calling thread (no thread
    /// hop), serialized with other posters through `notificationQueue`. Whichever committer
    /// gets there first posts everything queued so far; a committer returns only after its own
    /// notification was posted. An observer that commits from inside a post only queues (the
    /// outer loop posts it), so it cannot deadlock.
    func postNotifications() {
        let me = YapDatabaseConnection.currentThread
        if postingThread.load(ordering: .acquiring) == me { return }
        notificationQueue.sync {
            postingThread.store(me, ordering: .releasing)
            defer { postingThread.store(0, ordering: .releasing) }
            while true {
                let batch = pendingNotifications.withLock { pending -> [NotificationBox] in
                    defer { pending.removeAll() }
                    return pending
                }
                if batch.isEmpty { return }
                for box in batch { NotificationCenter.default.post(box.notification) }
            }
        }
    }


    func finishChangeStreams() {
        let continuations = changeStreams.withLock { streams in
            defer { streams.removeAll() }
            return Array(streams.values)
        }
        for continuation in continuations { continuation.finish() }
    }
}

/// Carries a notification to the posting queue. `@unchecked Sendable`: the notification is
/// built once and never mutated; its `userInfo` values are value types, the database and the
/// committing connection (both Sendable), and the transaction's custom object, which
/// YapDatabase likewise hands to observers on another thread.
final class NotificationBox: @unchecked Sendable {
    let notification: Notification
    init(_ notification: Notification) { self.notification = notification }
}
