import Foundation
import YapDBEngine

/// The view operations on a state, with the blocks and the transaction they read through.
///
/// A page of the view that cannot be read (`EngineError`) is reported: a read-write transaction
/// fails with it (its commit would store a view that lost or misplaced rows), a read logs it
/// and answers as if the rows were absent, as the key directory's reads do; `verify()`
/// reports the damage.
struct ViewEngine {
    let view: YapDatabaseAutoView
    let config: YapDatabaseAutoView.Config
    let transaction: YapDatabaseReadTransaction
    /// Where rows' groups are recorded as they leave or enter (nil: not recorded).
    var groupLog: ViewGroupLog?
    /// The write transaction's row id → key cache for the rows the sorting compares (nil in a
    /// read transaction): see `ViewRowKeyCache`.
    let rowKeys: ViewRowKeyCache?

    init(view: YapDatabaseAutoView, config: YapDatabaseAutoView.Config, transaction: YapDatabaseReadTransaction) {
        self.view = view
        self.config = config
        self.transaction = transaction
        rowKeys = (transaction as? YapDatabaseReadWriteTransaction)?.viewRowKeys
    }

    /// Reports a page error met by `operation` (see the type's comment).
    func report(_ error: EngineError, _ operation: String) {
        Self.report(error, operation, transaction)
    }

    static func report(_ error: EngineError, _ operation: String, _ transaction: YapDatabaseReadTransaction) {
        if let writer = transaction as? YapDatabaseReadWriteTransaction {
            writer.fail(YapDatabaseError(error))
        } else {
            YapDatabaseLogging.log(.error, "a view's index could not be read (\(operation)): \(error); run verify()")
        }
    }

    /// Runs a view read or change, reporting a page error (then answering `fallback`).
    func run<T>(_ operation: @autoclosure () -> String, _ fallback: T, _ body: () throws(EngineError) -> T) -> T {
        do { return try body() } catch {
            report(error, operation())
            return fallback
        }
    }

    /// The row as the blocks need it (object and metadata loaded only when asked for).
    func row(collection: String, key: String, forGrouping: Bool) -> ViewRow {
        let needsObject = forGrouping ? config.grouping.needsObject : config.sorting.needsObject
        let needsMetadata = forGrouping ? config.grouping.needsMetadata : config.sorting.needsMetadata
        return ViewRow(collection: collection, key: key,
                       object: needsObject ? transaction.object(forKey: key, inCollection: collection) : nil,
                       metadata: needsMetadata ? transaction.metadata(forKey: key, inCollection: collection) : nil)
    }

    /// The row `rowid` as the sorting needs it, or nil when no row has that id. Its collection
    /// and key come from the write transaction's cache when it holds them (no key-directory
    /// walk); its object and metadata are always read through the transaction.
    func row(rowid: UInt64) -> ViewRow? {
        if let rowKeys {
            if let owner = rowKeys.owner(of: rowid) { return row(collection: owner.collection, key: owner.key, forGrouping: false) }
            guard let (collection, key) = transaction.owner(ofRowid: rowid) else { return nil }
            rowKeys.note(rowid, collection: collection, key: key)
            return row(collection: collection, key: key, forGrouping: false)
        }
        guard let (collection, key) = transaction.owner(ofRowid: rowid) else { return nil }
        return row(collection: collection, key: key, forGrouping: false)
    }

    /// How `row` compares to the row `rowid` in `group` (the tree's search direction).
    func compare(_ row: ViewRow, with rowid: UInt64, in group: String) -> RowComparison {
        guard let other = self.row(rowid: rowid) else { return .orderedAscending }
        switch config.sorting.compare(transaction, group, row, other) {
        case .orderedAscending: return .orderedAscending
        case .orderedSame: return .orderedSame
        case .orderedDescending: return .orderedDescending
        }
    }

    // MARK: Reads that report

    /// The group of row `rowid` in `state`, or nil.
    func group(ofRowid rowid: UInt64, in state: ViewState) -> String? {
        run("group of row id \(rowid)", nil) { () throws(EngineError) in try state.group(ofRowid: rowid) }
    }

    /// Whether `state` holds row `rowid`.
    func holds(_ rowid: UInt64, in state: ViewState) -> Bool {
        run("row id \(rowid)", false) { () throws(EngineError) in try state.contains(rowid: rowid) }
    }

    /// The tree of `group` in `state`, or nil when it has no rows.
    func tree(_ group: String, in state: ViewState) -> ExtensionRowTree? {
        run("group \(group)", nil) { () throws(EngineError) in try state.tree(group) }
    }

