// OrderedRowTree+Invariants: the structural self-check used by tests.

extension OrderedRowTree {
    /// Checks the tree's structure and traps (`precondition`) with a description of the first
    /// violation: every node holds at most `nodeCapacity` items and every non-root node at least
    /// `nodeCapacity / 2`; internal nodes have one more child than items (an internal root has at
    /// least one item); each stored subtree count is right; all leaves are at the same depth.
    /// O(n). For tests and debug checks; never on a hot path.
    package func checkInvariants() {
        var leafDepth: Int?
        _ = root.checkInvariants(depth: 0, isRoot: true, capacity: nodeCapacity,
                                 minimumFill: minimumFill, leafDepth: &leafDepth)
    }

    /// `checkInvariants()`, plus that the items are in non-decreasing order under `compare`,
    /// where `compare(a, b)` says how `a` compares to `b`.
    package func checkInvariants(ordering compare: (UInt64, UInt64) -> RowComparison) {
        checkInvariants()
        var previous: UInt64?
        forEach { index, rowid in
            if let previous {
                precondition(compare(previous, rowid) != .orderedDescending,
                             "OrderedRowTree: items \(index - 1) (\(previous)) and \(index) (\(rowid)) are out of order")
            }
            previous = rowid
            return true
        }
    }
}

extension RowTreeNode {
    /// Checks this subtree at `depth`; returns its item count.
    func checkInvariants(depth: Int, isRoot: Bool, capacity: Int, minimumFill: Int, leafDepth: inout Int?) -> Int {
        precondition(elements.count <= capacity,
                     "OrderedRowTree: node at depth \(depth) holds \(elements.count) items, capacity \(capacity)")
        if !isRoot {
            precondition(elements.count >= minimumFill,
                         "OrderedRowTree: node at depth \(depth) holds \(elements.count) items, minimum \(minimumFill)")
        }
        var total = elements.count
        if isLeaf {
            if let leafDepth {
                precondition(leafDepth == depth, "OrderedRowTree: leaves at depths \(leafDepth) and \(depth)")
            } else {
                leafDepth = depth
            }
        } else {
            precondition(children.count == elements.count + 1,
                         "OrderedRowTree: internal node at depth \(depth) has \(elements.count) items, \(children.count) children")
            precondition(!elements.isEmpty, "OrderedRowTree: internal node at depth \(depth) has no items")
            for child in children {
                total += child.checkInvariants(depth: depth + 1, isRoot: false, capacity: capacity,
                                               minimumFill: minimumFill, leafDepth: &leafDepth)
            }
        }
        precondition(total == count, "OrderedRowTree: node at depth \(depth) records count \(count), holds \(total)")
        return total
    }
}
