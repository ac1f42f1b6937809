// TreeFrame: what both trees' cursors (KeyedCursor, RowCursor) share — how clean pages are read,
// one node on a root-to-leaf path, the one check every clean page a cursor enters goes through,
// and the step to the next child of a branch on the path.

/// How a cursor reads clean pages: a tree's `PageReader`, or a mapped table read in place
/// (`MappedTree`, whose plain values cost no reference counting per call).
protocol TreePages {
    /// Calls `body` with the bytes of page `id` (valid only during the call).
    func read<R>(_ id: PageID, _ body: (UnsafeRawBufferPointer) throws(PageError) -> R) throws(PageError) -> R
}

extension PageReader: TreePages {}

extension MappedPages.Table: TreePages {
    @inline(__always)
    func read<R>(_ id: PageID, _ body: (UnsafeRawBufferPointer) throws(PageError) -> R) throws(PageError) -> R {
        let bytes = try page(id)
        return try body(bytes)
    }
}

/// One node on a cursor's path: a clean page or a dirty node, what its parent recorded for it,
/// and the child (branch) or entry (leaf) the cursor is at. Plain data: a dirty node is held
/// unretained — the tree the cursor walks keeps it alive.
struct TreeFrame<Node: PagedNode> {
    /// The clean page (`PageID.none` for a dirty node).
    var page: PageID
    /// The dirty node, or nil for a clean page.
    var node: Unmanaged<Node>?
    /// Entries in the subtree, as the parent (or the tree) recorded.
    var count: Int
    /// 0 for a leaf.
    var level: Int
    /// The child (branch) the path goes through.
    var slot = 0

    @inline(__always)
    init(page: PageID, count: Int, level: Int) {
        self.page = page
        node = nil
        self.count = count
        self.level = level
    }

    /// A dirty node on a change's path (`PagedBTree.changeLeaf`, `PagedRowTree.changeLeaf`; its
    /// count is not kept).
    @inline(__always)
    init(dirty node: Node) {
        page = .none
        self.node = Unmanaged.passUnretained(node)
        count = 0
        level = node.level
    }

    @inline(__always)
    init(_ ref: ChildRef<Node>, level: Int) {
        page = ref.page
        node = ref.node.map { Unmanaged.passUnretained($0) }
        count = ref.count
        self.level = level
    }

    /// This frame's clean page as a view, checked against what its parent recorded (size,
    /// kind, level, entry count; then the subtree count): the one check every page a cursor
    /// enters goes through.
    @inline(__always)
    func checkedView(_ bytes: UnsafeRawBufferPointer, pageSize: Int) throws(PageError) -> PageView {
        let view = try PageView(bytes, id: page, pageSize: pageSize, family: Node.family, level: level)
        try view.requireSubtreeCount(count)
        return view
    }

    /// The child after (before, `reversed`) the slot of this branch that holds entries, the
    /// slot moved to it; nil when none is left (a clean page is then checked whole: its
    /// children's counts must make up its own, or `.subtreeCountMismatch`). In-memory branches
    /// may hold an emptied child until they are rebalanced: the step skips it.
    mutating func sibling<Pages: TreePages>(reversed: Bool, pages: Pages, pageSize: Int) throws(PageError) -> TreeFrame? {
        let step = reversed ? -1 : 1
        if let unmanaged = node {
            let node = unmanaged.takeUnretainedValue()
            var k = slot &+ step
            while k >= 0 && k < node.children.count {
                if node.children[k].count > 0 {
                    slot = k
                    return TreeFrame(node.children[k], level: level &- 1)
                }
                k &+= step
            }
            return nil
        }
        let k = slot &+ step
        let frame = self
        let next = try pages.read(page) { bytes throws(PageError) -> TreeFrame? in
            let view = try frame.checkedView(bytes, pageSize: pageSize)
            guard k >= 0 && k < view.count else {
                let total = try view.countsBefore(view.count, childSize: Node.childSize)
                guard total == view.subtreeCount else {
                    throw .corrupt(page: view.id, reason: .subtreeCountMismatch(expected: view.subtreeCount, found: total))
                }
                return nil
            }
            let child = try Node.child(view, k)
            return TreeFrame(page: child.page, count: child.count, level: view.level &- 1)
        }
        if next != nil { slot = k }
        return next
    }
}

/// Runs `body` with room for the path of a tree of `height` levels of `Node`s, on the stack.
@inline(__always)
func withFrames<Node: PagedNode, R>(
    _ node: Node.Type, height: Int, _ body: (UnsafeMutableBufferPointer<TreeFrame<Node>>) throws(PageError) -> R
) throws(PageError) -> R {
    let result: Result<R, PageError> = withUnsafeTemporaryAllocation(of: TreeFrame<Node>.self, capacity: max(1, height)) { room in
        Result { () throws(PageError) -> R in try body(room) }
    }
    return try result.get()
}