    /// The groups of `state` with rows, in UTF-8 order.
    func groupNames(_ state: ViewState) -> [String] {
        run("groups", []) { () throws(EngineError) in try state.groupNames() }
    }

    /// Where row `rowid` (whose sort values are `sortRow`) is in `tree`: a binary search with
    /// the sorting, or, when the row's sort values changed without the view seeing the old
    /// ones, a scan.
    func position(of rowid: UInt64, sortRow: ViewRow?, in tree: ExtensionRowTree, group: String) throws(EngineError) -> Int? {
        if let sortRow, let index = try tree.firstIndex(of: rowid, { existing in compare(sortRow, with: existing, in: group) }) {
            return index
        }
        var found: Int?
        try tree.forEach(in: 0..<tree.count) { i, other in
            if other == rowid { found = i; return false }
            return true
        }
        return found
    }

    // MARK: Changes

    /// The row's group by the grouping block (nil: the view leaves it out).
    func group(collection: String, key: String) -> String? {
        config.grouping.group(transaction, row(collection: collection, key: key, forGrouping: true))
    }

    /// Puts the row into its group at its sorted place (after its equals), if it belongs.
    /// Returns whether it did.
    @discardableResult
    func insertRow(collection: String, key: String, into state: inout ViewState) -> Bool {
        guard let group = group(collection: collection, key: key) else { return false }
        return insertRow(collection: collection, key: key, group: group, into: &state)
    }

    /// Puts the row into `group` (its group, already known) at its sorted place. Returns
    /// whether it did.
    @discardableResult
    func insertRow(collection: String, key: String, group: String, into state: inout ViewState) -> Bool {
        guard let entry = transaction.entry(collection: collection, key: key) else { return false }
        return insertRow(rowid: entry.rowid, collection: collection, key: key, group: group, into: &state)
    }

    /// Puts row `rowid` (the row `collection`/`key` of the transaction, already looked up) into
    /// `group` at its sorted place. Returns whether it did.
    @discardableResult
    func insertRow(rowid: UInt64, collection: String, key: String, group: String, into state: inout ViewState) -> Bool {
        guard group.utf8.count <= state.maximumGroupNameLength else {
            YapDatabaseLogging.log(.error, "view group name of \(group.utf8.count) bytes is longer than the \(state.maximumGroupNameLength) an index page holds: row \(collection)/\(key) left out of the view")
            return false
        }
        let sortRow = row(collection: collection, key: key, forGrouping: false)
        let placed = run("insert into group \(group)", false) { () throws(EngineError) in
            try state.insert(rowid, into: group) { tree throws(EngineError) in
                try tree.insertionIndex { existing in compare(sortRow, with: existing, in: group) }
            }
            return true
        }
        if placed {
            // The next row placed in this group is compared with this one first when they
            // arrive in order.
            rowKeys?.note(rowid, collection: collection, key: key)
            groupLog?.groups.insert(group)
            groupLog?.rawChanges += 1
            groupLog?.placed.insert(YapCollectionKey(collection: collection, key: key))
        }
        return placed
    }

    /// Takes the row out of the view, found with its current values (call before they change).
    /// Returns whether the row was in the view.
    @discardableResult
    func removeRow(collection: String, key: String, from state: inout ViewState) -> Bool {
        guard let entry = transaction.entry(collection: collection, key: key) else { return false }
        let removed = removeRow(rowid: entry.rowid, collection: collection, key: key, at: nil, from: &state)
        // After the search, which may have compared with the row itself.
        rowKeys?.forget(entry.rowid)
        return removed
    }

    /// Takes row `rowid` out of the view: at `index` of its group when given and the row is
    /// there (its index before a change, recorded by `rowBefore`), else found with its current
    /// sort values (or, failing that, by a scan). Returns whether the row was in the view.
    @discardableResult
    func removeRow(rowid: UInt64, collection: String, key: String, at index: Int?, from state: inout ViewState) -> Bool {
        guard let group = group(ofRowid: rowid, in: state) else { return false }
        run("remove from group \(group)", ()) { () throws(EngineError) in
            let removed = try state.remove(rowid, from: group) { tree throws(EngineError) in
                if let index, index < tree.count, try tree.element(at: index) == rowid { return index }
                return try position(of: rowid, sortRow: row(collection: collection, key: key, forGrouping: false), in: tree, group: group)
            }
            // A row recorded in a group whose tree lacks it (never left by the operations
            // here): forget it, so the view stays consistent.
            if !removed { try state.forget(rowid: rowid) }
        }
        groupLog?.groups.insert(group)
        groupLog?.rawChanges += 1
        return true
    }

