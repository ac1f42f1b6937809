// RowCursor: the one descent of a row tree (a view group's order-statistic tree of row ids) —
// the path of (node, slot) frames from the root to a leaf — and how it moves: down by position,
// by a predicate on the children's first row ids, or along an edge, and across to the next or
// previous leaf. Every read of a `PagedRowTree` goes through it, and its changes descend with
// the same frames (PagedRowTree+Mutation.swift). Frames, the page check and the step across a
// branch are the keyed cursor's (TreeFrame.swift).

/// A node on a row tree's path (`TreeFrame`).
typealias RowFrame = TreeFrame<RowNode>

/// A branch a row cursor passes, valid only inside the call that hands it out: a dirty node,
/// or its clean page, checked.
enum RowBranch {
    case node(RowNode)
    case page(PageView)
}

/// The leaf a row cursor stands on, valid only inside the call that hands it out.
enum RowLeaf {
    case node(RowNode)
    case page(PageView)

    /// The row ids it holds.
    @inline(__always)
    var count: Int {
        switch self {
        case .node(let node): node.rowids.count
        case .page(let view): view.count
        }
    }

    /// Row id `i` (`0 <= i < count`).
    @inline(__always)
    func rowid(_ i: Int) -> UInt64 {
        switch self {
        case .node(let node): node.rowids[i]
        case .page(let view): view.rowid(i)
        }
    }

    /// Throws `.positionOutOfRange` unless the leaf holds position `i` (a clean page whose
    /// parent's counts led past its entries; a dirty node is trusted).
    @inline(__always)
    func requirePosition(_ i: Int) throws(PageError) {
        guard case .page(let view) = self, i >= view.count else { return }
        throw .corrupt(page: view.id, reason: .positionOutOfRange)
    }
}

/// A position in a row tree: the leaf it stands on and, when it walks, the branch frames above
/// it. Made by the tree's reads (`PagedRowTree.cursor`), used inside the call, never kept;
/// plain data, with the pages it reads passed with each call (a `PageReader` or a mapped table).
///
/// Every clean page it enters is checked as the parent implies (`TreeFrame.checkedView`: size,
/// kind, level, count; then the subtree count the parent recorded) before anything in it is
/// read; a damaged page gives `PageError.corrupt`, never a trap. A branch page a walk leaves at
/// its end is also checked to have children whose counts make up its own.
struct RowCursor {
    let pageSize: Int
    /// The root, as a frame.
    let root: RowFrame
    /// Room for the branch frames above the leaf (`depth` of them, root first); empty for a
    /// cursor that only descends.
    private let path: UnsafeMutableBufferPointer<RowFrame>
    /// Frames on `path`.
    private var depth = 0
    /// The leaf the last descent ended on.
    private(set) var leaf: RowFrame

    init(pageSize: Int, root: RowFrame, path: UnsafeMutableBufferPointer<RowFrame> = .init(start: nil, count: 0)) {
        self.pageSize = pageSize
        self.root = root
        self.path = path
        leaf = root
    }

    /// Descends from `start` towards a leaf: at each branch `choose` names the child to go
    /// down to, or nil to stop there. Pushes the branch frames passed (when the path has
    /// room). True when it reached a leaf (then `leaf`), false when `choose` stopped it.
    @inline(__always)
    private mutating func descend<Pages: TreePages>(
        from start: RowFrame, _ pages: Pages, _ choose: (RowBranch) throws(PageError) -> Int?
    ) throws(PageError) -> Bool {
        var frame = start
        let pageSize = self.pageSize
        while frame.level > 0 {
            let child: RowFrame
            if let unmanaged = frame.node {
                let node = unmanaged.takeUnretainedValue()
                guard let k = try choose(.node(node)) else { return false }
                frame.slot = k
                child = RowFrame(node.children[k], level: frame.level &- 1)
            } else {
                let parent = frame
                let picked = try pages.read(frame.page) { bytes throws(PageError) -> (slot: Int, child: RowFrame)? in
                    let view = try parent.checkedView(bytes, pageSize: pageSize)
                    guard let k = try choose(.page(view)) else { return nil }
                    let child = try RowNode.child(view, k)
                    return (k, RowFrame(page: child.page, count: child.count, level: view.level &- 1))
                }
                guard let picked else { return false }
                frame.slot = picked.slot
                child = picked.child
            }
            if depth < path.count {
                path[depth] = frame
                depth &+= 1
            }
            frame = child
        }
        leaf = frame
        return true
    }

    /// Descends to the leaf that holds position `index` of the tree; returns the position
    /// within that leaf.
    /// - Throws: `.positionOutOfRange` when a page's children's counts do not reach the
    ///   position; a child's bounds errors.
    @inline(__always)
    mutating func seek<Pages: TreePages>(position index: Int, _ pages: Pages) throws(PageError) -> Int {
        depth = 0
        var i = index
        _ = try descend(from: root, pages) { branch throws(PageError) -> Int? in
            switch branch {
            case .node(let node):
                var k = 0
                while i >= node.children[k].count { i &-= node.children[k].count; k &+= 1 }
                return k
            case .page(let view):
                guard i < view.subtreeCount else { throw .corrupt(page: view.id, reason: .positionOutOfRange) }
                var k = 0
                while true {
                    guard k < view.count else { throw .corrupt(page: view.id, reason: .positionOutOfRange) }
                    let count = try view.rowChild(k).count
                    if i < count { return k }
                    i &-= count
                    k &+= 1
                }
            }
        }
        return i
    }

