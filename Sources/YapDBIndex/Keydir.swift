// Keydir: the database's key directory — (collection, key) → value locations and row id.

/// Where one value's bytes live in the log: a byte range within a segment file.
package struct ValueLocation: Hashable, Sendable {
    /// The segment file number.
    package var segment: UInt32
    /// The byte offset of the value within the segment.
    package var offset: UInt32
    /// The value's length in bytes.
    package var length: UInt32

    package init(segment: UInt32, offset: UInt32, length: UInt32) {
        self.segment = segment
        self.offset = offset
        self.length = length
    }
}

/// One row of the key directory: its stable row id and where its object and (optional)
/// metadata values live. 33 bytes inline, a 40-byte stride (`MemoryLayout<KeydirEntry>`).
package struct KeydirEntry: Hashable, Sendable {
    /// The row's stable id, unique across the database; views address rows by it.
    package var rowid: UInt64
    /// The location of the object value.
    package var object: ValueLocation
    /// The location of the metadata value, or nil if the row has no metadata.
    package var metadata: ValueLocation?

    package init(rowid: UInt64, object: ValueLocation, metadata: ValueLocation? = nil) {
        self.rowid = rowid
        self.object = object
        self.metadata = metadata
    }
}

/// A row's address: its collection and key.
package struct CollectionKeyPair: Hashable, Sendable {
    package var collection: String
    package var key: String

    package init(collection: String, key: String) {
        self.collection = collection
        self.key = key
    }
}

