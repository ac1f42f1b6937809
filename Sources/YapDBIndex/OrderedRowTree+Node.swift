// OrderedRowTree+Node: the B-tree node and its recursive insert/remove/rebalance steps.

/// One `OrderedRowTree` node: up to `nodeCapacity` row ids, and for an internal node one more
/// child than items (child `k` holds the items before `elements[k]`). `count` is the number of
/// items in the whole subtree.
///
/// `@unchecked Sendable` is safe because of the copy-on-write discipline: a node is mutated only
/// through a reference proven unique by `isKnownUniquelyReferenced` (from the root down), so a
/// node reachable from two trees — the only way two threads can see it — is never mutated.
@usableFromInline
final class RowTreeNode: @unchecked Sendable {
    // `@exclusivity(unchecked)`: release builds otherwise pay a dynamic exclusivity check
    // (swift_beginAccess) per class-property access — measured 12x on B-tree appends. Safe
    // because these properties are only accessed by this module's code, which never holds
    // two overlapping accesses to one node (compile-time exclusivity checking still applies).
    @exclusivity(unchecked) @usableFromInline var elements: ContiguousArray<UInt64>
    @exclusivity(unchecked) @usableFromInline var children: ContiguousArray<RowTreeNode>
    @exclusivity(unchecked) @usableFromInline var count: Int

    @inlinable
    init(elements: ContiguousArray<UInt64>, children: ContiguousArray<RowTreeNode>, count: Int) {
        self.elements = elements
        self.children = children
        self.count = count
    }

    @inlinable var isLeaf: Bool { children.isEmpty }

    /// A shallow copy: the arrays are shared until one side mutates them.
    @inlinable
    func copy() -> RowTreeNode { RowTreeNode(elements: elements, children: children, count: count) }

    /// Makes `children[k]` uniquely referenced, copying it if it is shared.
    @inlinable @inline(__always)
    func makeChildUnique(_ k: Int) {
        if !isKnownUniquelyReferenced(&children[k]) { children[k] = children[k].copy() }
    }
}

// MARK: - Insertion (the receiver is uniquely referenced)

extension RowTreeNode {
    /// Inserts `rowid` at subtree position `index`. If this node overflows, splits it and returns
    /// the median item and the new right sibling for the parent to adopt.
    @inlinable
    func insert(_ rowid: UInt64, at index: Int, capacity: Int) -> (UInt64, RowTreeNode)? {
        count &+= 1
        if isLeaf {
            elements.insert(rowid, at: index)
        } else {
            var i = index, k = 0
            while i > children[k].count {
                i &-= children[k].count &+ 1
                k &+= 1
            }
            makeChildUnique(k)
            if let (median, right) = children[k].insert(rowid, at: i, capacity: capacity) {
                elements.insert(median, at: k)
                children.insert(right, at: k &+ 1)
            }
        }
        return elements.count > capacity ? split() : nil
    }

    /// Splits an overflowing node: keeps the lower half, returns the median and the upper half.
    @inlinable
    func split() -> (UInt64, RowTreeNode) {
        let mid = elements.count / 2
        let median = elements[mid]
        let rightElements = ContiguousArray(elements[(mid &+ 1)...])
        var rightChildren = ContiguousArray<RowTreeNode>()
        var rightCount = rightElements.count
        if !isLeaf {
            rightChildren = ContiguousArray(children[(mid &+ 1)...])
            for child in rightChildren { rightCount &+= child.count }
            children.removeSubrange((mid &+ 1)...)
        }
        elements.removeSubrange(mid...)
        count &-= rightCount &+ 1
        return (median, RowTreeNode(elements: rightElements, children: rightChildren, count: rightCount))
    }
}

// MARK: - Removal (the receiver is uniquely referenced)

extension RowTreeNode {
    /// Removes and returns the item at subtree position `index`. May leave this node below
    /// `minimumFill`; the parent repairs that (`rebalanceChild`).
    @inlinable
    func remove(at index: Int, minimumFill: Int) -> UInt64 {
        count &-= 1
        if isLeaf { return elements.remove(at: index) }
        var i = index, k = 0
        while true {
            let childCount = children[k].count
            if i < childCount {
                makeChildUnique(k)
                let removed = children[k].remove(at: i, minimumFill: minimumFill)
                rebalanceChild(k, minimumFill: minimumFill)
                return removed
            }
            i &-= childCount
            if i == 0 {
                // Item k itself: replace it by its predecessor, the last item of child k.
                makeChildUnique(k)
                let predecessor = children[k].remove(at: childCount &- 1, minimumFill: minimumFill)
                let removed = elements[k]
                elements[k] = predecessor
                rebalanceChild(k, minimumFill: minimumFill)
                return removed
            }
            i &-= 1
            k &+= 1
        }
    }

    /// Restores `minimumFill` in child `k` (already unique) by borrowing an item through this node
    /// from a sibling that has one to spare, or else by merging with a sibling.
    @inlinable
    func rebalanceChild(_ k: Int, minimumFill: Int) {
        guard children[k].elements.count < minimumFill else { return }
        if k > 0 && children[k &- 1].elements.count > minimumFill {
            makeChildUnique(k &- 1)
            let left = children[k &- 1], child = children[k]
            child.elements.insert(elements[k &- 1], at: 0)
            elements[k &- 1] = left.elements.removeLast()
            var moved = 1
            if !left.isLeaf {
                let grandchild = left.children.removeLast()
                moved &+= grandchild.count
                child.children.insert(grandchild, at: 0)
            }
            left.count &-= moved
            child.count &+= moved
        } else if k &+ 1 < children.count && children[k &+ 1].elements.count > minimumFill {
            makeChildUnique(k &+ 1)
            let right = children[k &+ 1], child = children[k]
            child.elements.append(elements[k])
            elements[k] = right.elements.removeFirst()
            var moved = 1
            if !right.isLeaf {
                let grandchild = right.children.removeFirst()
                moved &+= grandchild.count
                child.children.append(grandchild)
            }
            right.count &-= moved
            child.count &+= moved
        } else {
            mergeChildren(k > 0 ? k &- 1 : k)
        }
    }

    /// Merges child `k + 1` and the item between them into child `k`.
    @inlinable
    func mergeChildren(_ k: Int) {
        makeChildUnique(k)
        let left = children[k]
        let right = children.remove(at: k &+ 1)
        left.elements.append(elements.remove(at: k))
        left.elements.append(contentsOf: right.elements)
        left.children.append(contentsOf: right.children)
        left.count &+= 1 &+ right.count
    }
}
