import Foundation
import YapDBEngine

extension YapDatabaseConnection {
    // MARK: Keeping the caches in sync

    /// Takes the newest registrations, then applies every changeset after `cacheSnapshot` up to
    /// `number`, in order (on the queue, at the start of every transaction).
    func syncCaches(to number: UInt64) {
        refreshSerialization()
        guard number > cacheSnapshot else { return }
        for changeset in database.engine.registry.changesets(after: cacheSnapshot, through: number) {
            apply(changeset)
        }
        advance(to: number)
    }

    /// Records that the caches now reflect `number`.
    func advance(to number: UInt64) {
        cacheSnapshot = number
        reflectedSnapshot.store(number, ordering: .releasing)
        database.engine.registry.advance(consumer: consumerID, to: number)
    }

    /// The cache rules of API.md §6: clears and removals evict; changed keys are evicted
    /// (`.containment`), or, when this cache already holds them, take the writer's instance
    /// (`.share`) or a copy of it (`.copy`) — a commit never adds keys to another connection's
    /// cache; touches leave the caches alone.
    func apply(_ changeset: Changeset) {
        let record = changeset.commitRecord
        // Another process's commits list no keys: everything goes (multi-process support).
        if changeset.allKeysRemoved || changeset.external {
            objectCache.removeAll()
            metadataCache.removeAll()
        }
        for collection in changeset.removedCollections {
            objectCache.removeCollection(collection)
            metadataCache.removeCollection(collection)
        }
        let objects = objectCache.count > 0, metadata = metadataCache.count > 0
        guard objects || metadata else { return }   // a commit never adds keys to another connection's cache
        let sharedObjects = record?.sharedObjects ?? [:], sharedMetadata = record?.sharedMetadata ?? [:]
        let touchedObjects = record?.touchedObjects ?? [], touchedMetadata = record?.touchedMetadata ?? []
        let objectPolicy = { (collection: String) in self.serialization.objectPolicy(forCollection: collection) }
        let metadataPolicy = { (collection: String) in self.serialization.metadataPolicy(forCollection: collection) }
        if changeset.changeCount > objectCache.count + metadataCache.count {
            // Fewer cached keys than changes: look each cached key up in the changeset.
            Self.syncCachedKeys(&objectCache, changeset, .object, shared: sharedObjects, touched: touchedObjects,
                                cacheOn: objectCacheOn, policy: objectPolicy)
            Self.syncCachedKeys(&metadataCache, changeset, .metadata, shared: sharedMetadata, touched: touchedMetadata,
                                cacheOn: metadataCacheOn, policy: metadataPolicy)
            return
        }
        // One pass over the changed keys: the key's string hash is computed once, and used for
        // both caches; an empty cache is skipped.
        changeset.forEachChange { pair, flags in
            let removed = flags.contains(.removed)
            let objectChange = objects && (removed || flags.contains(.object))
            let metadataChange = metadata && (removed || flags.contains(.metadata))
            guard objectChange || metadataChange else { return }
            let key = ObjectCache.Key(pair)
            if objectChange {
                Self.sync(&objectCache, key, changed: flags.contains(.object), shared: sharedObjects, touched: touchedObjects,
                          cacheOn: objectCacheOn, policy: objectPolicy)
            }
            if metadataChange {
                Self.sync(&metadataCache, key, changed: flags.contains(.metadata), shared: sharedMetadata, touched: touchedMetadata,
                          cacheOn: metadataCacheOn, policy: metadataPolicy)
            }
        }
    }

    /// The sync of one cache that holds fewer keys than the commit changed: each cached key is
    /// looked up in the changeset (`kind`: the flag that changes this cache's values). Rows the
    /// commit inserted without hashing are not looked up: they did not exist at the snapshot the
    /// cache reflects, and a cache holds only rows read or written at that snapshot.
    private static func syncCachedKeys(_ cache: inout ObjectCache, _ changeset: Changeset, _ kind: Changeset.ChangeFlags,
                                       shared: [YapCollectionKey: Any], touched: Set<CollectionKeyPair>, cacheOn: Bool,
                                       policy: (String) -> YapDatabasePolicy) {
        guard cache.count > 0 else { return }
        for key in cache.keys {
            guard let flags = changeset.hashedFlags(for: key.pair), flags.contains(.removed) || flags.contains(kind) else { continue }
            sync(&cache, key, changed: flags.contains(kind), shared: shared, touched: touched, cacheOn: cacheOn, policy: policy)
        }
    }

