import Foundation

extension Notification.Name {
    /// Posted once per committed read-write transaction that changed something (touches
    /// included), after the commit is durable, in commit order. The object is the database; the
    /// `userInfo` keys are listed in ``YapDatabaseNotificationKey``. Raw value
    /// `"YapDatabaseModifiedNotification"`, as in YapDatabase.
    ///
    /// Threading: posted on the thread that committed (the writer's), with `NotificationCenter.default`.
    public static let YapDatabaseModified = Notification.Name("YapDatabaseModifiedNotification")

    /// Posted when this process caught up with commits another process made, with
    /// ``YapDatabaseOptions/enableMultiProcessSupport`` on and a
    /// ``YapDatabaseCrossProcessNotification`` registered. The object is the database; no
    /// `userInfo`. Raw value `"YapDatabaseModifiedExternallyNotification"`, as in YapDatabase.
    ///
    /// Threading: posted on ``YapDatabase/notificationQueue``.
    public static let YapDatabaseModifiedExternally = Notification.Name("YapDatabaseModifiedExternallyNotification")
}

/// `Notification.Name.YapDatabaseModified`'s raw value under the name YapDatabase's header gives
/// it (`extern NSString *const YapDatabaseModifiedNotification`, a `String` in Swift), for code
/// that writes `Notification.Name(YapDatabaseModifiedNotification)`.
public let YapDatabaseModifiedNotification = Notification.Name.YapDatabaseModified.rawValue

/// `Notification.Name.YapDatabaseModifiedExternally`'s raw value under the header's name
/// (`YapDatabaseModifiedExternallyNotification`, a `String` in Swift).
public let YapDatabaseModifiedExternallyNotification = Notification.Name.YapDatabaseModifiedExternally.rawValue

/// The `userInfo` key YapDatabase uses to flag a change made by another process
/// (`"YapDatabaseModifiedExternallyKey"`); never present in YapDB's notifications.
public let YapDatabaseModifiedExternallyKey = "YapDatabaseModifiedExternallyKey"

/// The `userInfo` keys of a `YapDatabaseModified` notification (API.md §6). The string values
/// are fixed; each is also available under YapDatabase's global name (e.g. `YapDatabaseSnapshotKey`).
public enum YapDatabaseNotificationKey {
    /// `UInt64`: the snapshot the commit produced.
    public static let snapshot = "snapshot"
    /// `YapDatabaseConnection`: the connection that committed.
    public static let connection = "connection"
    /// `Any`: the transaction's `yapDatabaseModifiedNotificationCustomObject`, if one was set.
    public static let custom = "custom"
    /// `Set<YapCollectionKey>`: keys whose object was set, replaced or touched.
    public static let objectChanges = "objectChanges"
    /// `Set<YapCollectionKey>`: keys whose metadata was set, replaced or touched.
    public static let metadataChanges = "metadataChanges"
    /// `Set<YapCollectionKey>`: keys that did not exist before the commit and do after it.
    public static let insertedKeys = "insertedKeys"
    /// `Set<YapCollectionKey>`: keys removed one by one (not by clearing a collection).
    public static let removedKeys = "removedKeys"
    /// `Set<String>`: collections cleared with `removeAllObjects(inCollection:)`.
    public static let removedCollections = "removedCollections"
    /// `Bool`: whether `removeAllObjectsInAllCollections()` ran.
    public static let allKeysRemoved = "allKeysRemoved"
    /// `[String: Any]`: per-extension changes, by extension name (e.g. a view's changes).
    public static let extensions = "extensions"
}

/// YapDatabase's name for ``YapDatabaseNotificationKey/snapshot`` (`"snapshot"`).
public let YapDatabaseSnapshotKey = YapDatabaseNotificationKey.snapshot
/// YapDatabase's name for ``YapDatabaseNotificationKey/connection`` (`"connection"`).
public let YapDatabaseConnectionKey = YapDatabaseNotificationKey.connection
/// YapDatabase's name for ``YapDatabaseNotificationKey/custom`` (`"custom"`).
public let YapDatabaseCustomKey = YapDatabaseNotificationKey.custom
/// YapDatabase's name for ``YapDatabaseNotificationKey/objectChanges`` (`"objectChanges"`).
public let YapDatabaseObjectChangesKey = YapDatabaseNotificationKey.objectChanges
/// YapDatabase's name for ``YapDatabaseNotificationKey/metadataChanges`` (`"metadataChanges"`).
public let YapDatabaseMetadataChangesKey = YapDatabaseNotificationKey.metadataChanges
/// ``YapDatabaseNotificationKey/insertedKeys`` (`"insertedKeys"`) under a YapDatabase-style name.
public let YapDatabaseInsertedKeysKey = YapDatabaseNotificationKey.insertedKeys
/// YapDatabase's name for ``YapDatabaseNotificationKey/removedKeys`` (`"removedKeys"`).
public let YapDatabaseRemovedKeysKey = YapDatabaseNotificationKey.removedKeys
/// YapDatabase's name for ``YapDatabaseNotificationKey/removedCollections`` (`"removedCollections"`).
public let YapDatabaseRemovedCollectionsKey = YapDatabaseNotificationKey.removedCollections
/// YapDatabase's name for ``YapDatabaseNotificationKey/allKeysRemoved`` (`"allKeysRemoved"`).
public let YapDatabaseAllKeysRemovedKey = YapDatabaseNotificationKey.allKeysRemoved
/// YapDatabase's name for ``YapDatabaseNotificationKey/extensions`` (`"extensions"`).
public let YapDatabaseExtensionsKey = YapDatabaseNotificationKey.extensions
