// OrderedRowTree+Invariants: the structural self-check used by tests.

extension OrderedRowTree {
    /// `validate()`, trapping (`preconditionFailure`) with the violation's description.
    /// Tests call it after every mutation. O(n).
    package func checkInvariants() { trapOnViolation(validate) }

    /// `validate(ordering:)`, trapping with the violation's description.
    package func checkInvariants(ordering compare: (UInt64, UInt64) -> RowComparison) {
        trapOnViolation { try validate(ordering: compare) }
    }

    /// Checks the tree's structure and throws an `InvariantViolation` describing the first
    /// violation: every node holds at most `nodeCapacity` items and every non-root node at least
    /// `nodeCapacity / 2`; internal nodes have one more child than items (an internal root has at
    /// least one item); each stored subtree count is right; all leaves are at the same depth.
    /// O(n). For tests and debug checks; never on a hot path.
    package func validate() throws {
        var leafDepth: Int?
        _ = try root.validate(depth: 0, isRoot: true, capacity: nodeCapacity,
                                 minimumFill: minimumFill, leafDepth: &leafDepth)
    }

    /// `validate()`, plus that the items are in non-decreasing order under `compare`,
    /// where `compare(a, b)` says how `a` compares to `b`.
    package func validate(ordering compare: (UInt64, UInt64) -> RowComparison) throws {
        try validate()
        var previous: UInt64?
        try forEach { index, rowid in
            if let previous {
                try require(compare(previous, rowid) != .orderedDescending,
                             "OrderedRowTree: items \(index - 1) (\(previous)) and \(index) (\(rowid)) are out of order")
            }
            previous = rowid
            return true
        }
    }
}

extension RowTreeNode {
    /// Checks this subtree at `depth`; returns its item count.
    func validate(depth: Int, isRoot: Bool, capacity: Int, minimumFill: Int, leafDepth: inout Int?) throws(InvariantViolation) -> Int {
        try require(elements.count <= capacity,
                     "OrderedRowTree: node at depth \(depth) holds \(elements.count) items, capacity \(capacity)")
        if !isRoot {
            try require(elements.count >= minimumFill,
                         "OrderedRowTree: node at depth \(depth) holds \(elements.count) items, minimum \(minimumFill)")
        }
        var total = elements.count
        if isLeaf {
            if let leafDepth {
                try require(leafDepth == depth, "OrderedRowTree: leaves at depths \(leafDepth) and \(depth)")
            } else {
                leafDepth = depth
            }
        } else {
            try require(children.count == elements.count + 1,
                         "OrderedRowTree: internal node at depth \(depth) has \(elements.count) items, \(children.count) children")
            try require(!elements.isEmpty, "OrderedRowTree: internal node at depth \(depth) has no items")
            for child in children {
                total += try child.validate(depth: depth + 1, isRoot: false, capacity: capacity,
                                               minimumFill: minimumFill, leafDepth: &leafDepth)
            }
        }
        try require(total == count, "OrderedRowTree: node at depth \(depth) records count \(count), holds \(total)")
        return total
    }
}
