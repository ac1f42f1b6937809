import Foundation
import YapDBEngine

/// What the public layer attaches to each commit: the public changeset, the notification,
/// and the writer's objects for collections whose policy is `.share` or `.copy`.
///
/// `@unchecked Sendable`: immutable after creation. The `Any` values it carries are the
/// writer's objects that the `.share`/`.copy` policies hand to other connections — sharing
/// them across threads is what those policies mean (as in YapDatabase).
final class CommitRecord: CommitPayload, @unchecked Sendable {
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

extension Changeset {
    /// The public layer's record of this commit: the engine carries it typed as
    /// `CommitPayload`, whose only conformer is `CommitRecord` (nil for a changeset the public
    /// layer did not write, such as one from the engine's own tests).
    var commitRecord: CommitRecord? { attachment as? CommitRecord }
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

    /// The queue `YapDatabaseModified` is posted on, and where completion blocks run when the
    /// caller names no queue: the main queue on Apple platforms, as in YapDatabase. Elsewhere
    /// (Linux, servers) there may be no main run loop at all, so each database has a serial
    /// queue of its own in its place (label `YapDB.notifications`).
    ///
    /// A commit only queues its notification here: it never waits for an observer, so an
    /// observer on this queue (or on `.main` with `queue: .main`) may read and write freely,
    /// also while another thread commits. Notifications arrive once each, in commit order.
    /// An observer registered with `queue: nil` runs on this queue; to wait until every commit
    /// made so far has been posted, `notificationQueue.sync {}` from another thread (or run the
    /// main run loop, on Apple platforms' main thread). Posting waits for observers, as
    /// `NotificationCenter` does: an observer added with `queue: .main` in a process whose main
    /// queue never runs holds this queue, and the completion blocks behind it, for good.
    public var notificationQueue: DispatchQueue {
        #if canImport(Darwin)
        return .main
        #else
        return mainQueueStandIn
        #endif
    }

    /// Called by the engine after a commit is durable and published, still under the writer
    /// lock, so the order of these calls is the commit order: queues the notification on
    /// `notificationQueue` (never waiting for it) and feeds the change streams.
    func didCommit(_ record: CommitRecord) {
        let box = NotificationBox(record.notification)
        notificationQueue.async { NotificationCenter.default.post(box.notification) }
        let continuations = changeStreams.withLock { Array($0.values) }
        for continuation in continuations { continuation.yield(record.changeset) }
    }

    func finishChangeStreams() {
        let continuations = changeStreams.withLock { streams in
            defer { streams.removeAll() }
            return Array(streams.values)
        }
        for continuation in continuations { continuation.finish() }
    }
}

/// Carries a notification to `notificationQueue`. `@unchecked Sendable`: the notification is
/// built once and never mutated; its `userInfo` values are value types, the database and the
/// committing connection (both Sendable), and the transaction's custom object, which
/// YapDatabase likewise hands to observers on another thread.
final class NotificationBox: @unchecked Sendable {
    let notification: Notification
    init(_ notification: Notification) { self.notification = notification }
}
