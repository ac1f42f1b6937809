// KeyedCursor: the one descent of a keyed tree — the path of (node, slot) frames from the root
// to a leaf — and how it moves: down by key, position or edge, and across to the next or
// previous leaf. Every read and walk of a `PagedBTree` goes through it, so a page is entered,
// checked and searched in one place. The frames, the page check and the step across a branch
// are shared with the row tree's cursor (TreeFrame.swift).

/// A node on a keyed tree's path (`TreeFrame`).
typealias KeyedFrame = TreeFrame<KeyedNode>

/// Where a descent goes at each node.
enum KeyedSeek {
    /// To the child whose range holds the key; in the leaf, the first entry not less than it.
    case key(UnsafeRawBufferPointer)
    /// To the entry at this position of the subtree (which becomes the position within the
    /// child as the descent goes down).
    case position(Int)
    /// Along the left or the right edge.
    case first, last
}

/// The leaf a cursor stands on, valid only inside the call that hands it out.
enum KeyedLeaf {
    case node(Unmanaged<KeyedNode>)
    case page(PageView)

    /// The entries it holds.
    @inline(__always)
    var count: Int {
        switch self {
        case .node(let node): node.takeUnretainedValue().entries.count
        case .page(let view): view.count
        }
    }

    /// Where `seek` (what is left of it at the leaf) lands: the entry's index, and whether it
    /// is there (a key equal to the sought one; any entry of a non-empty leaf otherwise).
    /// - Throws: `.positionOutOfRange` for a position past a page's entries; a page's search
    ///   errors.
    @inline(__always)
    func slot(_ seek: KeyedSeek) throws(PageError) -> (index: Int, found: Bool) {
        switch self {
        case .node(let unmanaged):
            let node = unmanaged.takeUnretainedValue()
            switch seek {
            case .key(let key): return node.search(key)
            case .position(let i): return (i, true)
            case .first: return (0, node.entries.count > 0)
            case .last: return (node.entries.count &- 1, node.entries.count > 0)
            }
        case .page(let view):
            switch seek {
            case .key(let key): return try view.leafSearch(key)
            case .position(let i):
                guard i < view.subtreeCount else { throw .corrupt(page: view.id, reason: .positionOutOfRange) }
                return (i, true)
            case .first: return (0, true)
            case .last: return (view.count &- 1, true)  // a page holds at least one entry
            }
        }
    }

    /// Calls `body` with entry `i`'s whole key and value.
    @inline(__always)
    func entry<R>(_ i: Int, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> R) throws(PageError) -> R {
        switch self {
        case .node(let node): return node.takeUnretainedValue().entries.read(i, body)
        case .page(let view): return try view.withLeafEntry(i) { body($0, $1) }
        }
    }

    /// Calls `body` with entry `i`'s whole value (the key is not put together).
    @inline(__always)
    func value<R>(_ i: Int, _ body: (_ value: UnsafeRawBufferPointer) -> R) throws(PageError) -> R {
        switch self {
        case .node(let node): return node.takeUnretainedValue().entries.read(i) { _, value in body(value) }
        case .page(let view): return try view.withLeafValue(i) { body($0) }
        }
    }
}

/// A position in a keyed tree: the leaf it stands on and, when it walks, the branch frames
/// above it (its path). Made by the tree's reads (`PagedBTree.cursor`, `MappedTree.cursor`),
/// used inside the call, never kept. Plain data: the pages it reads come with each call (a
/// `PageReader` or a mapped table), so a cursor is copied and dropped without reference
/// counting.
///
/// Every clean page it enters is checked as the parent implies (`PageView`: size, kind, level,
/// count; then the subtree count the parent recorded) before anything in it is read; a damaged
/// page gives `PageError.corrupt`, never a trap. A branch page a walk leaves at its end is also
/// checked to have children whose counts make up its own.
struct KeyedCursor {
    let pageSize: Int
    /// The root, as a frame.
    let root: KeyedFrame
    /// Room for the branch frames above the leaf (`depth` of them, root first); empty for a
    /// cursor that only descends.
    private let path: UnsafeMutableBufferPointer<KeyedFrame>
    /// Frames on `path`.
    private var depth = 0
    /// The leaf the last descent ended on.
    private(set) var leaf: KeyedFrame
    /// Entries left of the path (summed when `counting`: a rank).
    private(set) var before = 0
    /// Whether descents sum `before`.
    let counting: Bool

    init(pageSize: Int, root: KeyedFrame, path: UnsafeMutableBufferPointer<KeyedFrame> = .init(start: nil, count: 0), counting: Bool = false) {
        self.pageSize = pageSize
        self.root = root
        self.path = path
        leaf = root
        self.counting = counting
    }

    /// Calls `body` with `leaf` (a dirty node, or its page read from `pages` and checked). Static,
    /// with the pages passed in, so a call from a mutating method copies nothing.
    @inline(__always)
    static func withLeaf<Pages: TreePages, R>(
        _ pages: Pages, _ leaf: KeyedFrame, pageSize: Int, _ body: (KeyedLeaf) throws(PageError) -> R
    ) throws(PageError) -> R {
        if let node = leaf.node { return try body(.node(node)) }
        return try pages.read(leaf.page) { bytes throws(PageError) -> R in
            try body(.page(leaf.checkedView(bytes, pageSize: pageSize)))
        }
    }

