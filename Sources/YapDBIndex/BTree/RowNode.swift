// RowNode: the in-memory (dirty) node of a PagedRowTree, and its page decoding and encoding.

/// A dirty node of a `PagedRowTree`: a leaf of row ids in position order, or a branch of
/// children (each with its entry count and first row id).
///
/// `@unchecked Sendable` is safe for the reason given on `KeyedNode`: mutated only through a
/// reference proven unique from the root down.
package final class RowNode: PagedNode, @unchecked Sendable {
    /// Leaf: the row ids. Branch: empty.
    @exclusivity(unchecked) var rowids: ContiguousArray<UInt64>
    /// Branch: the children. Leaf: empty.
    @exclusivity(unchecked) var children: ContiguousArray<ChildRef<RowNode>>
    /// 0 for a leaf; a branch is one above its children.
    let level: Int
    /// The page a published flush wrote this node to.
    let mark = FlushMark()
    /// Whether the last change added a row (leaf) or a child (branch) at the end; see
    /// `KeyedNode.appendedLast`.
    @exclusivity(unchecked) var appendedLast = false

    init(level: Int, rowids: ContiguousArray<UInt64>, children: ContiguousArray<ChildRef<RowNode>>) {
        self.level = level
        self.rowids = rowids
        self.children = children
    }

    var isLeaf: Bool { level == 0 }

    /// A copy sharing the arrays until one side changes them (and with no flush mark).
    func copy() -> RowNode { RowNode(level: level, rowids: rowids, children: children) }

    /// Entries (leaf) or children (branch) in this node.
    var width: Int { isLeaf ? rowids.count : children.count }

    /// The first row id of the subtree (the node is never empty).
    var first: UInt64 { isLeaf ? rowids[0] : children[0].first }

    /// Entries in the subtree.
    var subtreeCount: Int { isLeaf ? rowids.count : children.reduce(0) { $0 + $1.count } }

    /// The most entries or children a node of this level may hold.
    func capacity(_ format: PageFormat) -> Int { isLeaf ? format.rowLeafCapacity : format.rowBranchCapacity }

    /// The fewest entries or children a node other than the root may hold: a quarter of the
    /// capacity (so a split after an append can leave the left node full), and two children.
    func minimumWidth(_ format: PageFormat) -> Int { max(capacity(format) / 4, isLeaf ? 1 : 2) }

    static var family: TreeFamily { .rows }

    static func firstRowid(_ view: PageView) throws(PageError) -> UInt64 {
        view.level == 0 ? view.rowid(0) : try view.rowChild(0).first
    }

    @inline(__always)
    static func child(_ view: PageView, _ k: Int) throws(PageError) -> (page: PageID, count: Int) {
        let child = try view.rowChild(k)
        return (child.page, child.count)
    }

    static var childSize: Int { PageLayout.rowChildSize }

    /// The node held by a checked page header.
    static func decode(_ view: PageView, format: PageFormat) throws(PageError) -> RowNode {
        if view.level == 0 {
            var rowids = ContiguousArray<UInt64>()
            rowids.reserveCapacity(view.count)
            for i in 0..<view.count { rowids.append(view.rowid(i)) }
            return RowNode(level: 0, rowids: rowids, children: [])
        }
        var children = ContiguousArray<ChildRef<RowNode>>()
        children.reserveCapacity(view.count)
        var total = 0
        for i in 0..<view.count {
            let (page, count, first) = try view.rowChild(i)
            let (sum, overflow) = total.addingReportingOverflow(count)
            guard !overflow else { throw .corrupt(page: view.id, reason: .subtreeCountMismatch(expected: view.subtreeCount, found: Int.max)) }
            total = sum
            children.append(.clean(page, count: count, first: first))
        }
        guard total == view.subtreeCount else {
            throw .corrupt(page: view.id, reason: .subtreeCountMismatch(expected: view.subtreeCount, found: total))
        }
        return RowNode(level: view.level, rowids: [], children: children)
    }

    /// Encodes this node into the zeroed `page`; `childPages[i]` is the page of child `i`.
    func encode(into page: UnsafeMutableRawBufferPointer, childPages: [PageID]) {
        writeHeader(page, kind: isLeaf ? .rowLeaf : .rowBranch, level: level, count: width, subtreeCount: subtreeCount)
        var offset = PageLayout.headerSize
        if isLeaf {
            for rowid in rowids {
                page.storeBytes(of: rowid.littleEndian, toByteOffset: offset, as: UInt64.self)
                offset += PageLayout.rowSize
            }
            return
        }
        for (i, child) in children.enumerated() {
            page.storeBytes(of: childPages[i].littleEndian, toByteOffset: offset, as: UInt64.self)
            page.storeBytes(of: UInt64(child.count).littleEndian, toByteOffset: offset + 8, as: UInt64.self)
            page.storeBytes(of: child.first.littleEndian, toByteOffset: offset + 16, as: UInt64.self)
            offset += PageLayout.rowChildSize
        }
    }
}
