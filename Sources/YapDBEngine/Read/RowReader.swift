import YapDBStorage
import YapDBIndex

/// The engine's one read surface for rows: what a snapshot (`EngineSnapshot`) and the
/// read-write transaction (`WriteTransaction`, which reads its own staged writes) both answer,
/// and the only way the public layer reads rows.
///
/// **Errors.** Every read that walks the key directory or reads a record throws
/// `EngineError`: `corrupted` for a damaged page or record (its file and position in the
/// reason), `io` for one that cannot be read. The reader never logs: what a failure means is
/// the caller's decision (the public layer logs it in a read transaction and fails the
/// transaction in a read-write one).
///
/// **Shape.** Non-generic, and every value is lent to a closure that returns nothing: calls
/// into another module are not specialized, so a generic result would travel through its
/// type's value witnesses on every read (docs/architecture.md, "Specialization across
/// modules"). Bytes handed to a closure are valid only during the call and may lie in a
/// read-only memory map.
///
/// Threading: a snapshot may be read from any thread; a write transaction only by the thread
/// running its body.
package protocol RowReader: AnyObject {
    // MARK: Rows by key

    /// The entry of (`collection`, `key`), or nil when there is no such row.
    func entry(collection: String, key: String) throws(EngineError) -> KeydirEntry?

    /// The entry of the row whose encoded row key (`RowKey.encode`) is `rowKey`, or nil.
    func entry(rowKey: UnsafeRawBufferPointer) throws(EngineError) -> KeydirEntry?

    // MARK: Rows by row id

    /// The (collection, key) of row `rowid`, or nil when no row has that id.
    func owner(ofRowid rowid: UInt64) throws(EngineError) -> (collection: String, key: String)?

    /// The (collection, key) and entry of row `rowid`, or nil. `memo` carries the collection
    /// decoded last, so a walk over many rows of one collection decodes its name once.
    func row(ofRowid rowid: UInt64, memo: inout CollectionMemo) throws(EngineError)
        -> (collection: String, key: String, entry: KeydirEntry?)?

    // MARK: Counts and names

    /// The number of rows in all collections. O(1).
    var rowCount: Int { get }

    /// The number of rows in `collection` (0 when it has none). O(log n).
    func rowCount(inCollection collection: String) throws(EngineError) -> Int

    /// The number of collections that have at least one row. O(collections × log n).
    func collectionCount() throws(EngineError) -> Int

    /// The names of the collections that have at least one row, in name order.
    func collectionNames() throws(EngineError) -> [String]

    // MARK: Ordered walks

    /// Calls `body` with each key and entry of `collection` in key order (or `reversed`), from
    /// the first key ≥ `from` to the last ≤ `through` (nil: unbounded), until it returns false.
    /// With `prefetch`, each entry is handed to it a few entries ahead of `body`
    /// (`Keydir.prefetchDepth`), so the caller can start loading those rows' values.
    ///
    /// A write transaction walks the rows as they were when the walk began: a write made by
    /// `body` does not disturb the walk (the caller decides whether such a write is allowed).
    /// - Throws: `EngineError` for a damaged or unreadable page; the rows before it were
    ///   handed to `body`.
    func forEachKey(inCollection collection: String, from: String?, through: String?, reversed: Bool,
                    prefetching prefetch: ((KeydirEntry) -> Void)?, _ body: (String, KeydirEntry) -> Bool) throws(EngineError)

    /// `forEachKey`, handing out each key as its UTF-8 bytes where they lie in the page (lent:
    /// valid only during the call), with no string made per row.
    func forEachKeyBytes(inCollection collection: String, from: String?, through: String?, reversed: Bool,
                         _ body: (_ key: UnsafeRawBufferPointer, _ entry: KeydirEntry) -> Bool) throws(EngineError)

    // MARK: Values

    /// Calls `body` with the value at `location` (nil for a record that clears the metadata),
    /// lent for the call: in place in a segment's memory map, from a `pread` buffer, or (a
    /// write transaction) from the log's staging buffer. Checks the record's framing and
    /// checksum, and that it is `owner`'s.
    /// - Throws: `corrupted` when the record fails a check or is another row's, `io` when it
    ///   cannot be read.
    func readValue(at location: ValueLocation, owner: ValueOwner, _ body: (UnsafeRawBufferPointer?) -> Void) throws(EngineError)

    /// Calls `body` with the object at `location` and returns true when the record there is
    /// row `rowid`'s object record and can be read in place; returns false, without calling
    /// `body`, otherwise (a location kept by an index whose segment compaction retired, or any
    /// failure: the caller then looks the row up by key).
    func readObject(at location: ValueLocation, ofRowid rowid: UInt64, _ body: (UnsafeRawBufferPointer) -> Void) -> Bool

    /// Whether the segment `location` points into is still readable by this reader.
    func holdsSegment(of location: ValueLocation) -> Bool

    /// Starts loading the value at `location` into the CPU's caches when it lies in a memory
    /// map, for a read soon after. A hint only.
    func prefetch(_ location: ValueLocation)

    // MARK: Extensions

    /// The extensions' state (view trees, index trees) as this reader sees it, by state name.
    var extensions: [String: any Sendable] { get }

    /// Calls `body` with the key directory as this reader sees it (a write transaction's with
    /// its buffered rows applied), lent for the call, for extensions that walk its trees in
    /// ways the reader does not offer (batched lookups, their own trees' row keys).
    func withKeydir(_ body: (borrowing Keydir) -> Void)
}

