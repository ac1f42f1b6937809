import YapDBIndex
import YapDBEngine
import YapDBStorage

/// A full-text index on index pages (`PagedExtensionState`): the index checkpoint writes the
/// four trees' unwritten nodes with the key directory's pages and records their roots; a
/// reopen opens the trees from them without reading a page.
///
/// Root bytes (docs/format.md §10, "Extension roots"): the tag and the signature (varint length
/// + UTF-8 each), the column count, the document count and the total length (varints), then
/// the `PagedTreeRoot` of `terms`, `postings`, `positions` and `documents`.
extension FullTextState: PagedExtensionState {
    var trees: [PagedBTree] { [terms, postings, positions, documents] }

    func rootBytes(_ roots: [PagedTreeRoot]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendString(versionTag)
        bytes.appendString(signature)
        bytes.appendVarint(UInt64(columnCount))
        bytes.appendVarint(UInt64(documentCount))
        bytes.appendVarint(UInt64(totalLength))
        for root in roots { root.append(to: &bytes) }
        return bytes
    }

    func writePages(_ pages: ExtensionPageWriter) throws(StorageError) -> ExtensionPagesWritten {
        precondition(pending.isEmpty, "FullTextState: pending postings reached the commit unmerged")
        var flushes: [PageFlush] = []
        for tree in trees { flushes.append(try pages.flush(tree)) }
        let roots = zip(trees, flushes).map { $0.root(after: $1) }
        return ExtensionPagesWritten(rootBytes: rootBytes(roots), flushes: flushes)
    }

    func copyPages(_ pages: ExtensionPageWriter) throws(StorageError) -> ExtensionPagesWritten {
        precondition(pending.isEmpty, "FullTextState: pending postings reached the commit unmerged")
        var copies: [PageCopy] = []
        for tree in trees { copies.append(try pages.copy(tree)) }
        let roots = zip(trees, copies).map { $0.root(after: $1.flush) }
        return ExtensionPagesWritten(rootBytes: rootBytes(roots), flushes: copies.map(\.flush), detail: copies)
    }

    func adopting(_ written: ExtensionPagesWritten) -> FullTextState {
        let copies = written.detail as? [PageCopy]
        return mapTrees { i, tree in copies.map { tree.remapping(to: $0[i]) } ?? tree.releasingFlushedNodes() }
    }

    func reading(from source: any PageSource) -> FullTextState {
        mapTrees { _, tree in tree.reading(from: source) }
    }

    func validatePages() throws(PageError) {
        for tree in trees { try tree.validate() }
    }

    var unwrittenPageCount: Int { trees.reduce(0) { $0 + $1.unwrittenPageCount } }

    func writtenPageCount() throws(PageError) -> Int {
        var total = 0
        for tree in trees { total += try tree.writtenPageCount() }
        return total
    }

    /// This state with `transform(i, tree)` applied to each tree (`trees` order).
    func mapTrees(_ transform: (Int, PagedBTree) -> PagedBTree) -> FullTextState {
        var state = self
        state.terms = transform(0, terms)
        state.postings = transform(1, postings)
        state.positions = transform(2, positions)
        state.documents = transform(3, documents)
        return state
    }

    /// Opens the state a claim hands back (reading no page); nil when the bytes are not a
    /// full-text index's roots.
    init?(claimed: ClaimedExtensionRoots) {
        var decoded: FullTextState?
        claimed.rootBytes.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            do throws(ByteReader.Overrun) {
                let tag = try reader.readString()
                let signature = try reader.readString()
                let columnCount = try reader.readLength(max: 4096)
                let documentCount = try reader.readLength(max: Int(Int64.max / 2))
                let totalLength = try reader.readLength(max: Int(Int64.max / 2))
                var cursor = reader.position
                var roots: [PagedTreeRoot] = []
                for _ in 0..<4 {
                    guard let root = PagedTreeRoot.read(raw, &cursor) else { return }
                    roots.append(root)
                }
                guard cursor == raw.count, columnCount > 0 else { return }
                var state = FullTextState(versionTag: tag, signature: signature, columnCount: columnCount,
                                          format: claimed.format, source: claimed.source)
                state.terms = PagedBTree(root: roots[0], format: claimed.format, source: claimed.source)
                state.postings = PagedBTree(root: roots[1], format: claimed.format, source: claimed.source)
                state.positions = PagedBTree(root: roots[2], format: claimed.format, source: claimed.source)
                state.documents = PagedBTree(root: roots[3], format: claimed.format, source: claimed.source)
                state.documentCount = documentCount
                state.totalLength = totalLength
                decoded = state
            } catch {
                return
            }
        }
        guard let decoded else { return nil }
        self = decoded
    }
}
