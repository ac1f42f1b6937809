import Foundation

/// Converting a changeset to and from a `YapDatabaseModified` notification's `userInfo`.
extension YapDatabaseChangeset {
    /// The `userInfo` of the `YapDatabaseModified` notification for this changeset, with the
    /// keys of ``YapDatabaseNotificationKey``: `"snapshot"` (`UInt64`), the key sets
    /// (`Set<YapCollectionKey>`), `"removedCollections"` (`Set<String>`), `"allKeysRemoved"`
    /// (`Bool`), and when given `"connection"`, `"custom"` and `"extensions"`. Every set is
    /// present (possibly empty), as YapDatabase code expects to cast them without a nil check.
    /// - Parameters:
    ///   - connection: the committing connection, or nil.
    ///   - custom: the transaction's `yapDatabaseModifiedNotificationCustomObject`, or nil.
    ///   - extensions: per-extension changes by extension name, or nil (omitted when nil or empty).
    func userInfo(connection: AnyObject? = nil, custom: Any? = nil, extensions: [String: Any]? = nil) -> [AnyHashable: Any] {
        var info: [AnyHashable: Any] = [
            YapDatabaseNotificationKey.snapshot: snapshot,
            YapDatabaseNotificationKey.objectChanges: objectChanges,
            YapDatabaseNotificationKey.metadataChanges: metadataChanges,
            YapDatabaseNotificationKey.insertedKeys: insertedKeys,
            YapDatabaseNotificationKey.removedKeys: removedKeys,
            YapDatabaseNotificationKey.removedCollections: removedCollections,
            YapDatabaseNotificationKey.allKeysRemoved: allKeysRemoved,
        ]
        if let connection { info[YapDatabaseNotificationKey.connection] = connection }
        if let custom { info[YapDatabaseNotificationKey.custom] = custom }
        if let extensions, !extensions.isEmpty { info[YapDatabaseNotificationKey.extensions] = extensions }
        return info
    }

    /// The `YapDatabaseModified` notification for this changeset (see ``userInfo(connection:custom:extensions:)``).
    /// - Parameter object: the notification's object: the database.
    func notification(object: AnyObject?, connection: AnyObject? = nil, custom: Any? = nil, extensions: [String: Any]? = nil) -> Notification {
        Notification(name: .YapDatabaseModified, object: object,
                     userInfo: userInfo(connection: connection, custom: custom, extensions: extensions))
    }

    /// The changeset a `userInfo` describes, or nil when it has no `"snapshot"` (not a
    /// `YapDatabaseModified` userInfo). A missing or mistyped set reads as empty. `"snapshot"`
    /// may be a `UInt64`, another integer type or an `NSNumber`.
    init?(userInfo: [AnyHashable: Any]?) {
        guard let info = userInfo, let snapshot = Self.snapshot(in: info[YapDatabaseNotificationKey.snapshot]) else {
            return nil
        }
        func keys(_ name: String) -> Set<YapCollectionKey> { info[name] as? Set<YapCollectionKey> ?? [] }
        self.init(
            snapshot: snapshot,
            objectChanges: keys(YapDatabaseNotificationKey.objectChanges),
            metadataChanges: keys(YapDatabaseNotificationKey.metadataChanges),
            insertedKeys: keys(YapDatabaseNotificationKey.insertedKeys),
            removedKeys: keys(YapDatabaseNotificationKey.removedKeys),
            removedCollections: info[YapDatabaseNotificationKey.removedCollections] as? Set<String> ?? [],
            allKeysRemoved: info[YapDatabaseNotificationKey.allKeysRemoved] as? Bool ?? false
        )
    }

    /// The changeset a notification carries, or nil when it is not a YapDB change notification.
    init?(notification: Notification) {
        self.init(userInfo: notification.userInfo)
    }

    private static func snapshot(in value: Any?) -> UInt64? {
        switch value {
        case let v as UInt64: return v
        case let v as Int where v >= 0: return UInt64(v)
        case let v as NSNumber: return v.uint64Value
        default: return nil
        }
    }
}
