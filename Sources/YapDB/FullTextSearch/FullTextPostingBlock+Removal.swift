import YapDBIndex
import YapDBStorage

// Taking one row out of a block by editing its bytes, as `appending` adds one: the row is found
// by walking the delta-coded row ids (nothing is materialised), its delta and counts are cut, the
// following row's delta is re-encoded against the row before, and the header is rewritten. The
// row's positions are cut from the block's positions entry the same way.

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
    static func removing(_ rowid: UInt64, from raw: UnsafeRawBufferPointer, columnCount: Int) throws(PageError) -> FullTextRowRemoval? {
        var reader = ByteReader(raw)
        do {
            let count = try reader.readLength(max: maximumEntries)
            _ = try reader.readLength(max: Int(Int32.max))
            let minLength = try reader.readLength(max: Int(Int32.max))
            let deltaLength = try reader.readLength(max: reader.remaining)
            guard count > 0 else { throw bad }
            let deltaStart = reader.position, deltaEnd = deltaStart + deltaLength
            // The row's delta bytes, the next row's delta bytes and row id, the row id before.
            var index = -1
            var cut = 0..<0, next = 0..<0
            var before: UInt64 = 0, after: UInt64 = 0, last: UInt64 = 0
            var current: UInt64 = 0
            for i in 0..<count {
                let start = reader.position
                let delta = try reader.readVarint()
                if i > 0 {
                    guard delta > 0 else { throw bad }
                    let (sum, overflow) = current.addingReportingOverflow(delta)
                    guard !overflow else { throw bad }
                    current = sum
                } else {
                    current = delta
                }
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
    static func removing(row index: Int, of count: Int, from bytes: [UInt8]) throws(PageError) -> [UInt8] {
        precondition(index >= 0 && index < count, "FullTextBlockPositions: row \(index) of \(count)")
        return try bytes.withBytes { raw throws(PageError) -> [UInt8] in
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
