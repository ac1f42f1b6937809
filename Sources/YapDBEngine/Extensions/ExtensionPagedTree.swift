import YapDBIndex

/// The index checkpoint's page work on one tree of an extension, the same for both kinds of
/// tree behind the door (`ExtensionTree`, keyed; `ExtensionRowTree`, positional): write its
/// unwritten nodes, copy it whole, adopt what a published checkpoint wrote, read a newer page
/// source, check its pages, count them. A state made of such trees gets all of it from
/// `ExtensionTreesState`; a state whose trees come and go (a view's groups) calls these per
/// tree from its own `PagedExtensionState` members.
package protocol ExtensionPagedTree: Sendable {
    /// The number of entries. O(1).
    var count: Int { get }

    /// The root as the last checkpoint wrote it, or nil when the tree holds unwritten changes.
    var writtenRoot: ExtensionTreeRoot? { get }

    /// Writes the tree's unwritten nodes through `pages` (children before parents; only nodes
    /// not yet written). Throws what `pages` throws.
    func writePages(_ pages: ExtensionPageWriter) throws(EngineError) -> ExtensionTreeWritten

    /// Writes every node of the tree as a new page through `pages` (index compaction). Throws
    /// what `pages` throws; a damaged page is reported, never copied.
    func copyPages(_ pages: ExtensionPageWriter) throws(EngineError) -> ExtensionTreeWritten

    /// This tree — the one `written` came from, or a newer one derived from it — with what the
    /// published checkpoint wrote released (after a copy: re-pointed at the copy).
    func adopting(_ written: ExtensionTreeWritten) -> Self

    /// This tree with the nodes a published checkpoint wrote replaced by their pages: for a
    /// tree the checkpoint did not write (made after its capture), which shares no node with it.
    func releasingWrittenNodes() -> Self

    /// This tree reading its clean pages from `source`. O(1).
    func reading(from source: any ExtensionPageSource) -> Self

    /// Checks every page of the tree (`Engine.verify()` reports what it throws).
    func validate() throws(EngineError)

    /// Nodes the next checkpoint would write (`Engine.stats()`).
    var unwrittenPageCount: Int { get }

    /// Written pages the tree references (`Engine.stats()`'s live index bytes).
    func writtenPageCount() throws(EngineError) -> Int
}

/// What a checkpoint wrote of one extension tree: its root once published (what the
/// extension's root bytes, or a catalog of its own, record) and the pages to publish.
package struct ExtensionTreeWritten: Sendable {
    /// The tree's root once the checkpoint is published.
    package let root: ExtensionTreeRoot
    let flush: PageFlush
    /// An index compaction's copy (`adopting` re-points the tree at it); nil for a checkpoint.
    let copy: PageCopy?
}

extension ExtensionPagesWritten {
    /// What a state wrote: its root bytes and every tree it wrote, in any order (the engine
    /// publishes each one's pages once durable); `detail` is what the state's `adopting` needs.
    package init(rootBytes: [UInt8], trees: [ExtensionTreeWritten], detail: any Sendable = ()) {
        self.init(rootBytes: rootBytes, flushes: trees.map(\.flush), detail: detail)
    }
}

extension ExtensionTree: ExtensionPagedTree {
    package var writtenRoot: ExtensionTreeRoot? { base.writtenRoot }

    package func writePages(_ pages: ExtensionPageWriter) throws(EngineError) -> ExtensionTreeWritten {
        let flush = try pages.flush(base)
        return ExtensionTreeWritten(root: base.root(after: flush), flush: flush, copy: nil)
    }

    package func copyPages(_ pages: ExtensionPageWriter) throws(EngineError) -> ExtensionTreeWritten {
        let copy = try pages.copy(base)
        return ExtensionTreeWritten(root: base.root(after: copy.flush), flush: copy.flush, copy: copy)
    }

    package func adopting(_ written: ExtensionTreeWritten) -> ExtensionTree {
        ExtensionTree(written.copy.map { base.remapping(to: $0) } ?? base.releasingFlushedNodes())
    }

    package func releasingWrittenNodes() -> ExtensionTree { ExtensionTree(base.releasingFlushedNodes()) }

    package func reading(from source: any ExtensionPageSource) -> ExtensionTree { ExtensionTree(base.reading(from: source)) }

    package var unwrittenPageCount: Int { base.unwrittenPageCount }

    package func writtenPageCount() throws(EngineError) -> Int {
        try mappingPageErrors { () throws(PageError) in try base.writtenPageCount() }
    }
}

