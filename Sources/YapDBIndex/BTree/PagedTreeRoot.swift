// PagedTreeRoot: a written tree named by its root alone — what an extension records about each
// of its trees (in the index root record, or inside another tree), so it can be opened again
// without reading a page.

/// A written tree's root page, entry count, height and (row trees) first row id: enough to open
/// the tree with no page read (`init(root:format:source:)`). The first walk checks the root
/// page against it (level = height − 1, subtree count = count), so a root that lies gives
/// `PageError.corrupt` on the first read, never a trap.
package struct PagedTreeRoot: Sendable, Equatable {
    /// The root page (`PageID.none` for an empty tree).
    package var page: PageID
    /// Entries in the tree.
    package var count: Int
    /// Levels of nodes (0 for an empty tree).
    package var height: Int
    /// Row trees: the first row id (0 for keyed trees and empty trees).
    package var first: UInt64

    /// The root of an empty tree.
    package static let empty = PagedTreeRoot(page: .none, count: 0, height: 0, first: 0)

    package init(page: PageID, count: Int, height: Int, first: UInt64) {
        self.page = page
        self.count = count
        self.height = height
        self.first = first
    }

    /// Appends the root as four minimal varints (page, count, height, first): 4 to 40 bytes.
    package func append(to bytes: inout [UInt8]) {
        appendVarint(page, to: &bytes)
        appendVarint(UInt64(count), to: &bytes)
        appendVarint(UInt64(height), to: &bytes)
        appendVarint(first, to: &bytes)
    }

    /// The encoded form (`append(to:)`).
    package var encoded: [UInt8] {
        var bytes: [UInt8] = []
        append(to: &bytes)
        return bytes
    }

    /// Reads a root written by `append(to:)` at `cursor`, advancing it; nil when the bytes are
    /// not one (a varint runs past the end, or a field is out of range: count above
    /// `PageLayout.maximumSubtreeCount`, height above `PageLayout.maximumLevel` + 1, an empty
    /// tree with a page or a non-empty one without).
    package static func read(_ bytes: UnsafeRawBufferPointer, _ cursor: inout Int) -> PagedTreeRoot? {
        guard let page = readVarint(bytes, &cursor), let count = readVarint(bytes, &cursor),
              let height = readVarint(bytes, &cursor), let first = readVarint(bytes, &cursor),
              count <= UInt64(PageLayout.maximumSubtreeCount), height <= UInt64(PageLayout.maximumLevel + 1),
              (count == 0) == (page == .none), (count == 0) == (height == 0) else { return nil }
        return PagedTreeRoot(page: page, count: Int(count), height: Int(height), first: first)
    }

    /// Decodes exactly one root from `bytes` (nothing after it); nil otherwise.
    package static func decode(_ bytes: [UInt8]) -> PagedTreeRoot? {
        bytes.withUnsafeBytes { raw in
            var cursor = 0
            guard let root = read(raw, &cursor), cursor == raw.count else { return nil }
            return root
        }
    }
}

extension PagedTree where Node: PagedNode {
    /// See `PagedBTree.init(root:format:source:)`.
    init(openingWritten root: PagedTreeRoot, format: PageFormat, source: any PageSource) {
        self.init(format: format, source: source)
        guard root.count > 0 else { return }
        self.root = .clean(root.page, count: root.count, first: root.first)
        height = root.height
        // An extension's recorded count is checked against the pages there are, as a root
        // page's is at `openRoot` (reliability finding F21); reading nothing now, a root that
        // claims too much fails at its first page read.
        pages = Self.reader(source, root: self.root, format: format)
    }

    /// See `PagedBTree.root(after:)`.
    func rootAfter(_ flush: PageFlush) -> PagedTreeRoot {
        PagedTreeRoot(page: flush.root, count: count, height: height, first: isEmpty ? 0 : root.first)
    }

    /// See `PagedBTree.writtenRoot`.
    var cleanRoot: PagedTreeRoot? {
        guard root.node == nil else { return nil }
        return PagedTreeRoot(page: root.page, count: count, height: height, first: root.first)
    }
}

extension PagedBTree {
    /// The tree whose written root is `root`, reading nothing now (see `PagedTreeRoot`).
    package init(root: PagedTreeRoot, format: PageFormat, source: any PageSource) {
        self.init(openingWritten: root, format: format, source: source)
    }

    /// The root this tree has once `flush` — the flush of this very value — is written.
    package func root(after flush: PageFlush) -> PagedTreeRoot { rootAfter(flush) }

    /// The root of a tree with no unwritten node (nil when it holds dirty nodes).
    package var writtenRoot: PagedTreeRoot? { cleanRoot }
}

extension PagedRowTree {
    /// The tree whose written root is `root`, reading nothing now (see `PagedTreeRoot`).
    package init(root: PagedTreeRoot, format: PageFormat, source: any PageSource) {
        self.init(openingWritten: root, format: format, source: source)
    }

    /// The root this tree has once `flush` — the flush of this very value — is written.
    package func root(after flush: PageFlush) -> PagedTreeRoot { rootAfter(flush) }

    /// The root of a tree with no unwritten node (nil when it holds dirty nodes).
    package var writtenRoot: PagedTreeRoot? { cleanRoot }
}

extension PagedRowTree {
    /// Writes every node of the tree as a new page (index compaction's full copy); see
    /// `PagedBTree.copyAll`.
    package func copyAll<E: Error>(
        allocate: () throws(E) -> PageID, write: (PageID, UnsafeRawBufferPointer) throws(E) -> Void,
        readFailed: (PageError) -> E
    ) throws(E) -> PageCopy {
        try copyNodes(allocate: allocate, write: write, readFailed: readFailed)
    }

    /// This tree pointing at the pages of a published `copy` of it (or of an older value it
    /// derives from); see `PagedBTree.remapping(to:)`.
    package func remapping(to copy: PageCopy) -> PagedRowTree { remappingCopiedPages(copy) }
}
