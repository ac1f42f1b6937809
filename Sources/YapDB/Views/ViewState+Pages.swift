import YapDBEngine

/// What one index checkpoint (or index compaction) wrote of a view (`ExtensionPagesWritten.detail`).
struct ViewPagesWritten: Sendable {
    /// The lineage of the state written: only states of it adopt `catalog`.
    let lineage: ViewState.Lineage
    /// The catalog as written (its nodes published with the flush).
    let catalog: ExtensionTree
    /// The root each written group now has in `catalog` (`ExtensionTreeRoot.empty`: removed).
    let groupRoots: [String: ExtensionTreeRoot]
    /// What was written of each group with rows, by name.
    let groups: [String: ExtensionTreeWritten]
    /// What was written of the row → group tree.
    let rowGroups: ExtensionTreeWritten
    /// An index compaction's copy: every group with rows was written, so a group missing from
    /// `groups` is not in the new catalog.
    let isCopy: Bool
}

/// A view's trees are written by the engine's index checkpoints (`PagedExtensionState`, through
/// the door's per-tree page work, `ExtensionPagedTree`): the groups changed since the last one,
/// then the catalog with their new roots, then the row → group tree; the root record carries
/// the version tag and the two roots (docs/format.md §11, "View trees").
extension ViewState: ExtensionPagedState {
    func writePages(_ pages: ExtensionPageWriter) throws(EngineError) -> ExtensionPagesWritten {
        var catalog = self.catalog
        var written: [ExtensionTreeWritten] = []
        var groups: [String: ExtensionTreeWritten] = [:]
        var groupRoots: [String: ExtensionTreeRoot] = [:]
        for name in changed.keys.sorted() {
            let tree = changed[name]!
            let key = Array(name.utf8)
            if tree.isEmpty {
                try catalog.remove(key)
                groupRoots[name] = .empty
                continue
            }
            let group = try tree.writePages(pages)
            written.append(group)
            groups[name] = group
            groupRoots[name] = group.root
            try catalog.upsert(key, group.root.encoded)
        }
        let catalogWritten = try catalog.writePages(pages)
        let rowsWritten = try rowGroups.writePages(pages)
        written += [catalogWritten, rowsWritten]
        return ExtensionPagesWritten(
            rootBytes: rootBytes(catalog: catalogWritten.root, rowGroups: rowsWritten.root), trees: written,
            detail: ViewPagesWritten(lineage: lineage, catalog: catalog, groupRoots: groupRoots, groups: groups,
                                     rowGroups: rowsWritten, isCopy: false))
    }

    func copyPages(_ pages: ExtensionPageWriter) throws(EngineError) -> ExtensionPagesWritten {
        var catalog = treePages.keyedTree()
        var written: [ExtensionTreeWritten] = []
        var groups: [String: ExtensionTreeWritten] = [:]
        var groupRoots: [String: ExtensionTreeRoot] = [:]
        for name in try groupNames() {
            guard let tree = try self.tree(name) else { continue }
            let copy = try tree.copyPages(pages)
            written.append(copy)
            groups[name] = copy
            groupRoots[name] = copy.root
            try catalog.upsert(Array(name.utf8), copy.root.encoded)
        }
        let catalogWritten = try catalog.writePages(pages)
        let rowsCopy = try rowGroups.copyPages(pages)
        written += [catalogWritten, rowsCopy]
        return ExtensionPagesWritten(
            rootBytes: rootBytes(catalog: catalogWritten.root, rowGroups: rowsCopy.root), trees: written,
            detail: ViewPagesWritten(lineage: lineage, catalog: catalog, groupRoots: groupRoots, groups: groups,
                                     rowGroups: rowsCopy, isCopy: true))
    }

    func adopting(_ written: ExtensionPagesWritten) -> ViewState {
        guard let detail = written.detail as? ViewPagesWritten else { return self }
        var state = self
        guard detail.lineage === lineage else {
            // Created after the capture: shares no page or node with what was written.
            state.rebind(changed: changed.mapValues { $0.releasingWrittenNodes() }, rowGroups: rowGroups.releasingWrittenNodes())
            return state
        }
        var kept: [String: ExtensionRowTree] = [:]
        for (name, tree) in changed {
            let adopted = detail.groups[name].map { tree.adopting($0) } ?? tree.releasingWrittenNodes()
            // A copy lists every group with rows: a group it lacks is not in the new catalog.
            let inCatalog = detail.groupRoots[name] ?? (detail.isCopy ? .empty : nil)
            if let inCatalog, adopted.writtenRoot == inCatalog { continue }
            kept[name] = adopted
        }
        state.rebind(catalog: detail.catalog.releasingWrittenNodes(), changed: kept, rowGroups: rowGroups.adopting(detail.rowGroups))
        return state
    }

    func validateExtensionPages() throws(EngineError) { try validate() }

    var unwrittenPageCount: Int {
        changed.values.reduce(catalog.unwrittenPageCount + rowGroups.unwrittenPageCount) { $0 + $1.unwrittenPageCount }
    }

    func extensionWrittenPageCount() throws(EngineError) -> Int {
        var total = try catalog.writtenPageCount() + rowGroups.writtenPageCount()
        for name in try groupNames() { total += try tree(name)?.writtenPageCount() ?? 0 }
        return total
    }

    func reading(from source: any ExtensionPageSource) -> ViewState {
        var state = self
        state.rebind(catalog: catalog.reading(from: source), changed: changed.mapValues { $0.reading(from: source) },
                     rowGroups: rowGroups.reading(from: source), treePages: treePages.reading(from: source))
        return state
    }

    // MARK: Root bytes

    /// The layout of the root bytes (the first byte).
    static let rootLayout: UInt8 = 1

    /// What the root record carries for a view: the layout byte 1, the version tag (varint
    /// length, UTF-8), the catalog's root, the row → group tree's root (`ExtensionTreeRoot`).
    func rootBytes(catalog: ExtensionTreeRoot, rowGroups: ExtensionTreeRoot) -> [UInt8] {
        var bytes: [UInt8] = [Self.rootLayout]
        bytes.appendString(versionTag)
        catalog.append(to: &bytes)
        rowGroups.append(to: &bytes)
        return bytes
    }

    /// The view a claim hands back, reading nothing; nil when the bytes are not a view's roots
    /// (the view then rebuilds).
    init?(claimed: ClaimedExtensionRoots) {
        var decoded: (String, ExtensionTreeRoot, ExtensionTreeRoot)?
        claimed.rootBytes.withUnsafeBytes { raw in
            guard raw.first == Self.rootLayout else { return }
            var reader = ByteReader(UnsafeRawBufferPointer(rebasing: raw[1...]))
            guard let tag = try? reader.readString() else { return }
            var cursor = 1 + reader.position
            guard let catalog = ExtensionTreeRoot.read(raw, &cursor), let rows = ExtensionTreeRoot.read(raw, &cursor),
                  cursor == raw.count else { return }
            decoded = (tag, catalog, rows)
        }
        guard let (tag, catalog, rows) = decoded else { return nil }
        self.init(versionTag: tag, treePages: ExtensionTreePages(claimed), catalog: catalog, rowGroups: rows)
    }
}
