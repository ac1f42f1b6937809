import YapDBEngine

/// A view's index, on index pages (docs/format.md §11, "View trees"): per group a paged
/// order-statistic tree of row ids in view order, a catalog of the written groups (group name
/// → root, count, height), and each row's group. An immutable value stored in the engine's
/// snapshot with the rows, so every snapshot has its own version; a change copies only the
/// paths it touches.
///
/// **Groups changed since the last index checkpoint** are held in `changed` (an empty tree:
/// the group was emptied); the catalog is changed only by the checkpoint that writes them
/// (`ViewState+Pages.swift`), so commits never rewrite it, and a group read but not changed
/// is opened from its catalog entry on each read and never kept. Memory is the groups changed
/// since the last checkpoint and the nodes those changes copied.
///
/// The trees are the engine's door for extensions: the catalog and the row → group tree are
/// keyed trees (`ExtensionTree`), each group a row tree (`ExtensionRowTree`), all made on the
/// same index pages (`treePages`). Errors: every read can meet a damaged or unreadable page
/// (`EngineError`); the methods throw it and the callers report it (`ViewEngine`).
struct ViewState: Sendable {
    /// Identifies one line of states from one creation (registration, rebuild, remove-all):
    /// a checkpoint's catalog is adopted only by states of the same lineage (`adopting`).
    final class Lineage: Sendable {}

    var versionTag: String
    /// False for a view registered with `isPersistent = false`: kept in memory only
    /// (`ViewState+Transaction.swift`), never written by checkpoints.
    var isPersistent = true
    /// The index pages the view's trees are on (every group's tree is made there).
    private(set) var treePages: ExtensionTreePages
    private(set) var lineage = Lineage()
    /// Group name (UTF-8) → `ExtensionTreeRoot` of the group's tree, as the last checkpoint wrote it.
    private(set) var catalog: ExtensionTree
    /// Groups changed since the catalog was written (empty: the group has no rows now).
    private(set) var changed: [String: ExtensionRowTree] = [:]
    /// Row id (8 bytes big-endian, `rowKey`) → group name (UTF-8).
    private(set) var rowGroups: ExtensionTree
    /// Groups with at least one row.
    private(set) var groupCount = 0

    /// An empty view whose trees go on `treePages`.
    init(versionTag: String, treePages: ExtensionTreePages) {
        self.versionTag = versionTag
        self.treePages = treePages
        catalog = treePages.keyedTree()
        rowGroups = treePages.keyedTree()
    }

    /// An empty view on the transaction's key directory's pages.
    init(versionTag: String, transaction: YapDatabaseReadTransaction) {
        self.init(versionTag: versionTag, treePages: ExtensionTreePages(emptyLike: transaction.keydir))
    }

    /// The same view with no rows (a new lineage: nothing the checkpoint in flight wrote applies).
    func emptied() -> ViewState {
        var state = ViewState(versionTag: versionTag, treePages: treePages)
        state.isPersistent = isPersistent
        return state
    }

    /// The longest group name a view can hold with this page size: the catalog entry (name +
    /// root) and the row's entry (row id + name) must fit a page's entry limit.
    var maximumGroupNameLength: Int { treePages.maximumEntrySize - 40 }

    // MARK: Reads

    /// Whether the state is exactly what an index checkpoint wrote (no change held in memory).
    var isAsWritten: Bool { changed.isEmpty && catalog.writtenRoot != nil && rowGroups.writtenRoot != nil }

    /// Rows in the view. O(1).
    var rowCount: Int { rowGroups.count }

    /// Whether the view has no rows. O(1).
    var isEmpty: Bool { rowGroups.count == 0 }

    /// The key of row `rowid` in the row → group tree: its id, 8 bytes big-endian (the key
    /// directory's row-id key; docs/format.md §11).
    static func rowKey(_ rowid: UInt64) -> [UInt8] { withUnsafeBytes(of: rowid.bigEndian) { Array($0) } }

    /// The tree of `group`, or nil when it has no rows. O(log groups) catalog pages when the
    /// group was not changed since the last checkpoint; its own pages are read on demand.
    func tree(_ group: String) throws(EngineError) -> ExtensionRowTree? {
        if let tree = changed[group] { return tree.isEmpty ? nil : tree }
        var root: ExtensionTreeRoot?
        try catalog.withValue(forKey: Array(group.utf8)) { bytes in
            var cursor = 0
            if let decoded = ExtensionTreeRoot.read(bytes, &cursor), cursor == bytes.count { root = decoded }
        }
        guard let root else { return nil }
        return treePages.rowTree(root: root)
    }

    /// The group of row `rowid`, or nil when the view does not hold it. O(log n).
    func group(ofRowid rowid: UInt64) throws(EngineError) -> String? {
        var name: String?
        try rowGroups.withValue(forKey: Self.rowKey(rowid)) { bytes in name = String(decoding: bytes, as: UTF8.self) }
        return name
    }

    /// Whether the view holds row `rowid`. O(log n).
    func contains(rowid: UInt64) throws(EngineError) -> Bool {
        try rowGroups.withValue(forKey: Self.rowKey(rowid)) { _ in }
    }