    /// Descends from the root to the leaf `seek` leads to (`seek` becomes what is left of it
    /// at the leaf, for `KeyedLeaf.slot`).
    @inline(__always)
    mutating func seek<Pages: TreePages>(_ seek: inout KeyedSeek, _ pages: Pages) throws(PageError) {
        depth = 0
        before = 0
        try descend(from: root, &seek, pages)
    }

    /// Descends from `start` to a leaf by `seek`, pushing the branch frames passed on the path
    /// (when it has room) and, when `counting`, adding to `before` the entries left of them.
    @inline(__always)
    private mutating func descend<Pages: TreePages>(from start: KeyedFrame, _ seek: inout KeyedSeek, _ pages: Pages) throws(PageError) {
        var frame = start
        var left = 0
        let counting = self.counting, pageSize = self.pageSize
        while frame.level > 0 {
            let child: KeyedFrame
            if let node = frame.node {
                child = Self.branchStep(node.takeUnretainedValue(), &frame, &seek, counting: counting, before: &left)
            } else {
                child = try pages.read(frame.page) { bytes throws(PageError) -> KeyedFrame in
                    try Self.branchStep(frame.checkedView(bytes, pageSize: pageSize), &frame, &seek, counting: counting, before: &left)
                }
            }
            if depth < path.count {
                path[depth] = frame
                depth &+= 1
            }
            frame = child
        }
        leaf = frame
        before &+= left
    }

    /// The child of dirty branch `node` that `seek` goes to (its slot set in `frame`).
    /// In-memory branches may hold an emptied child until they are rebalanced: the edges skip it.
    @inline(__always)
    private static func branchStep(
        _ node: KeyedNode, _ frame: inout KeyedFrame, _ seek: inout KeyedSeek, counting: Bool, before: inout Int
    ) -> KeyedFrame {
        let k: Int
        switch seek {
        case .key(let key):
            k = node.childIndex(key)
            if counting { for i in 0..<k { before &+= node.children[i].count } }
        case .position(let position):
            var i = position, slot = 0
            while i >= node.children[slot].count { i &-= node.children[slot].count; slot &+= 1 }
            if counting { before &+= position &- i }
            seek = .position(i)
            k = slot
        case .first: k = node.children.firstIndex { $0.count > 0 } ?? 0
        case .last: k = node.children.lastIndex { $0.count > 0 } ?? node.children.count &- 1
        }
        frame.slot = k
        return KeyedFrame(node.children[k], level: frame.level &- 1)
    }

    /// The child of the checked branch page `view` that `seek` goes to (its slot set in
    /// `frame`).
    /// - Throws: `.positionOutOfRange` when the children's counts do not reach the position;
    ///   a child's or separator's bounds errors.
    @inline(__always)
    private static func branchStep(
        _ view: PageView, _ frame: inout KeyedFrame, _ seek: inout KeyedSeek, counting: Bool, before: inout Int
    ) throws(PageError) -> KeyedFrame {
        var k: Int
        switch seek {
        case .key(let key):
            k = try view.branchSearch(key)
            if counting { before &+= try view.countsBefore(k, childSize: PageLayout.keyedChildSize) }
        case .position(let position):
            guard position < view.subtreeCount else { throw .corrupt(page: view.id, reason: .positionOutOfRange) }
            var i = position
            k = 0
            while true {
                guard k < view.count else { throw .corrupt(page: view.id, reason: .positionOutOfRange) }
                let child = try view.keyedChild(k)
                if i < child.count { break }
                i &-= child.count
                k &+= 1
            }
            if counting { before &+= position &- i }
            seek = .position(i)
        case .first: k = 0
        case .last: k = view.count &- 1  // a branch page has at least two children
        }
        frame.slot = k
        let child = try view.keyedChild(k)
        return KeyedFrame(page: child.page, count: child.count, level: view.level &- 1)
    }

    /// Moves to the next leaf (the previous when `reversed`) that holds entries: up the path to
    /// the nearest frame with a child after (before) its slot, then down that child's edge.
    /// False at the end of the tree. Needs a path (a cursor made with room for one).
    /// - Throws: `PageError` from a page entered, or `.subtreeCountMismatch` for a branch page
    ///   left at its end whose children's counts do not make up its own.
    mutating func moveToNextLeaf<Pages: TreePages>(reversed: Bool, _ pages: Pages) throws(PageError) -> Bool {
        while depth > 0 {
            var frame = path[depth &- 1]
            depth &-= 1
            guard let next = try frame.sibling(reversed: reversed, pages: pages, pageSize: pageSize) else { continue }
            path[depth] = frame
            depth &+= 1
            var edge: KeyedSeek = reversed ? .last : .first
            try descend(from: next, &edge, pages)
            return true
        }
        return false
    }
}

/// Runs `body` with room for the path of a keyed tree of `height` levels, on the stack.
@inline(__always)
func withPathRoom<R>(height: Int, _ body: (UnsafeMutableBufferPointer<KeyedFrame>) throws(PageError) -> R) throws(PageError) -> R {
    try withFrames(KeyedNode.self, height: height, body)
}
