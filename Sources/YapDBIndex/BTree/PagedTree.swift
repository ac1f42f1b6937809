// PagedTree: the value both paged trees are — a root (a clean page or a dirty node), a height,
// the page format and the page source — and what does not depend on the kind of node.

/// A copy-on-write tree whose nodes are pages read on demand from a `PageSource`, or dirty nodes
/// held in memory. Used as `PagedBTree` (byte keys → byte values) and `PagedRowTree` (an
/// order-statistic tree of row ids); the operations of each are in their own files, on the
/// concrete type, so callers in other modules never go through generic dispatch for them.
///
/// **Value semantics.** A tree is an immutable value: a root, the entry count and the height.
/// Copying it is O(1) and is a snapshot. A mutation copies only the touched path into dirty
/// nodes (clean pages are decoded, never changed); dirty nodes the value owns exclusively are
/// changed in place, so many writes in one transaction are cheap. `flush` writes the dirty nodes
/// as pages (docs/format.md §11, "Index pages").
///
/// **Errors.** Anything that reads a page throws `PageError`: damaged bytes give `.corrupt`,
/// never a trap. A mutation that throws may leave part of its change in the value: discard it
/// (a transaction rolls back to the tree it started from, which shares no node the call
/// changed in place).
///
/// **Threading.** A value type: copies may be read from any number of threads concurrently
/// (the source must allow concurrent reads); one variable is mutated by one thread at a time.
package struct PagedTree<Node: AnyObject & Sendable>: Sendable {
    /// The root: a clean page, a dirty node, or (count 0, height 0) nothing.
    var root: ChildRef<Node>
    /// Levels of nodes: 0 for an empty tree, 1 when the root is a leaf.
    package internal(set) var height: Int
    /// The page size and checksum of this tree's pages.
    package let format: PageFormat
    /// Where clean pages are read (`reading(from:)` rebinds it), with its table of mapped
    /// pages.
    var pages: PageReader

    /// Where clean pages are read (`reading(from:)` rebinds it).
    package var source: any PageSource { pages.source }

    /// An empty tree.
    package init(format: PageFormat, source: any PageSource) {
        self.format = format
        pages = PageReader(source)
        root = .clean(.none, count: 0)
        height = 0
    }

    /// This tree reading its clean pages from `source` — e.g. a newer view of the index files
    /// that also holds the pages a checkpoint just wrote. O(1).
    package func reading(from source: any PageSource) -> PagedTree {
        var tree = self
        tree.pages = Self.reader(source, root: root, format: format)
        return tree
    }

    /// A reader of `source` for a tree whose root is `root`: a clean root that claims more
    /// entries than the source's pages could hold (`PageSource.pageCapacity`: shared child
    /// pages, reliability finding F21) gets a reader whose every page read fails with
    /// `.countBeyondCapacity`, so no walk of it runs for as long as the claim.
    static func reader(_ source: any PageSource, root: ChildRef<Node>, format: PageFormat) -> PageReader {
        guard root.node == nil, root.count > 0, let pageCount = source.pageCapacity,
              let family = (Node.self as? any PagedNode.Type)?.family else { return PageReader(source) }
        let perLeaf = (format.pageSize - PageLayout.headerSize) / family.minimumEntryBytes(level: 0)
        let (capacity, overflow) = max(0, pageCount).multipliedReportingOverflow(by: perLeaf)
        guard !overflow, root.count > capacity else { return PageReader(source) }
        let error = PageError.corrupt(page: root.page, reason: .countBeyondCapacity(claimed: root.count, capacity: capacity))
        return PageReader(RefusingPageSource(base: source, error: error))
    }

    /// The number of entries. O(1).
    package var count: Int { root.count }

    /// Whether the tree has no entries. O(1).
    package var isEmpty: Bool { root.count == 0 }

    /// The root page when the tree has no unwritten changes (`PageID.none` when empty), or nil
    /// when it holds dirty nodes (then `flush` writes them).
    package var cleanRootPage: PageID? { root.node == nil ? root.page : nil }

    /// Removes every entry. O(1); pages are not touched.
    package mutating func removeAll() {
        root = .clean(.none, count: 0)
        height = 0
    }
}

extension PagedTree where Node: PagedNode {
    /// The tree whose root is `rootPage` (see the concrete types' `init(rootPage:format:source:)`).
    init(openingRoot rootPage: PageID, format: PageFormat, source: any PageSource) throws(PageError) {
        self.init(format: format, source: source)
        (root, height) = try openRoot(rootPage, format: format, pages: pages)
    }

    /// See `PagedBTree.flush(allocate:write:)`.
    func flushNodes<E: Error>(
        allocate: () throws(E) -> PageID, write: (PageID, UnsafeRawBufferPointer) throws(E) -> Void
    ) throws(E) -> PageFlush {
        try flushTree(root, format: format, allocate: allocate, write: write)
    }

    /// See `PagedBTree.releasingFlushedNodes()`.
    func releasingWrittenNodes() -> PagedTree {
        var tree = self
        releaseFlushed(&tree.root)
        return tree
    }
}
