/// Queries over one changeset, with YapDatabase's semantics (API.md §4, "Changeset queries").
///
/// A key "has a change" when its object or metadata changed (set, replace or touch), it was
/// inserted or removed, its collection was cleared, or every collection was cleared. The
/// object/metadata forms count only that half's changes (plus inserts, removals and clears).
extension YapDatabaseChangeset {
    /// Whether the row `key` in `collection` changed in any way (object, metadata, insert,
    /// removal, its collection cleared, or all cleared).
    /// - Parameters:
    ///   - key: the key.
    ///   - collection: the collection; `nil` means `""`.
    public func hasChange(forKey key: String, inCollection collection: String?) -> Bool {
        hasChange(forKey: key, inCollection: collection, objects: true, metadata: true)
    }

    /// Whether the object of `key` in `collection` changed (set, replace, touchObject/touchRow,
    /// insert, removal or clear).
    public func hasObjectChange(forKey key: String, inCollection collection: String?) -> Bool {
        hasChange(forKey: key, inCollection: collection, objects: true, metadata: false)
    }

    /// Whether the metadata of `key` in `collection` changed (set, replaceMetadata,
    /// touchMetadata/touchRow, insert, removal or clear).
    public func hasMetadataChange(forKey key: String, inCollection collection: String?) -> Bool {
        hasChange(forKey: key, inCollection: collection, objects: false, metadata: true)
    }

    /// Whether any row of `collection` changed in any way (or it or everything was cleared).
    public func hasChange(forCollection collection: String?) -> Bool {
        hasChange(forCollection: collection, objects: true, metadata: true)
    }

    /// Whether the object of any row of `collection` changed (or it or everything was cleared).
    public func hasObjectChange(forCollection collection: String?) -> Bool {
        hasChange(forCollection: collection, objects: true, metadata: false)
    }

    /// Whether the metadata of any row of `collection` changed (or it or everything was cleared).
    public func hasMetadataChange(forCollection collection: String?) -> Bool {
        hasChange(forCollection: collection, objects: false, metadata: true)
    }

    /// Whether any of `keys` in `collection` changed in any way. False for an empty `keys`.
    public func hasChange(forAnyKeys keys: some Sequence<String>, inCollection collection: String?) -> Bool {
        hasChange(forAnyKeys: Set(keys), inCollection: collection, objects: true, metadata: true)
    }

    /// Whether the object of any of `keys` in `collection` changed. False for an empty `keys`.
    public func hasObjectChange(forAnyKeys keys: some Sequence<String>, inCollection collection: String?) -> Bool {
        hasChange(forAnyKeys: Set(keys), inCollection: collection, objects: true, metadata: false)
    }

    /// Whether the metadata of any of `keys` in `collection` changed. False for an empty `keys`.
    public func hasMetadataChange(forAnyKeys keys: some Sequence<String>, inCollection collection: String?) -> Bool {
        hasChange(forAnyKeys: Set(keys), inCollection: collection, objects: false, metadata: true)
    }

    /// Whether `collection` was cleared, by `removeAllObjects(inCollection:)` or by
    /// `removeAllObjectsInAllCollections()`. When true, ``changedKeys(inCollection:)`` may miss
    /// keys that the clear removed.
    public func didClearCollection(_ collection: String?) -> Bool {
        allKeysRemoved || removedCollections.contains(collection ?? "")
    }

    /// Whether `removeAllObjectsInAllCollections()` ran.
    public func didClearAllCollections() -> Bool { allKeysRemoved }

    /// The keys of `collection` that were set, replaced, touched, inserted or removed one by one,
    /// sorted. Keys removed by clearing a collection are not listed (see ``didClearCollection(_:)``).
    public func changedKeys(inCollection collection: String?) -> [String] {
        let collection = collection ?? ""
        var keys = Set<String>()
        for set in [objectChanges, metadataChanges, insertedKeys, removedKeys] {
            for ck in set where ck.collection == collection { keys.insert(ck.key) }
        }
        return keys.sorted()
    }

    /// Every (collection, key) set, replaced, touched, inserted or removed one by one, sorted.
    public func changedCollectionKeys() -> [YapCollectionKey] {
        objectChanges.union(metadataChanges).union(insertedKeys).union(removedKeys).sorted()
    }

    // MARK: - Shared implementation

    private func hasChange(forKey key: String, inCollection collection: String?, objects: Bool, metadata: Bool) -> Bool {
        let collection = collection ?? ""
        if allKeysRemoved || removedCollections.contains(collection) { return true }
        let ck = YapCollectionKey(collection: collection, key: key)
        if objects && objectChanges.contains(ck) { return true }
        if metadata && metadataChanges.contains(ck) { return true }
        return insertedKeys.contains(ck) || removedKeys.contains(ck)
    }

    private func hasChange(forCollection collection: String?, objects: Bool, metadata: Bool) -> Bool {
        let collection = collection ?? ""
        if allKeysRemoved || removedCollections.contains(collection) { return true }
        if objects && objectChanges.contains(where: { $0.collection == collection }) { return true }
        if metadata && metadataChanges.contains(where: { $0.collection == collection }) { return true }
        return insertedKeys.contains(where: { $0.collection == collection })
            || removedKeys.contains(where: { $0.collection == collection })
    }

    private func hasChange(forAnyKeys keys: Set<String>, inCollection collection: String?, objects: Bool, metadata: Bool) -> Bool {
        if keys.isEmpty { return false }
        let collection = collection ?? ""
        if allKeysRemoved || removedCollections.contains(collection) { return true }
        func hits(_ set: Set<YapCollectionKey>) -> Bool {
            // Probe whichever side is smaller.
            if keys.count <= set.count {
                return keys.contains { set.contains(YapCollectionKey(collection: collection, key: $0)) }
            }
            return set.contains { $0.collection == collection && keys.contains($0.key) }
        }
        if objects && hits(objectChanges) { return true }
        if metadata && hits(metadataChanges) { return true }
        return hits(insertedKeys) || hits(removedKeys)
    }
}
