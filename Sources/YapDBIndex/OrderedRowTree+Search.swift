// OrderedRowTree+Search: comparator-driven binary searches and ranged enumeration.
//
// Comparator convention, shared by every search: `compare(existing)` says how the item being
// searched for (the new row, or the target of a range search) compares to the existing row id
// `existing` — `.orderedAscending`: the target sorts before `existing`; `.orderedSame`: equal;
// `.orderedDescending`: the target sorts after `existing`.

/// The result of a view comparator: how one row sorts relative to another. The same case names
/// as Foundation's `ComparisonResult` (this module does not import Foundation, and a type of that
/// name here would make the name ambiguous in modules that import both); the API layer converts.
package enum RowComparison: Sendable, Hashable {
    /// The first row sorts before the second.
    case orderedAscending
    /// The rows sort equally.
    case orderedSame
    /// The first row sorts after the second.
    case orderedDescending
}

extension OrderedRowTree {
    /// The number of leading items for which `isPastBoundary` is false, where `isPastBoundary`
    /// is false for a prefix of the items and true for the rest. O(log n) predicate calls.
    @inlinable
    func partitionIndex(_ isPastBoundary: (UInt64) throws -> Bool) rethrows -> Int {
        var node = root
        var position = 0
        while true {
            // First item in this node past the boundary (binary search).
            var low = 0, high = node.elements.count
            while low < high {
                let mid = (low &+ high) &>> 1
                if try isPastBoundary(node.elements[mid]) { high = mid } else { low = mid &+ 1 }
            }
            if node.isLeaf { return position &+ low }
            for k in 0..<low { position &+= node.children[k].count }
            position &+= low
            node = node.children[low]
        }
    }

    /// The first position whose item is not before the target (`compare(item) != .orderedDescending`):
    /// where the run of items equal to the target starts. O(log n) comparisons.
    @inlinable
    package func lowerBound(_ compare: (UInt64) throws -> RowComparison) rethrows -> Int {
        try partitionIndex { try compare($0) != .orderedDescending }
    }

    /// The first position whose item sorts after the target (`compare(item) == .orderedAscending`):
    /// just past the run of items equal to the target. O(log n) comparisons.
    @inlinable
    package func upperBound(_ compare: (UInt64) throws -> RowComparison) rethrows -> Int {
        try partitionIndex { try compare($0) == .orderedAscending }
    }

    /// Where to insert a new row so the items stay sorted: after all items it compares equal to
    /// (so equal rows keep insertion order).
    ///
    /// Fast path: compares with the last item first (a new row ≥ last → `count`), then with the
    /// first item (new row < first → 0), so appends and prepends cost one or two comparisons;
    /// otherwise an O(log n) binary search.
    /// - Parameter compare: how the new row compares to an existing one (see the file comment).
    @inlinable
    package func insertionIndex(_ compare: (UInt64) throws -> RowComparison) rethrows -> Int {
        guard let last else { return 0 }
        if try compare(last) != .orderedAscending { return count }
        if try compare(first!) == .orderedAscending { return 0 }
        return try upperBound(compare)
    }

    /// The positions of all items that compare `.orderedSame` to the target: `lowerBound` up to
    /// `upperBound`, empty (at the insertion point) if there are none. O(log n) comparisons.
    @inlinable
    package func findRange(_ compare: (UInt64) throws -> RowComparison) rethrows -> Range<Int> {
        let lower = try lowerBound(compare)
        let upper = try upperBound(compare)
        return lower..<max(lower, upper)
    }

    /// The position of `rowid`, found by binary-searching to the run of items that compare equal
    /// to it and scanning that run. O(log n + length of the run).
    /// - Parameter compare: how `rowid`'s row compares to an existing row.
    /// - Returns: the position, or nil if `rowid` is not in its run (not in the tree, or the
    ///   tree is not sorted consistently with `compare`).
    @inlinable
    package func firstIndex(of rowid: UInt64, _ compare: (UInt64) throws -> RowComparison) rethrows -> Int? {
        let start = try lowerBound(compare)
        var found: Int?
        try forEach(in: start..<count) { index, item in
            if item == rowid { found = index; return false }
            return try compare(item) == .orderedSame
        }
        return found
    }

    /// Calls `body` with each position and row id in `range`, in ascending order (or descending
    /// if `reversed`), until it returns false. O(log n + range.count); skips whole subtrees
    /// outside the range; no allocation.
    /// - Precondition: `range` lies within `0..<count`.
    @inlinable
    package func forEach(in range: Range<Int>, reversed: Bool = false,
                         _ body: (Int, UInt64) throws -> Bool) rethrows {
        precondition(range.lowerBound >= 0 && range.upperBound <= count,
                     "OrderedRowTree: range \(range) out of bounds 0..<\(count)")
        guard !range.isEmpty else { return }
        if reversed {
            _ = try root.visitReversed(base: 0, range, body)
        } else {
            _ = try root.visit(base: 0, range, body)
        }
    }

    /// Calls `body` with every position and row id in ascending order until it returns false.
    @inlinable
    package func forEach(_ body: (Int, UInt64) throws -> Bool) rethrows {
        try forEach(in: 0..<count, body)
    }

    /// All row ids in order. O(n); allocates the array.
    @inlinable
    package var rowids: [UInt64] {
        var out = [UInt64](); out.reserveCapacity(count)
        forEach { _, rowid in out.append(rowid); return true }
        return out
    }
}

extension RowTreeNode {
    /// In-order walk of the positions in `range` (this subtree starts at position `base`).
    /// Returns false if `body` stopped it.
    @inlinable
    func visit(base: Int, _ range: Range<Int>, _ body: (Int, UInt64) throws -> Bool) rethrows -> Bool {
        if isLeaf {
            let low = Swift.max(range.lowerBound &- base, 0), high = Swift.min(range.upperBound &- base, elements.count)
            var j = low
            while j < high {
                if try !body(base &+ j, elements[j]) { return false }
                j &+= 1
            }
            return true
        }
        var position = base
        for k in 0..<children.count {
            if position >= range.upperBound { return true }
            let child = children[k]
            let end = position &+ child.count
            if end > range.lowerBound, try !child.visit(base: position, range, body) { return false }
            position = end
            if k < elements.count {
                if position >= range.lowerBound && position < range.upperBound {
                    if try !body(position, elements[k]) { return false }
                }
                position &+= 1
            }
        }
        return true
    }

    /// Reverse in-order walk of the positions in `range` (this subtree starts at `base`).
    @inlinable
    func visitReversed(base: Int, _ range: Range<Int>, _ body: (Int, UInt64) throws -> Bool) rethrows -> Bool {
        if isLeaf {
            let low = Swift.max(range.lowerBound &- base, 0), high = Swift.min(range.upperBound &- base, elements.count)
            var j = high
            while j > low {
                j &-= 1
                if try !body(base &+ j, elements[j]) { return false }
            }
            return true
        }
        var end = base &+ count
        var k = children.count
        while k > 0 {
            k &-= 1
            if end <= range.lowerBound { return true }
            let child = children[k]
            let start = end &- child.count
            if start < range.upperBound, try !child.visitReversed(base: start, range, body) { return false }
            end = start
            if k > 0 {
                let position = end &- 1
                if position >= range.lowerBound && position < range.upperBound {
                    if try !body(position, elements[k &- 1]) { return false }
                }
                end = position
            }
        }
        return true
    }
}
