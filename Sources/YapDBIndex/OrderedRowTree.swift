// OrderedRowTree: a persistent order-statistic B-tree of row ids, ordered by the caller.

/// A persistent order-statistic B-tree of `UInt64` row ids — one view group.
///
/// **Ordering is external.** The tree never compares row ids itself: positional operations
/// (`insert(_:at:)`, `remove(at:)`, `subscript`) take indices, and the search operations
/// (`insertionIndex`, `lowerBound`, `upperBound`, `findRange`, `firstIndex(of:_:)`) take the
/// view's comparator as a closure. The caller keeps the items sorted by always inserting at a
/// searched index; equal items keep insertion order (new ones go after their equals).
///
/// **Shape.** A classic B-tree (items in internal nodes too); every node holds at most
/// `nodeCapacity` items and, except the root, at least `nodeCapacity / 2`; all leaves are at the
/// same depth; internal nodes know the item count of each subtree, so positions cost O(log n).
///
/// **Value semantics with structural sharing.** Copying a tree is O(1) and is a snapshot;
/// mutating copies only the shared nodes on the touched path, and nodes the tree owns
/// exclusively are mutated in place.
///
/// **Complexity.** `count`: O(1). `subscript`, `insert(_:at:)`, `remove(at:)`, the searches:
/// O(log n) node visits of O(nodeCapacity) work each (searches: O(log n) comparator calls).
///
/// **Threading.** A value type: copies may be read from any number of threads concurrently; a
/// given variable must be mutated by one thread at a time. Comparators run on the calling thread.
package struct OrderedRowTree: Sendable {
    @usableFromInline var root: RowTreeNode
    /// The maximum number of items in a node; non-root nodes hold at least half of it.
    package let nodeCapacity: Int

    /// An empty tree whose nodes hold up to `nodeCapacity` items (at least 3; tests use small
    /// capacities so that splits and merges happen early).
    @inlinable
    package init(nodeCapacity: Int = 64) {
        precondition(nodeCapacity >= 3, "OrderedRowTree: nodeCapacity must be at least 3, got \(nodeCapacity)")
        self.nodeCapacity = nodeCapacity
        root = RowTreeNode(elements: [], children: [], count: 0)
    }

    /// The minimum number of items in a non-root node.
    @inlinable var minimumFill: Int { nodeCapacity / 2 }

    /// The number of row ids. O(1).
    @inlinable package var count: Int { root.count }

    /// Whether the tree is empty. O(1).
    @inlinable package var isEmpty: Bool { root.count == 0 }

    /// The row id at `index`. O(log n).
    /// - Precondition: `0 <= index < count`.
    @inlinable
    package subscript(index: Int) -> UInt64 {
        precondition(index >= 0 && index < count, "OrderedRowTree: index \(index) out of range 0..<\(count)")
        var node = root
        var i = index
        while !node.isLeaf {
            var k = 0
            while true {
                let childCount = node.children[k].count
                if i < childCount { break }
                i &-= childCount
                if i == 0 { return node.elements[k] }
                i &-= 1
                k &+= 1
            }
            node = node.children[k]
        }
        return node.elements[i]
    }

    /// The first row id, or nil if empty. O(log n).
    @inlinable
    package var first: UInt64? {
        var node = root
        while !node.isLeaf { node = node.children[0] }
        return node.elements.first
    }

    /// The last row id, or nil if empty. O(log n).
    @inlinable
    package var last: UInt64? {
        var node = root
        while !node.isLeaf { node = node.children[node.children.count &- 1] }
        return node.elements.last
    }

    /// Inserts `rowid` at position `index`, shifting later items up by one. O(log n); copies
    /// only shared nodes on the path; splits full nodes on the way back up.
    /// - Precondition: `0 <= index <= count`.
    @inlinable
    package mutating func insert(_ rowid: UInt64, at index: Int) {
        precondition(index >= 0 && index <= count, "OrderedRowTree: insert index \(index) out of range 0...\(count)")
        if !isKnownUniquelyReferenced(&root) { root = root.copy() }
        if let (median, right) = root.insert(rowid, at: index, capacity: nodeCapacity) {
            let left = root
            root = RowTreeNode(elements: [median], children: [left, right], count: left.count &+ 1 &+ right.count)
        }
    }

    /// Appends `rowid` after the last item. O(log n).
    @inlinable
    package mutating func append(_ rowid: UInt64) { insert(rowid, at: count) }

    /// Removes and returns the row id at `index`. O(log n); borrows from or merges with a
    /// sibling when a node falls below half full; the tree gets shallower when the root empties.
    /// - Precondition: `0 <= index < count`.
    @inlinable @discardableResult
    package mutating func remove(at index: Int) -> UInt64 {
        precondition(index >= 0 && index < count, "OrderedRowTree: remove index \(index) out of range 0..<\(count)")
        if !isKnownUniquelyReferenced(&root) { root = root.copy() }
        let removed = root.remove(at: index, minimumFill: minimumFill)
        if root.elements.isEmpty && !root.isLeaf { root = root.children[0] }
        return removed
    }

    /// Removes every item. O(1).
    @inlinable
    package mutating func removeAll() { root = RowTreeNode(elements: [], children: [], count: 0) }
}
