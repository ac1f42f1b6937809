// PagedBTree+Flush: writing the dirty nodes as pages (the index checkpoint's part in a tree),
// and dropping nodes a published checkpoint already wrote.

extension PagedBTree {
    /// Encodes every dirty node as a page, children before parents, and returns the new root.
    ///
    /// Only dirty nodes are visited: clean subtrees are referenced by their page ids, and nodes a
    /// published flush already wrote (`PageFlush.publish()`) reuse their pages. For each node,
    /// `allocate` gives a fresh page id and `write` receives the id and the sealed page bytes
    /// (valid only during the call). The tree value is not changed: once the pages and the root
    /// record are durable, call `publish()` on the result and replace this value with
    /// `PagedBTree(rootPage:format:source:)` (or, if the writer changed the tree meanwhile, call
    /// `releasingFlushedNodes()` on the newer value) so the memory is released.
    ///
    /// - Throws: whatever `allocate` or `write` throw; nothing is published then.
    /// - Threading: may run on any thread while other copies of the tree are read or mutated
    ///   (it never mutates a node).
    package func flush<E: Error>(
        allocate: () throws(E) -> PageID, write: (PageID, UnsafeRawBufferPointer) throws(E) -> Void
    ) throws(E) -> PageFlush {
        var writer = PageWriter(format: format)
        let page = try flushRef(root, &writer, allocate, write)
        return PageFlush(root: page, marks: writer.marks)
    }

    private func flushRef<E: Error>(
        _ ref: ChildRef<KeyedNode>, _ writer: inout PageWriter,
        _ allocate: () throws(E) -> PageID, _ write: (PageID, UnsafeRawBufferPointer) throws(E) -> Void
    ) throws(E) -> PageID {
        guard let node = ref.node else { return ref.page }
        let written = node.mark.flushedPage
        if written != .none { return written }
        var childPages: [PageID] = []
        childPages.reserveCapacity(node.children.count)
        for child in node.children { childPages.append(try flushRef(child, &writer, allocate, write)) }
        return try writer.emit(node.mark, allocate: allocate, write: write) { node.encode(into: $0, childPages: childPages) }
    }

    /// This tree with every node that a published flush wrote replaced by its clean page, so
    /// the memory it held is released once no other tree value shares it. Visits dirty nodes
    /// only; copies a shared dirty node whose subtree changes.
    package func releasingFlushedNodes() -> PagedBTree {
        var tree = self
        Self.release(&tree.root)
        return tree
    }

    private static func release(_ ref: inout ChildRef<KeyedNode>) {
        guard let node = ref.node else { return }
        let written = node.mark.flushedPage
        if written != .none {
            ref = .clean(written, count: ref.count)
            return
        }
        guard !node.isLeaf, node.children.contains(where: { $0.node != nil }) else { return }
        let owned = isKnownUniquelyReferenced(&ref.node) ? node : node.copy()
        ref.node = owned
        for k in owned.children.indices { release(&owned.children[k]) }
    }
}
