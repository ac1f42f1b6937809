import YapDBEngine

// Taking one row out of a block, or putting one into it, by editing the block's bytes (as
// `appending` adds one at the end): the row's place is found by walking the delta-coded row ids
// (nothing is materialised), the deltas around it are re-encoded, its counts cut or put in, and
// the header rewritten. The row's positions are cut from, or put into, the block's positions
// entry the same way.

/// One row cut from a block's bytes (`FullTextPostingBlock.removing`).
struct FullTextRowRemoval {
    /// The block's bytes without the row; nil when it was the block's only row (the caller
    /// deletes the block).
    var bytes: [UInt8]?
    /// The row's place in the block (its place in the positions entry too).
    var index: Int
    /// The block's rows before the cut.
    var count: Int
    /// The block's last row id after the cut (its new key when the last row went).
    var last: UInt64
}

extension FullTextPostingBlock {
    /// `bytes` (a block) without row `rowid`, or nil when the block does not hold it.
    ///
    /// The header's row count and largest occurrence count stay exact (the counts of the other
    /// rows are walked for the latter); the length bound is kept as it was, which stays a lower
    /// bound of the remaining rows' lengths (docs/format.md §11: removals leave it lower).
    /// - Throws: `.badEntry` for bytes that are not a block of `columnCount` columns.
    static func removing(_ rowid: UInt64, from raw: UnsafeRawBufferPointer, columnCount: Int) throws(EngineError) -> FullTextRowRemoval? {
        var reader = ByteReader(raw)
        do {
            let (count, _, minLength, deltaLength) = try reader.readPostingBlockHeader()
            let deltaStart = reader.position, deltaEnd = deltaStart + deltaLength
            // The row's delta bytes, the next row's delta bytes and row id, the row id before.
            var index = -1
            var cut = 0..<0, next = 0..<0
            var before: UInt64 = 0, after: UInt64 = 0, last: UInt64 = 0
            var current: UInt64 = 0
            for i in 0..<count {
                let start = reader.position
                current = try reader.readRowid(after: current, first: i == 0)
                if current == rowid {
                    index = i
                    cut = start..<reader.position
                } else if index >= 0 && i == index + 1 {
                    next = start..<reader.position
                    after = current
                }
                if index < 0 || i < index { before = current }
                if i != index { last = current }
            }
            guard reader.position == deltaEnd else { throw bad }
            guard index >= 0 else { return nil }
            guard count > 1 else { return FullTextRowRemoval(bytes: nil, index: 0, count: 1, last: 0) }
            // The counts: the cut row's bytes, and the largest total of the others.
            var rowBytes = 0..<0, largest = 0
            for i in 0..<count {
                let start = reader.position
                let hitCount = try reader.readLength(max: columnCount)
                guard hitCount > 0 else { throw bad }
                var total = 0, column = 0
                for h in 0..<hitCount {
                    let step = try reader.readLength(max: columnCount)
                    guard h == 0 || step > 0 else { throw bad }
                    column += step
                    guard column < columnCount else { throw bad }
                    let occurrences = try reader.readLength(max: Int(Int32.max))
                    guard occurrences > 0 else { throw bad }
                    total += occurrences
                }
                if i == index { rowBytes = start..<reader.position } else { largest = max(largest, total) }
            }
            guard reader.isAtEnd else { throw bad }
            // The row ids: the next row's delta now counts from the row before the cut one
            // (from 0 when the cut row was the first).
            var delta: [UInt8] = []
            if !next.isEmpty { delta.appendVarint(index == 0 ? after : after - before) }
            let newDeltaLength = deltaLength - cut.count - next.count + delta.count
            var out: [UInt8] = []
            out.reserveCapacity(raw.count)
            out.appendVarint(UInt64(count - 1))
            out.appendVarint(UInt64(largest))
            out.appendVarint(UInt64(minLength))
            out.appendVarint(UInt64(newDeltaLength))
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[deltaStart..<cut.lowerBound]))
            out.append(contentsOf: delta)
            let resume = next.isEmpty ? cut.upperBound : next.upperBound
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[resume..<rowBytes.lowerBound]))
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[rowBytes.upperBound...]))
            return FullTextRowRemoval(bytes: out, index: index, count: count, last: last)
        } catch {
            throw damaged
        }
    }
}

