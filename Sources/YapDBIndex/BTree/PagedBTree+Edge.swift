// PagedBTree+Edge: the first or last entry, read with one descent along the tree's edge.

extension PagedBTree {
    /// Calls `body` with the first entry in key order (the last when `last` is set) and says
    /// whether the tree had one. One descent along the edge of the tree: no key is compared and
    /// no position is counted, so it is cheaper than `withElement(at:)` at either end. The bytes
    /// are valid only during the call.
    /// - Throws: `PageError` if a page on the path cannot be read or is damaged (its subtree
    ///   count disagrees with its parent's).
    @discardableResult
    package func withEdgeEntry(
        last: Bool, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Void
    ) throws(PageError) -> Bool {
        guard height > 0, count > 0 else { return false }
        var cursor = cursor()
        if let table = pages.table { return try cursor.edge(last: last, table, body) }
        return try cursor.edge(last: last, pages, body)
    }
}

extension Array where Element == PagedBTree {
    /// `self[index].withEdgeEntry(last:_:)`, on the tree in place (`PagedBTree.withEdgeEntry(at:…)`).
    /// - Precondition: `index` is a valid index.
    package func withEdgeEntry(
        ofTree index: Int, last: Bool, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Void
    ) throws(PageError) -> Bool {
        precondition(index >= 0 && index < count, "withEdgeEntry: tree \(index) of \(count)")
        return try withUnsafeBufferPointer { trees throws(PageError) in
            try PagedBTree.withEdgeEntry(at: trees.baseAddress! + index, last: last, body)
        }
    }

    /// Tree `index` as plain values (`PagedBTree.mapped`), its fields read in place: nil when
    /// its root is not a written page or its pages are not mapped.
    /// - Precondition: `index` is a valid index.
    package func mappedTree(ofTree index: Int) -> MappedTree? {
        precondition(index >= 0 && index < count, "mappedTree: tree \(index) of \(count)")
        return withUnsafeBufferPointer { trees in PagedBTree.mappedTree(at: trees.baseAddress! + index) }
    }
}

extension PagedBTree {
    /// `tree.pointee.withEdgeEntry(last:_:)`. A tree whose root is written and whose pages are
    /// mapped (the usual case for a reader) is read through a few of its fields, in place: a
    /// call on a tree held in an array or another value copies it out first, retaining and
    /// releasing each reference it holds, which costs more than the descent itself.
    package static func withEdgeEntry(
        at tree: UnsafePointer<PagedBTree>, last: Bool,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Void
    ) throws(PageError) -> Bool {
        // A dirty or empty root (page `none`), or pages read through the source: the tree's
        // own descent.
        guard let mapped = mappedTree(at: tree) else { return try tree.pointee.withEdgeEntry(last: last, body) }
        return try mapped.withEdgeEntry(last: last, body)
    }

    /// `tree.pointee.mapped`, its fields read in place (no reference counted).
    package static func mappedTree(at tree: UnsafePointer<PagedBTree>) -> MappedTree? {
        MappedTree(root: tree.pointee.root.page, entries: tree.pointee.root.count, height: tree.pointee.height,
                   pageSize: tree.pointee.format.pageSize, table: tree.pointee.pages.table)
    }
}

extension PagedBTree {
    /// This tree as plain values, when its root is a written page (never a dirty node: a dirty
    /// root's page is `none`) and its pages are mapped; else nil.
    var mapped: MappedTree? {
        MappedTree(root: root.page, entries: root.count, height: height, pageSize: format.pageSize, table: pages.table)
    }
}

/// A written tree whose pages are mapped, reduced to the fields its reads use: a plain value (no
/// reference is counted when it is copied or read), valid while the `MappedPages` its table came
/// from lives (a reader holding the snapshot keeps them). A tree's own reads pass the tree, a
/// value holding references, into a closure at every page, retaining and releasing them each
/// time; these read the same pages with the same checks.
package struct MappedTree: Sendable {
    let root: PageID
    let entries: Int
    let height: Int
    let pageSize: Int
    let table: MappedPages.Table

    /// Nil unless `root` is a written page of a non-empty tree and `table` is there.
    init?(root: PageID, entries: Int, height: Int, pageSize: Int, table: MappedPages.Table?) {
        guard let table, root != .none, height > 0 else { return nil }
        (self.root, self.entries, self.height, self.pageSize, self.table) = (root, entries, height, pageSize, table)
    }

    /// Calls `body` with the tree's first entry (the last when `last` is set); true (a written
    /// root has entries). The edge leaf under this root, found by an earlier descent over the
    /// same pages (they are never rewritten: `MappedPages.EdgeLeaves`), is read alone, with the
    /// checks of a leaf page; otherwise one descent along the edge, which remembers it.
    /// - Throws: `PageError` if a page on the path is missing or damaged.
    @inline(__always)
    package func withEdgeEntry(
        last: Bool, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Void
    ) throws(PageError) -> Bool {
        if height > 1, let leaf = table.edges.leaf(under: root, last: last), let bytes = try? table.page(leaf) {
            let view = try PageView(bytes, id: leaf, pageSize: pageSize, family: .keyed, level: 0)
            try view.withLeafEntry(last ? view.count - 1 : 0) { body($0, $1) }
            return true
        }
        return try descend(last: last, body)
    }

    /// The edge descent from the root, remembering the leaf it ends on.
    private func descend(
        last: Bool, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Void
    ) throws(PageError) -> Bool {
        var cursor = cursor()
        let found = try cursor.edge(last: last, table, body)
        if height > 1 { table.edges.remember(cursor.leaf.page, under: root, last: last) }
        return found
    }
}
