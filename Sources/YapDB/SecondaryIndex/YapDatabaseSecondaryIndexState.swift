import Foundation
import YapDBEngine
import YapDBQuery

/// A secondary index's contents at one snapshot: one key-ordered tree per column and the
/// column values of each indexed row. An immutable value stored in the snapshot with the rows
/// (copying it is O(1); a change copies only the touched paths of the trees), so every
/// snapshot reads its own version.
///
/// - `columns[i]`: keys `OrderedKeyEncoding` of the row's value in column `i` (after the
///   column's affinity), then its row id; values the location of the row's object record
///   (`entryValue`) and the row's key in the key directory's rows tree (`RowKey`), so a query
///   finds a match's collection, key and object without a walk of the key directory — or
///   empty when they would not fit an entry (then the row id is looked up). Every indexed
///   row has one entry in every column tree (NULL included), so a tree's count is the number
///   of indexed rows.
/// - `rows`: keys the row id (8 bytes, big-endian) and a chunk number (1 byte); values the
///   row's encoded column values (`SecondaryIndexRow`), split into chunks that fit a tree
///   entry. Updates and removals read the old values here to find the old column entries.
///
/// Errors: the trees' `EngineError` (a damaged or unreadable page, an entry too large for a
/// page) passes through.
struct SecondaryIndexState: Sendable {
    /// The tag the index was built with.
    var versionTag: String
    /// The columns' names and types: a different setup under the same tag rebuilds.
    var signature: String
    var columns: [ExtensionTree]
    var rows: ExtensionTree

    /// An empty index of `columnCount` columns, each tree a copy of `empty` (an empty tree in
    /// the page format the index's pages have).
    init(versionTag: String, signature: String, columnCount: Int, empty: ExtensionTree = ExtensionTree()) {
        self.versionTag = versionTag
        self.signature = signature
        columns = Array(repeating: empty, count: columnCount)
        rows = empty
    }

    /// The number of indexed rows.
    var rowCount: Int { columns.first?.count ?? 0 }

    /// The most bytes of a text or blob written into a column key (the rest is read from
    /// `rows` when the order of two values depends on it).
    var keyValueLimit: Int { Self.keyValueLimit(maximumEntrySize: rows.maximumEntrySize) }

    static func keyValueLimit(maximumEntrySize: Int) -> Int {
        min(256, (maximumEntrySize - OrderedKeyEncoding.rowidSize - 8) / 2)
    }

    /// Bytes of row values per chunk entry.
    var chunkSize: Int { rows.maximumEntrySize - Self.rowKeySize }
    static let rowKeySize = 9

