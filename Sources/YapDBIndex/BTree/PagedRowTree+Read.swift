// PagedRowTree+Read: positional reads and ordered walks, each a RowCursor descent.

extension PagedRowTree {
    /// The row id at `index`. O(log n).
    /// - Precondition: `0 <= index < count`.
    /// - Throws: `PageError` if a page on the path cannot be read or is damaged.
    package func element(at index: Int) throws(PageError) -> UInt64 {
        precondition(index >= 0 && index < count, "PagedRowTree: index \(index) out of range 0..<\(count)")
        var cursor = cursor()
        if let table = pages.table { return try cursor.element(at: index, table) }
        return try cursor.element(at: index, pages)
    }

    /// The first row id, or nil if empty. O(1): the root knows it.
    package var first: UInt64? { isEmpty ? nil : root.node?.first ?? root.first }

    /// The last row id, or nil if empty. O(log n).
    package func last() throws(PageError) -> UInt64? { isEmpty ? nil : try element(at: count - 1) }

    /// Calls `body` with each position and row id in `range` (clamped to `0..<count`), in order
    /// or `reversed`, until it returns false. O(log n + k) page visits.
    /// - Throws: `PageError` if a page cannot be read or is damaged.
    package func forEach(in range: Range<Int>, reversed: Bool = false, _ body: (_ index: Int, _ rowid: UInt64) -> Bool) throws(PageError) {
        let range = range.clamped(to: 0..<count)
        guard !range.isEmpty else { return }
        try withFrames(RowNode.self, height: height) { path throws(PageError) in
            var cursor = cursor(path: path)
            if let table = pages.table {
                try cursor.walk(positions: range, reversed: reversed, table, body)
            } else {
                try cursor.walk(positions: range, reversed: reversed, pages, body)
            }
        }
    }

    /// All row ids in order. O(n).
    package func rowids() throws(PageError) -> [UInt64] {
        var all: [UInt64] = []
        all.reserveCapacity(count)
        try forEach(in: 0..<count) { _, rowid in all.append(rowid); return true }
        return all
    }
}
