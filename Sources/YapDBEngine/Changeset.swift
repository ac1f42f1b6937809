import YapDBIndex

/// What one commit changed, as keys (never values). Every commit yields one; connections apply
/// the ones they missed, in order, to keep their caches equal to the snapshot they read.
///
/// **Representation.** Each changed key is recorded once, in `changes`, with the set of
/// `ChangeFlags` that apply to it, so recording a write hashes its key once (a bulk load of a
/// million rows used to pay three `Set` inserts per row). The per-kind sets
/// (`objectChanges`, `metadataChanges`, `insertedKeys`, `removedKeys`) are computed from it:
/// each read builds a `Set` in O(changed keys), so read one once per commit (not per lookup);
/// `flags(for:)` answers one key in O(1).
package struct Changeset: Sendable {
    /// How one key changed in a commit.
    package struct ChangeFlags: OptionSet, Sendable, Hashable {
        package let rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }

        /// The object was set, replaced or touched.
        package static let object = ChangeFlags(rawValue: 1)
        /// The metadata was set, replaced, cleared by `setObject`, or touched.
        package static let metadata = ChangeFlags(rawValue: 2)
        /// The key did not exist before this commit (and still exists after it).
        package static let inserted = ChangeFlags(rawValue: 4)
        /// The key was removed one by one.
        package static let removed = ChangeFlags(rawValue: 8)
    }

    /// The snapshot this commit produced.
    package var snapshot: UInt64
    /// Every changed key with how it changed (never an empty flag set). Collections cleared
    /// as a whole are in `removedCollections` instead; their keys are not listed.
    package private(set) var changes: [CollectionKeyPair: ChangeFlags] = [:]
    /// Collections cleared as a whole.
    package var removedCollections: Set<String> = []
    /// Everything was removed.
    package var allKeysRemoved = false
    /// What extensions (views) attached to this commit, by extension name.
    package var extensions: [String: any Sendable] = [:]
    /// What the layer above attached (the public changeset and notification details).
    package var attachment: (any Sendable)?

    package init(snapshot: UInt64) { self.snapshot = snapshot }

    /// Keys whose object was set, replaced or touched. Builds the set: O(changed keys).
    package var objectChanges: Set<CollectionKeyPair> { keys(with: .object) }
    /// Keys whose metadata was set, replaced, cleared by `setObject`, or touched. O(changed keys).
    package var metadataChanges: Set<CollectionKeyPair> { keys(with: .metadata) }
    /// Keys that did not exist before this commit (and still exist after it). O(changed keys).
    package var insertedKeys: Set<CollectionKeyPair> { keys(with: .inserted) }
    /// Keys removed one by one. O(changed keys).
    package var removedKeys: Set<CollectionKeyPair> { keys(with: .removed) }

    /// How `key` changed in this commit (empty when it is not listed). O(1).
    package func flags(for key: CollectionKeyPair) -> ChangeFlags { changes[key] ?? [] }

    /// The keys whose flags include `flag`. O(changed keys).
    package func keys(with flag: ChangeFlags) -> Set<CollectionKeyPair> {
        var out = Set<CollectionKeyPair>()
        for (key, flags) in changes where flags.contains(flag) { out.insert(key) }
        return out
    }

    /// Whether a commit with these changes would change anything.
    package var isEmpty: Bool { changes.isEmpty && removedCollections.isEmpty && !allKeysRemoved }

    // MARK: Recording (the rules of API.md §6)

    /// Records a set or touch of `key`. `inserted` (the row did not exist) counts only when the
    /// key was not removed earlier in this commit: a key removed and set again is a change,
    /// not an insert. One hash of `key`.
    mutating func recordSet(_ key: CollectionKeyPair, inserted: Bool, objectChanged: Bool, metadataChanged: Bool) {
        var added: ChangeFlags = []
        if objectChanged { added.insert(.object) }
        if metadataChanged { added.insert(.metadata) }
        // A touch of neither lists nothing.
        guard !added.isEmpty || inserted else { return }
        Self.merge(added, inserted: inserted, into: &changes[key, default: []])
    }

    private static func merge(_ added: ChangeFlags, inserted: Bool, into flags: inout ChangeFlags) {
        flags.formUnion(added)
        if inserted && !flags.contains(.removed) { flags.insert(.inserted) }
    }

    mutating func recordRemove(_ key: CollectionKeyPair) {
        var flags = changes[key] ?? []
        let wasInserted = flags.contains(.inserted)
        flags.subtract([.object, .metadata, .inserted])
        if !wasInserted { flags.insert(.removed) }
        changes[key] = flags.isEmpty ? nil : flags
    }

    mutating func recordRemoveCollection(_ collection: String) {
        changes = changes.filter { $0.key.collection != collection }
        removedCollections.insert(collection)
    }

    mutating func recordRemoveAll() {
        changes.removeAll()
        removedCollections.removeAll()
        allKeysRemoved = true
    }
}