extension FullTextBlockPositions {
    /// A block's positions bytes (`count` rows) without row `index` (its length and bytes).
    /// - Throws: `.badEntry` when the bytes do not hold exactly `count` rows.
    static func removing(row index: Int, of count: Int, from bytes: [UInt8]) throws(EngineError) -> [UInt8] {
        precondition(index >= 0 && index < count, "FullTextBlockPositions: row \(index) of \(count)")
        return try bytes.withBytes { raw throws(EngineError) -> [UInt8] in
            var ranges: [Range<Int>] = []
            ranges.reserveCapacity(count)
            try Self.ranges(of: raw, count: count, into: &ranges)
            // The row's entry starts where the row before ends (its length varint first).
            let start = index == 0 ? 0 : ranges[index - 1].upperBound
            let end = ranges[index].upperBound
            var out: [UInt8] = []
            out.reserveCapacity(raw.count - (end - start))
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[0..<start]))
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[end...]))
            return out
        }
    }
}

extension FullTextPostingBlock {
    /// `bytes` (a block) with `posting` put in its place among the rows, edited as `removing`
    /// does: the deltas of the new row and of the row after it are written, the new row's counts
    /// put between the others', the header rewritten (row count, largest count, length bound
    /// all exact for the rows as inserted). Returns the new bytes, the row's place and the rows
    /// before the insert, or nil
    /// when the block is full or already holds the row id (the caller decodes the block).
    /// - Throws: `.badEntry` for bytes that are not a block of `columnCount` columns.
    static func inserting(_ posting: FullTextPosting, length: Int, into raw: UnsafeRawBufferPointer,
                          columnCount: Int) throws(EngineError) -> (bytes: [UInt8], index: Int, count: Int)? {
        var reader = ByteReader(raw)
        do {
            let (count, maxCount, minLength, deltaLength) = try reader.readPostingBlockHeader()
            guard count < maximumEntries else { return nil }
            let deltaStart = reader.position, deltaEnd = deltaStart + deltaLength
            // The new row goes before row `index`, whose delta bytes are `next`.
            var index = count, next = deltaEnd..<deltaEnd
            var before: UInt64 = 0, after: UInt64 = 0, current: UInt64 = 0
            for i in 0..<count {
                let start = reader.position
                current = try reader.readRowid(after: current, first: i == 0)
                if current == posting.rowid { return nil }
                if index == count && current > posting.rowid {
                    index = i
                    next = start..<reader.position
                    after = current
                }
                if index == count { before = current }
            }
            guard reader.position == deltaEnd else { throw bad }
            // Where row `index`'s counts begin.
            var countsAt = 0
            for i in 0...count {
                if i == index { countsAt = reader.position }
                guard i < count else { break }
                let hitCount = try reader.readLength(max: columnCount)
                guard hitCount > 0 else { throw bad }
                for _ in 0..<hitCount {
                    _ = try reader.readLength(max: columnCount)
                    _ = try reader.readLength(max: Int(Int32.max))
                }
            }
            guard reader.isAtEnd else { throw bad }
            var deltas: [UInt8] = []
            deltas.appendVarint(index == 0 ? posting.rowid : posting.rowid - before)
            if index < count { deltas.appendVarint(after - posting.rowid) }
            var out: [UInt8] = []
            out.reserveCapacity(raw.count + 16)
            out.appendVarint(UInt64(count + 1))
            out.appendVarint(UInt64(max(maxCount, posting.totalCount)))
            out.appendVarint(UInt64(min(minLength, length)))
            out.appendVarint(UInt64(deltaLength - next.count + deltas.count))
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[deltaStart..<next.lowerBound]))
            out.append(contentsOf: deltas)
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[next.upperBound..<countsAt]))
            out.appendVarint(UInt64(posting.hits.count))
            var column = 0
            for hit in posting.hits {
                out.appendVarint(UInt64(hit.column - column))
                out.appendVarint(UInt64(hit.count))
                column = hit.column
            }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[countsAt...]))
            return (out, index, count)
        } catch {
            throw damaged
        }
    }
}

extension FullTextBlockPositions {
    /// A block's positions bytes (`count` rows) with `row` put in at `index`.
    /// - Throws: `.badEntry` when the bytes do not hold exactly `count` rows.
    static func inserting(_ row: [UInt8], at index: Int, of count: Int, into bytes: [UInt8]) throws(EngineError) -> [UInt8] {
        precondition(index >= 0 && index <= count, "FullTextBlockPositions: row \(index) of \(count)")
        return try bytes.withBytes { raw throws(EngineError) -> [UInt8] in
            var ranges: [Range<Int>] = []
            ranges.reserveCapacity(count)
            try Self.ranges(of: raw, count: count, into: &ranges)
            let at = index == 0 ? 0 : ranges[index - 1].upperBound
            var out: [UInt8] = []
            out.reserveCapacity(raw.count + size(of: row))
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[0..<at]))
            append(row, to: &out)
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[at...]))
            return out
        }
    }
}
