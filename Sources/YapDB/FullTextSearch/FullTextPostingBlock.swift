import YapDBEngine

/// One row's entry in a term's postings: the row id and how often the term occurs in each
/// column that holds it (columns without the term are left out).
struct FullTextPosting: Equatable, Sendable {
    var rowid: UInt64
    /// (column, occurrences), columns ascending, occurrences ≥ 1.
    var hits: [(column: Int, count: Int)]

    /// Occurrences over every column.
    var totalCount: Int { hits.reduce(0) { $0 + $1.count } }

    static func == (a: FullTextPosting, b: FullTextPosting) -> Bool {
        a.rowid == b.rowid && a.hits.elementsEqual(b.hits) { $0.column == $1.column && $0.count == $1.count }
    }
}

/// A block of a term's postings: up to `maximumEntries` rows in ascending row id order, kept as
/// one entry of the postings tree under the key (term id, last row id) — so a seek to a row
/// id is a tree search that skips every block before it, and a block is found without reading
/// the blocks around it. docs/format.md §11 "Full-text search trees" gives the bytes.
///
/// The row ids (delta-coded) come first, behind their byte length, and the occurrence counts
/// after them: an intersection reads the row ids only (`rowids(of:)`), and ranking reads the
/// counts too. The header carries the block's skip data for top-k ranking: the largest number
/// of occurrences in a row and a lower bound of the rows' lengths.
struct FullTextPostingBlock: Sendable {
    /// The rows, ascending.
    var postings: [FullTextPosting]
    /// A lower bound of the total length (tokens over every column) of the block's rows:
    /// exact when the block is written by inserts only, conservative after removals.
    var minimumLength: Int
    /// Each row's positions (`FullTextPositions` bytes), parallel to `postings`, when the block
    /// is being edited (they live in the positions tree, `FullTextBlockPositions`); empty when
    /// only the postings were decoded.
    var positions: [[UInt8]] = []

    /// The most rows a block holds.
    static let maximumEntries = 128

    /// The largest number of occurrences (all columns) of the term in one row of the block.
    var maximumCount: Int { postings.reduce(0) { max($0, $1.totalCount) } }

    var lastRowid: UInt64 { postings.last?.rowid ?? 0 }

    // MARK: Encoding

