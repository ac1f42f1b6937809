import YapDBIndex

/// What one commit changed, as keys (never values). Every commit yields one; connections apply
/// the ones they missed, in order, to keep their caches equal to the snapshot they read.
package struct Changeset: Sendable {
    /// The snapshot this commit produced.
    package var snapshot: UInt64
    /// Keys whose object was set, replaced or touched.
    package var objectChanges: Set<CollectionKeyPair> = []
    /// Keys whose metadata was set, replaced, cleared by `setObject`, or touched.
    package var metadataChanges: Set<CollectionKeyPair> = []
    /// Keys that did not exist before this commit (and still exist after it).
    package var insertedKeys: Set<CollectionKeyPair> = []
    /// Keys removed one by one.
    package var removedKeys: Set<CollectionKeyPair> = []
    /// Collections cleared as a whole.
    package var removedCollections: Set<String> = []
    /// Everything was removed.
    package var allKeysRemoved = false
    /// What extensions (views) attached to this commit, by extension name.
    package var extensions: [String: any Sendable] = [:]
    /// What the layer above attached (the public changeset and notification details).
    package var attachment: (any Sendable)?

    package init(snapshot: UInt64) { self.snapshot = snapshot }

    /// Whether a commit with these changes would change anything.
    package var isEmpty: Bool {
        objectChanges.isEmpty && metadataChanges.isEmpty && insertedKeys.isEmpty && removedKeys.isEmpty
            && removedCollections.isEmpty && !allKeysRemoved
    }

    // MARK: Recording (the rules of API.md §6)

    mutating func recordSet(_ key: CollectionKeyPair, inserted: Bool, objectChanged: Bool, metadataChanged: Bool) {
        if inserted { insertedKeys.insert(key) }
        if objectChanged { objectChanges.insert(key) }
        if metadataChanged { metadataChanges.insert(key) }
    }

    mutating func recordRemove(_ key: CollectionKeyPair) {
        objectChanges.remove(key)
        metadataChanges.remove(key)
        if insertedKeys.remove(key) == nil { removedKeys.insert(key) }
    }

    mutating func recordRemoveCollection(_ collection: String) {
        objectChanges = objectChanges.filter { $0.collection != collection }
        metadataChanges = metadataChanges.filter { $0.collection != collection }
        insertedKeys = insertedKeys.filter { $0.collection != collection }
        removedKeys = removedKeys.filter { $0.collection != collection }
        removedCollections.insert(collection)
    }

    mutating func recordRemoveAll() {
        objectChanges.removeAll()
        metadataChanges.removeAll()
        insertedKeys.removeAll()
        removedKeys.removeAll()
        removedCollections.removeAll()
        allKeysRemoved = true
    }
}