    /// Before a change (or touch) of row `rowid`: the group `state` holds it in and, when the
    /// sorting will run again for `change`, its index there (found by its sort values, still
    /// the old ones).
    func rowBefore(rowid: UInt64, collection: String, key: String, change: RowChange, in state: ViewState) -> ViewRowBefore {
        var before = ViewRowBefore(rowid: rowid, group: group(ofRowid: rowid, in: state))
        if let group = before.group, config.sorting.blockInvokeOptions.runs(for: change), let tree = tree(group, in: state) {
            let sortRow = row(collection: collection, key: key, forGrouping: false)
            before.index = run("row id \(rowid) in group \(group)", nil) { () throws(EngineError) in
                try position(of: rowid, sortRow: sortRow, in: tree, group: group)
            }
        }
        return before
    }

    /// Whether row `rowid`, at `index` of `group` before its change, still sorts between its
    /// neighbours there with its new values (not before the row ahead of it, not after the
    /// row behind it), so it can keep its index. False when the index is unknown.
    func fitsInPlace(rowid: UInt64, collection: String, key: String, at index: Int?, group: String, in state: ViewState) -> Bool {
        guard let index, let tree = tree(group, in: state), index < tree.count else { return false }
        let sortRow = row(collection: collection, key: key, forGrouping: false)
        return run("neighbours of row id \(rowid)", false) { () throws(EngineError) in
            guard try tree.element(at: index) == rowid else { return false }
            if index > 0, compare(sortRow, with: try tree.element(at: index - 1), in: group) == .orderedAscending { return false }
            if index + 1 < tree.count, compare(sortRow, with: try tree.element(at: index + 1), in: group) == .orderedDescending { return false }
            return true
        }
    }

    /// Runs the grouping and sorting for a row already placed with its current values (a
    /// view-level touch): a row whose group is unchanged and that still sorts between its
    /// neighbours stays; otherwise it moves (or leaves, or enters). Returns whether the view
    /// changed.
    func placeAgain(collection: String, key: String, in state: inout ViewState) -> Bool {
        guard let entry = transaction.entry(collection: collection, key: key) else { return false }
        let oldGroup = group(ofRowid: entry.rowid, in: state), newGroup = group(collection: collection, key: key)
        var index: Int?
        if let oldGroup, oldGroup == newGroup, let tree = tree(oldGroup, in: state) {
            let sortRow = row(collection: collection, key: key, forGrouping: false)
            index = run("row id \(entry.rowid) in group \(oldGroup)", nil) { () throws(EngineError) in
                try position(of: entry.rowid, sortRow: sortRow, in: tree, group: oldGroup)
            }
            if fitsInPlace(rowid: entry.rowid, collection: collection, key: key, at: index, group: oldGroup, in: state) { return false }
        }
        let removed = oldGroup != nil && removeRow(rowid: entry.rowid, collection: collection, key: key, at: index, from: &state)
        let inserted = newGroup.map { insertRow(collection: collection, key: key, group: $0, into: &state) } ?? false
        return removed || inserted
    }

    /// Takes many rows out at once (a collection clear, or rows removed since a checkpoint,
    /// which no longer exist): one pass over each group that holds some of them. Returns
    /// whether any of them was in the view.
    @discardableResult
    func removeRows(_ doomed: Set<UInt64>, from state: inout ViewState) -> Bool {
        var byGroup: [String: Set<UInt64>] = [:]
        for rowid in doomed {
            rowKeys?.forget(rowid)
            if let group = group(ofRowid: rowid, in: state) { byGroup[group, default: []].insert(rowid) }
        }
        guard !byGroup.isEmpty else { return false }
        run("remove rows", ()) { () throws(EngineError) in
            for (group, rows) in byGroup {
                let old = try state.tree(group)
                var kept = state.newTree()
                var failure: EngineError?
                try old?.forEach(in: 0..<(old?.count ?? 0)) { _, rowid in
                    guard !rows.contains(rowid) else { return true }
                    do throws(EngineError) { try kept.append(rowid) } catch {
                        failure = error
                        return false
                    }
                    return true
                }
                if let failure { throw failure }
                state.replace(group, old: old, with: kept)
                for rowid in rows { try state.forget(rowid: rowid) }
                groupLog?.groups.insert(group)
                groupLog?.rawChanges += rows.count
            }
        }
        return true
    }
}