    /// One changed key against one cache: a set or touch (`changed`) takes the writer's value
    /// when the cache holds the key and the policy shares or copies it, stays when it was only
    /// touched, and is evicted otherwise; a removal is evicted.
    private static func sync(_ cache: inout ObjectCache, _ key: ObjectCache.Key, changed: Bool, shared: [YapCollectionKey: Any],
                             touched: Set<CollectionKeyPair>, cacheOn: Bool, policy: (String) -> YapDatabasePolicy) {
        if changed {
            if !shared.isEmpty, cacheOn, cache.contains(key),
               let written = shared[YapCollectionKey(collection: key.pair.collection, key: key.pair.key)],
               let value = policyValue(written, policy(key.pair.collection)) {
                cache.set(value, key)
            } else if touched.isEmpty || !touched.contains(key.pair) {
                cache.remove(key)
            }
        } else {
            cache.remove(key)
        }
    }

    /// Whether this connection's object cache (or, with `metadata`, its metadata cache) holds
    /// the key. For tests; any thread outside this connection's transactions.
    func isCached(key: String, inCollection collection: String?, metadata: Bool = false) -> Bool {
        onQueueExclusively { (metadata ? metadataCache : objectCache).contains(collection: collection ?? "", key: key) }
    }

    /// What a cache on another connection holds under `policy`: the same instance (`.share`),
    /// a copy (`.copy`, through `NSCopying`; value types are copies already), or nothing.
    static func policyValue(_ value: Any, _ policy: YapDatabasePolicy) -> Any? {
        switch policy {
        case .containment: return nil
        case .share: return value
        case .copy:
            if let copying = value as? NSCopying { return copying.copy(with: nil) }
            return type(of: value) is AnyClass ? nil : value
        }
    }

    // MARK: Long-lived read transactions

    /// Ends any long-lived read transaction and begins one at the newest snapshot: every read
    /// on this connection sees that snapshot until it ends or moves. Returns the notifications
    /// of every commit it moved past, in order.
    @discardableResult
    public func beginLongLivedReadTransaction() -> [Notification] {
        onQueue { () -> [Notification] in
            let from = cacheSnapshot
            let lease = database.engine.acquireSnapshot()
            let notifications = notifications(after: from, through: lease.snapshot.number)
            syncCaches(to: lease.snapshot.number)
            longLived = lease
            return notifications
        }
    }

    /// Ends the long-lived read transaction; the connection's next transaction reads the newest
    /// snapshot. Returns the notifications of the commits since the long-lived snapshot, in order.
    @discardableResult
    public func endLongLivedReadTransaction() -> [Notification] {
        onQueue { () -> [Notification] in
            guard longLived != nil else { return [] }
            longLived = nil
            let newest = database.engine.snapshot().number
            let notifications = notifications(after: cacheSnapshot, through: newest)
            syncCaches(to: newest)
            return notifications
        }
    }

    /// Whether a long-lived read transaction is open.
    public func isInLongLivedReadTransaction() -> Bool {
        if activeThread.load(ordering: .acquiring) == Self.currentThread { return longLived != nil }
        return onQueueExclusively { longLived != nil }
    }

    /// Makes a read-write transaction that would implicitly end the long-lived read
    /// transaction stop the program instead (to catch the mistake in development).
    public func enableExceptionsForImplicitlyEndingLongLivedReadTransaction() {
        settings.withLock { $0.exceptionsForImplicitEnd = true }
    }

    /// Lets read-write transactions end the long-lived read transaction silently (the default).
    public func disableExceptionsForImplicitlyEndingLongLivedReadTransaction() {
        settings.withLock { $0.exceptionsForImplicitEnd = false }
    }

    func notifications(after from: UInt64, through to: UInt64) -> [Notification] {
        database.engine.registry.changesets(after: from, through: to).compactMap { $0.commitRecord?.notification }
    }

    // MARK: Changeset queries (stateless, over notifications)

    /// Whether any of `notifications` changed the row (object or metadata, insert, remove, or a
    /// clear of its collection or of everything).
    public func hasChange(forKey key: String, inCollection collection: String?, in notifications: [Notification]) -> Bool {
        ChangesetQueries.hasChange(forKey: key, inCollection: collection, in: notifications)
    }

    /// `hasChange(forKey:inCollection:in:)` under YapDatabase's label.
    public func hasChange(forKey key: String, inCollection collection: String?, inNotifications notifications: [Notification]) -> Bool {
        ChangesetQueries.hasChange(forKey: key, inCollection: collection, in: notifications)
    }

    /// Whether any of `notifications` changed the row's object.
    public func hasObjectChange(forKey key: String, inCollection collection: String?, in notifications: [Notification]) -> Bool {
        ChangesetQueries.hasObjectChange(forKey: key, inCollection: collection, in: notifications)
    }

