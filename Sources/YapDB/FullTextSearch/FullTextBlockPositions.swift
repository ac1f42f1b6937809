import YapDBEngine

/// The positions of a postings block's rows, kept in the positions tree under the block's own
/// key (and a chunk number): for each row of the block, in the block's order, a varint byte
/// length and the row's positions (`FullTextPositions`). One entry per block instead of one
/// per (term, row), so the key is paid once per block, and a reader that follows a postings
/// cursor reads a term's positions a block at a time. docs/format.md §11.
///
/// A block's rows are cut so that its positions fit one chunk (`FullTextState.chunkSize`),
/// except a block of one row, whose positions may continue in further chunks.
enum FullTextBlockPositions {
    /// Appends one row's positions (length first) to a block's positions bytes.
    static func append(_ row: [UInt8], to bytes: inout [UInt8]) {
        bytes.appendVarint(UInt64(row.count))
        bytes.append(contentsOf: row)
    }

    /// The bytes `append` adds for `row`.
    static func size(of row: [UInt8]) -> Int { varintSize(UInt64(row.count)) + row.count }

    static func varintSize(_ value: UInt64) -> Int {
        var value = value, size = 1
        while value >= 0x80 { value >>= 7; size += 1 }
        return size
    }

    /// A block's positions bytes from its rows' positions.
    static func encode(_ rows: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(rows.reduce(0) { $0 + $1.count + 1 })
        for row in rows { append(row, to: &bytes) }
        return bytes
    }

    /// Where each of the `count` rows' positions lies in `bytes`, into `out` (cleared first).
    /// - Throws: `.badEntry` when the bytes do not hold exactly `count` rows (a length past the
    ///   end, bytes left over); nothing is allocated beyond `count` ranges.
    static func ranges(of bytes: UnsafeRawBufferPointer, count: Int, into out: inout [Range<Int>]) throws(EngineError) {
        out.removeAll(keepingCapacity: true)
        var reader = ByteReader(bytes)
        do {
            for _ in 0..<count {
                let length = try reader.readLength(max: reader.remaining)
                let start = reader.position
                try reader.seek(to: start + length)
                out.append(start..<(start + length))
            }
            guard reader.isAtEnd else { throw FullTextPostingBlock.bad }
        } catch {
            throw FullTextPostingBlock.damaged
        }
    }

    /// The rows' positions, one array each (for a block being edited).
    static func split(_ bytes: [UInt8], count: Int) throws(EngineError) -> [[UInt8]] {
        try bytes.withBytes { raw throws(EngineError) in
            var ranges: [Range<Int>] = []
            ranges.reserveCapacity(count)
            try Self.ranges(of: raw, count: count, into: &ranges)
            return ranges.map { Array(raw[$0]) }
        }
    }
}

extension FullTextState {
    /// The positions key of the block filed under `blockKey`: the same bytes and a chunk number.
    static func positionsKey(block blockKey: [UInt8], chunk: UInt8) -> [UInt8] {
        var key = blockKey
        key.append(chunk)
        return key
    }

    /// The positions bytes of the block filed under `blockKey`, or nil when it has none.
    func blockPositions(_ blockKey: [UInt8]) throws(EngineError) -> [UInt8]? {
        try Self.chunked(positions, chunkSize: chunkSize) { Self.positionsKey(block: blockKey, chunk: $0) }
    }

    /// The rows' positions of the block filed under `blockKey` that holds `count` rows.
    /// - Throws: `.badEntry` when the entry is missing or does not hold `count` rows.
    func blockRowPositions(_ blockKey: [UInt8], count: Int) throws(EngineError) -> [[UInt8]] {
        guard let bytes = try blockPositions(blockKey) else { throw FullTextPostingBlock.damaged }
        return try FullTextBlockPositions.split(bytes, count: count)
    }

    mutating func storeBlockPositions(_ blockKey: [UInt8], _ bytes: [UInt8]) throws(EngineError) {
        try Self.storeChunked(&positions, bytes, chunkSize: chunkSize) { Self.positionsKey(block: blockKey, chunk: $0) }
    }

    mutating func removeBlockPositions(_ blockKey: [UInt8]) throws(EngineError) {
        try Self.removeChunked(&positions) { Self.positionsKey(block: blockKey, chunk: $0) }
    }
}

