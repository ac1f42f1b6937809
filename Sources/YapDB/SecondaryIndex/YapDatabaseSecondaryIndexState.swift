import Foundation
import YapDBIndex
import YapDBEngine
import YapDBStorage
import YapDBQuery

/// A secondary index's contents at one snapshot: one key-ordered tree per column and the
/// column values of each indexed row. An immutable value stored in the snapshot with the rows
/// (copying it is O(1); a change copies only the touched paths of the trees), so every
/// snapshot reads its own version.
///
/// - `columns[i]`: keys `OrderedKeyEncoding` of the row's value in column `i` (after the
///   column's affinity), then its row id; values the row's key in the key directory's rows
///   tree (`RowKey`), so a query finds a match's collection and key without a walk of the
///   row-ids tree — or empty when key and row key together would not fit an entry (then the
///   row id is looked up). Every indexed row has one entry in every column tree (NULL
///   included), so a tree's count is the number of indexed rows.
/// - `rows`: keys the row id (8 bytes, big-endian) and a chunk number (1 byte); values the
///   row's encoded column values (`SecondaryIndexRow`), split into chunks that fit a tree
///   entry. Updates and removals read the old values here to find the old column entries.
///
/// Errors: the trees' `PageError` (a damaged or unreadable page) passes through.
struct SecondaryIndexState: Sendable {
    /// The tag the index was built with.
    var versionTag: String
    /// The columns' names and types: a different setup under the same tag rebuilds.
    var signature: String
    var columns: [PagedBTree]
    var rows: PagedBTree

    init(versionTag: String, signature: String, columnCount: Int, format: PageFormat = PageFormat(),
         source: any PageSource = EmptyPageSource()) {
        self.versionTag = versionTag
        self.signature = signature
        columns = Array(repeating: PagedBTree(format: format, source: source), count: columnCount)
        rows = PagedBTree(format: format, source: source)
    }

    /// The number of indexed rows.
    var rowCount: Int { columns.first?.count ?? 0 }

    /// The most bytes of a text or blob written into a column key (the rest is read from
    /// `rows` when the order of two values depends on it).
    var keyValueLimit: Int { Self.keyValueLimit(rows.format) }

    static func keyValueLimit(_ format: PageFormat) -> Int {
        min(256, (format.maximumEntrySize - OrderedKeyEncoding.rowidSize - 8) / 2)
    }

    /// Bytes of row values per chunk entry.
    var chunkSize: Int { rows.format.maximumEntrySize - Self.rowKeySize }
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

    // MARK: Reads

    /// The column values of row `rowid`, or nil when the row is not indexed; `extra` more
    /// elements' room is reserved, for a caller that appends to them.
    /// - Throws: `PageError`; `.corrupt` when the stored values do not decode.
    func values(ofRow rowid: UInt64, reservingExtra extra: Int = 0) throws(PageError) -> [SQLValue]? {
        // Every chunk but the last is full: read chunks while they are (one lookup for most rows).
        guard var bytes = try rows.value(forKey: Self.rowKey(rowid, chunk: 0)) else { return nil }
        var chunk: UInt8 = 1, last = bytes.count
        while last == chunkSize, let next = try rows.value(forKey: Self.rowKey(rowid, chunk: chunk)) {
            bytes += next
            last = next.count
            chunk += 1
        }
        guard let values = SecondaryIndexRow.decode(bytes, columnCount: columns.count, reservingExtra: extra) else {
            throw .corrupt(page: .none, reason: .badEntry)
        }
        return values
    }

    /// Whether row `rowid` is indexed (one lookup; its values are not decoded).
    func contains(_ rowid: UInt64) throws(PageError) -> Bool {
        try rows.contains(Self.rowKey(rowid, chunk: 0))
    }