    /// The block's bytes.
    func encoded() -> [UInt8] {
        var deltas: [UInt8] = []
        deltas.reserveCapacity(postings.count * 2)
        var previous: UInt64 = 0
        for (i, posting) in postings.enumerated() {
            deltas.appendVarint(i == 0 ? posting.rowid : posting.rowid - previous)
            previous = posting.rowid
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(deltas.count + postings.count * 3 + 12)
        bytes.appendVarint(UInt64(postings.count))
        bytes.appendVarint(UInt64(maximumCount))
        bytes.appendVarint(UInt64(minimumLength))
        bytes.appendVarint(UInt64(deltas.count))
        bytes.append(contentsOf: deltas)
        for posting in postings {
            bytes.appendVarint(UInt64(posting.hits.count))
            var column = 0
            for hit in posting.hits {
                bytes.appendVarint(UInt64(hit.column - column))
                bytes.appendVarint(UInt64(hit.count))
                column = hit.column
            }
        }
        return bytes
    }

    /// The header alone: (rows, largest count, length bound). Throws `.badEntry` for bytes that
    /// are not a block.
    static func header(of bytes: UnsafeRawBufferPointer) throws(EngineError) -> (count: Int, maximumCount: Int, minimumLength: Int) {
        var reader = ByteReader(bytes)
        do {
            let count = try reader.readLength(max: maximumEntries)
            let maxCount = try reader.readLength(max: Int(Int32.max))
            let minLength = try reader.readLength(max: Int(Int32.max))
            guard count > 0 else { throw bad }
            return (count, maxCount, minLength)
        } catch {
            throw damaged
        }
    }

    /// The row ids of a block, ascending, appended to `out`; nothing else is decoded.
    /// - Throws: `EngineError.damagedExtensionEntry` for hostile bytes (too many rows,
    ///   a delta of zero, an overflow, a delta section that does not end where it says).
    static func rowids(of bytes: UnsafeRawBufferPointer, into out: inout [UInt64]) throws(EngineError) {
        var reader = ByteReader(bytes)
        do {
            let count = try reader.readLength(max: maximumEntries)
            _ = try reader.readVarint()
            _ = try reader.readVarint()
            let length = try reader.readLength(max: reader.remaining)
            guard count > 0 else { throw bad }
            let end = reader.position + length
            var rowid: UInt64 = 0
            for i in 0..<count {
                rowid = try reader.readRowid(after: rowid, first: i == 0)
                out.append(rowid)
            }
            guard reader.position == end else { throw bad }
        } catch {
            throw damaged
        }
    }

    /// `bytes` (a block whose last row id is `last`) with `posting` appended, re-encoded
    /// without decoding the rows: the header is rewritten and the new row's delta and counts
    /// are put at the ends of their sections. Nil when the block is full.
    /// - Throws: `.badEntry` when the header does not decode.
    static func appending(_ posting: FullTextPosting, after last: UInt64, length: Int, to bytes: [UInt8]) throws(EngineError) -> [UInt8]? {
        try bytes.withBytes { raw throws(EngineError) -> [UInt8]? in
            var reader = ByteReader(raw)
            do {
                let (count, maxCount, minLength, deltaLength) = try reader.readPostingBlockHeader()
                guard count < maximumEntries else { return nil }
                let deltaStart = reader.position
                var out: [UInt8] = []
                out.reserveCapacity(raw.count + 16)
                out.appendVarint(UInt64(count + 1))
                out.appendVarint(UInt64(max(maxCount, posting.totalCount)))
                out.appendVarint(UInt64(min(minLength, length)))
                var delta: [UInt8] = []
                delta.appendVarint(posting.rowid - last)
                out.appendVarint(UInt64(deltaLength + delta.count))
                out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[deltaStart..<(deltaStart + deltaLength)]))
                out.append(contentsOf: delta)
                out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[(deltaStart + deltaLength)...]))
                out.appendVarint(UInt64(posting.hits.count))
                var column = 0
                for hit in posting.hits {
                    out.appendVarint(UInt64(hit.column - column))
                    out.appendVarint(UInt64(hit.count))
                    column = hit.column
                }
                return out
            } catch {
                throw damaged
            }
        }
    }

    /// The whole block.
    /// - Parameter columnCount: the index's columns (a hit in a column past them is damage).
    /// - Throws: `EngineError.damagedExtensionEntry` for hostile bytes.
    init(decoding bytes: UnsafeRawBufferPointer, columnCount: Int) throws(EngineError) {
        var ids: [UInt64] = []
        try Self.rowids(of: bytes, into: &ids)
        var reader = ByteReader(bytes)
        do {
            _ = try reader.readVarint()
            _ = try reader.readVarint()
            minimumLength = try reader.readLength(max: Int(Int32.max))
            let length = try reader.readLength(max: reader.remaining)
            try reader.seek(to: reader.position + length)
            var postings: [FullTextPosting] = []
            postings.reserveCapacity(ids.count)
            for rowid in ids {
                let hitCount = try reader.readLength(max: columnCount)
                guard hitCount > 0 else { throw Self.bad }
                var hits: [(column: Int, count: Int)] = []
                hits.reserveCapacity(hitCount)
                var column = 0
                for i in 0..<hitCount {
                    let step = try reader.readLength(max: columnCount)
                    guard i == 0 || step > 0 else { throw Self.bad }
                    column += step
                    guard column < columnCount else { throw Self.bad }
                    let count = try reader.readLength(max: Int(Int32.max))
                    guard count > 0 else { throw Self.bad }
                    hits.append((column, count))
                }
                postings.append(FullTextPosting(rowid: rowid, hits: hits))
            }
            guard reader.isAtEnd else { throw Self.bad }
            self.postings = postings
        } catch {
            throw Self.damaged
        }
    }

    init(postings: [FullTextPosting], minimumLength: Int, positions: [[UInt8]] = []) {
        self.postings = postings
        self.minimumLength = minimumLength
        self.positions = positions
    }

    /// The rows `range` of this block (postings and positions) as a block of its own.
    func slice(_ range: Range<Int>) -> FullTextPostingBlock {
        FullTextPostingBlock(postings: Array(postings[range]), minimumLength: minimumLength,
                             positions: positions.isEmpty ? [] : Array(positions[range]))
    }

    /// The bytes of the rows' positions entry (`FullTextBlockPositions`).
    var positionsSize: Int { positions.reduce(0) { $0 + FullTextBlockPositions.size(of: $1) } }

    static var damaged: EngineError { .damagedExtensionEntry }
    /// What the decoders throw inside, turned into `damaged` at their edge.
    static let bad = FullTextEntryDamage()
}