    /// `hasObjectChange(forKey:inCollection:in:)` under YapDatabase's label.
    public func hasObjectChange(forKey key: String, inCollection collection: String?, inNotifications notifications: [Notification]) -> Bool {
        ChangesetQueries.hasObjectChange(forKey: key, inCollection: collection, in: notifications)
    }

    /// Whether any of `notifications` changed the row's metadata.
    public func hasMetadataChange(forKey key: String, inCollection collection: String?, in notifications: [Notification]) -> Bool {
        ChangesetQueries.hasMetadataChange(forKey: key, inCollection: collection, in: notifications)
    }

    /// `hasMetadataChange(forKey:inCollection:in:)` under YapDatabase's label.
    public func hasMetadataChange(forKey key: String, inCollection collection: String?, inNotifications notifications: [Notification]) -> Bool {
        ChangesetQueries.hasMetadataChange(forKey: key, inCollection: collection, in: notifications)
    }

    /// Whether any of `notifications` changed anything in `collection`.
    public func hasChange(forCollection collection: String?, in notifications: [Notification]) -> Bool {
        ChangesetQueries.hasChange(forCollection: collection, in: notifications)
    }

    /// `hasChange(forCollection:in:)` under YapDatabase's label.
    public func hasChange(forCollection collection: String?, inNotifications notifications: [Notification]) -> Bool {
        ChangesetQueries.hasChange(forCollection: collection, in: notifications)
    }

    /// Whether any of `notifications` changed any of `keys` in `collection`.
    public func hasChange(forAnyKeys keys: Set<String>, inCollection collection: String?, in notifications: [Notification]) -> Bool {
        ChangesetQueries.hasChange(forAnyKeys: keys, inCollection: collection, in: notifications)
    }

    /// `hasChange(forAnyKeys:inCollection:in:)` under YapDatabase's label.
    public func hasChange(forAnyKeys keys: Set<String>, inCollection collection: String?, inNotifications notifications: [Notification]) -> Bool {
        ChangesetQueries.hasChange(forAnyKeys: keys, inCollection: collection, in: notifications)
    }

    /// Whether any of `notifications` cleared `collection` as a whole.
    public func didClearCollection(_ collection: String?, in notifications: [Notification]) -> Bool {
        ChangesetQueries.didClearCollection(collection, in: notifications)
    }

    /// `didClearCollection(_:in:)` under YapDatabase's label.
    public func didClearCollection(_ collection: String?, inNotifications notifications: [Notification]) -> Bool {
        ChangesetQueries.didClearCollection(collection, in: notifications)
    }

    /// Whether any of `notifications` removed everything.
    public func didClearAllCollections(in notifications: [Notification]) -> Bool {
        ChangesetQueries.didClearAllCollections(in: notifications)
    }

    /// `didClearAllCollections(in:)` under YapDatabase's label.
    public func didClearAllCollections(inNotifications notifications: [Notification]) -> Bool {
        ChangesetQueries.didClearAllCollections(in: notifications)
    }

    /// Calls `block` once for each key of `collection` that `notifications` changed, until it
    /// sets `stop.pointee` (YapDatabase's form: an `ObjCBool` stop pointer).
    public func enumerateChangedKeys(inCollection collection: String?, in notifications: [Notification],
                                     using block: (String, UnsafeMutablePointer<ObjCBool>) -> Void) {
        ChangesetQueries.enumerateChangedKeys(inCollection: collection, in: notifications) { key, stop in
            withObjCStop(&stop) { block(key, $0) }
        }
    }

    /// Calls `block` once for each key of `collection` that `notifications` changed, until it
    /// sets its `inout` stop flag (the Swift-native form).
    public func enumerateChangedKeys(inCollection collection: String?, inNotifications notifications: [Notification],
                                     using block: (String, inout Bool) -> Void) {
        ChangesetQueries.enumerateChangedKeys(inCollection: collection, in: notifications, using: block)
    }

    /// Calls `block` once for each (collection, key) that `notifications` changed, until it sets
    /// `stop.pointee`.
    public func enumerateChangedCollectionKeys(in notifications: [Notification],
                                               using block: (YapCollectionKey, UnsafeMutablePointer<ObjCBool>) -> Void) {
        ChangesetQueries.enumerateChangedCollectionKeys(in: notifications) { key, stop in
            withObjCStop(&stop) { block(key, $0) }
        }
    }
}

/// Runs `body` with an `ObjCBool` stop pointer and copies its value back into `stop`: the
/// bridge between YapDatabase's `UnsafeMutablePointer<ObjCBool>` blocks and `inout Bool` loops.
func withObjCStop(_ stop: inout Bool, _ body: (UnsafeMutablePointer<ObjCBool>) -> Void) {
    var flag = ObjCBool(stop)
    withUnsafeMutablePointer(to: &flag) { body($0) }
    stop = flag.boolValue
}
