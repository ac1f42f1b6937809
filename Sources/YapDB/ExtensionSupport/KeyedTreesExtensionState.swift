import YapDBIndex
import YapDBEngine

/// An extension state made of keyed trees (`PagedBTree`) whose root bytes are the state's own
/// header followed by each tree's `PagedTreeRoot`, in `trees` order. The index checkpoint's
/// page work is the same for every such state, so it lives here once: a conforming state
/// supplies its trees, its root bytes and a way to replace its trees, and gets `writePages`,
/// `copyPages`, `adopting` and `reading` (`PagedExtensionState`) for free.
///
/// `validateTrees()`, `treesUnwrittenPageCount` and `treesWrittenPageCount()` cover every tree;
/// a state opts into them for `validatePages()` and the page counts (adding its own checks).
protocol KeyedTreesExtensionState: PagedExtensionState {
    /// Every tree of the state, in the order its root bytes list their roots.
    var trees: [PagedBTree] { get }

    /// The bytes the root record carries for the state, given each tree's root in `trees` order.
    func rootBytes(_ roots: [PagedTreeRoot]) -> [UInt8]

    /// This state with `transform(i, tree)` applied to each tree (`i` its place in `trees`).
    func mapTrees(_ transform: (Int, PagedBTree) -> PagedBTree) -> Self
}

extension KeyedTreesExtensionState {
    func writePages(_ pages: ExtensionPageWriter) throws(EngineError) -> ExtensionPagesWritten {
        let trees = trees
        var flushes: [PageFlush] = []
        for tree in trees { flushes.append(try pages.flush(tree)) }
        let roots = zip(trees, flushes).map { $0.root(after: $1) }
        return ExtensionPagesWritten(rootBytes: rootBytes(roots), flushes: flushes)
    }

    func copyPages(_ pages: ExtensionPageWriter) throws(EngineError) -> ExtensionPagesWritten {
        let trees = trees
        var copies: [PageCopy] = []
        for tree in trees { copies.append(try pages.copy(tree)) }
        let roots = zip(trees, copies).map { $0.root(after: $1.flush) }
        return ExtensionPagesWritten(rootBytes: rootBytes(roots), flushes: copies.map(\.flush), detail: copies)
    }

    func adopting(_ written: ExtensionPagesWritten) -> Self {
        let copies = written.detail as? [PageCopy]
        return mapTrees { i, tree in copies.map { tree.remapping(to: $0[i]) } ?? tree.releasingFlushedNodes() }
    }

    func reading(from source: any PageSource) -> Self {
        mapTrees { _, tree in tree.reading(from: source) }
    }

    /// Checks every page of every tree (`PagedBTree.validate()`), in `trees` order.
    func validateTrees() throws(PageError) {
        for tree in trees { try tree.validate() }
    }

    /// The unwritten nodes of every tree.
    var treesUnwrittenPageCount: Int { trees.reduce(0) { $0 + $1.unwrittenPageCount } }

    /// The written pages every tree references.
    func treesWrittenPageCount() throws(PageError) -> Int {
        var total = 0
        for tree in trees { total += try tree.writtenPageCount() }
        return total
    }
}
