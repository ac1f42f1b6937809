import YapDBStorage
import YapDBIndex

/// An immutable view of the database at one commit: the snapshot number, the key directory
/// and the segment files it reaches. Readers take one and never lock again.
///
/// Threading: immutable; use from any thread.
package final class EngineSnapshot: Sendable {
    /// The number of the last commit included (0 for a new database).
    package let number: UInt64
    /// Bumped by every publish, commits and compactions alike (compaction moves values
    /// without changing `number`).
    package let generation: UInt64
    package let keydir: Keydir
    package let segments: SegmentTable
    /// Extension state (view trees) by extension name, versioned with the keydir.
    package let extensions: [String: any Sendable]

    package init(number: UInt64, generation: UInt64, keydir: Keydir, segments: SegmentTable, extensions: [String: any Sendable] = [:]) {
        self.number = number
        self.generation = generation
        self.keydir = keydir
        self.segments = segments
        self.extensions = extensions
    }

    // MARK: Reads
    //
    // Every lookup walks the key directory's pages: a damaged or unreadable page is
    // `StorageError` (`corrupted` or `io`), like a damaged value record.

    /// Whether (collection, key) has a row.
    package func contains(collection: String, key: String) throws(StorageError) -> Bool {
        try entry(collection: collection, key: key) != nil
    }

    /// The entry of (collection, key), or nil.
    package func entry(collection: String, key: String) throws(StorageError) -> KeydirEntry? {
        try mappingPageErrors { () throws(PageError) in try keydir.entry(collection: collection, key: key) }
    }

    /// The (collection, key) of row `rowid`, or nil.
    package func key(forRowid rowid: UInt64) throws(StorageError) -> (collection: String, key: String)? {
        try mappingPageErrors { () throws(PageError) in try keydir.key(forRowid: rowid) }
    }

    /// The object bytes of (collection, key), or nil when there is no such row.
    /// Throws `corrupted` when the record fails its checks, `io` when it cannot be read.
    package func object(collection: String, key: String) throws(StorageError) -> [UInt8]? {
        guard let entry = try entry(collection: collection, key: key) else { return nil }
        return try objectBytes(entry)
    }

    /// The metadata bytes of (collection, key), or nil when there is no row or no metadata.
    package func metadata(collection: String, key: String) throws(StorageError) -> [UInt8]? {
        guard let entry = try entry(collection: collection, key: key) else { return nil }
        return try metadataBytes(entry)
    }

    /// The object bytes an entry points to.
    package func objectBytes(_ entry: KeydirEntry) throws(StorageError) -> [UInt8] {
        try segments.withValue(at: entry.object, owner: .object(entry.rowid)) { $0.map { Array($0) } ?? [] }
    }

    /// The metadata bytes an entry points to, or nil.
    package func metadataBytes(_ entry: KeydirEntry) throws(StorageError) -> [UInt8]? {
        guard let location = entry.metadata else { return nil }
        return try segments.withValue(at: location, owner: .metadata(entry.rowid)) { $0.map { Array($0) } }
    }

    package var rowCount: Int { keydir.count }
    package func collectionCount() throws(StorageError) -> Int { try Engine.mappingIndexErrors { try keydir.collectionCount() } }
    package func collections() throws(StorageError) -> [String] { try Engine.mappingIndexErrors { try keydir.collections() } }
    package func count(inCollection collection: String) throws(StorageError) -> Int {
        try mappingPageErrors { () throws(PageError) in try keydir.count(inCollection: collection) }
    }

    /// Calls `body` with each key and entry of `collection`, in key order (or `reversed`),
    /// from `from` through `through` (nil: unbounded), until it returns false.
    /// - Throws: `StorageError` for a damaged or unreadable page, or what `body` throws.
    package func forEachKey(inCollection collection: String, from: String? = nil, through: String? = nil, reversed: Bool = false,
                            _ body: (String, KeydirEntry) throws -> Bool) throws {
        do { try keydir.forEachKey(inCollection: collection, from: from, through: through, reversed: reversed, body) } catch let error as PageError {
            throw StorageError(error)
        }
    }
}
