import Foundation

/// The connection's stateless changeset queries (API.md §4), over `YapDatabaseModified`
/// notifications or over changesets. `YapDatabaseConnection.hasChange(forKey:inCollection:in:)`
/// and its siblings (and their `inNotifications:` spellings) forward here.
///
/// Semantics are YapDatabase's: a query is true when any of the notifications records a matching
/// change (see ``YapDatabaseChangeset`` for what counts). Notifications that carry no changeset
/// (another notification's userInfo) are skipped.
///
/// Threading: pure functions; call from any thread.
enum ChangesetQueries {
    /// The changesets the notifications carry, in order, skipping ones that carry none.
    static func changesets(in notifications: [Notification]) -> [YapDatabaseChangeset] {
        notifications.compactMap(YapDatabaseChangeset.init(notification:))
    }

    // MARK: Over notifications

    static func hasChange(forKey key: String, inCollection collection: String?, in notifications: [Notification]) -> Bool {
        hasChange(forKey: key, inCollection: collection, in: changesets(in: notifications))
    }

    static func hasObjectChange(forKey key: String, inCollection collection: String?, in notifications: [Notification]) -> Bool {
        hasObjectChange(forKey: key, inCollection: collection, in: changesets(in: notifications))
    }

    static func hasMetadataChange(forKey key: String, inCollection collection: String?, in notifications: [Notification]) -> Bool {
        hasMetadataChange(forKey: key, inCollection: collection, in: changesets(in: notifications))
    }

    static func hasChange(forCollection collection: String?, in notifications: [Notification]) -> Bool {
        hasChange(forCollection: collection, in: changesets(in: notifications))
    }

    static func hasObjectChange(forCollection collection: String?, in notifications: [Notification]) -> Bool {
        hasObjectChange(forCollection: collection, in: changesets(in: notifications))
    }

    static func hasMetadataChange(forCollection collection: String?, in notifications: [Notification]) -> Bool {
        hasMetadataChange(forCollection: collection, in: changesets(in: notifications))
    }

    static func hasChange(forAnyKeys keys: some Sequence<String>, inCollection collection: String?, in notifications: [Notification]) -> Bool {
        hasChange(forAnyKeys: keys, inCollection: collection, in: changesets(in: notifications))
    }

    static func hasObjectChange(forAnyKeys keys: some Sequence<String>, inCollection collection: String?, in notifications: [Notification]) -> Bool {
        hasObjectChange(forAnyKeys: keys, inCollection: collection, in: changesets(in: notifications))
    }

    static func hasMetadataChange(forAnyKeys keys: some Sequence<String>, inCollection collection: String?, in notifications: [Notification]) -> Bool {
        hasMetadataChange(forAnyKeys: keys, inCollection: collection, in: changesets(in: notifications))
    }

    static func didClearCollection(_ collection: String?, in notifications: [Notification]) -> Bool {
        didClearCollection(collection, in: changesets(in: notifications))
    }

    static func didClearAllCollections(in notifications: [Notification]) -> Bool {
        didClearAllCollections(in: changesets(in: notifications))
    }

    /// Calls `block` once per key of `collection` that was set, replaced, touched, inserted or
    /// removed one by one in any of the notifications: each key once, in the order of the
    /// notifications (sorted within one), until the block sets `stop`. Keys removed by clearing
    /// a collection are not enumerated (check `didClearCollection(_:in:)`).
    static func enumerateChangedKeys(inCollection collection: String?, in notifications: [Notification],
                                     using block: (String, inout Bool) -> Void) {
        enumerateChangedKeys(inCollection: collection, in: changesets(in: notifications), using: block)
    }

    /// Calls `block` once per (collection, key) changed in any of the notifications, each once,
    /// until the block sets `stop`.
    static func enumerateChangedCollectionKeys(in notifications: [Notification],
                                               using block: (YapCollectionKey, inout Bool) -> Void) {
        enumerateChangedCollectionKeys(in: changesets(in: notifications), using: block)
    }

    // MARK: Over changesets (the native form)

    static func hasChange(forKey key: String, inCollection collection: String?, in changesets: [YapDatabaseChangeset]) -> Bool {
        changesets.contains { $0.hasChange(forKey: key, inCollection: collection) }
    }

    static func hasObjectChange(forKey key: String, inCollection collection: String?, in changesets: [YapDatabaseChangeset]) -> Bool {
        changesets.contains { $0.hasObjectChange(forKey: key, inCollection: collection) }
    }

    static func hasMetadataChange(forKey key: String, inCollection collection: String?, in changesets: [YapDatabaseChangeset]) -> Bool {
        changesets.contains { $0.hasMetadataChange(forKey: key, inCollection: collection) }
    }

    static func hasChange(forCollection collection: String?, in changesets: [YapDatabaseChangeset]) -> Bool {
        changesets.contains { $0.hasChange(forCollection: collection) }
    }

    static func hasObjectChange(forCollection collection: String?, in changesets: [YapDatabaseChangeset]) -> Bool {
        changesets.contains { $0.hasObjectChange(forCollection: collection) }
    }

    static func hasMetadataChange(forCollection collection: String?, in changesets: [YapDatabaseChangeset]) -> Bool {
        changesets.contains { $0.hasMetadataChange(forCollection: collection) }
    }

    static func hasChange(forAnyKeys keys: some Sequence<String>, inCollection collection: String?, in changesets: [YapDatabaseChangeset]) -> Bool {
        let keys = Set(keys)
        return changesets.contains { $0.hasChange(forAnyKeys: keys, inCollection: collection) }
    }

    static func hasObjectChange(forAnyKeys keys: some Sequence<String>, inCollection collection: String?, in changesets: [YapDatabaseChangeset]) -> Bool {
        let keys = Set(keys)
        return changesets.contains { $0.hasObjectChange(forAnyKeys: keys, inCollection: collection) }
    }

    static func hasMetadataChange(forAnyKeys keys: some Sequence<String>, inCollection collection: String?, in changesets: [YapDatabaseChangeset]) -> Bool {
        let keys = Set(keys)
        return changesets.contains { $0.hasMetadataChange(forAnyKeys: keys, inCollection: collection) }
    }

    static func didClearCollection(_ collection: String?, in changesets: [YapDatabaseChangeset]) -> Bool {
        changesets.contains { $0.didClearCollection(collection) }
    }

    static func didClearAllCollections(in changesets: [YapDatabaseChangeset]) -> Bool {
        changesets.contains { $0.allKeysRemoved }
    }

    static func enumerateChangedKeys(inCollection collection: String?, in changesets: [YapDatabaseChangeset],
                                     using block: (String, inout Bool) -> Void) {
        var seen = Set<String>()
        var stop = false
        for changeset in changesets {
            for key in changeset.changedKeys(inCollection: collection) where seen.insert(key).inserted {
                block(key, &stop)
                if stop { return }
            }
        }
    }

    static func enumerateChangedCollectionKeys(in changesets: [YapDatabaseChangeset],
                                               using block: (YapCollectionKey, inout Bool) -> Void) {
        var seen = Set<YapCollectionKey>()
        var stop = false
        for changeset in changesets {
            for ck in changeset.changedCollectionKeys() where seen.insert(ck).inserted {
                block(ck, &stop)
                if stop { return }
            }
        }
    }
}