    static func rowKey(_ rowid: UInt64, chunk: UInt8) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(rowKeySize)
        OrderedKeyEncoding.appendRowid(rowid, to: &key)
        key.append(chunk)
        return key
    }

    /// The key of `value` in a column tree for row `rowid`.
    func columnKey(_ value: SQLValue, rowid: UInt64) -> [UInt8] {
        var key = SecondaryIndexRow.orderedKey(value, limit: keyValueLimit)
        OrderedKeyEncoding.appendRowid(rowid, to: &key)
        return key
    }

    // MARK: Column entry values

    /// Bytes of an object location at the start of a column entry's value: segment, offset
    /// and length, 4 bytes little-endian each.
    static let locationSize = 12

    /// A column entry's value for a row whose object lies at `object` and whose row key is
    /// `rowKey`, or empty when the entry's key (`keyCount` bytes) and this value together
    /// would exceed `limit`.
    static func entryValue(object: ValueLocation, rowKey: [UInt8], keyCount: Int, limit: Int) -> [UInt8] {
        guard keyCount + locationSize + rowKey.count <= limit else { return [] }
        var value: [UInt8] = []
        value.reserveCapacity(locationSize + rowKey.count)
        // Three `UInt32`s in a tuple lie next to each other: 12 bytes.
        withUnsafeBytes(of: (object.segment.littleEndian, object.offset.littleEndian, object.length.littleEndian)) {
            value.append(contentsOf: $0)
        }
        value.append(contentsOf: rowKey)
        return value
    }

    /// The parts of a column entry's value: nil for an empty one (the row id is looked up).
    /// The object location is where the row's object was when the entry was written: a
    /// reader uses it only after checking that the record there is that row's object
    /// (`SegmentTable.readObject`), because compaction moves records without rewriting the
    /// index; every write of the row's object rewrites its entries.
    /// - Throws: `EngineError.damagedExtensionEntry` for a value too short to hold a location
    ///   and a row key.
    @inline(__always)
    static func entryParts(_ value: UnsafeRawBufferPointer) throws(EngineError) -> (object: ValueLocation, rowKey: UnsafeRawBufferPointer)? {
        if value.isEmpty { return nil }
        // A row key is at least the two bytes after its collection.
        guard value.count >= locationSize + 2 else { throw .damagedExtensionEntry }
        let object = ValueLocation(segment: UInt32(littleEndian: value.loadUnaligned(fromByteOffset: 0, as: UInt32.self)),
                                   offset: UInt32(littleEndian: value.loadUnaligned(fromByteOffset: 4, as: UInt32.self)),
                                   length: UInt32(littleEndian: value.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
        return (object, UnsafeRawBufferPointer(rebasing: value[locationSize...]))
    }

    // MARK: Reads

    /// The column values of row `rowid`, or nil when the row is not indexed; `extra` more
    /// elements' room is reserved, for a caller that appends to them.
    /// - Throws: `EngineError`; `damagedExtensionEntry` when the stored values do not decode.
    func values(ofRow rowid: UInt64, reservingExtra extra: Int = 0) throws(EngineError) -> [SQLValue]? {
        // Every chunk but the last is full: read chunks while they are (one lookup for most rows).
        guard var bytes = try rows.value(forKey: Self.rowKey(rowid, chunk: 0)) else { return nil }
        var chunk: UInt8 = 1, last = bytes.count
        while last == chunkSize, let next = try rows.value(forKey: Self.rowKey(rowid, chunk: chunk)) {
            bytes += next
            last = next.count
            chunk += 1
        }
        guard let values = SecondaryIndexRow.decode(bytes, columnCount: columns.count, reservingExtra: extra) else {
            throw .damagedExtensionEntry
        }
        return values
    }

    /// Whether row `rowid` is indexed (one lookup; its values are not decoded).
    func contains(_ rowid: UInt64) throws(EngineError) -> Bool {
        try rows.contains(Self.rowKey(rowid, chunk: 0))
    }

    /// Calls `body` with every indexed row id in ascending order until it returns false.
    func forEachRowid(_ body: (UInt64) -> Bool) throws(EngineError) {
        try rows.forEach { key, _ in
            guard key[OrderedKeyEncoding.rowidSize] == 0 else { return true }
            return body(OrderedKeyEncoding.rowid(ofKey: UnsafeRawBufferPointer(rebasing: key[..<OrderedKeyEncoding.rowidSize])))
        }
    }

    // MARK: Changes

    /// Indexes row `rowid`, whose key in the key directory's rows tree is `rowKey` and whose
    /// object record is at `object`, with `values` (one per column), replacing what it had.
    /// - Throws: `EngineError`; then discard the state (the transaction fails).
    mutating func setRow(_ rowid: UInt64, rowKey: [UInt8], object: ValueLocation, values: [SQLValue]) throws(EngineError) {
        precondition(values.count == columns.count, "SecondaryIndexState: \(values.count) values for \(columns.count) columns")
        try removeRow(rowid)
        let encoded = SecondaryIndexRow.encode(values)
        var chunk: UInt8 = 0, offset = 0
        repeat {
            let end = min(encoded.count, offset + chunkSize)
            try rows.upsert(Self.rowKey(rowid, chunk: chunk), Array(encoded[offset..<end]))
            offset = end
            chunk += 1
        } while offset < encoded.count
        try writeColumnEntries(rowid, rowKey: rowKey, object: object, values: values)
    }

    /// Records that row `rowid`'s object now lies at `object`, its indexed values unchanged
    /// (a write the handler's options do not re-index): its column entries are rewritten.
    /// Returns whether the row is indexed.
    /// - Throws: `EngineError`; then discard the state.
    @discardableResult
    mutating func moveObject(ofRow rowid: UInt64, rowKey: [UInt8], to object: ValueLocation) throws(EngineError) -> Bool {
        guard let values = try values(ofRow: rowid) else { return false }
        try writeColumnEntries(rowid, rowKey: rowKey, object: object, values: values)
        return true
    }

    /// Writes row `rowid`'s entry in each column tree (`values`, one per column), each
    /// carrying `object` and `rowKey` when they fit.
    private mutating func writeColumnEntries(_ rowid: UInt64, rowKey: [UInt8], object: ValueLocation,
                                             values: [SQLValue]) throws(EngineError) {
        let limit = rows.maximumEntrySize
        for (i, value) in values.enumerated() {
            let key = columnKey(value, rowid: rowid)
            try columns[i].upsert(key, Self.entryValue(object: object, rowKey: rowKey, keyCount: key.count, limit: limit))
        }
    }

    /// Takes row `rowid` out of the index. Returns whether it was in it.
    /// - Throws: `EngineError`; then discard the state.
    @discardableResult
    mutating func removeRow(_ rowid: UInt64) throws(EngineError) -> Bool {
        guard let old = try values(ofRow: rowid) else { return false }
        for (i, value) in old.enumerated() {
            try columns[i].remove(columnKey(value, rowid: rowid))
        }
        var chunk: UInt8 = 0
        while try rows.remove(Self.rowKey(rowid, chunk: chunk)) != nil { chunk += 1 }
        return true
    }

    /// Empties the index (a clear of every collection). O(1).
    mutating func removeAll() {
        for i in columns.indices { columns[i].removeAll() }
        rows.removeAll()
    }
}

/// A secondary index on index pages (`ExtensionTreesState`): the index checkpoint writes the
/// trees' unwritten nodes with the key directory's pages and records the roots; a reopen opens
/// the trees from them without reading a page.
///
/// Root bytes: the tag and the signature (varint length + UTF-8 each), the column count
/// (varint), then the `ExtensionTreeRoot` of the row values tree and of each column tree.
extension SecondaryIndexState: ExtensionTreesState {
    var extensionTrees: [ExtensionTree] { [rows] + columns }

    func rootBytes(_ roots: [ExtensionTreeRoot]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendString(versionTag)
        bytes.appendString(signature)
        bytes.appendVarint(UInt64(columns.count))
        for root in roots { root.append(to: &bytes) }
        return bytes
    }

    /// This state with `transform(i, tree)` applied to each tree (`extensionTrees` order).
    func mapExtensionTrees(_ transform: (Int, ExtensionTree) -> ExtensionTree) -> SecondaryIndexState {
        var state = self
        state.rows = transform(0, rows)
        for i in columns.indices { state.columns[i] = transform(i + 1, columns[i]) }
        return state
    }

    /// Opens the state a claim hands back (reading no page); nil when the bytes are not a
    /// secondary index's roots.
    init?(claimed: ClaimedExtensionRoots) {
        var decoded: SecondaryIndexState?
        claimed.rootBytes.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            do throws(ByteReader.Overrun) {
                let tag = try reader.readString()
                let signature = try reader.readString()
                let columnCount = try reader.readLength(max: 4096)
                var cursor = reader.position
                var roots: [ExtensionTreeRoot] = []
                for _ in 0...columnCount {
                    guard let root = ExtensionTreeRoot.read(raw, &cursor) else { return }
                    roots.append(root)
                }
                guard cursor == raw.count else { return }
                var state = SecondaryIndexState(versionTag: tag, signature: signature, columnCount: columnCount,
                                                empty: ExtensionTree(emptyIn: claimed))
                state.rows = ExtensionTree(root: roots[0], in: claimed)
                for i in 0..<columnCount { state.columns[i] = ExtensionTree(root: roots[i + 1], in: claimed) }
                guard state.columns.allSatisfy({ $0.count == state.columns.first?.count }) else { return }
                decoded = state
            } catch {
                return
            }
        }
        guard let decoded else { return nil }
        self = decoded
    }
}
