import YapDBIndex

/// An extension state on index pages whose checks and page counts speak the door's error
/// (`EngineError`): the engine turns them into `PagedExtensionState`'s `validatePages` and
/// `writtenPageCount`, so the extension names no type of the index layer. `Engine.verify()`
/// reports what `validateExtensionPages` throws as that error itself.
package protocol ExtensionPagedState: PagedExtensionState {
    /// Checks every page the state's trees reach, and whatever ties the trees together.
    func validateExtensionPages() throws(EngineError)

    /// Written pages the state's trees reference (`Engine.stats()`'s live index bytes).
    func extensionWrittenPageCount() throws(EngineError) -> Int
}

extension ExtensionPagedState {
    package func validatePages() throws(PageError) {
        do throws(EngineError) { try validateExtensionPages() } catch { throw .unreadable(page: .none, underlying: error) }
    }

    package func writtenPageCount() throws(PageError) -> Int {
        do throws(EngineError) { return try extensionWrittenPageCount() } catch { throw .unreadable(page: .none, underlying: error) }
    }
}

/// An extension state made of a fixed list of trees behind the engine's door, whose root bytes
/// are the state's own header followed by each tree's root in `extensionTrees` order. The index
/// checkpoint's page work is the same for every such state, so the engine does it: a
/// conforming state supplies its trees, its root bytes and a way to replace its trees, and gets
/// `PagedExtensionState`'s `writePages`, `copyPages`, `adopting` and `reading`, and page checks
/// and counts over every tree.
///
/// The trees are keyed ones (`ExtensionTree`, the default `Tree`), row trees
/// (`ExtensionRowTree`), or both kinds in one list (`AnyExtensionTree`).
///
/// A state with checks of its own (trees that must agree) implements `validateState`.
package protocol ExtensionTreesState: ExtensionPagedState {
    /// The kind of tree the state lists.
    associatedtype Tree: ExtensionPagedTree = ExtensionTree

    /// Every tree of the state, in the order its root bytes list their roots.
    var extensionTrees: [Tree] { get }

    /// The bytes the root record carries for the state, given each tree's root in
    /// `extensionTrees` order.
    func rootBytes(_ roots: [ExtensionTreeRoot]) -> [UInt8]

    /// This state with `transform(i, tree)` applied to each tree (`i` its place in `extensionTrees`).
    func mapExtensionTrees(_ transform: (Int, Tree) -> Tree) -> Self

    /// Checks of the state's own, beyond its trees' pages (trees that must agree), run by
    /// `Engine.verify()` after the pages'. The default checks nothing.
    func validateState() throws(EngineError)
}

extension ExtensionTreesState {
    package func writePages(_ pages: ExtensionPageWriter) throws(EngineError) -> ExtensionPagesWritten {
        var written: [ExtensionTreeWritten] = []
        for tree in extensionTrees { written.append(try tree.writePages(pages)) }
        return ExtensionPagesWritten(rootBytes: rootBytes(written.map(\.root)), trees: written)
    }

    package func copyPages(_ pages: ExtensionPageWriter) throws(EngineError) -> ExtensionPagesWritten {
        var written: [ExtensionTreeWritten] = []
        for tree in extensionTrees { written.append(try tree.copyPages(pages)) }
        return ExtensionPagesWritten(rootBytes: rootBytes(written.map(\.root)), trees: written, detail: written)
    }

    package func adopting(_ written: ExtensionPagesWritten) -> Self {
        let copies = written.detail as? [ExtensionTreeWritten]
        return mapExtensionTrees { i, tree in copies.map { tree.adopting($0[i]) } ?? tree.releasingWrittenNodes() }
    }

    package func reading(from source: any ExtensionPageSource) -> Self {
        mapExtensionTrees { _, tree in tree.reading(from: source) }
    }

    /// Checks every page of every tree, in `extensionTrees` order.
    package func validateTrees() throws(EngineError) {
        for tree in extensionTrees { try tree.validate() }
    }

    package func validateState() throws(EngineError) {}

    /// Every tree's pages, then `validateState()`.
    package func validateExtensionPages() throws(EngineError) {
        try validateTrees()
        try validateState()
    }

    package var unwrittenPageCount: Int { extensionTrees.reduce(0) { $0 + $1.unwrittenPageCount } }

    package func extensionWrittenPageCount() throws(EngineError) -> Int {
        var total = 0
        for tree in extensionTrees { total += try tree.writtenPageCount() }
        return total
    }
}
