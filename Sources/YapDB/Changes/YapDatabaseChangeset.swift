/// What one committed read-write transaction changed: keys, never values (API.md §6).
///
/// The engine passes these between connections to keep caches in sync; the same facts fill the
/// `YapDatabaseModified` notification's `userInfo` and `database.changes`.
///
/// Conventions the writer follows: a key that is set is in ``objectChanges`` and (since setting
/// an object sets its metadata) ``metadataChanges``, and also in ``insertedKeys`` if the row is new;
/// `replaceObject` adds to ``objectChanges``, `replaceMetadata` to ``metadataChanges``;
/// `touchObject` → ``objectChanges``, `touchMetadata` → ``metadataChanges``, `touchRow` → both;
/// `removeObject` → ``removedKeys``; `removeAllObjects(inCollection:)` → ``removedCollections``;
/// `removeAllObjectsInAllCollections()` → ``allKeysRemoved``. The queries below treat an
/// inserted key as an object and metadata change even if a writer forgot those sets.
///
/// Threading: a plain value; safe to pass between threads.
public struct YapDatabaseChangeset: Sendable, Equatable {
    /// The snapshot the commit produced (the database's snapshot just after it).
    public var snapshot: UInt64
    /// Keys whose object was set, replaced or touched.
    public var objectChanges: Set<YapCollectionKey>
    /// Keys whose metadata was set, replaced or touched.
    public var metadataChanges: Set<YapCollectionKey>
    /// Keys that did not exist before the commit and do after it.
    public var insertedKeys: Set<YapCollectionKey>
    /// Keys removed one by one.
    public var removedKeys: Set<YapCollectionKey>
    /// Collections cleared with `removeAllObjects(inCollection:)`.
    public var removedCollections: Set<String>
    /// Whether `removeAllObjectsInAllCollections()` ran.
    public var allKeysRemoved: Bool

    /// A changeset; every set defaults to empty.
    public init(
        snapshot: UInt64,
        objectChanges: Set<YapCollectionKey> = [],
        metadataChanges: Set<YapCollectionKey> = [],
        insertedKeys: Set<YapCollectionKey> = [],
        removedKeys: Set<YapCollectionKey> = [],
        removedCollections: Set<String> = [],
        allKeysRemoved: Bool = false
    ) {
        self.snapshot = snapshot
        self.objectChanges = objectChanges
        self.metadataChanges = metadataChanges
        self.insertedKeys = insertedKeys
        self.removedKeys = removedKeys
        self.removedCollections = removedCollections
        self.allKeysRemoved = allKeysRemoved
    }

    /// Whether the commit changed nothing (such a commit is never published).
    public var isEmpty: Bool {
        objectChanges.isEmpty && metadataChanges.isEmpty && insertedKeys.isEmpty && removedKeys.isEmpty
            && removedCollections.isEmpty && !allKeysRemoved
    }
}
