import YapDBIndex
import YapDBStorage

/// A postings block and its positions entry being filled by the merge of pending postings, row
/// by row in ascending row id order, then encoded once (`encoded()`): the row-id deltas, the
/// counts and the positions grow in three byte arrays, and the header (rows, largest count,
/// length bound, delta bytes) is written at the end — instead of re-encoding the block for
/// every row appended. The builder's arrays are reused from block to block (`reset()`).
/// The bytes are those of `FullTextPostingBlock.encoded()` (docs/format.md §11).
struct FullTextBlockBuilder {
    private(set) var count = 0
    private var maximumCount = 0
    private var minimumLength = Int.max
    private var deltas: [UInt8] = []
    private var counts: [UInt8] = []
    /// The positions entry's bytes (`FullTextBlockPositions`).
    private(set) var positions: [UInt8] = []
    /// The last row id (the block's key).
    private(set) var last: UInt64 = 0
    /// Rows added since `reset`/`start` (0: a block started from the trees is unchanged).
    private(set) var added = 0

    var isEmpty: Bool { count == 0 }

    /// Empties the builder, keeping its arrays' memory.
    mutating func reset() {
        count = 0
        maximumCount = 0
        minimumLength = .max
        deltas.removeAll(keepingCapacity: true)
        counts.removeAll(keepingCapacity: true)
        positions.removeAll(keepingCapacity: true)
        last = 0
        added = 0
    }

    /// Starts from a stored block (`bytes`, whose last row id is `last`) and its positions entry.
    /// - Throws: `.badEntry` when the block's header does not decode or its delta section runs
    ///   past its bytes.
    mutating func start(from bytes: [UInt8], last: UInt64, positions stored: [UInt8]) throws(PageError) {
        reset()
        try bytes.withBytes { raw throws(PageError) in
            var reader = ByteReader(raw)
            do {
                let (count, maxCount, minLength, deltaLength) = try reader.readPostingBlockHeader()
                let deltaStart = reader.position
                try reader.seek(to: deltaStart + deltaLength)
                self.count = count
                maximumCount = maxCount
                minimumLength = minLength
                deltas.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[deltaStart..<(deltaStart + deltaLength)]))
                counts.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[(deltaStart + deltaLength)...]))
            } catch {
                throw FullTextPostingBlock.damaged
            }
        }
        positions.append(contentsOf: stored)
        self.last = last
    }

    /// The bytes the block takes now.
    var encodedSize: Int { Self.headerSize(count, maximumCount, minimumLength, deltas.count) + deltas.count + counts.count }

    private static func headerSize(_ count: Int, _ maxCount: Int, _ minLength: Int, _ deltaBytes: Int) -> Int {
        FullTextBlockPositions.varintSize(UInt64(count)) + FullTextBlockPositions.varintSize(UInt64(maxCount))
            + FullTextBlockPositions.varintSize(UInt64(minLength)) + FullTextBlockPositions.varintSize(UInt64(deltaBytes))
    }

    /// Whether a row (above `last`) with `countsBytes` of counts, `total` occurrences, `length`
    /// tokens and `positionsBytes` of positions fits: at most `maximumEntries` rows, the block
    /// within `limit` bytes and the positions entry within `chunkSize`. Always true when empty.
    func accepts(rowid: UInt64, countsBytes: Int, total: Int, length: Int, positionsBytes: Int,
                 limit: Int, chunkSize: Int) -> Bool {
        guard count > 0 else { return true }
        guard count < FullTextPostingBlock.maximumEntries else { return false }
        let rowPositions = FullTextBlockPositions.varintSize(UInt64(positionsBytes)) + positionsBytes
        guard positions.count + rowPositions <= chunkSize else { return false }
        let deltaBytes = deltas.count + FullTextBlockPositions.varintSize(rowid - last)
        let size = Self.headerSize(count + 1, max(maximumCount, total), min(minimumLength, length), deltaBytes)
            + deltaBytes + counts.count + countsBytes
        return size <= limit
    }

    /// Adds a row (above `last`, unless the builder is empty).
    mutating func append(rowid: UInt64, counts rowCounts: UnsafeRawBufferPointer, total: Int, length: Int,
                         positions rowPositions: UnsafeRawBufferPointer) {
        precondition(count == 0 || rowid > last, "FullTextBlockBuilder: rows out of order")
        deltas.appendVarint(count == 0 ? rowid : rowid - last)
        counts.append(contentsOf: rowCounts)
        positions.appendVarint(UInt64(rowPositions.count))
        positions.append(contentsOf: rowPositions)
        count += 1
        added += 1
        maximumCount = max(maximumCount, total)
        minimumLength = min(minimumLength, length)
        last = rowid
    }

    /// The block's bytes.
    func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(encodedSize)
        bytes.appendVarint(UInt64(count))
        bytes.appendVarint(UInt64(maximumCount))
        bytes.appendVarint(UInt64(minimumLength))
        bytes.appendVarint(UInt64(deltas.count))
        bytes.append(contentsOf: deltas)
        bytes.append(contentsOf: counts)
        return bytes
    }
}