    /// Calls `body` with every indexed row id in ascending order until it returns false.
    func forEachRowid(_ body: (UInt64) -> Bool) throws(PageError) {
        try rows.forEach { key, _ in
            guard key[OrderedKeyEncoding.rowidSize] == 0 else { return true }
            return body(OrderedKeyEncoding.rowid(ofKey: UnsafeRawBufferPointer(rebasing: key[..<OrderedKeyEncoding.rowidSize])))
        }
    }

    // MARK: Changes

    /// Indexes row `rowid`, whose key in the key directory's rows tree is `rowKey`, with
    /// `values` (one per column), replacing what it had.
    /// - Throws: `PageError`; then discard the state (the transaction fails).
    mutating func setRow(_ rowid: UInt64, rowKey: [UInt8], values: [SQLValue]) throws(PageError) {
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
        let limit = rows.format.maximumEntrySize
        for (i, value) in values.enumerated() {
            let key = columnKey(value, rowid: rowid)
            try columns[i].upsert(key, key.count + rowKey.count <= limit ? rowKey : [])
        }
    }

    /// Takes row `rowid` out of the index. Returns whether it was in it.
    /// - Throws: `PageError`; then discard the state.
    @discardableResult
    mutating func removeRow(_ rowid: UInt64) throws(PageError) -> Bool {
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

/// A secondary index on index pages (`PagedExtensionState`): the index checkpoint writes the
/// trees' unwritten nodes with the key directory's pages and records the roots; a reopen opens
/// the trees from them without reading a page.
///
/// Root bytes: the tag and the signature (varint length + UTF-8 each), the column count
/// (varint), then the `PagedTreeRoot` of the row values tree and of each column tree.
extension SecondaryIndexState: PagedExtensionState {
    var trees: [PagedBTree] { [rows] + columns }

    func rootBytes(_ roots: [PagedTreeRoot]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendString(versionTag)
        bytes.appendString(signature)
        bytes.appendVarint(UInt64(columns.count))
        for root in roots { root.append(to: &bytes) }
        return bytes
    }

    func writePages(_ pages: ExtensionPageWriter) throws(StorageError) -> ExtensionPagesWritten {
        var flushes: [PageFlush] = []
        for tree in trees { flushes.append(try pages.flush(tree)) }
        let roots = zip(trees, flushes).map { $0.root(after: $1) }
        return ExtensionPagesWritten(rootBytes: rootBytes(roots), flushes: flushes)
    }

    func copyPages(_ pages: ExtensionPageWriter) throws(StorageError) -> ExtensionPagesWritten {
        var copies: [PageCopy] = []
        for tree in trees { copies.append(try pages.copy(tree)) }
        let roots = zip(trees, copies).map { $0.root(after: $1.flush) }
        return ExtensionPagesWritten(rootBytes: rootBytes(roots), flushes: copies.map(\.flush), detail: copies)
    }

    func adopting(_ written: ExtensionPagesWritten) -> SecondaryIndexState {
        let copies = written.detail as? [PageCopy]
        return mapTrees { i, tree in copies.map { tree.remapping(to: $0[i]) } ?? tree.releasingFlushedNodes() }
    }

    func reading(from source: any PageSource) -> SecondaryIndexState {
        mapTrees { _, tree in tree.reading(from: source) }
    }

    /// This state with `transform(i, tree)` applied to each tree (`trees` order).
    func mapTrees(_ transform: (Int, PagedBTree) -> PagedBTree) -> SecondaryIndexState {
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
                var roots: [PagedTreeRoot] = []
                for _ in 0...columnCount {
                    guard let root = PagedTreeRoot.read(raw, &cursor) else { return }
                    roots.append(root)
                }
                guard cursor == raw.count else { return }
                var state = SecondaryIndexState(versionTag: tag, signature: signature, columnCount: columnCount,
                                                format: claimed.format, source: claimed.source)
                state.rows = PagedBTree(root: roots[0], format: claimed.format, source: claimed.source)
                for i in 0..<columnCount { state.columns[i] = PagedBTree(root: roots[i + 1], format: claimed.format, source: claimed.source) }
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
