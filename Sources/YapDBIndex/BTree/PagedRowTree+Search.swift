// PagedRowTree+Search: binary searches driven by the view's comparator. The convention is that
// of RowComparison.swift: `compare(existing)` says how the searched-for row compares to the
// existing row id `existing`.

extension PagedRowTree {
    /// The number of leading row ids for which `isPastBoundary` is false, where it is false for
    /// a prefix of the row ids and true for the rest. O(log n) predicate calls: a branch is
    /// searched by its children's first row ids without reading the children.
    /// - Throws: `PageError` if a page on the path cannot be read or is damaged.
    package func partitionIndex(_ isPastBoundary: (UInt64) -> Bool) throws(PageError) -> Int {
        guard height > 0 else { return 0 }
        var cursor = cursor()
        if let table = pages.table { return try cursor.partition(table, isPastBoundary) }
        return try cursor.partition(pages, isPastBoundary)
    }

    /// The first position whose row is not before the target (`compare(row) != .orderedDescending`).
    package func lowerBound(_ compare: (UInt64) -> RowComparison) throws(PageError) -> Int {
        try partitionIndex { compare($0) != .orderedDescending }
    }

    /// The first position whose row sorts after the target (`compare(row) == .orderedAscending`).
    package func upperBound(_ compare: (UInt64) -> RowComparison) throws(PageError) -> Int {
        try partitionIndex { compare($0) == .orderedAscending }
    }

    /// Where to insert a new row so the rows stay sorted: after every row it compares equal to.
    /// Compares with the last row first and then the first row, so appends and prepends cost
    /// one or two comparisons; otherwise an O(log n) search.
    package func insertionIndex(_ compare: (UInt64) -> RowComparison) throws(PageError) -> Int {
        guard let first else { return 0 }
        if let last = try last(), compare(last) != .orderedAscending { return count }
        if compare(first) == .orderedAscending { return 0 }
        return try upperBound(compare)
    }

    /// The positions of the rows that compare `.orderedSame` to the target (empty, at the
    /// insertion point, if none). O(log n) comparisons.
    package func findRange(_ compare: (UInt64) -> RowComparison) throws(PageError) -> Range<Int> {
        let lower = try lowerBound(compare)
        return lower..<max(lower, try upperBound(compare))
    }

    /// The position of `rowid`, searched in the run of rows that compare equal to it.
    /// O(log n + length of the run). Nil if absent (or the tree is not sorted by `compare`).
    package func firstIndex(of rowid: UInt64, _ compare: (UInt64) -> RowComparison) throws(PageError) -> Int? {
        var found: Int? = nil
        try forEach(in: findRange(compare)) { index, candidate in
            if candidate == rowid { found = index; return false }
            return true
        }
        return found
    }
}

/// The first index in `0..<count` for which `isPast` is true (`count` if none), for a predicate
/// false on a prefix and true on the rest.
@inline(__always)
func firstPast(_ count: Int, _ isPast: (Int) -> Bool) -> Int {
    var low = 0, high = count
    while low < high {
        let mid = (low + high) >> 1
        if isPast(mid) { high = mid } else { low = mid + 1 }
    }
    return low
}
