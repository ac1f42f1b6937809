// PagedBTree: a copy-on-write B+tree of byte keys and byte values over pages.

/// A copy-on-write B+tree mapping byte-string keys (in memcmp order) to byte-string values
/// (`PagedTree`'s value semantics, errors and threading). Every node fits one page; branches
/// record each child's entry count, so positions cost O(log n) too. Nodes other than the root
/// hold at least an eighth of a page's payload; an entry (key + value) is at most
/// `format.maximumEntrySize` bytes.
package typealias PagedBTree = PagedTree<KeyedNode>

extension PagedBTree {
    /// The tree whose root is the written page `rootPage` (`PageID.none`: empty). Reads the root
    /// page's header for the count and height.
    /// - Throws: `PageError` if the root page cannot be read or is not a keyed-tree page.
    package init(rootPage: PageID, format: PageFormat, source: any PageSource) throws(PageError) {
        try self.init(openingRoot: rootPage, format: format, source: source)
    }
}
