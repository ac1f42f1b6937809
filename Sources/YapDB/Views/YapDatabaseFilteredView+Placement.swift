import Foundation
import YapDBEngine

/// The operations of a filtered view inside one read-write transaction: its parent's state as
/// of now, its filter, and the root view's sorting (which orders every view of the chain).
///
/// Invariant kept by every operation: each group of the filtered view is a subsequence of the
/// same group of the parent, in the parent's order. A row is placed by binary-searching the
/// start of its run of equal rows with the sorting, then counting the filtered view's rows that
/// come before it in the parent's run — so equal rows keep the parent's order whatever order
/// they entered the filtered view in.
struct FilteredViewContext {
    let view: YapDatabaseFilteredView
    let filtering: YapDatabaseViewFiltering
    let transaction: YapDatabaseReadWriteTransaction
    let parentState: ViewState
    let sorter: ViewEngine

    /// Nil while the parent view (or a view above it) is not registered.
    init?(view: YapDatabaseFilteredView, transaction: YapDatabaseReadWriteTransaction) {
        guard let root = view.rootView(in: transaction.connection.database),
              let parentState = transaction.viewState(view.parentViewName)
        else { return nil }
        self.view = view
        self.filtering = view.filtering
        self.transaction = transaction
        self.parentState = parentState
        self.sorter = ViewEngine(view: root, config: root.config.withLock { $0 }, transaction: transaction)
    }

    func isAllowed(_ collection: String) -> Bool { view.allowedCollections?.isAllowed(collection) ?? true }

    /// Whether the row belongs in the filtered view as part of `group` of its parent.
    func keeps(collection: String, key: String, group: String) -> Bool {
        isAllowed(collection) && filtering.passes(transaction, group: group, collection: collection, key: key)
    }

    /// Takes the row out, found with its current values (call before they change). Returns
    /// whether the view held it.
    @discardableResult
    func remove(collection: String, key: String, from state: inout ViewState) -> Bool {
        sorter.removeRow(collection: collection, key: key, from: &state)
    }

    /// Puts the row in at its parent's position, if the parent holds it and it passes the
    /// filter (run here unless `filtered` says the caller already knows it passes). Returns
    /// whether it did.
    @discardableResult
    func place(collection: String, key: String, into state: inout ViewState, filtered: Bool = false) -> Bool {
        guard let entry = transaction.entry(collection: collection, key: key),
              let group = sorter.group(ofRowid: entry.rowid, in: parentState), let parentTree = sorter.tree(group, in: parentState),
              filtered || keeps(collection: collection, key: key, group: group) else { return false }
        let sortRow = sorter.row(collection: collection, key: key, forGrouping: false)
        let compare = { (existing: UInt64) in sorter.compare(sortRow, with: existing, in: group) }
        return sorter.run("place in group \(group)", false) { () throws(EngineError) in
            let before = try keptRows(before: entry.rowid, in: parentTree, from: parentTree.lowerBound(compare), state)
            // Without `before`, the parent's order disagrees with the sorting (a block that is
            // not a strict weak order): place by position alone, O(n).
            let byPosition = before == nil ? try keptRows(before: entry.rowid, in: parentTree, from: 0, state) : nil
            try state.insert(entry.rowid, into: group) { tree throws(EngineError) in
                var index = byPosition ?? tree.count
                if let before { index = try tree.lowerBound(compare) + before }
                return min(index, tree.count)
            }
            return true
        }
    }

    /// How many of the filtered view's rows lie in `parentTree` between `start` and `rowid`;
    /// nil when `rowid` is not at or after `start`.
    func keptRows(before rowid: UInt64, in parentTree: ExtensionRowTree, from start: Int, _ state: ViewState) throws(EngineError) -> Int? {
        var count = 0
        var found = false
        var failure: EngineError?
        try parentTree.forEach(in: start..<parentTree.count) { _, other in
            if other == rowid {
                found = true
                return false
            }
            do throws(EngineError) { if try state.contains(rowid: other) { count += 1 } } catch {
                failure = error
                return false
            }
            return true
        }
        if let failure { throw failure }
        return found ? count : nil
    }

    /// The parent's rows that pass the filter, in the parent's groups and order.
    func filteredParent(tag: String) -> ViewState {
        let transaction = self.transaction
        return parentSubsequence(tag: tag) { rowid, group in
            guard let (collection, key) = transaction.owner(ofRowid: rowid) else { return false }
            return keeps(collection: collection, key: key, group: group)
        }
    }

    /// The parent's rows for which `keep(rowid, group)` is true, in the parent's groups and order.
    func parentSubsequence(tag: String, _ keep: (UInt64, String) -> Bool) -> ViewState {
        var state = ViewState(versionTag: tag, transaction: transaction)
        sorter.run("filter the parent view", ()) { () throws(EngineError) in
            for group in try parentState.groupNames() {
                guard let parentTree = try parentState.tree(group) else { continue }
                var tree = state.newTree()
                var kept: [UInt64] = []
                var failure: EngineError?
                try parentTree.forEach(in: 0..<parentTree.count) { _, rowid in
                    guard keep(rowid, group) else { return true }
                    do throws(EngineError) { try tree.append(rowid) } catch {
                        failure = error
                        return false
                    }
                    kept.append(rowid)
                    return true
                }
                if let failure { throw failure }
                guard !tree.isEmpty else { continue }
                state.replace(group, old: nil, with: tree)
                for rowid in kept { try state.record(rowid: rowid, in: group) }
            }
        }
        return state
    }

    /// Brings a view's written trees up to the transaction: it keeps the rows it held that the
    /// parent still holds in the same group, except rows written since the trees were written,
    /// which are filtered anew; then it takes the parent's order (so it is right even if the
    /// parent was rebuilt, and its equal rows reordered, after the checkpoint). The filter runs
    /// only for the rows written since; the parent is walked whole.
    func catchUp(_ state: inout ViewState, _ changes: ExtensionCatchUp) {
        var members: [UInt64: Bool] = [:]
        for rowid in changes.removedRowids { members[rowid] = false }
        for pair in changes.changedKeys {
            guard let entry = transaction.entry(collection: pair.collection, key: pair.key) else { continue }
            if let group = sorter.group(ofRowid: entry.rowid, in: parentState) {
                members[entry.rowid] = keeps(collection: pair.collection, key: pair.key, group: group)
            } else {
                members[entry.rowid] = false
            }
        }
        let written = changes.removedAll ? state.emptied() : state
        state = parentSubsequence(tag: written.versionTag) { rowid, group in
            members[rowid] ?? (sorter.group(ofRowid: rowid, in: written) == group)
        }
    }
}