/// One term's positions read row by row in ascending row order, a block at a time: the block
/// holding a row is found in the postings tree (its key is the block's last row id), its row
/// ids decoded and its positions entry read once, and each row of it is then a binary search.
/// A row asked before the block in hand makes it search again. Used by phrase checks and the
/// token sequences of `FullTextSearcher.document(_:)`.
final class FullTextPositionsReader {
    private let state: FullTextState
    private let term: String
    /// The term's id (nil: not looked up yet; 0: the term is not indexed).
    private var id: UInt32?
    private var prefix: [UInt8] = []
    private var rowids: [UInt64] = []
    private var bytes: [UInt8] = []
    private var ranges: [Range<Int>] = []
    /// The rows the block in hand answers for: from the row id it was searched for to its last.
    private var covered: ClosedRange<UInt64>?
    /// No block of the term ends at or after this row id (nil: not known).
    private var noneFrom: UInt64?
    /// Blocks read (for tests).
    private(set) var blocksRead = 0

    init(_ state: FullTextState, term: String) {
        self.state = state
        self.term = term
    }

    /// Calls `body` with row `rowid`'s positions of the term (docs/format.md §11) and returns
    /// true, or returns false when the row does not hold the term.
    /// - Throws: `EngineError`; `.badEntry` when the block's entries do not agree.
    func withPositions(of rowid: UInt64, _ body: (UnsafeRawBufferPointer) -> Void) throws(EngineError) -> Bool {
        if !(covered?.contains(rowid) ?? false) {
            if let noneFrom, rowid >= noneFrom { return false }
            guard try load(atOrAfter: rowid) else { return false }
        }
        var low = 0, high = rowids.count
        while low < high {
            let mid = (low + high) / 2
            if rowids[mid] < rowid { low = mid + 1 } else { high = mid }
        }
        guard low < rowids.count, rowids[low] == rowid else { return false }
        let range = ranges[low]
        bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[range])) }
        return true
    }

    /// Reads the block whose last row id is the first at or above `rowid`; false when none.
    private func load(atOrAfter rowid: UInt64) throws(EngineError) -> Bool {
        if id == nil {
            id = try state.termID(term) ?? 0
            prefix = FullTextState.termPrefix(id ?? 0)
        }
        guard let id, id != 0 else {
            noneFrom = 0
            return false
        }
        var key: [UInt8]?
        rowids.removeAll(keepingCapacity: true)
        covered = nil
        var failure: EngineError?
        try state.postings.forEachInKeyRange(from: KeyBound(FullTextState.postingsKey(id, lastRowid: rowid)), to: nil) { found, value in
            guard FullTextState.key(found, hasPrefix: prefix, tail: 8) else { return false }
            key = Array(found)
            do throws(EngineError) { try FullTextPostingBlock.rowids(of: value, into: &rowids) } catch { failure = error }
            return false
        }
        if let failure { throw failure }
        guard let key else {
            noneFrom = min(noneFrom ?? .max, rowid)
            return false
        }
        blocksRead += 1
        // Each block has a positions entry with one row per posting.
        guard !rowids.isEmpty, let stored = try state.blockPositions(key) else { throw FullTextPostingBlock.damaged }
        bytes = stored
        try bytes.withBytes { raw throws(EngineError) in try FullTextBlockPositions.ranges(of: raw, count: rowids.count, into: &ranges) }
        covered = rowid...max(rowid, rowids[rowids.count - 1])
        return true
    }
}

/// A searcher's positions readers, one per term, made when first asked.
final class FullTextPositionsReaders {
    private var readers: [String: FullTextPositionsReader] = [:]
    private var expanded: [String]?

    /// The terms whose positions a query reads, made by `make` the first time.
    func terms(_ make: () throws(EngineError) -> [String]) throws(EngineError) -> [String] {
        if let expanded { return expanded }
        let made = try make()
        expanded = made
        return made
    }

    func reader(_ term: String, _ state: FullTextState) -> FullTextPositionsReader {
        if let reader = readers[term] { return reader }
        let reader = FullTextPositionsReader(state, term: term)
        readers[term] = reader
        return reader
    }
}
