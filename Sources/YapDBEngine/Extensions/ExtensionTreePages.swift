import YapDBIndex

/// The index pages an extension's trees live on: the page format and the source their clean
/// pages are read from. An extension whose state makes trees as it goes (a view opens a group's
/// tree from a root its catalog stores, or starts a new group) keeps one and makes its trees
/// with it, so they all read the same pages.
///
/// Threading: a value; safe to share.
package struct ExtensionTreePages: Sendable {
    let format: PageFormat
    /// Where the trees made here read their clean pages.
    package let source: any ExtensionPageSource

    init(format: PageFormat, source: any PageSource) {
        self.format = format
        self.source = source
    }

    /// The pages `keydir` is on (a new extension's trees, made in a write transaction).
    package init(emptyLike keydir: Keydir) {
        self.init(format: keydir.rows.format, source: keydir.rows.source)
    }

    /// The pages of `claimed`'s index (an extension opening the roots a checkpoint recorded).
    package init(_ claimed: ClaimedExtensionRoots) {
        self.init(format: claimed.format, source: claimed.source)
    }

    /// The same pages read through `source` (`PagedExtensionState.reading(from:)`).
    package func reading(from source: any ExtensionPageSource) -> ExtensionTreePages {
        ExtensionTreePages(format: format, source: source)
    }

    /// The largest key plus value an entry of a keyed tree may hold (bytes).
    package var maximumEntrySize: Int { format.maximumEntrySize }

    /// A new empty keyed tree (reads no page).
    package func keyedTree() -> ExtensionTree { ExtensionTree(PagedBTree(format: format, source: source)) }

    /// The keyed tree whose written root is `root` (reads no page).
    package func keyedTree(root: ExtensionTreeRoot) -> ExtensionTree {
        ExtensionTree(PagedBTree(root: root, format: format, source: source))
    }

    /// A new empty row tree (reads no page).
    package func rowTree() -> ExtensionRowTree { ExtensionRowTree(PagedRowTree(format: format, source: source)) }

    /// The row tree whose written root is `root` (reads no page).
    package func rowTree(root: ExtensionTreeRoot) -> ExtensionRowTree {
        ExtensionRowTree(PagedRowTree(root: root, format: format, source: source))
    }
}

/// What an extension's trees read their clean pages from (the index layer's page source, named
/// through the engine): `PagedExtensionState.reading(from:)` hands a newer one after each
/// checkpoint.
package typealias ExtensionPageSource = YapDBIndex.PageSource
