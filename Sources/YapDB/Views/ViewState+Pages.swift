import YapDBIndex
import YapDBEngine

/// What one index checkpoint wrote of a view (`ExtensionPagesWritten.detail`).
struct ViewPagesWritten: Sendable {
    /// The lineage of the state written: only states of it adopt `catalog`.
    let lineage: ViewState.Lineage
    /// The catalog as written (its nodes published with the flush).
    let catalog: PagedBTree
    /// The root each written group now has in `catalog` (`PagedTreeRoot.empty`: removed).
    let groupRoots: [String: PagedTreeRoot]
    /// An index compaction's copies, by group; nil for an ordinary checkpoint.
    let copies: [String: PageCopy]?
    /// An index compaction's copy of the row → group tree.
    let rowGroupsCopy: PageCopy?
}

/// A view's trees are written by the engine's index checkpoints (`PagedExtensionState`): the
/// groups changed since the last one, then the catalog with their new roots, then the row →
/// group tree; the root record carries the version tag and the two roots
/// (docs/format.md §11, "View trees").
extension ViewState: PagedExtensionState {
    func writePages(_ pages: ExtensionPageWriter) throws(EngineError) -> ExtensionPagesWritten {
        var catalog = self.catalog
        var flushes: [PageFlush] = []
        var groupRoots: [String: PagedTreeRoot] = [:]
        for name in changed.keys.sorted() {
            let tree = changed[name]!
            let key = Array(name.utf8)
            if tree.isEmpty {
                _ = try mappingPageErrors { () throws(PageError) in try catalog.remove(key) }
                groupRoots[name] = .empty
                continue
            }
            let flush = try pages.flush(tree)
            flushes.append(flush)
            let root = tree.root(after: flush)
            groupRoots[name] = root
            _ = try mappingPageErrors { () throws(PageError) in try catalog.upsert(key, root.encoded) }
        }
        let catalogFlush = try pages.flush(catalog)
        let rowsFlush = try pages.flush(rowGroups)
        flushes += [catalogFlush, rowsFlush]
        return ExtensionPagesWritten(
            rootBytes: rootBytes(catalog: catalog.root(after: catalogFlush), rowGroups: rowGroups.root(after: rowsFlush)), flushes: flushes,
            detail: ViewPagesWritten(lineage: lineage, catalog: catalog, groupRoots: groupRoots, copies: nil, rowGroupsCopy: nil))
    }

    func copyPages(_ pages: ExtensionPageWriter) throws(EngineError) -> ExtensionPagesWritten {
        var catalog = PagedBTree(format: format, source: source)
        var flushes: [PageFlush] = []
        var groupRoots: [String: PagedTreeRoot] = [:]
        var copies: [String: PageCopy] = [:]
        for name in try mappingPageErrors({ () throws(PageError) in try groupNames() }) {
            guard let tree = try mappingPageErrors({ () throws(PageError) in try self.tree(name) }) else { continue }
            let copy = try pages.copy(tree)
            copies[name] = copy
            flushes.append(copy.flush)
            let root = tree.root(after: copy.flush)
            groupRoots[name] = root
            _ = try mappingPageErrors { () throws(PageError) in try catalog.upsert(Array(name.utf8), root.encoded) }
        }
        let catalogFlush = try pages.flush(catalog)
        let rowsCopy = try pages.copy(rowGroups)
        flushes += [catalogFlush, rowsCopy.flush]
        return ExtensionPagesWritten(
            rootBytes: rootBytes(catalog: catalog.root(after: catalogFlush), rowGroups: rowGroups.root(after: rowsCopy.flush)), flushes: flushes,
            detail: ViewPagesWritten(lineage: lineage, catalog: catalog, groupRoots: groupRoots, copies: copies, rowGroupsCopy: rowsCopy))
    }

    func adopting(_ written: ExtensionPagesWritten) -> ViewState {
        guard let detail = written.detail as? ViewPagesWritten else { return self }
        var state = self
        let copies = detail.copies
        func adopt(_ tree: PagedRowTree, _ name: String) -> PagedRowTree {
            if let copy = copies?[name] { return tree.remapping(to: copy) }
            return tree.releasingFlushedNodes()
        }
        guard detail.lineage === lineage else {
            // Created after the capture: shares no page or node with what was written.
            state.rebind(changed: changed.mapValues { $0.releasingFlushedNodes() }, rowGroups: rowGroups.releasingFlushedNodes())
            return state
        }
        var kept: [String: PagedRowTree] = [:]
        for (name, tree) in changed {
            let adopted = adopt(tree, name)
            // A copy lists every group with rows: a group it lacks is not in the new catalog.
            let inCatalog = detail.groupRoots[name] ?? (copies != nil ? .empty : nil)
            if let inCatalog, adopted.writtenRoot == inCatalog { continue }
            kept[name] = adopted
        }
        let rowGroups = detail.rowGroupsCopy.map { self.rowGroups.remapping(to: $0) } ?? self.rowGroups.releasingFlushedNodes()
        state.rebind(catalog: detail.catalog.releasingFlushedNodes(), changed: kept, rowGroups: rowGroups)
        return state
    }

    func validatePages() throws(PageError) { try validate() }

    var unwrittenPageCount: Int {
        changed.values.reduce(catalog.unwrittenPageCount + rowGroups.unwrittenPageCount) { $0 + $1.unwrittenPageCount }
    }

    func writtenPageCount() throws(PageError) -> Int {
        var total = try catalog.writtenPageCount() + rowGroups.writtenPageCount()
        for name in try groupNames() { total += try tree(name)?.writtenPageCount() ?? 0 }
        return total
    }

    func reading(from source: any PageSource) -> ViewState {
        var state = self
        state.rebind(catalog: catalog.reading(from: source), changed: changed.mapValues { $0.reading(from: source) },
                     rowGroups: rowGroups.reading(from: source), source: source)
        return state
    }

    // MARK: Root bytes

    /// The layout of the root bytes (the first byte).
    static let rootLayout: UInt8 = 1

    /// What the root record carries for a view: the layout byte 1, the version tag (varint
    /// length, UTF-8), the catalog's root, the row → group tree's root (`PagedTreeRoot`).
    func rootBytes(catalog: PagedTreeRoot, rowGroups: PagedTreeRoot) -> [UInt8] {
        var bytes: [UInt8] = [Self.rootLayout]
        bytes.appendString(versionTag)
        catalog.append(to: &bytes)
        rowGroups.append(to: &bytes)
        return bytes
    }

    /// The view a claim hands back, reading nothing; nil when the bytes are not a view's roots
    /// (the view then rebuilds).
    init?(claimed: ClaimedExtensionRoots) {
        var decoded: (String, PagedTreeRoot, PagedTreeRoot)?
        claimed.rootBytes.withUnsafeBytes { raw in
            guard raw.first == Self.rootLayout else { return }
            var reader = ByteReader(UnsafeRawBufferPointer(rebasing: raw[1...]))
            guard let tag = try? reader.readString() else { return }
            var cursor = 1 + reader.position
            guard let catalog = PagedTreeRoot.read(raw, &cursor), let rows = PagedTreeRoot.read(raw, &cursor),
                  cursor == raw.count else { return }
            decoded = (tag, catalog, rows)
        }
        guard let (tag, catalog, rows) = decoded else { return nil }
        self.init(versionTag: tag, format: claimed.format, source: claimed.source, catalog: catalog, rowGroups: rows)
    }
}
