// PagedBTree: a copy-on-write B+tree of byte keys and byte values over pages.

/// A copy-on-write B+tree mapping byte-string keys (in memcmp order) to byte-string values, whose
/// nodes are pages read on demand from a `PageSource` or dirty nodes held in memory.
///
/// **Value semantics.** A tree is an immutable value: a root (a clean page or a dirty node), the
/// entry count and the height. Copying it is O(1) and is a snapshot. A mutation copies only the
/// touched path into dirty nodes (clean pages are decoded, never changed); dirty nodes the value
/// owns exclusively are changed in place, so many writes in one transaction are cheap.
///
/// **Pages.** Every node fits one page of `format.pageSize` bytes (docs/format.md, "Index
/// pages"); branches record each child's entry count, so positions cost O(log n) too. Nodes
/// other than the root hold at least an eighth of a page's payload; an entry (key + value) is at
/// most `format.maximumEntrySize` bytes. `flush` writes the dirty nodes as pages.
///
/// **Errors.** Anything that reads a page throws `PageError`: damaged bytes give `.corrupt`,
/// never a trap; the tree value is unchanged when a mutation throws.
///
/// **Threading.** A value type: copies may be read from any number of threads concurrently
/// (the source must allow concurrent reads); one variable is mutated by one thread at a time.
package struct PagedBTree: Sendable {
    /// The root: a clean page, a dirty node, or (count 0, height 0) nothing.
    var root: ChildRef<KeyedNode>
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
    /// - Throws: `PageError` if the root page cannot be read or is not a keyed-tree page.
    package init(rootPage: PageID, format: PageFormat, source: any PageSource) throws(PageError) {
        self.format = format
        self.source = source
        (root, height) = try openRoot(rootPage, format: format, source: source)
    }

    /// This tree reading its clean pages from `source` — e.g. a newer view of the index files
    /// that also holds the pages a checkpoint just wrote. O(1).
    package func reading(from source: any PageSource) -> PagedBTree {
        var tree = self
        tree.source = source
        return tree
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
