import YapDBEngine

/// A postings block and its positions entry being filled by the merge of pending postings, row
/// by row in ascending row id order, then encoded once (`encoded()`): the row-id deltas, the
/// counts and the positions grow in three byte arrays, and the header (rows, largest count,
/// length bound, delta bytes) is written at the end — instead of re-encoding the block for
/// every row appended. The builder's arrays are reused from block to block (`reset()`).
/// A merge that extends stored blocks starts from the first (`start`, its sections copied whole)
/// and adds the rows of the others one by one (`FullTextStoredRows`).
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
    }

    /// Starts from a stored block (`bytes`, whose last row id is `last`) and its positions entry,
    /// copying its sections whole (a merge that extends the block adds rows after it).
    /// - Throws: `.badEntry` when the block's header does not decode or its delta section runs
    ///   past its bytes.
    mutating func start(from bytes: [UInt8], last: UInt64, positions stored: [UInt8]) throws(EngineError) {
        reset()
        try bytes.withBytes { raw throws(EngineError) in
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
        maximumCount = max(maximumCount, total)
        minimumLength = min(minimumLength, length)
        last = rowid
    }

    /// Whether the block is at least half full by rows, by bytes (of `limit`) or by positions
    /// (of `chunkSize`): such a block is left alone by later merges of the term's small blocks.
    func isSettled(limit: Int, chunkSize: Int) -> Bool {
        count * 8 >= FullTextPostingBlock.maximumEntries * 7 || encodedSize * 8 >= limit * 7 || positions.count * 8 >= chunkSize * 7
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

/// The rows of a stored postings block and its positions entry, located for a merge that writes
/// them again (`FullTextState.mergeTerm`): per row its id, the byte range of its counts in the
/// block, its occurrences over every column and the byte range of its positions in the entry.
/// The arrays are reused from block to block.
struct FullTextStoredRows {
    private(set) var rowids: [UInt64] = []
    private(set) var counts: [Range<Int>] = []
    private(set) var totals: [Int] = []
    private(set) var positions: [Range<Int>] = []
    /// The block's length bound (every row's total length is at least this).
    private(set) var minimumLength = 0

    /// Locates the rows of `block` (a postings block's bytes) and `rowPositions` (its positions
    /// entry, one row per posting).
    /// - Throws: `.badEntry` when either does not decode or they disagree on the rows.
    mutating func read(block: UnsafeRawBufferPointer, positions rowPositions: UnsafeRawBufferPointer, columnCount: Int) throws(EngineError) {
        rowids.removeAll(keepingCapacity: true)
        counts.removeAll(keepingCapacity: true)
        totals.removeAll(keepingCapacity: true)
        try FullTextPostingBlock.rowids(of: block, into: &rowids)
        try FullTextBlockPositions.ranges(of: rowPositions, count: rowids.count, into: &positions)
        var reader = ByteReader(block)
        do {
            let (_, _, minLength, deltaLength) = try reader.readPostingBlockHeader()
            minimumLength = minLength
            try reader.seek(to: reader.position + deltaLength)
            for _ in rowids.indices {
                let start = reader.position
                let columns = try reader.readLength(max: columnCount)
                guard columns > 0 else { throw FullTextPostingBlock.bad }
                var total = 0
                for _ in 0..<columns {
                    _ = try reader.readLength(max: columnCount)
                    total += try reader.readLength(max: Int(Int32.max))
                }
                counts.append(start..<reader.position)
                totals.append(total)
            }
            guard reader.isAtEnd else { throw FullTextPostingBlock.bad }
        } catch {
            throw FullTextPostingBlock.damaged
        }
    }
}
