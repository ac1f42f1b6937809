// PagedRowTree: a copy-on-write order-statistic B+tree of row ids over pages (one view group).

/// A copy-on-write order-statistic B+tree of `UInt64` row ids whose nodes are pages read on
/// demand from a `PageSource` or dirty nodes held in memory: one group of a view.
///
/// **Positions are the truth.** The tree never compares row ids: the caller inserts at a
/// position found with its own comparator (`insertionIndex`, `lowerBound`, `upperBound`,
/// `findRange` take `(UInt64) -> RowComparison`, with the convention of `OrderedRowTree`: how
/// the searched-for row compares to the existing row). Branches record each child's entry count
/// and first row id, so positional operations and comparator searches cost O(log n) page visits
/// and the searches call the comparator O(log n) times without reading the children's pages.
///
/// **Value semantics, pages, errors and threading** are those of `PagedBTree`: a value is a
/// snapshot; mutations copy the touched path; `flush` writes dirty nodes; damaged pages give
/// `PageError.corrupt`; copies may be read concurrently, a variable is mutated by one thread.
package struct PagedRowTree: Sendable {
    /// The root: a clean page, a dirty node, or (count 0, height 0) nothing.
    var root: ChildRef<RowNode>
    /// Levels of nodes: 0 for an empty tree, 1 when the root is a leaf.
    package internal(set) var height: Int
    /// The page size and checksum of this tree's pages.
    package let format: PageFormat
    /// Where clean pages are read (`reading(from:)` rebinds it).
    package private(set) var source: any PageSource

    /// An empty tree.
    package init(format: PageFormat, source: any PageSource) {
        self.format = format
        self.source = source
        root = .clean(.none, count: 0)
        height = 0
    }

    /// The tree whose root is the written page `rootPage` (`PageID.none`: empty). Reads the root
    /// page's header for the count and height.
    /// - Throws: `PageError` if the root page cannot be read or is not a row-tree page.
    package init(rootPage: PageID, format: PageFormat, source: any PageSource) throws(PageError) {
        self.format = format
        self.source = source
        (root, height) = try openRoot(rootPage, format: format, source: source)
    }

    /// This tree reading its clean pages from `source` — e.g. a newer view of the index files
    /// that also holds the pages a checkpoint just wrote. O(1).
    package func reading(from source: any PageSource) -> PagedRowTree {
        var tree = self
        tree.source = source
        return tree
    }

    /// The number of row ids. O(1).
    package var count: Int { root.count }

    /// Whether the tree is empty. O(1).
    package var isEmpty: Bool { root.count == 0 }

    /// The root page when the tree has no unwritten changes (`PageID.none` when empty), or nil.
    package var cleanRootPage: PageID? { root.node == nil ? root.page : nil }

    /// Removes every row id. O(1); pages are not touched.
    package mutating func removeAll() {
        root = .clean(.none, count: 0)
        height = 0
    }

    /// Writes the dirty nodes as pages, children before parents; see `PagedBTree.flush`.
    package func flush<E: Error>(
        allocate: () throws(E) -> PageID, write: (PageID, UnsafeRawBufferPointer) throws(E) -> Void
    ) throws(E) -> PageFlush {
        try flushTree(root, format: format, allocate: allocate, write: write)
    }

    /// The pages the next `flush` would write; see `PagedBTree.unwrittenPageCount`.
    package var unwrittenPageCount: Int { unwrittenNodeCount(root) }

    /// This tree with the nodes a published flush wrote replaced by their pages; see
    /// `PagedBTree.releasingFlushedNodes()`.
    package func releasingFlushedNodes() -> PagedRowTree {
        var tree = self
        releaseFlushed(&tree.root)
        return tree
    }

    /// Opens the page of a clean child at `level` that its parent says holds `count` entries.
    func withPage<R>(_ id: PageID, level: Int, count: Int, _ body: (PageView) throws(PageError) -> R) throws(PageError) -> R {
        try readPage(source, id) { bytes throws(PageError) -> R in
            let view = try PageView(bytes, id: id, pageSize: format.pageSize, family: .rows, level: level)
            try view.requireSubtreeCount(count)
            return try body(view)
        }
    }
}
