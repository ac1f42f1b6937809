import YapDBIndex

/// An extension state made of `ExtensionTree`s, whose root bytes are the state's own header
/// followed by each tree's root in `trees` order. The index checkpoint's page work is the same
/// for every such state, so the engine does it: a conforming state supplies its trees, its root
/// bytes and a way to replace its trees, and gets `PagedExtensionState`'s `writePages`,
/// `copyPages`, `adopting` and `reading`, and a `validatePages` and page counts over every tree.
///
/// A state with checks of its own (trees that must agree) implements `validateState`.
package protocol ExtensionTreesState: PagedExtensionState {
    /// Every tree of the state, in the order its root bytes list their roots.
    var extensionTrees: [ExtensionTree] { get }

    /// The bytes the root record carries for the state, given each tree's root in
    /// `extensionTrees` order.
    func rootBytes(_ roots: [ExtensionTreeRoot]) -> [UInt8]

    /// This state with `transform(i, tree)` applied to each tree (`i` its place in `extensionTrees`).
    func mapExtensionTrees(_ transform: (Int, ExtensionTree) -> ExtensionTree) -> Self

    /// Checks of the state's own, beyond its trees' pages (trees that must agree), run by
    /// `Engine.verify()` after the pages'. The default checks nothing.
    func validateState() throws(EngineError)
}

extension ExtensionTreesState {
    package func writePages(_ pages: ExtensionPageWriter) throws(EngineError) -> ExtensionPagesWritten {
        let trees = extensionTrees
        var flushes: [PageFlush] = []
        for tree in trees { flushes.append(try pages.flush(tree.base)) }
        let roots = zip(trees, flushes).map { $0.base.root(after: $1) }
        return ExtensionPagesWritten(rootBytes: rootBytes(roots), flushes: flushes)
    }

    package func copyPages(_ pages: ExtensionPageWriter) throws(EngineError) -> ExtensionPagesWritten {
        let trees = extensionTrees
        var copies: [PageCopy] = []
        for tree in trees { copies.append(try pages.copy(tree.base)) }
        let roots = zip(trees, copies).map { $0.base.root(after: $1.flush) }
        return ExtensionPagesWritten(rootBytes: rootBytes(roots), flushes: copies.map(\.flush), detail: copies)
    }

    package func adopting(_ written: ExtensionPagesWritten) -> Self {
        let copies = written.detail as? [PageCopy]
        return mapExtensionTrees { i, tree in
            ExtensionTree(copies.map { tree.base.remapping(to: $0[i]) } ?? tree.base.releasingFlushedNodes())
        }
    }

    package func reading(from source: any PageSource) -> Self {
        mapExtensionTrees { _, tree in ExtensionTree(tree.base.reading(from: source)) }
    }

    /// Checks every page of every tree, in `extensionTrees` order.
    package func validateTrees() throws(EngineError) {
        for tree in extensionTrees { try tree.validate() }
    }

    package func validateState() throws(EngineError) {}

    /// Every tree's pages, then `validateState()` (its failure travels as the page error's
    /// cause, which `Engine.verify()` reports as the engine error itself).
    package func validatePages() throws(PageError) {
        for tree in extensionTrees { try tree.base.validate() }
        do throws(EngineError) { try validateState() } catch { throw .unreadable(page: .none, underlying: error) }
    }

    package var unwrittenPageCount: Int { extensionTrees.reduce(0) { $0 + $1.base.unwrittenPageCount } }

    package func writtenPageCount() throws(PageError) -> Int {
        var total = 0
        for tree in extensionTrees { total += try tree.base.writtenPageCount() }
        return total
    }
}
