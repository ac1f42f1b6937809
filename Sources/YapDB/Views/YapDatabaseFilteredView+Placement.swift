import Foundation
import YapDBIndex
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
              let parentState = transaction.extensionState(YapDatabaseAutoView.stateKey(view.parentViewName)) as? ViewState
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
    /// filter. Returns whether it did.
    @discardableResult
    func place(collection: String, key: String, into state: inout ViewState) -> Bool {
        guard let entry = transaction.keydir.entry(collection: collection, key: key),
              let group = parentState.rowGroups[entry.rowid], let parentTree = parentState.groups[group],
              keeps(collection: collection, key: key, group: group) else { return false }
        let sortRow = sorter.row(collection: collection, key: key, forGrouping: false)
        let compare = { (existing: UInt64) in sorter.compare(sortRow, with: existing, in: group) }
        var tree = state.groups.removeValue(forKey: group) ?? OrderedRowTree()
        let index: Int
        if let before = keptRows(before: entry.rowid, in: parentTree, from: parentTree.lowerBound(compare), state) {
            index = tree.lowerBound(compare) + before
        } else {
            // The parent's order disagrees with the sorting (a block that is not a strict weak
            // order): place by position alone, O(n).
            index = keptRows(before: entry.rowid, in: parentTree, from: 0, state) ?? tree.count
        }
        tree.insert(entry.rowid, at: min(index, tree.count))
        state.groups[group] = tree
        state.rowGroups.updateValue(group, forKey: entry.rowid)
        return true
    }

    /// How many of the filtered view's rows lie in `parentTree` between `start` and `rowid`;
    /// nil when `rowid` is not at or after `start`.
    func keptRows(before rowid: UInt64, in parentTree: OrderedRowTree, from start: Int, _ state: ViewState) -> Int? {
        var count = 0
        var found = false
        parentTree.forEach(in: start..<parentTree.count) { _, other in
            if other == rowid {
                found = true
                return false
            }
            if state.rowGroups[other] != nil { count += 1 }
            return true
        }
        return found ? count : nil
    }

    /// The parent's rows that pass the filter, in the parent's groups and order.
    func filteredParent(tag: String) -> ViewState {
        let keydir = transaction.keydir
        return parentSubsequence(tag: tag) { rowid, group in
            guard let (collection, key) = keydir.key(forRowid: rowid) else { return false }
            return keeps(collection: collection, key: key, group: group)
        }
    }

    /// The parent's rows for which `keep(rowid, group)` is true, in the parent's groups and order.
    func parentSubsequence(tag: String, _ keep: (UInt64, String) -> Bool) -> ViewState {
        var state = ViewState(versionTag: tag)
        for (group, parentTree) in parentState.groups {
            var tree = OrderedRowTree()
            parentTree.forEach { _, rowid in
                if keep(rowid, group) {
                    tree.append(rowid)
                    state.rowGroups.updateValue(group, forKey: rowid)
                }
                return true
            }
            if !tree.isEmpty { state.groups[group] = tree }
        }
        return state
    }

    /// Brings a checkpoint image up to the transaction: it keeps the rows it held that the
    /// parent still holds in the same group, except rows written since the image was taken,
    /// which are filtered anew; then it takes the parent's order (so it is right even if the
    /// parent was rebuilt, and its equal rows reordered, after the checkpoint). The filter runs
    /// only for the rows written since.
    func catchUp(_ state: inout ViewState, changedKeys: Set<CollectionKeyPair>) {
        let keydir = transaction.keydir
        var members: [UInt64: Bool] = [:]
        for pair in changedKeys {
            guard let entry = keydir.entry(collection: pair.collection, key: pair.key) else { continue }
            if let group = parentState.rowGroups[entry.rowid] {
                members[entry.rowid] = keeps(collection: pair.collection, key: pair.key, group: group)
            } else {
                members[entry.rowid] = false
            }
        }
        let image = state
        state = parentSubsequence(tag: image.versionTag) { rowid, group in
            members[rowid] ?? (image.rowGroups[rowid] == group)
        }
    }
}