/// The key directory: a persistent map from (collection, key) to `KeydirEntry`, plus the
/// reverse map from row id to (collection, key).
///
/// Two levels: collection → `PersistentHashMap<String, KeydirEntry>`, so a collection is first
/// class — its row count is O(1), enumerating it never touches other collections, and dropping it
/// from the directory is one removal. A collection exists only while it has at least one row.
///
/// **Snapshots.** A value type built from persistent maps: copying a `Keydir` is O(1) and is a
/// snapshot; a commit mutates its own copy, copying only the touched trie paths, and a writer
/// that owns its nodes exclusively (a bulk load within one transaction) mutates them in place.
///
/// **Threading.** Any number of threads may read copies concurrently; a given variable must be
/// mutated by one thread at a time (the engine's single writer).
package struct Keydir: Sendable {
    /// The rows, by collection then key. Never holds an empty inner map.
    var byCollection: PersistentHashMap<String, PersistentHashMap<String, KeydirEntry>>
    /// Row id → (collection, key) for every row in `byCollection`.
    var byRowid: PersistentHashMap<UInt64, CollectionKeyPair>
    /// The total number of rows.
    var rowCount: Int

    /// An empty directory.
    package init() {
        byCollection = PersistentHashMap()
        byRowid = PersistentHashMap()
        rowCount = 0
    }

    /// The number of rows in all collections. O(1).
    package var count: Int { rowCount }

    /// The number of collections (each has at least one row). O(1).
    package var collectionCount: Int { byCollection.count }

    /// The names of the collections that have at least one row, in unspecified order.
    /// O(collections); allocates the array.
    package var collections: [String] { byCollection.keys }

    /// The entry for (`collection`, `key`), or nil. Two hash probes; no allocation, no locking.
    package func entry(collection: String, key: String) -> KeydirEntry? {
        byCollection[collection]?[key]
    }

    /// The (collection, key) of the row with id `rowid`, or nil. One hash probe.
    package func key(forRowid rowid: UInt64) -> (collection: String, key: String)? {
        guard let pair = byRowid[rowid] else { return nil }
        return (pair.collection, pair.key)
    }

    /// The number of rows in `collection` (0 if it has none). O(1) after one hash probe.
    package func count(inCollection collection: String) -> Int {
        byCollection[collection]?.count ?? 0
    }

    /// The rows of `collection` as a persistent map (a snapshot, O(1)), or nil if it has none.
    package func rows(inCollection collection: String) -> PersistentHashMap<String, KeydirEntry>? {
        byCollection[collection]
    }

    /// Calls `body` with each key and entry of `collection` until it returns false.
    /// O(rows in the collection); never visits other collections.
    package func forEachKey(inCollection collection: String,
                            _ body: (String, KeydirEntry) throws -> Bool) rethrows {
        try byCollection[collection]?.forEach(body)
    }

    /// Calls `body` with each collection name and its row count until it returns false.
    /// O(collections).
    package func forEachCollection(_ body: (String, Int) throws -> Bool) rethrows {
        try byCollection.forEach { name, rows in try body(name, rows.count) }
    }

    /// Stores `entry` for (`collection`, `key`), creating the collection if needed.
    ///
    /// The row id of a new row must not belong to another row; replacing a row's entry may change
    /// its row id (the reverse map follows). O(log n); copies only shared trie paths.
    /// - Returns: the previous entry, or nil if the row is new.
    /// - Precondition: `entry.rowid` is not the row id of a different (collection, key).
    @discardableResult
    package mutating func set(_ entry: KeydirEntry, collection: String, key: String) -> KeydirEntry? {
        let old = byCollection.modifyValue(forKey: collection) { rows -> KeydirEntry? in
            if rows == nil { rows = PersistentHashMap() }
            return rows!.updateValue(entry, forKey: key)
        }
        if let old {
            guard old.rowid != entry.rowid else { return old }
            byRowid.removeValue(forKey: old.rowid)
        } else {
            rowCount &+= 1
        }
        let displaced = byRowid.updateValue(CollectionKeyPair(collection: collection, key: key), forKey: entry.rowid)
        precondition(displaced == nil,
                     "Keydir.set: rowid \(entry.rowid) already belongs to \(displaced!.collection)/\(displaced!.key)")
        return old
    }

    /// Looks up the row (`collection`, `key`) and stores what `body` makes of it, in one walk
    /// of the trie per level of the directory (a lookup followed by `set` walks twice).
    ///
    /// `body` gets the current entry (nil for a new row) and returns the entry to store, or
    /// nil to leave the row as it was (nothing is inserted for a new row); pass anything else
    /// out through the closure's captures. Replacing an entry may change its row id (the reverse
    /// map follows), as with `set`. Copies the shared nodes on the path even when nothing is
    /// stored. O(log n). Not generic, so that callers in other modules run specialized code.
    /// - Returns: the previous entry, or nil if the row is new or nothing was stored.
    /// - Precondition: a stored row id does not belong to a different (collection, key).
    @discardableResult
    package mutating func upsert(collection: String, key: String, _ body: (KeydirEntry?) -> KeydirEntry?) -> KeydirEntry? {
        var change: (old: KeydirEntry?, new: KeydirEntry)?
        byCollection.modifyValue(forKey: collection) { (rows: inout PersistentHashMap<String, KeydirEntry>?) -> Void in
            if rows == nil { rows = PersistentHashMap() }
            rows!.modifyValue(forKey: key) { (slot: inout KeydirEntry?) -> Void in
                if let new = body(slot) {
                    change = (slot, new)
                    slot = new
                }
            }
            if rows!.isEmpty { rows = nil }
        }
        guard let (old, new) = change else { return nil }
        if let old {
            guard old.rowid != new.rowid else { return old }
            byRowid.removeValue(forKey: old.rowid)
        } else {
            rowCount &+= 1
        }
        let displaced = byRowid.updateValue(CollectionKeyPair(collection: collection, key: key), forKey: new.rowid)
        precondition(displaced == nil,
                     "Keydir.upsert: rowid \(new.rowid) already belongs to \(displaced!.collection)/\(displaced!.key)")
        return old
    }

    /// Calls `body` to change the entry of the existing row (`collection`, `key`) in place:
    /// one walk of the trie (a lookup followed by `set` walks it twice). `body` must keep the
    /// row id. Copies the shared nodes on the path, even when the row turns out to be absent.
    /// Not generic, so that callers in other modules run specialized code.
    /// - Returns: false (without calling `body`) when there is no such row.
    @discardableResult
    package mutating func modifyEntry(collection: String, key: String, _ body: (inout KeydirEntry) -> Void) -> Bool {
        let found = byCollection.modifyExisting(forKey: collection) { (rows: inout PersistentHashMap<String, KeydirEntry>) -> Bool in
            let hit: Void? = rows.modifyExisting(forKey: key) { (entry: inout KeydirEntry) -> Void in
                let rowid = entry.rowid
                body(&entry)
                precondition(entry.rowid == rowid, "Keydir.modifyEntry: the row id of \(collection)/\(key) changed")
            }
            return hit != nil
        }
        return found == true
    }

    /// Points every row whose object or metadata location `relocation` maps elsewhere at the
    /// new location, in one pass over the directory (compaction's swap): O(n) plus the nodes
    /// copied, which are only those on paths to changed rows. `relocation` returns nil to keep
    /// a location; it is called once per location in the directory. Row ids never change.
    /// - Returns: how many locations were replaced.
    @discardableResult
    package mutating func relocate(_ relocation: (ValueLocation) -> ValueLocation?) -> Int {
        var replaced = 0
        byCollection.replaceValues { rows -> PersistentHashMap<String, KeydirEntry>? in
            var rows = rows
            let changed = rows.replaceValues { entry -> KeydirEntry? in
                var entry = entry
                var changed = false
                if let to = relocation(entry.object) { entry.object = to; changed = true; replaced += 1 }
                if let m = entry.metadata, let to = relocation(m) { entry.metadata = to; changed = true; replaced += 1 }
                return changed ? entry : nil
            }
            return changed ? rows : nil
        }
        return replaced
    }

    /// Removes the row (`collection`, `key`); removes the collection if it was its last row.
    /// A miss on an absent collection copies nothing. O(log n).
    /// - Returns: the removed entry, or nil if there was no such row.
    @discardableResult
    package mutating func remove(collection: String, key: String) -> KeydirEntry? {
        guard byCollection.contains(collection) else { return nil }
        let old = byCollection.modifyValue(forKey: collection) { rows -> KeydirEntry? in
            let old = rows!.removeValue(forKey: key)
            if rows!.isEmpty { rows = nil }
            return old
        }
        if let old {
            rowCount &-= 1
            byRowid.removeValue(forKey: old.rowid)
        }
        return old
    }

    /// Removes every row of `collection`.
    ///
    /// The collection level is O(1) (one removal from the outer map); keeping the row-id map
    /// consistent costs one removal per row, O(k log n) for k rows — the same order as listing
    /// the removed rows, which callers need for changesets and views anyway.
    /// - Returns: the removed rows as a persistent map (nil if the collection had none), so the
    ///   caller can list the removed keys and row ids.
    @discardableResult
    package mutating func removeCollection(_ collection: String) -> PersistentHashMap<String, KeydirEntry>? {
        guard let rows = byCollection.removeValue(forKey: collection) else { return nil }
        rowCount &-= rows.count
        rows.forEach { _, entry in
            byRowid.removeValue(forKey: entry.rowid)
            return true
        }
        return rows
    }

    /// Removes every row of every collection. O(1) (shared nodes live on in older snapshots).
    package mutating func removeAll() { self = Keydir() }
}