    /// The groups with rows, in UTF-8 byte order. O(groups).
    func groupNames() throws(EngineError) -> [String] {
        var names: [String] = []
        names.reserveCapacity(groupCount)
        try catalog.forEach { key, _ in
            let name = String(decoding: key, as: UTF8.self)
            if changed[name] == nil { names.append(name) }
            return true
        }
        for (name, tree) in changed where !tree.isEmpty { names.append(name) }
        return names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    // MARK: Changes

    /// Puts `rowid` into `group` at the position `position` computes from the group's tree (as
    /// it is now; empty for a new group), and records its group. The tree is taken out of the
    /// state while `position` runs, so the change is made in place when this state owns it.
    mutating func insert(_ rowid: UInt64, into group: String, at position: (ExtensionRowTree) throws(EngineError) -> Int) throws(EngineError) {
        var tree: ExtensionRowTree
        if let held = changed.removeValue(forKey: group) { tree = held } else { tree = try self.tree(group) ?? newTree() }
        if tree.isEmpty { groupCount += 1 }
        do throws(EngineError) {
            try tree.insert(rowid, at: position(tree))
        } catch {
            if tree.isEmpty { groupCount -= 1 }
            throw error
        }
        changed[group] = tree
        _ = try rowGroups.upsert(Self.rowKey(rowid), Array(group.utf8))
    }

    /// Puts `rowids` into `group` in order, the `i`th at the position `position(tree, i)`
    /// computes from the group's tree as it is then (with the earlier ones in it), and records
    /// each row's group. The tree is taken out of the state once for all of them.
    mutating func insert(_ rowids: [UInt64], into group: String,
                         at position: (ExtensionRowTree, _ i: Int) throws(EngineError) -> Int) throws(EngineError) {
        guard !rowids.isEmpty else { return }
        var tree: ExtensionRowTree
        if let held = changed.removeValue(forKey: group) { tree = held } else { tree = try self.tree(group) ?? newTree() }
        let wasEmpty = tree.isEmpty
        defer {
            if wasEmpty && !tree.isEmpty { groupCount += 1 }
            changed[group] = tree
        }
        for i in rowids.indices { try tree.insert(rowids[i], at: position(tree, i)) }
        // In row id order: each upsert lands next to the one before (new rows have the
        // highest ids, so a batch of them appends).
        let name = Array(group.utf8)
        for rowid in rowids.sorted() { _ = try rowGroups.upsert(Self.rowKey(rowid), name) }
    }

    /// Takes row `rowid` out of `group` at the position `position` finds in the group's tree
    /// (nil: not there) and forgets its group. Returns whether the row was in the group.
    mutating func remove(_ rowid: UInt64, from group: String, at position: (ExtensionRowTree) throws(EngineError) -> Int?) throws(EngineError) -> Bool {
        let wasChanged = changed[group] != nil
        var tree: ExtensionRowTree
        if let held = changed.removeValue(forKey: group) { tree = held } else if let written = try self.tree(group) { tree = written } else { return false }
        guard !tree.isEmpty, let index = try position(tree) else {
            if wasChanged { changed[group] = tree }
            return false
        }
        defer { changed[group] = tree }
        _ = try tree.remove(at: index)
        if tree.isEmpty { groupCount -= 1 }
        _ = try rowGroups.remove(Self.rowKey(rowid))
        return true
    }

    /// Replaces the rows of `group` (previously `old`) by `tree` and records each row's group;
    /// rows of `old` not in `tree` must be forgotten with `forget(rowid:)`.
    mutating func replace(_ group: String, old: ExtensionRowTree?, with tree: ExtensionRowTree) {
        if (old?.isEmpty ?? true) != tree.isEmpty { groupCount += tree.isEmpty ? -1 : 1 }
        changed[group] = tree
    }

    /// Records `rowid` as a row of `group` (after `replace`).
    mutating func record(rowid: UInt64, in group: String) throws(EngineError) {
        _ = try rowGroups.upsert(Self.rowKey(rowid), Array(group.utf8))
    }

    /// Forgets the group of `rowid` (after `replace`).
    mutating func forget(rowid: UInt64) throws(EngineError) {
        _ = try rowGroups.remove(Self.rowKey(rowid))
    }

    /// A new empty row tree on this view's pages.
    func newTree() -> ExtensionRowTree { treePages.rowTree() }

    // MARK: Checks

    /// Checks every tree page by page (`validate()`), that the group trees hold as many rows as
    /// the row → group tree, and the group count. Reads the whole view: O(n).
    func validate() throws(EngineError) {
        try catalog.validate()
        try rowGroups.validate()
        var rows = 0, groups = 0
        for name in try groupNames() {
            guard let tree = try tree(name) else { continue }
            try tree.validate()
            rows += tree.count
            groups += 1
        }
        guard rows == rowGroups.count, groups == groupCount else {
            throw .extensionTreeCountMismatch(expected: rowGroups.count, found: rows)
        }
    }
}

extension ViewState {
    /// For `adopting` and `reading(from:)` (`ViewState+Pages.swift`).
    mutating func rebind(catalog: ExtensionTree? = nil, changed: [String: ExtensionRowTree]? = nil, rowGroups: ExtensionTree? = nil,
                         treePages: ExtensionTreePages? = nil) {
        if let catalog { self.catalog = catalog }
        if let changed { self.changed = changed }
        if let rowGroups { self.rowGroups = rowGroups }
        if let treePages { self.treePages = treePages }
    }

    /// A state opened from its written trees (a claim after reopen).
    init(versionTag: String, treePages: ExtensionTreePages, catalog: ExtensionTreeRoot, rowGroups: ExtensionTreeRoot) {
        self.init(versionTag: versionTag, treePages: treePages)
        self.catalog = treePages.keyedTree(root: catalog)
        self.rowGroups = treePages.keyedTree(root: rowGroups)
        groupCount = catalog.count
    }
}