/// A row's occurrences of one term, by column, as the positions tree stores them: for each
/// column holding the term, its token positions (ascending). docs/format.md §11.
enum FullTextPositions {
    static func encode(_ columns: [(column: Int, positions: [Int])]) -> [UInt8] {
        var bytes: [UInt8] = []
        append(columns, to: &bytes)
        return bytes
    }

    /// Appends the bytes `encode` makes to `bytes`.
    static func append(_ columns: [(column: Int, positions: [Int])], to bytes: inout [UInt8]) {
        var previousColumn = 0
        for (column, positions) in columns {
            bytes.appendVarint(UInt64(column - previousColumn))
            previousColumn = column
            bytes.appendVarint(UInt64(positions.count))
            var previous = 0
            for position in positions {
                bytes.appendVarint(UInt64(position - previous))
                previous = position
            }
        }
    }

    /// - Throws: `.badEntry` for hostile bytes (a column past the index's, positions out of order).
    static func decode(_ bytes: UnsafeRawBufferPointer, columnCount: Int, maximumPosition: Int) throws(EngineError) -> [(column: Int, positions: [Int])] {
        var reader = ByteReader(bytes)
        var out: [(column: Int, positions: [Int])] = []
        do {
            var column = 0
            while !reader.isAtEnd {
                let step = try reader.readLength(max: columnCount)
                guard out.isEmpty || step > 0 else { throw FullTextPostingBlock.bad }
                column += step
                guard column < columnCount else { throw FullTextPostingBlock.bad }
                let count = try reader.readLength(max: reader.remaining)
                var positions: [Int] = []
                positions.reserveCapacity(count)
                var position = 0
                for i in 0..<count {
                    let delta = try reader.readLength(max: maximumPosition)
                    guard i == 0 || delta > 0 else { throw FullTextPostingBlock.bad }
                    position += delta
                    guard position <= maximumPosition else { throw FullTextPostingBlock.bad }
                    positions.append(position)
                }
                out.append((column, positions))
            }
        } catch {
            throw FullTextPostingBlock.damaged
        }
        return out
    }
}

/// What the decoders throw inside when bytes are read but do not make sense; turned into
/// `FullTextPostingBlock.damaged` at their edge.
struct FullTextEntryDamage: Error {}

extension ByteReader {
    /// A posting block's header (docs/format.md §11): its row count (1 ... the block limit), the
    /// largest occurrence count, the lower bound of the rows' lengths and the byte length of the
    /// row-id section that follows (within the bytes left).
    /// - Throws: `FullTextPostingBlock.bad` for a count of 0, or what the reads throw.
    mutating func readPostingBlockHeader() throws -> (count: Int, maxCount: Int, minLength: Int, deltaLength: Int) {
        let count = try readLength(max: FullTextPostingBlock.maximumEntries)
        let maxCount = try readLength(max: Int(Int32.max))
        let minLength = try readLength(max: Int(Int32.max))
        let deltaLength = try readLength(max: remaining)
        guard count > 0 else { throw FullTextPostingBlock.bad }
        return (count, maxCount, minLength, deltaLength)
    }

    /// The next row id of a delta-coded ascending list: the first is stored as it is, each
    /// later one as its difference (at least 1) from `previous`.
    /// - Throws: `FullTextPostingBlock.bad` for a zero delta or an overflow.
    mutating func readRowid(after previous: UInt64, first: Bool) throws -> UInt64 {
        let delta = try readVarint()
        if first { return delta }
        guard delta > 0 else { throw FullTextPostingBlock.bad }
        let (sum, overflow) = previous.addingReportingOverflow(delta)
        guard !overflow else { throw FullTextPostingBlock.bad }
        return sum
    }
}
