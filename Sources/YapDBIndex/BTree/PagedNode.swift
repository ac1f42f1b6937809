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
    /// Encodes the node into a zeroed page, given its children's pages.
    func encode(into page: UnsafeMutableRawBufferPointer, childPages: [PageID])
    /// Reads and checks page `id` at `level` holding `count` entries.
    static func load(_ id: PageID, level: Int, count: Int, format: PageFormat, source: any PageSource) throws(PageError) -> Self
}

extension ChildRef where Node: PagedNode {
    /// Makes this reference a dirty node owned by the caller alone: loads a clean page, copies a
    /// shared node, or clears the flush mark of an exclusively owned one (it is about to change).
    mutating func makeDirty(level: Int, format: PageFormat, source: any PageSource) throws(PageError) -> Node {
        if node != nil {
            if isKnownUniquelyReferenced(&node) {
                node.unsafelyUnwrapped.mark.reset()
            } else {
                node = node.unsafelyUnwrapped.copy()
            }
            return node.unsafelyUnwrapped
        }
        let loaded = try Node.load(page, level: level, count: count, format: format, source: source)
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
        return try writer.emit(node.mark, allocate: allocate, write: write) { node.encode(into: $0, childPages: childPages) }
    }
    let page = try flush(root)
    return PageFlush(root: page, marks: writer.marks)
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