    /// Calls `body` with `leaf` (a dirty node, or its page read from `pages` and checked).
    @inline(__always)
    static func withLeaf<Pages: TreePages, R>(
        _ pages: Pages, _ leaf: RowFrame, pageSize: Int, _ body: (RowLeaf) throws(PageError) -> R
    ) throws(PageError) -> R {
        if let node = leaf.node { return try body(.node(node.takeUnretainedValue())) }
        return try pages.read(leaf.page) { bytes throws(PageError) -> R in
            try body(.page(leaf.checkedView(bytes, pageSize: pageSize)))
        }
    }

    /// The row id at position `index` (which the caller checked against the tree's count).
    @inline(__always)
    mutating func element<Pages: TreePages>(at index: Int, _ pages: Pages) throws(PageError) -> UInt64 {
        let i = try seek(position: index, pages)
        return try Self.withLeaf(pages, leaf, pageSize: pageSize) { leaf throws(PageError) -> UInt64 in
            try leaf.requirePosition(i)
            return leaf.rowid(i)
        }
    }

    /// The number of leading row ids for which `isPast` is false (see
    /// `PagedRowTree.partitionIndex`): a branch is searched by its children's first row ids,
    /// and the descent stops at a branch whose first child is already past.
    @inline(__always)
    mutating func partition<Pages: TreePages>(_ pages: Pages, _ isPast: (UInt64) -> Bool) throws(PageError) -> Int {
        depth = 0
        var before = 0
        let reached = try descend(from: root, pages) { branch throws(PageError) -> Int? in
            switch branch {
            case .node(let node):
                let j = firstPast(node.children.count) { isPast(node.children[$0].first) }
                if j == 0 { return nil }
                for k in 0..<(j &- 1) { before &+= node.children[k].count }
                return j &- 1
            case .page(let view):
                var failure: PageError? = nil
                let j = firstPast(view.count) { k in
                    do throws(PageError) { return isPast(try view.rowChild(k).first) } catch { failure = error; return true }
                }
                if let failure { throw failure }
                if j == 0 { return nil }
                before &+= try view.countsBefore(j &- 1, childSize: PageLayout.rowChildSize)
                return j &- 1
            }
        }
        guard reached else { return before }
        return try Self.withLeaf(pages, leaf, pageSize: pageSize) { leaf throws(PageError) -> Int in
            before &+ firstPast(leaf.count) { isPast(leaf.rowid($0)) }
        }
    }

    /// Calls `body` with each position and row id in `range` (within `0..<root.count`),
    /// ascending or `reversed`, until it returns false. Needs a path.
    /// - Throws: `.positionOutOfRange` when the tree's pages hold fewer entries than their
    ///   counts claim; `.subtreeCountMismatch` for a branch page left at its end whose
    ///   children's counts do not make up its own; `PageError` from a page.
    mutating func walk<Pages: TreePages>(
        positions range: Range<Int>, reversed: Bool, _ pages: Pages, _ body: (_ index: Int, _ rowid: UInt64) -> Bool
    ) throws(PageError) {
        var position = reversed ? range.upperBound &- 1 : range.lowerBound
        var start: Int? = try seek(position: position, pages)
        var left = range.count
        let step = reversed ? -1 : 1
        while left > 0 {
            let go = try Self.withLeaf(pages, leaf, pageSize: pageSize) { leaf throws(PageError) -> Bool in
                var i: Int
                if let start {
                    try leaf.requirePosition(start)
                    i = start
                } else {
                    i = reversed ? leaf.count &- 1 : 0
                }
                let count = leaf.count
                while left > 0 && i >= 0 && i < count {
                    guard body(position, leaf.rowid(i)) else { return false }
                    left &-= 1
                    position &+= step
                    i &+= step
                }
                return true
            }
            guard go else { return }
            guard left > 0 else { break }
            start = nil
            guard try moveToNextLeaf(reversed: reversed, pages) else { break }
        }
        guard left == 0 else { throw .corrupt(page: root.page, reason: .positionOutOfRange) }
    }

    /// Moves to the next leaf (the previous when `reversed`) that holds entries: up the path to
    /// the nearest frame with a child after (before) its slot, then down that child's edge.
    /// False at the end of the tree. Needs a path.
    /// - Throws: `PageError` from a page entered, or `.subtreeCountMismatch` for a branch page
    ///   left at its end whose children's counts do not make up its own.
    private mutating func moveToNextLeaf<Pages: TreePages>(reversed: Bool, _ pages: Pages) throws(PageError) -> Bool {
        while depth > 0 {
            var frame = path[depth &- 1]
            depth &-= 1
            guard let next = try frame.sibling(reversed: reversed, pages: pages, pageSize: pageSize) else { continue }
            path[depth] = frame
            depth &+= 1
            _ = try descend(from: next, pages) { branch throws(PageError) -> Int? in
                switch branch {
                case .node(let node):
                    if reversed { return node.children.lastIndex { $0.count > 0 } ?? node.children.count &- 1 }
                    return node.children.firstIndex { $0.count > 0 } ?? 0
                case .page(let view):
                    return reversed ? view.count &- 1 : 0  // a branch page has at least two children
                }
            }
            return true
        }
        return false
    }
}

extension PagedRowTree {
    /// A cursor on this tree, with `path` as room for its path (empty: it only descends).
    @inline(__always)
    func cursor(path: UnsafeMutableBufferPointer<RowFrame> = .init(start: nil, count: 0)) -> RowCursor {
        RowCursor(pageSize: format.pageSize, root: RowFrame(root, level: height &- 1), path: path)
    }
}
