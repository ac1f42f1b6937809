// PagedNode: what the two trees' dirty nodes share — copy-on-write ownership, flushing children
// before parents, and releasing nodes a published flush wrote.

/// A dirty node of a paged tree (`KeyedNode`, `RowNode`).
protocol PagedNode: AnyObject, Sendable {
    /// The page a published flush wrote this node to.
    var mark: FlushMark { get }
    /// Whether the node is a leaf (level 0).
    var isLeaf: Bool { get }
    /// A branch's children (empty for a leaf).
    var children: ContiguousArray<ChildRef<Self>> { get set }
    /// A copy sharing the arrays until one side changes them, with no flush mark.
    func copy() -> Self
    /// 0 for a leaf; a branch is one above its children.
    var level: Int { get }
    /// Encodes the node into a zeroed page, given its children's pages.
    func encode(into page: UnsafeMutableRawBufferPointer, childPages: [PageID])
    /// The family of pages this node is stored in.
    static var family: TreeFamily { get }
    /// The node held by a page whose header was checked, checking the rest of the page.
    static func decode(_ view: PageView, format: PageFormat) throws(PageError) -> Self
    /// The first row id of the subtree of a checked page (row trees; 0 for keyed trees).
    static func firstRowid(_ view: PageView) throws(PageError) -> UInt64
    /// Branch child `k` of a checked branch page: its page and subtree count, checked
    /// (`PageView.childAt`).
    static func child(_ view: PageView, _ k: Int) throws(PageError) -> (page: PageID, count: Int)
    /// The bytes of one child in a branch page (`PageView.countsBefore`).
    static var childSize: Int { get }
    /// Heap bytes the node holds (`PagedTree+Memory.swift`): what a dirty node is charged
    /// against the engine's dirty-page budget.
    var memoryBytes: Int { get }
}

extension PagedNode {
    /// Reads page `id` at `level` (with `count` entries, as the parent recorded) into a new dirty
    /// node; with `verifyChecksum` (`validate()`), checks the page's checksum first.
    static func load(_ id: PageID, level: Int, count: Int, format: PageFormat, pages: PageReader, verifyChecksum: Bool = false) throws(PageError) -> Self {
        try pages.read(id) { bytes throws(PageError) -> Self in
            if verifyChecksum { try format.verify(bytes, id: id) }
            let view = try PageView(bytes, id: id, pageSize: format.pageSize, family: family, level: level)
            try view.requireSubtreeCount(count)
            return try decode(view, format: format)
        }
    }

    /// The node `ref` refers to at `level`: its dirty node, or its page decoded and checked
    /// (checksum included) — the first step of `validate()` at every node.
    static func checked(_ ref: ChildRef<Self>, level: Int, format: PageFormat, pages: PageReader) throws(PageError) -> Self {
        guard let node = ref.node else {
            return try load(ref.page, level: level, count: ref.count, format: format, pages: pages, verifyChecksum: true)
        }
        guard node.level == level else { throw .corrupt(page: ref.page, reason: .unevenDepth) }
        return node
    }
}

/// The root reference and height of the tree whose root is the written page `rootPage`
/// (`PageID.none`: an empty tree), from the root page's header.
/// - Throws: `PageError` if the page cannot be read or is not a root of this family.
func openRoot<Node: PagedNode>(_ rootPage: PageID, format: PageFormat, pages: PageReader) throws(PageError) -> (ChildRef<Node>, height: Int) {
    guard rootPage != .none else { return (.clean(.none, count: 0), 0) }
    return try pages.read(rootPage) { bytes throws(PageError) in
        let view = try PageView(bytes, id: rootPage, pageSize: format.pageSize, family: Node.family, level: nil)
        if let pageCount = pages.source.pageCapacity {
            try view.requireCapacity(pages: pageCount, family: Node.family)
        }
        return (.clean(rootPage, count: view.subtreeCount, first: try Node.firstRowid(view)), view.level + 1)
    }
}

extension ChildRef where Node: PagedNode {
    /// Makes this reference a dirty node owned by the caller alone: loads a clean page, copies a
    /// shared node, or clears the flush mark of an exclusively owned one (it is about to change).
    mutating func makeDirty(level: Int, format: PageFormat, pages: PageReader) throws(PageError) -> Node {
        if node != nil {
            if isKnownUniquelyReferenced(&node) {
                node.unsafelyUnwrapped.mark.reset()
            } else {
                node = node.unsafelyUnwrapped.copy()
            }
            return node.unsafelyUnwrapped
        }
        let loaded = try Node.load(page, level: level, count: count, format: format, pages: pages)
        node = loaded
        page = .none
        return loaded
    }
}

/// Writes the dirty nodes under `root` as pages, children before parents (see
/// `PagedBTree.flush`), and returns the root page and the nodes written.
func flushTree<Node: PagedNode, E: Error>(
    _ root: ChildRef<Node>, format: PageFormat,
    allocate: () throws(E) -> PageID, write: (PageID, UnsafeRawBufferPointer) throws(E) -> Void
) throws(E) -> PageFlush {
    var writer = PageWriter(format: format)
    func flush(_ ref: ChildRef<Node>) throws(E) -> PageID {
        guard let node = ref.node else { return ref.page }
        let written = node.mark.flushedPage
        if written != .none { return written }
        var childPages: [PageID] = []
        childPages.reserveCapacity(node.children.count)
        for child in node.children { childPages.append(try flush(child)) }
        return try writer.emit(node, node.mark, allocate: allocate, write: write) { node.encode(into: $0, childPages: childPages) }
    }
    let page = try flush(root)
    return PageFlush(root: page, marks: writer.marks, nodes: writer.nodes)
}

/// Replaces every node under `ref` that a published flush wrote by its clean page; copies a
/// shared dirty node whose children change. Visits dirty nodes only.
func releaseFlushed<Node: PagedNode>(_ ref: inout ChildRef<Node>) {
    switch releaseStep(ref) {
    case .keep: return
    case .written(let page): ref = .clean(page, count: ref.count, first: ref.first)
    case .descend: releaseChildren(&ref)
    }
}

private enum ReleaseStep { case keep, written(PageID), descend }

/// What `releaseFlushed` does with `ref` (a separate function, so that no reference to the node
/// outlives it and the uniqueness test in `releaseChildren` is meaningful).
private func releaseStep<Node: PagedNode>(_ ref: ChildRef<Node>) -> ReleaseStep {
    guard let node = ref.node else { return .keep }
    let written = node.mark.flushedPage
    if written != .none { return .written(written) }
    return node.isLeaf || !node.children.contains(where: { $0.node != nil }) ? .keep : .descend
}

/// The branch step of `releaseFlushed`.
private func releaseChildren<Node: PagedNode>(_ ref: inout ChildRef<Node>) {
    if !isKnownUniquelyReferenced(&ref.node) { ref.node = ref.node.unsafelyUnwrapped.copy() }
    let owned = ref.node.unsafelyUnwrapped
    for k in owned.children.indices { releaseFlushed(&owned.children[k]) }
}

/// The dirty nodes under `ref` that a flush would write (published ones excluded). Visits only
/// dirty nodes: O(dirty nodes).
func unwrittenNodeCount<Node: PagedNode>(_ ref: ChildRef<Node>) -> Int {
    guard let node = ref.node, node.mark.flushedPage == .none else { return 0 }
    return node.children.reduce(1) { $0 + unwrittenNodeCount($1) }
}
