// PagedBTree+Flush: writing the dirty nodes as pages (the index checkpoint's part in a tree),
// and dropping nodes a published checkpoint already wrote.

extension PagedBTree {
    /// Encodes every dirty node as a page, children before parents, and returns the new root.
    ///
    /// Only dirty nodes are visited: clean subtrees are referenced by their page ids, and nodes a
    /// published flush already wrote (`PageFlush.publish()`) reuse their pages. For each node,
    /// `allocate` gives a fresh page id and `write` receives the id and the sealed page bytes
    /// (valid only during the call). The tree value is not changed: once the pages and the root
    /// record are durable, call `publish()` on the result under the writer lock and replace this
    /// value with
    /// `PagedBTree(rootPage:format:source:)` (or, if the writer changed the tree meanwhile, call
    /// `releasingFlushedNodes()` on the newer value) so the memory is released.
    ///
    /// - Throws: whatever `allocate` or `write` throw; nothing is published then.
    /// - Threading: may run on any thread while other copies of the tree are read or mutated
    ///   (it never mutates a node).
    package func flush<E: Error>(
        allocate: () throws(E) -> PageID, write: (PageID, UnsafeRawBufferPointer) throws(E) -> Void
    ) throws(E) -> PageFlush {
        try flushNodes(allocate: allocate, write: write)
    }

    /// The pages the next `flush` would write: the dirty nodes not yet published. O(dirty
    /// nodes) — for statistics; a checkpoint threshold is cheaper to keep by counting writes.
    package var unwrittenPageCount: Int { unwrittenNodeCount(root) }

    /// This tree with every node that a published flush wrote replaced by its clean page, so
    /// the memory it held is released once no other tree value shares it. Visits dirty nodes
    /// only; copies a shared dirty node whose subtree changes. The result must read from a
    /// source that holds the written pages: chain `reading(from:)` if this tree's does not.
    package func releasingFlushedNodes() -> PagedBTree {
        releasingWrittenNodes()
    }
}
