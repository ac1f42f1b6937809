import YapDBIndex

/// What the layer above carries with a commit's changeset, from the writer to every
/// connection that applies the changeset (the public layer's changeset, notification and the
/// objects it shares with other connections' caches). The engine only holds it: it is released
/// with the changeset once every connection has seen it (`SnapshotRegistry`). A class, so
/// holding and passing it is one reference.
package protocol CommitPayload: AnyObject, Sendable {}

/// What one commit changed, as keys (never values). Every commit yields one; connections apply
/// the ones they missed, in order, to keep their caches equal to the snapshot they read.
///
/// **Representation.** Each changed key is recorded once, with the set of `ChangeFlags` that
/// apply to it, so recording a write costs at most one hash of its key (a bulk load of a
/// million rows used to pay three `Set` inserts per row). Until the commit removes anything, a
/// row that is new to the key directory cannot already be listed, so it is appended without
/// hashing at all, to runs of keys that share a collection and flags (16 bytes a row: the key
/// alone, where a (collection, key, flags) entry took 40); the first removal folds the runs
/// into the dictionary. The
/// per-kind sets (`objectChanges`, `metadataChanges`, `insertedKeys`, `removedKeys`) and
/// `changes` are computed: each read builds its result in O(changed keys), so read them once
/// per commit, not per lookup.
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
    /// Changed keys with how they changed (never an empty flag set), recorded by hashing.
    private var keyed: [CollectionKeyPair: ChangeFlags] = [:]
    /// Rows inserted while no removal had been recorded, recorded without hashing: none of
    /// them is in `keyed`'s keys at the time it is appended, and none repeats. A later set or
    /// touch of such a key adds flags in `keyed` (the union is the key's flags).
    private var appended: [AppendedRun] = []
    /// How many keys `appended` holds.
    private var appendedCount = 0
    /// A removal was recorded since the last `recordRemoveAll` (or the start): a new row may
    /// then already be listed (removed, or inserted and removed), so inserts go to `keyed`.
    private var removalRecorded = false
    /// Collections cleared as a whole.
    package var removedCollections: Set<String> = []
    /// Everything was removed.
    package var allKeysRemoved = false
    /// Commits of another process that this process caught up with (multi-process support):
    /// no keys are listed, and every connection empties its caches (YapDatabase's rule).
    package var external = false
    /// Row ids of the rows removed one by one or with their collection (for extensions that
    /// catch up with the rows changed since their roots were written: `ExtensionCatchUp`).
    package var removedRowids: [UInt64] = []
    /// What extensions (views) attached to this commit, by extension name.
    package var extensions: [String: any Sendable] = [:]
    /// What the layer above attached (the public changeset and notification details).
    package var attachment: (any CommitPayload)?

    /// Keys appended one after another with the same collection and flags (a bulk load into
    /// one collection is one run).
    private struct AppendedRun: Sendable {
        let collection: String
        let flags: ChangeFlags
        var keys: [String]
    }

    package init(snapshot: UInt64) { self.snapshot = snapshot }

    /// Keys whose object was set, replaced or touched. Builds the set: O(changed keys).
    package var objectChanges: Set<CollectionKeyPair> { keys(with: .object) }
    /// Keys whose metadata was set, replaced, cleared by `setObject`, or touched. O(changed keys).
    package var metadataChanges: Set<CollectionKeyPair> { keys(with: .metadata) }
    /// Keys that did not exist before this commit (and still exist after it). O(changed keys).
    package var insertedKeys: Set<CollectionKeyPair> { keys(with: .inserted) }
    /// Keys removed one by one. O(changed keys).
    package var removedKeys: Set<CollectionKeyPair> { keys(with: .removed) }

    /// Every changed key with how it changed (never an empty flag set). Collections cleared
    /// as a whole are in `removedCollections` instead; their keys are not listed. Builds the
    /// dictionary when rows were appended without hashing: O(changed keys).
    package var changes: [CollectionKeyPair: ChangeFlags] {
        guard !appended.isEmpty else { return keyed }
        var all = keyed
        forEachAppended { key, flags in all[key, default: []].formUnion(flags) }
        return all
    }

    /// Calls `body` for each appended key with its flags, in the order appended.
    private func forEachAppended(_ body: (CollectionKeyPair, ChangeFlags) -> Void) {
        for run in appended {
            for key in run.keys { body(CollectionKeyPair(collection: run.collection, key: key), run.flags) }
        }
    }

    /// Calls `body` for each recorded (key, flags) pair without building the merged dictionary.
    /// A key may be visited twice (once as an appended insert, once with flags added later);
    /// the union of its visits is its flags, so callers must treat visits as idempotent.
    package func forEachChange(_ body: (CollectionKeyPair, ChangeFlags) -> Void) {
        forEachAppended(body)
        for (key, flags) in keyed { body(key, flags) }
    }

    /// How many (key, flags) pairs `forEachChange` visits.
    package var changeCount: Int { appendedCount + keyed.count }

    /// The flags every visit of `forEachChange` has, when they are all alike (a commit of only
    /// inserts, say); nil when they differ or nothing changed. O(runs + hashed keys), with no
    /// hashing: callers that build one set for all the kinds ask this first.
    package var uniformFlags: ChangeFlags? {
        var uniform: ChangeFlags?
        for run in appended {
            if let uniform, uniform != run.flags { return nil }
            uniform = run.flags
        }
        for flags in keyed.values {
            if let uniform, uniform != flags { return nil }
            uniform = flags
        }
        return uniform
    }

    /// The flags recorded for `key` by hashing, or nil: O(1). Rows appended as inserts without
    /// hashing (see `appended`) are found only if the commit changed them again; they did not
    /// exist before this commit, so no cache of an earlier snapshot can hold them.
    package func hashedFlags(for key: CollectionKeyPair) -> ChangeFlags? { keyed[key] }

    /// The keys whose flags include `flag`. O(changed keys).
    package func keys(with flag: ChangeFlags) -> Set<CollectionKeyPair> {
        var out = Set<CollectionKeyPair>()
        for (key, flags) in keyed where flags.contains(flag) { out.insert(key) }
        for run in appended where run.flags.contains(flag) {
            for key in run.keys { out.insert(CollectionKeyPair(collection: run.collection, key: key)) }
        }
        return out
    }

    /// Whether a commit with these changes would change anything.
    package var isEmpty: Bool { keyed.isEmpty && appendedCount == 0 && removedCollections.isEmpty && !allKeysRemoved }

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
        if inserted && !removalRecorded {
            let flags = added.union(.inserted)
            appendedCount += 1
            if let last = appended.indices.last, appended[last].flags == flags, appended[last].collection == key.collection {
                appended[last].keys.append(key.key)
            } else {
                appended.append(AppendedRun(collection: key.collection, flags: flags, keys: [key.key]))
            }
            return
        }
        Self.merge(added, inserted: inserted, into: &keyed[key, default: []])
    }

    private static func merge(_ added: ChangeFlags, inserted: Bool, into flags: inout ChangeFlags) {
        flags.formUnion(added)
        if inserted && !flags.contains(.removed) { flags.insert(.inserted) }
    }

    /// Moves the appended rows into `keyed` (before a removal, which needs to find keys).
    private mutating func foldAppended() {
        for run in appended {
            for key in run.keys { keyed[CollectionKeyPair(collection: run.collection, key: key), default: []].formUnion(run.flags) }
        }
        appended.removeAll()
        appendedCount = 0
    }

    mutating func recordRemove(_ key: CollectionKeyPair) {
        foldAppended()
        removalRecorded = true
        var flags = keyed[key] ?? []
        let wasInserted = flags.contains(.inserted)
        flags.subtract([.object, .metadata, .inserted])
        if !wasInserted { flags.insert(.removed) }
        keyed[key] = flags.isEmpty ? nil : flags
    }

    mutating func recordRemoveCollection(_ collection: String) {
        foldAppended()
        removalRecorded = true
        keyed = keyed.filter { $0.key.collection != collection }
        removedCollections.insert(collection)
    }

    mutating func recordRemoveAll() {
        keyed.removeAll()
        appended.removeAll()
        appendedCount = 0
        removalRecorded = false
        removedCollections.removeAll()
        allKeysRemoved = true
    }
}