// Conveniences built on the requirements, the same for both readers (tools and tests read
// through them, so they take the path the public layer takes).
extension RowReader {
    /// Whether (collection, key) has a row.
    package func contains(collection: String, key: String) throws(EngineError) -> Bool {
        try entry(collection: collection, key: key) != nil
    }

    /// The object bytes of (collection, key), copied, or nil when there is no such row.
    package func object(collection: String, key: String) throws(EngineError) -> [UInt8]? {
        guard let entry = try entry(collection: collection, key: key) else { return nil }
        return try objectBytes(entry)
    }

    /// The metadata bytes of (collection, key), copied; nil when there is no row or no metadata.
    package func metadata(collection: String, key: String) throws(EngineError) -> [UInt8]? {
        guard let entry = try entry(collection: collection, key: key) else { return nil }
        return try metadataBytes(entry)
    }

    /// The object bytes `entry` points to, copied.
    package func objectBytes(_ entry: KeydirEntry) throws(EngineError) -> [UInt8] {
        var bytes: [UInt8] = []
        try readValue(at: entry.object, owner: .object(entry.rowid)) { if let value = $0 { bytes = Array(value) } }
        return bytes
    }

    /// The metadata bytes `entry` points to, copied, or nil.
    package func metadataBytes(_ entry: KeydirEntry) throws(EngineError) -> [UInt8]? {
        guard let location = entry.metadata else { return nil }
        var bytes: [UInt8]?
        try readValue(at: location, owner: .metadata(entry.rowid)) { bytes = $0.map { Array($0) } }
        return bytes
    }

    /// `forEachKey` over the whole collection, without prefetching.
    package func forEachKey(inCollection collection: String, _ body: (String, KeydirEntry) -> Bool) throws(EngineError) {
        try forEachKey(inCollection: collection, from: nil, through: nil, reversed: false, prefetching: nil, body)
    }
}

/// Walks of the key directory shared by both readers: a damaged or unreadable page becomes
/// `EngineError`.
extension Keydir {
    func readerEntry(collection: String, key: String) throws(EngineError) -> KeydirEntry? {
        try mappingPageErrors { () throws(PageError) in try entry(collection: collection, key: key) }
    }

    func readerEntry(rowKey: UnsafeRawBufferPointer) throws(EngineError) -> KeydirEntry? {
        try mappingPageErrors { () throws(PageError) in try entry(rowKey: rowKey) }
    }

    func readerOwner(ofRowid rowid: UInt64) throws(EngineError) -> (collection: String, key: String)? {
        try mappingPageErrors { () throws(PageError) in try key(forRowid: rowid) }
    }

    func readerRow(ofRowid rowid: UInt64, memo: inout CollectionMemo) throws(EngineError)
        -> (collection: String, key: String, entry: KeydirEntry?)? {
        do throws(PageError) { return try row(forRowid: rowid, memo: &memo) } catch { throw EngineError(error) }
    }

    func readerRowCount(inCollection collection: String) throws(EngineError) -> Int {
        try mappingPageErrors { () throws(PageError) in try count(inCollection: collection) }
    }

    func readerCollectionCount() throws(EngineError) -> Int { try Engine.mappingIndexErrors { try collectionCount() } }

    func readerCollectionNames() throws(EngineError) -> [String] { try Engine.mappingIndexErrors { try collections() } }

    func readerForEachKey(inCollection collection: String, from: String?, through: String?, reversed: Bool,
                          prefetching prefetch: ((KeydirEntry) -> Void)?, _ body: (String, KeydirEntry) -> Bool) throws(EngineError) {
        try Engine.mappingIndexErrors {
            try forEachKey(inCollection: collection, from: from, through: through, reversed: reversed, prefetching: prefetch, body)
        }
    }

    func readerForEachKeyBytes(inCollection collection: String, from: String?, through: String?, reversed: Bool,
                               _ body: (UnsafeRawBufferPointer, KeydirEntry) -> Bool) throws(EngineError) {
        try mappingPageErrors { () throws(PageError) in
            try forEachKeyBytes(inCollection: collection, from: from, through: through, reversed: reversed, body)
        }
    }
}