extension ExtensionRowTree: ExtensionPagedTree {
    package func writePages(_ pages: ExtensionPageWriter) throws(EngineError) -> ExtensionTreeWritten {
        let flush = try pages.flush(base)
        return ExtensionTreeWritten(root: base.root(after: flush), flush: flush, copy: nil)
    }

    package func copyPages(_ pages: ExtensionPageWriter) throws(EngineError) -> ExtensionTreeWritten {
        let copy = try pages.copy(base)
        return ExtensionTreeWritten(root: base.root(after: copy.flush), flush: copy.flush, copy: copy)
    }

    package func adopting(_ written: ExtensionTreeWritten) -> ExtensionRowTree {
        ExtensionRowTree(written.copy.map { base.remapping(to: $0) } ?? base.releasingFlushedNodes())
    }

    package func releasingWrittenNodes() -> ExtensionRowTree { ExtensionRowTree(base.releasingFlushedNodes()) }

    package func reading(from source: any ExtensionPageSource) -> ExtensionRowTree { ExtensionRowTree(base.reading(from: source)) }

    package var unwrittenPageCount: Int { base.unwrittenPageCount }

    package func writtenPageCount() throws(EngineError) -> Int {
        try mappingPageErrors { () throws(PageError) in try base.writtenPageCount() }
    }
}

/// A tree of either kind, for a state that lists keyed and row trees together in
/// `ExtensionTreesState.extensionTrees` (its `mapExtensionTrees` takes each back out with
/// `keyed` / `rows`: the page work never changes a tree's kind).
package enum AnyExtensionTree: ExtensionPagedTree {
    case keyed(ExtensionTree)
    case rows(ExtensionRowTree)

    /// The keyed tree. - Precondition: this is one (a state's own bookkeeping; misuse stops
    /// the program).
    package var keyed: ExtensionTree {
        guard case .keyed(let tree) = self else { preconditionFailure("AnyExtensionTree: a row tree where a keyed tree was listed") }
        return tree
    }

    /// The row tree. - Precondition: this is one.
    package var rows: ExtensionRowTree {
        guard case .rows(let tree) = self else { preconditionFailure("AnyExtensionTree: a keyed tree where a row tree was listed") }
        return tree
    }

    package var count: Int {
        switch self {
        case .keyed(let tree): tree.count
        case .rows(let tree): tree.count
        }
    }

    package var writtenRoot: ExtensionTreeRoot? {
        switch self {
        case .keyed(let tree): tree.writtenRoot
        case .rows(let tree): tree.writtenRoot
        }
    }

    package func writePages(_ pages: ExtensionPageWriter) throws(EngineError) -> ExtensionTreeWritten {
        switch self {
        case .keyed(let tree): try tree.writePages(pages)
        case .rows(let tree): try tree.writePages(pages)
        }
    }

    package func copyPages(_ pages: ExtensionPageWriter) throws(EngineError) -> ExtensionTreeWritten {
        switch self {
        case .keyed(let tree): try tree.copyPages(pages)
        case .rows(let tree): try tree.copyPages(pages)
        }
    }

    package func adopting(_ written: ExtensionTreeWritten) -> AnyExtensionTree {
        switch self {
        case .keyed(let tree): .keyed(tree.adopting(written))
        case .rows(let tree): .rows(tree.adopting(written))
        }
    }

    package func releasingWrittenNodes() -> AnyExtensionTree {
        switch self {
        case .keyed(let tree): .keyed(tree.releasingWrittenNodes())
        case .rows(let tree): .rows(tree.releasingWrittenNodes())
        }
    }

    package func reading(from source: any ExtensionPageSource) -> AnyExtensionTree {
        switch self {
        case .keyed(let tree): .keyed(tree.reading(from: source))
        case .rows(let tree): .rows(tree.reading(from: source))
        }
    }

    package func validate() throws(EngineError) {
        switch self {
        case .keyed(let tree): try tree.validate()
        case .rows(let tree): try tree.validate()
        }
    }

    package var unwrittenPageCount: Int {
        switch self {
        case .keyed(let tree): tree.unwrittenPageCount
        case .rows(let tree): tree.unwrittenPageCount
        }
    }

    package func writtenPageCount() throws(EngineError) -> Int {
        switch self {
        case .keyed(let tree): try tree.writtenPageCount()
        case .rows(let tree): try tree.writtenPageCount()
        }
    }
}
