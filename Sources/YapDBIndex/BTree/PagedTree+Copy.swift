// PagedTree+Copy: the full copy index compaction makes of a tree — every node written again as
// a new page, children before parents — and re-pointing a newer tree value at the copy.

/// The outcome of `copyAll`: the flush of the tree's dirty nodes (its `root` is the root page of
/// the copy; `publish()` it like a checkpoint's flush), and where every clean page of the
/// source tree went, so a tree value derived from the copied one can be re-pointed at the new
/// pages (`remappingCopiedPages`).
///
/// Memory: one dictionary entry per page of the tree (two page ids), never a decoded node.
package struct PageCopy: Sendable {
    /// The dirty nodes written; its `root` is the copy's root page.
    package let flush: PageFlush
    /// Old page → new page, for every clean page the copy read (and every page a published
    /// flush had written a copied dirty node to).
    let moved: [PageID: PageID]
    /// Pages written by the copy (every node of the tree).
    package let pagesWritten: Int

    /// The root page of the copy (`PageID.none` for an empty tree).
    package var root: PageID { flush.root }
}

extension PagedTree where Node: PagedNode {
    /// Writes every node of the tree as a new page, children before parents, and returns the
    /// new root and where each old page went.
    ///
    /// Clean pages are read (checksums verified, so a damaged page is reported, never copied
    /// under a fresh checksum), decoded, and re-encoded with their children's new page ids;
    /// dirty nodes are encoded as by `flush`, including those a published flush already wrote.
    /// The walk is depth first and holds at most one decoded page per level: O(height) nodes in
    /// memory, never the whole tree. `allocate` and `write` are as for `flush`. Once the pages
    /// and the root record naming them are durable, `publish()` the result's `flush` under the
    /// writer lock and replace the writer's tree with `remappingCopiedPages(_:)` of it.
    ///
    /// - Throws: whatever `allocate` or `write` throw, or `readFailed` of a page error.
    /// - Threading: as `flush`; never mutates a node.
    func copyNodes<E: Error>(
        allocate: () throws(E) -> PageID, write: (PageID, UnsafeRawBufferPointer) throws(E) -> Void,
        readFailed: (PageError) -> E
    ) throws(E) -> PageCopy {
        var writer = PageWriter(format: format)
        var moved: [PageID: PageID] = [:]
        var written = 0
        let pages = self.pages, format = self.format
        func copy(_ ref: ChildRef<Node>, level: Int) throws(E) -> PageID {
            let node: Node
            if let dirty = ref.node {
                node = dirty
            } else {
                do throws(PageError) {
                    node = try Node.load(ref.page, level: level, count: ref.count, format: format, pages: pages, verifyChecksum: true)
                } catch { throw readFailed(error) }
            }
            var childPages: [PageID] = []
            childPages.reserveCapacity(node.children.count)
            for child in node.children { childPages.append(try copy(child, level: level - 1)) }
            written += 1
            guard ref.node != nil else {
                let id = try writer.emitCopy(allocate: allocate, write: write) { node.encode(into: $0, childPages: childPages) }
                moved[ref.page] = id
                return id
            }
            let old = node.mark.flushedPage
            let id = try writer.emit(node, node.mark, allocate: allocate, write: write) { node.encode(into: $0, childPages: childPages) }
            if old != .none { moved[old] = id }
            return id
        }
        guard height > 0 else {
            return PageCopy(flush: PageFlush(root: .none, marks: [], nodes: []), moved: [:], pagesWritten: 0)
        }
        let page = try copy(root, level: height - 1)
        return PageCopy(flush: PageFlush(root: page, marks: writer.marks, nodes: writer.nodes), moved: moved, pagesWritten: written)
    }

    /// This tree — the copied value or one derived from it since — pointing at the copy's
    /// pages: nodes the copy wrote are released (`releasingWrittenNodes`, so `copy.flush` must be
    /// published), and every clean reference to a page the copy moved is replaced by its new
    /// page. Visits dirty nodes only (copying shared ones whose children change). Chain
    /// `reading(from:)` with a source that holds the new pages.
    func remappingCopiedPages(_ copy: PageCopy) -> PagedTree {
        var tree = self
        remapPages(&tree.root, copy.moved)
        return tree
    }
}

/// Replaces, under `ref`, each node a published flush wrote by its page and each moved clean
/// page by its new page, in one pass (a released node's new page id is never looked up in
/// `moved`, whose keys are old ids); copies shared dirty nodes whose children change.
private func remapPages<Node: PagedNode>(_ ref: inout ChildRef<Node>, _ moved: [PageID: PageID]) {
    guard ref.node != nil else {
        if let page = moved[ref.page] { ref.page = page }
        return
    }
    // No local reference to the node: the uniqueness test below must see only the tree's.
    let written = ref.node.unsafelyUnwrapped.mark.flushedPage
    if written != .none {
        ref = .clean(written, count: ref.count, first: ref.first)
        return
    }
    if !isKnownUniquelyReferenced(&ref.node) { ref.node = ref.node.unsafelyUnwrapped.copy() }
    let owned = ref.node.unsafelyUnwrapped
    for k in owned.children.indices { remapPages(&owned.children[k], moved) }
}

extension PagedBTree {
    /// Writes every node of the tree as a new page; see `copyNodes` (the full copy of index
    /// compaction).
    package func copyAll<E: Error>(
        allocate: () throws(E) -> PageID, write: (PageID, UnsafeRawBufferPointer) throws(E) -> Void,
        readFailed: (PageError) -> E
    ) throws(E) -> PageCopy {
        try copyNodes(allocate: allocate, write: write, readFailed: readFailed)
    }

    /// This tree pointing at the pages of a published `copy` of it (or of an older value it
    /// derives from); see `remappingCopiedPages`.
    package func remapping(to copy: PageCopy) -> PagedBTree { remappingCopiedPages(copy) }
}
