// PagedRowTree: a copy-on-write order-statistic B+tree of row ids over pages (one view group).

/// A copy-on-write order-statistic B+tree of `UInt64` row ids whose nodes are pages read on
/// demand from a `PageSource` or dirty nodes held in memory: one group of a view.
///
/// **Positions are the truth.** The tree never compares row ids: the caller inserts at a
/// position found with its own comparator (`insertionIndex`, `lowerBound`, `upperBound`,
/// `findRange` take `(UInt64) -> RowComparison`, with the convention in RowComparison.swift: how
/// the searched-for row compares to the existing row). Branches record each child's entry count
/// and first row id, so positional operations and comparator searches cost O(log n) page visits
/// and the searches call the comparator O(log n) times without reading the children's pages.
///
/// Value semantics, errors and threading are `PagedTree`'s. Nodes other than the root hold at
/// least a quarter of a page's capacity.
package typealias PagedRowTree = PagedTree<RowNode>

extension PagedRowTree {
    /// The tree whose root is the written page `rootPage` (`PageID.none`: empty). Reads the root
    /// page's header for the count, height and first row id.
    /// - Throws: `PageError` if the root page cannot be read or is not a row-tree page.
    package init(rootPage: PageID, format: PageFormat, source: any PageSource) throws(PageError) {
        try self.init(openingRoot: rootPage, format: format, source: source)
    }

    /// Writes the dirty nodes as pages, children before parents; see `PagedBTree.flush`.
    package func flush<E: Error>(
        allocate: () throws(E) -> PageID, write: (PageID, UnsafeRawBufferPointer) throws(E) -> Void
    ) throws(E) -> PageFlush {
        try flushNodes(allocate: allocate, write: write)
    }

    /// The pages the next `flush` would write; see `PagedBTree.unwrittenPageCount`.
    package var unwrittenPageCount: Int { unwrittenNodeCount(root) }

    /// This tree with the nodes a published flush wrote replaced by their pages; see
    /// `PagedBTree.releasingFlushedNodes()`.
    package func releasingFlushedNodes() -> PagedRowTree {
        releasingWrittenNodes()
    }
}
