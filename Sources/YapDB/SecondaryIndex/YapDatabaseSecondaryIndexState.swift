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
///   column's affinity), then its row id; empty values. Every indexed row has one entry in
///   every column tree (NULL included), so a tree's count is the number of indexed rows.
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

    /// The column values of row `rowid`, or nil when the row is not indexed.
    /// - Throws: `PageError`; `.corrupt` when the stored values do not decode.
    func values(ofRow rowid: UInt64) throws(PageError) -> [SQLValue]? {
        var bytes: [UInt8] = []
        var found = false
        try rows.forEach(from: KeyBound(Self.rowKey(rowid, chunk: 0)), to: KeyBound(Self.rowKey(rowid, chunk: .max))) { _, value in
            bytes.append(contentsOf: value)
            found = true
            return true
        }
        guard found else { return nil }
        guard let values = SecondaryIndexRow.decode(bytes, columnCount: columns.count) else {
            throw .corrupt(page: .none, reason: .badEntry)
        }
        return values
    }

    /// Calls `body` with every indexed row id in ascending order until it returns false.
    func forEachRowid(_ body: (UInt64) -> Bool) throws(PageError) {
        try rows.forEach { key, _ in
            guard key[OrderedKeyEncoding.rowidSize] == 0 else { return true }
            return body(OrderedKeyEncoding.rowid(ofKey: UnsafeRawBufferPointer(rebasing: key[..<OrderedKeyEncoding.rowidSize])))
        }
    }

    // MARK: Changes

    /// Indexes row `rowid` with `values` (one per column), replacing what it had.
    /// - Throws: `PageError`; then discard the state (the transaction fails).
    mutating func setRow(_ rowid: UInt64, values: [SQLValue]) throws(PageError) {
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
        for (i, value) in values.enumerated() {
            try columns[i].upsert(columnKey(value, rowid: rowid), [])
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

/// A secondary index's checkpoint image (docs/format.md §4, extension records): the tag, the
/// signature, then each indexed row's id and encoded values in row-id order. The column trees
/// are rebuilt from the rows when the image is loaded.
extension SecondaryIndexState: PersistentExtensionState {
    func persistentImage() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendString(versionTag)
        bytes.appendString(signature)
        bytes.appendVarint(UInt64(columns.count))
        var current: UInt64? = nil
        var pending: [UInt8] = []
        func flush() {
            guard let rowid = current else { return }
            bytes.appendVarint(rowid)
            bytes.appendVarint(UInt64(pending.count))
            bytes.append(contentsOf: pending)
            pending.removeAll(keepingCapacity: true)
        }
        // In-memory trees cannot fail to read; a damaged page ends the image early, and the
        // index then rebuilds at the next registration (its row count will not match).
        try? rows.forEach { key, value in
            let rowid = OrderedKeyEncoding.rowid(ofKey: UnsafeRawBufferPointer(rebasing: key[..<OrderedKeyEncoding.rowidSize]))
            if rowid != current { flush(); current = rowid }
            pending.append(contentsOf: value)
            return true
        }
        flush()
        return bytes
    }

    /// Decodes an image; nil when the bytes are not a valid one (the index then rebuilds).
    init?(image: [UInt8]) {
        var decoded: SecondaryIndexState?
        image.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            do throws(ByteReader.Overrun) {
                let tag = try reader.readString()
                let signature = try reader.readString()
                let columnCount = try reader.readLength(max: 4096)
                var state = SecondaryIndexState(versionTag: tag, signature: signature, columnCount: columnCount)
                var previous: UInt64? = nil
                while !reader.isAtEnd {
                    let rowid = try reader.readVarint()
                    if let previous, rowid <= previous { return }
                    previous = rowid
                    let length = try reader.readLength(max: reader.remaining)
                    let row = Array(try reader.readBytes(length))
                    guard let values = SecondaryIndexRow.decode(row, columnCount: columnCount),
                          (try? state.setRow(rowid, values: values)) != nil else { return }
                }
                decoded = state
            } catch {
                return
            }
        }
        guard let decoded else { return nil }
        self = decoded
    }
}
