// Keydir: the database's key directory — (collection, key) → row id and value locations, in
// key order, on two paged copy-on-write B+trees.

/// The key directory: (collection, key) → `KeydirEntry`, in key order, plus the reverse map
/// from row id to (collection, key).
///
/// Two `PagedBTree`s (docs/format.md §11): **rows** maps a row key (`RowKey.encode`) to the
/// entry's page encoding, so each collection is one contiguous range of keys and its row count
/// is a difference of two ranks (subtree counts in the branch pages); **row ids** maps a row
/// id (`RowKey.rowid`) to its row key. Clean nodes are pages read on demand from the page
/// source (a memory map of the index files); a change copies the touched paths into dirty
/// nodes in memory until an index checkpoint writes them (`flush`), so memory holds the
/// changes since the last checkpoint, never the whole directory.
///
/// **Snapshots.** A value: copying a `Keydir` is O(1) and is a snapshot; a commit mutates its
/// own copy, copying only the touched paths, and a writer that owns its nodes exclusively (a
/// bulk load within one transaction) changes them in place.
///
/// **Errors.** Everything that reads a page throws `PageError`: a damaged page gives
/// `.corrupt`, a page the source cannot read `.unreadable`; never a trap. A mutation that
/// throws leaves the directory in an unspecified state: the caller discards its copy (the
/// engine rolls the transaction back).
///
/// **Threading.** Any number of threads may read copies concurrently; a given variable is
/// mutated by one thread at a time (the engine's single writer).
package struct Keydir: Sendable {
    /// Row key → entry.
    package internal(set) var rows: PagedBTree
    /// Row-id key → row key.
    package internal(set) var rowids: PagedBTree

    /// An empty directory whose pages will have `format` and be read from `source`.
    package init(format: PageFormat = PageFormat(), source: any PageSource = EmptyPageSource()) {
        rows = PagedBTree(format: format, source: source)
        rowids = PagedBTree(format: format, source: source)
    }

    /// The directory whose trees have the written roots `rowsRoot` and `rowidsRoot`
    /// (`PageID.none`: empty). Reads the two root pages' headers, nothing else.
    /// - Throws: `PageError` if a root page cannot be read or is not a root of its tree, or
    ///   when the two trees disagree on the number of rows.
    package init(rowsRoot: PageID, rowidsRoot: PageID, format: PageFormat, source: any PageSource) throws(PageError) {
        rows = try PagedBTree(rootPage: rowsRoot, format: format, source: source)
        rowids = try PagedBTree(rootPage: rowidsRoot, format: format, source: source)
        guard rows.count == rowids.count else {
            throw .corrupt(page: rowidsRoot, reason: .subtreeCountMismatch(expected: rows.count, found: rowids.count))
        }
    }

    /// The longest row key (`RowKey.encode`) the trees of `format` can hold: an entry of the
    /// rows tree is the row key and an encoded entry, one of the row-ids tree an 8-byte key and
    /// the row key.
    package static func maximumRowKeyLength(_ format: PageFormat) -> Int {
        format.maximumEntrySize - KeydirEntry.maximumPageEncodedSize
    }

    /// Whether (`collection`, `key`) is short enough for this directory's pages.
    package func fits(collection: String, key: String) -> Bool {
        RowKey.encodedLength(collection: collection, key: key) <= Self.maximumRowKeyLength(rows.format)
    }

    // MARK: Counts

    /// The number of rows in all collections. O(1).
    package var count: Int { rows.count }

    /// The number of rows in `collection` (0 if it has none): two rank lookups, O(log n).
    package func count(inCollection collection: String) throws(PageError) -> Int {
        try range(of: collection).count
    }

    /// The positions of `collection`'s rows in the rows tree.
    func range(of collection: String) throws(PageError) -> Range<Int> {
        try rows.positions(from: KeyBound(RowKey.prefix(collection)), to: KeyBound(RowKey.end(collection), inclusive: false))
    }

    /// Calls `body` with each collection (in name order) and its row count until it returns
    /// false: O(collections × log n), one seek per collection.
    package func forEachCollection(_ body: (String, Int) throws -> Bool) throws {
        var position = 0
        while position < rows.count {
            var name: String?
            var damaged = false
            try rows.withElement(at: position) { key, _ in
                if let length = RowKey.collectionPartLength(key) {
                    name = RowKey.collection(key, partLength: length)
                }
                damaged = name == nil
            }
            guard let collection = name, !damaged else { throw PageError.corrupt(page: .none, reason: .badEntry) }
            let range = try range(of: collection)
            guard range.lowerBound == position, !range.isEmpty else { throw PageError.corrupt(page: .none, reason: .badEntry) }
            guard try body(collection, range.count) else { return }
            position = range.upperBound
        }
    }

    /// The number of collections (each has at least one row). O(collections × log n).
    package func collectionCount() throws -> Int {
        var count = 0
        try forEachCollection { _, _ in count += 1; return true }
        return count
    }

    /// The names of the collections that have at least one row, in name order.
    package func collections() throws -> [String] {
        var names: [String] = []
        try forEachCollection { name, _ in names.append(name); return true }
        return names
    }

    // MARK: Lookups

    /// The entry for (`collection`, `key`), or nil. One walk of the rows tree; no allocation
    /// (the row key is built in a temporary buffer, `RowKey.withEncoded`).
    package func entry(collection: String, key: String) throws(PageError) -> KeydirEntry? {
        var entry: KeydirEntry?, malformed = false, failure: PageError?
        RowKey.withEncoded(collection: collection, key: key) { rowKey in
            do throws(PageError) {
                _ = try rows.find(rowKey) { bytes in
                    entry = KeydirEntry(pageEncoded: bytes)
                    malformed = entry == nil
                }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        if malformed { throw .corrupt(page: .none, reason: .badEntry) }
        return entry
    }

    /// The (collection, key) of the row with id `rowid`, or nil. One walk of the row-ids tree.
    package func key(forRowid rowid: UInt64) throws(PageError) -> (collection: String, key: String)? {
        var pair: (String, String)?
        var damaged = false
        let found = try rowids.withValue(forKey: RowKey.rowid(rowid)) { bytes in
            pair = RowKey.decode(bytes)
            damaged = pair == nil
        }
        guard found else { return nil }
        guard let pair, !damaged else { throw .corrupt(page: .none, reason: .badEntry) }
        return pair
    }

    /// The (collection, key) and entry of the row with id `rowid`, or nil: the row-ids tree's
    /// value is the row's key in the rows tree, so the second walk uses those bytes as they are
    /// (no re-encoding of the names). The entry is nil if the rows tree lacks that key.
    /// `memo` carries the last collection decoded, so a walk over many rows of one collection
    /// decodes its name once.
    package func row(forRowid rowid: UInt64, memo: inout CollectionMemo) throws(PageError)
        -> (collection: String, key: String, entry: KeydirEntry?)? {
        var rowKey: [UInt8]?
        _ = try rowids.withValue(forKey: RowKey.rowid(rowid)) { rowKey = Array($0) }
        guard let rowKey else { return nil }
        return try rowKey.withUnsafeBytes { bytes in
            Result { () throws(PageError) in try row(forRowKey: bytes, withEntry: true, memo: &memo) }
        }.get()
    }

    /// Calls `body` with each key and entry of `collection` in key order (or `reversed`),
    /// from the first key ≥ `from` to the last ≤ `through` (nil: unbounded), until it returns
    /// false. O(log n + k): one search, for the end the walk starts from
    /// (`PagedBTree.forEachInKeyRange`); never visits other collections.
    /// - Throws: `PageError` from a page, or what `body` throws (the walk stops there).
    package func forEachKey(inCollection collection: String, from: String? = nil, through: String? = nil, reversed: Bool = false,
                            _ body: (String, KeydirEntry) throws -> Bool) throws {
        let prefix = RowKey.prefix(collection)
        let lower = KeyBound(from.map { RowKey.encode(collection: collection, key: $0) } ?? prefix)
        let upper = through.map { KeyBound(RowKey.encode(collection: collection, key: $0)) }
            ?? KeyBound(RowKey.end(collection), inclusive: false)
        var failure: (any Error)?
        try rows.forEachInKeyRange(from: lower, to: upper, reversed: reversed) { keyBytes, valueBytes in
            // Every key in the range starts with the collection's prefix, unless a page lies.
            guard keyBytes.count >= prefix.count,
                  prefix.withUnsafeBytes({ compareBytes(UnsafeRawBufferPointer(rebasing: keyBytes[..<prefix.count]), $0) == 0 }),
                  let key = RowKey.key(keyBytes, partLength: prefix.count),
                  let entry = KeydirEntry(pageEncoded: valueBytes) else {
                failure = PageError.corrupt(page: .none, reason: .badEntry)
                return false
            }
            do { return try body(key, entry) } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
    }

    /// `forEachKey(inCollection:from:through:reversed:_:)` that hands each entry to `prefetch`
    /// (when given) `prefetchDepth` entries before `body` gets it, so a caller can start
    /// loading the next rows' values while it works on this one (their loads overlap). The
    /// rows, their order, the stop and the errors are the same: rows read ahead after `body`
    /// stopped are dropped, and a damaged entry is reported after the rows before it were
    /// passed on.
    package func forEachKey(inCollection collection: String, from: String? = nil, through: String? = nil, reversed: Bool = false,
                            prefetching prefetch: ((KeydirEntry) -> Void)?,
                            _ body: (String, KeydirEntry) throws -> Bool) throws {
        guard let prefetch else {
            return try forEachKey(inCollection: collection, from: from, through: through, reversed: reversed, body)
        }
        // A ring of the rows read but not yet passed on, in parallel arrays. (No nested
        // function over these locals: its captures would cost a dynamic exclusivity check per
        // access.)
        let depth = Self.prefetchDepth
        var keys: [String] = [], entries: [KeydirEntry] = []
        keys.reserveCapacity(depth)
        entries.reserveCapacity(depth)
        var first = 0, stopped = false
        var walkError: (any Error)?
        do {
            try forEachKey(inCollection: collection, from: from, through: through, reversed: reversed) { key, entry in
                prefetch(entry)
                if keys.count < depth {
                    keys.append(key)
                    entries.append(entry)
                    return true
                }
                // Pass on the oldest row; its slot then holds the newest.
                let goOn: Bool
                do { goOn = try body(keys[first], entries[first]) } catch {
                    stopped = true
                    throw error
                }
                guard goOn else {
                    stopped = true
                    return false
                }
                keys[first] = key
                entries[first] = entry
                first = (first &+ 1) & (depth &- 1)
                return true
            }
        } catch {
            if stopped { throw error }
            walkError = error
        }
        if !stopped {
            var index = first
            for _ in 0..<keys.count {
                if try !body(keys[index], entries[index]) { break }
                index = (index &+ 1) % keys.count
            }
        }
        if let walkError { throw walkError }
    }

    /// How many entries `forEachKey(…prefetching:…)` reads ahead of the one it passes on (a
    /// power of two).
    package static let prefetchDepth = 8

    /// Calls `body` with each row of every collection, in (collection, key) order, until it
    /// returns false. O(n).
    package func forEachRow(_ body: (String, String, KeydirEntry) throws -> Bool) throws {
        var failure: (any Error)?
        try rows.forEach { keyBytes, valueBytes in
            guard let (collection, key) = RowKey.decode(keyBytes), let entry = KeydirEntry(pageEncoded: valueBytes) else {
                failure = PageError.corrupt(page: .none, reason: .badEntry)
                return false
            }
            do { return try body(collection, key, entry) } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
    }

    // MARK: Changes

    /// Stores `entry` for (`collection`, `key`).
    /// - Returns: the previous entry, or nil if the row is new.
    /// - Throws: as `upsert`.
    @discardableResult
    package mutating func set(_ entry: KeydirEntry, collection: String, key: String) throws(PageError) -> KeydirEntry? {
        // One walk of the rows tree: the upsert hands back the old entry (`upsert(…)` with a
        // closure must look it up first, which walks twice).
        let rowKey = RowKey.encode(collection: collection, key: key)
        let old: KeydirEntry?
        if let bytes = try rows.upsert(rowKey, entry.pageEncoded) {
            guard let decoded = bytes.withUnsafeBytes({ KeydirEntry(pageEncoded: $0) }) else { throw .corrupt(page: .none, reason: .badEntry) }
            old = decoded
        } else {
            old = nil
        }
        try followRowid(from: old, to: entry, rowKey: rowKey)
        return old
    }

    /// Keeps the row-ids tree in step after the row `rowKey` went from `old` to `new`.
    /// - Throws: `.corrupt(…, .badEntry)` when `new`'s row id already names another row (the
    ///   directory's pages disagree with the caller's: damage, not misuse).
    private mutating func followRowid(from old: KeydirEntry?, to new: KeydirEntry, rowKey: [UInt8]) throws(PageError) {
        guard old?.rowid != new.rowid else { return }
        if let old { _ = try rowids.remove(RowKey.rowid(old.rowid)) }
        if try rowids.upsert(RowKey.rowid(new.rowid), rowKey) != nil { throw .corrupt(page: .none, reason: .badEntry) }
    }

    /// Looks up the row (`collection`, `key`) and stores what `body` makes of it: `body` gets
    /// the current entry (nil for a new row) and returns the entry to store, or nil to leave
    /// the row as it was. Replacing an entry may change its row id (the row-ids tree follows).
    /// - Returns: the previous entry, or nil if the row is new or nothing was stored.
    /// - Throws: `PageError`; `.corrupt(…, .badEntry)` when the stored row id already belongs
    ///   to a different (collection, key) (the directory is then left half changed: discard it).
    @discardableResult
    package mutating func upsert(collection: String, key: String, _ body: (KeydirEntry?) -> KeydirEntry?) throws(PageError) -> KeydirEntry? {
        let rowKey = RowKey.encode(collection: collection, key: key)
        let old = try rows.entry(forKey: rowKey)
        guard let new = body(old) else { return nil }
        if old != new { _ = try rows.upsert(rowKey, new.pageEncoded) }
        try followRowid(from: old, to: new, rowKey: rowKey)
        return old
    }

    /// Calls `body` to change the entry of the existing row (`collection`, `key`); `body` must
    /// keep the row id.
    /// - Returns: false (without calling `body`) when there is no such row.
    @discardableResult
    package mutating func modifyEntry(collection: String, key: String, _ body: (inout KeydirEntry) -> Void) throws(PageError) -> Bool {
        let rowKey = RowKey.encode(collection: collection, key: key)
        guard var entry = try rows.entry(forKey: rowKey) else { return false }
        let before = entry
        body(&entry)
        precondition(entry.rowid == before.rowid, "Keydir.modifyEntry: the row id of \(collection)/\(key) changed")
        if entry != before { _ = try rows.upsert(rowKey, entry.pageEncoded) }
        return true
    }

    /// Points every row whose object or metadata location `relocation` maps elsewhere at the
    /// new location (compaction's swap): one ordered pass over the rows, then one update per
    /// changed row. `relocation` returns nil to keep a location. Row ids never change.
    /// - Returns: how many locations were replaced.
    @discardableResult
    package mutating func relocate(_ relocation: (ValueLocation) -> ValueLocation?) throws(PageError) -> Int {
        var changed: [(key: [UInt8], entry: KeydirEntry)] = []
        var replaced = 0
        var malformed = false
        try rows.forEach { keyBytes, valueBytes in
            guard var entry = KeydirEntry(pageEncoded: valueBytes) else {
                malformed = true
                return false
            }
            var moved = false
            if let to = relocation(entry.object) { entry.object = to; moved = true; replaced += 1 }
            if let m = entry.metadata, let to = relocation(m) { entry.metadata = to; moved = true; replaced += 1 }
            if moved { changed.append((Array(keyBytes), entry)) }
            return true
        }
        if malformed { throw .corrupt(page: .none, reason: .badEntry) }
        for (key, entry) in changed { _ = try rows.upsert(key, entry.pageEncoded) }
        return replaced
    }

    /// Removes the row (`collection`, `key`). O(log n).
    /// - Returns: the removed entry, or nil if there was no such row.
    @discardableResult
    package mutating func remove(collection: String, key: String) throws(PageError) -> KeydirEntry? {
        try remove(collection: collection, key: key, known: false)
    }

    /// `remove(collection:key:)` for a row the caller has just looked up in this directory
    /// (`known`): each tree's removal then skips the existence walk it makes first
    /// (`PagedBTree.removeFound`), one walk of each tree instead of two.
    @discardableResult
    package mutating func remove(collection: String, key: String, known: Bool) throws(PageError) -> KeydirEntry? {
        let rowKey = RowKey.encode(collection: collection, key: key)
        guard let bytes = try known ? rows.removeFound(rowKey) : rows.remove(rowKey) else { return nil }
        guard let old = bytes.withUnsafeBytes({ KeydirEntry(pageEncoded: $0) }) else { throw .corrupt(page: .none, reason: .badEntry) }
        let rowidKey = RowKey.rowid(old.rowid)
        _ = try known ? rowids.removeFound(rowidKey) : rowids.remove(rowidKey)
        return old
    }

    /// Removes every row of `collection`: O(k log n) for its k rows.
    /// - Returns: the removed rows in key order (nil if the collection had none), so the caller
    ///   can list the removed keys and row ids.
    @discardableResult
    package mutating func removeCollection(_ collection: String) throws(PageError) -> [(key: String, entry: KeydirEntry)]? {
        var removed: [(key: String, entry: KeydirEntry)] = []
        do {
            try forEachKey(inCollection: collection) { key, entry in
                removed.append((key, entry))
                return true
            }
        } catch let error as PageError {
            throw error
        } catch {
            preconditionFailure("Keydir.removeCollection: unexpected \(error)")
        }
        guard !removed.isEmpty else { return nil }
        for (key, entry) in removed {
            _ = try rows.remove(RowKey.encode(collection: collection, key: key))
            _ = try rowids.remove(RowKey.rowid(entry.rowid))
        }
        return removed
    }

    /// Removes every row of every collection. O(1): pages are not touched (older snapshots
    /// keep reading them).
    package mutating func removeAll() {
        rows.removeAll()
        rowids.removeAll()
    }

    // MARK: Checkpoints

    /// Whether some change is held only in memory (a checkpoint would write pages).
    package var hasUnwrittenChanges: Bool { rows.cleanRootPage == nil || rowids.cleanRootPage == nil }

    /// Pages the next checkpoint would write (both trees' dirty nodes not yet published):
    /// O(dirty nodes), for statistics.
    package var unwrittenPageCount: Int { rows.unwrittenPageCount + rowids.unwrittenPageCount }

    /// Written pages both trees reference (see `PagedTree.writtenPageCount()`): the live pages
    /// of the index files. Reads the branch pages.
    /// - Throws: `PageError` from reading a page.
    package func writtenPageCount() throws(PageError) -> Int {
        try rows.writtenPageCount() + rowids.writtenPageCount()
    }

    /// Writes the dirty nodes of both trees as pages (see `PagedBTree.flush`): `allocate` gives
    /// each page its id, `write` receives it. Returns the two flushes, whose `root`s the root
    /// record names; call `publish()` on both once that record is durable, then
    /// `releasingFlushedNodes()` on the writer's newest directory.
    package func flush<E: Error>(
        allocate: () throws(E) -> PageID, write: (PageID, UnsafeRawBufferPointer) throws(E) -> Void
    ) throws(E) -> (rows: PageFlush, rowids: PageFlush) {
        let rowsFlush = try rows.flush(allocate: allocate, write: write)
        let rowidsFlush = try rowids.flush(allocate: allocate, write: write)
        return (rowsFlush, rowidsFlush)
    }

    /// This directory with every node a published flush wrote replaced by its page, so the
    /// memory those nodes held is released once no snapshot shares them.
    package func releasingFlushedNodes() -> Keydir {
        var copy = self
        copy.rows = rows.releasingFlushedNodes()
        copy.rowids = rowids.releasingFlushedNodes()
        return copy
    }

    /// Writes both trees again as new trees of full pages (index compaction; see
    /// `PagedBTree.repackAll`) and returns their roots. Once the root record naming them is
    /// durable, open them with `init(rowsRoot:rowidsRoot:format:source:)` and carry the
    /// writer's changes since onto them with `rebasing(from:onto:)`.
    package func repackAll<E: Error>(
        allocate: () throws(E) -> PageID, write: (PageID, UnsafeRawBufferPointer) throws(E) -> Void,
        readFailed: (PageError) -> E
    ) throws(E) -> (rows: PagedTreeRoot, rowids: PagedTreeRoot) {
        let rowsRoot = try rows.repackAll(allocate: allocate, write: write, readFailed: readFailed)
        let rowidsRoot = try rowids.repackAll(allocate: allocate, write: write, readFailed: readFailed)
        return (rowsRoot, rowidsRoot)
    }

    /// The directory whose trees are the written roots `rowsRoot` and `rowidsRoot`, reading
    /// nothing now (the first walk checks each root page against its root).
    package init(rowsRoot: PagedTreeRoot, rowidsRoot: PagedTreeRoot, format: PageFormat, source: any PageSource) {
        rows = PagedBTree(root: rowsRoot, format: format, source: source)
        rowids = PagedBTree(root: rowidsRoot, format: format, source: source)
    }

    /// This directory (`base`, or one derived from it since) as `copy` — a repacked copy of
    /// `base` — with the same changes made to it (`PagedBTree.rebasing(from:onto:)`).
    /// - Throws: `PageError` from reading a page.
    package func rebasing(from base: Keydir, onto copy: Keydir) throws(PageError) -> Keydir {
        var result = copy
        result.rows = try rows.rebasing(from: base.rows, onto: copy.rows)
        result.rowids = try rowids.rebasing(from: base.rowids, onto: copy.rowids)
        return result
    }

    /// This directory reading its clean pages from `source` (see `PagedTree.reading(from:)`).
    package func replacingSource(_ source: any PageSource) -> Keydir {
        var copy = self
        copy.rows = rows.reading(from: source)
        copy.rowids = rowids.reading(from: source)
        return copy
    }

    /// The page size and checksum of the directory's pages.
    package var format: PageFormat { rows.format }
}
