import Foundation
import YapDBEngine

/// Where a view held a row just before a change or touch of it: its group (nil: not in the
/// view) and whether the view already took it out (to re-sort it: a row is found in its group
/// by its sort values, which must be the old ones). Kept by the read-write transaction for the
/// row being changed, by view name; a filtered view reads its parent's to learn whether the
/// row changed group there.
struct ViewRowBefore {
    var rowid: UInt64
    var group: String?
    var removed: Bool
}

extension YapDatabaseReadWriteTransaction {
    /// The record `view` made for row `rowid` before the current change (nil: none, or one
    /// for another row).
    func viewRowBefore(_ view: String, rowid: UInt64) -> ViewRowBefore? {
        guard let before = viewRowsBefore[view], before.rowid == rowid else { return nil }
        return before
    }
}

extension YapDatabaseAutoView {
    /// Before a change (or touch) of an existing row: records where the view holds it, and
    /// takes it out now if the sorting will run again for `change` (found with its old values).
    func recordRowBefore(_ name: String, collection: String, key: String, change: RowChange,
                         transaction: YapDatabaseReadWriteTransaction) {
        guard let entry = transaction.keydirEntry(collection: collection, key: key) else { return }
        update(name, transaction) { state, engine in
            let before = engine.rowBefore(rowid: entry.rowid, collection: collection, key: key, change: change, in: &state)
            transaction.viewRowsBefore[name] = before
            return before.removed
        }
    }

    /// After a change (or touch) of the row: runs the grouping and the sorting again as their
    /// options say for `change` (both for an insert, or when the view recorded nothing before
    /// the change), and moves the row only when one of them ran and its place may differ. A
    /// row left in place is recorded as changed in its group for observers (and as touched,
    /// for a touch).
    func replaceRow(_ name: String, collection: String, key: String, change: RowChange,
                    transaction: YapDatabaseReadWriteTransaction, touched: Bool) {
        guard let entry = transaction.keydirEntry(collection: collection, key: key) else { return }
        let known = change.isInsert ? ViewRowBefore(rowid: entry.rowid, group: nil, removed: false)
                                    : transaction.viewRowBefore(name, rowid: entry.rowid)
        let config = config.withLock { $0 }
        let regroups = known == nil || config.grouping.blockInvokeOptions.runs(for: change)
        let resorts = known == nil || config.sorting.blockInvokeOptions.runs(for: change)
        var final: String?
        var inPlace = false
        update(name, transaction) { state, engine in
            let before = known ?? ViewRowBefore(rowid: entry.rowid, group: engine.group(ofRowid: entry.rowid, in: state), removed: false)
            let group = regroups ? engine.group(collection: collection, key: key) : before.group
            if !before.removed && group == before.group && !resorts {
                // Neither the group nor the place can have changed.
                final = group
                inPlace = true
                return false
            }
            let removed = !before.removed && before.group != nil && engine.removeRow(collection: collection, key: key, from: &state)
            if let group, engine.insertRow(collection: collection, key: key, group: group, into: &state) { final = group }
            return before.removed || removed || final != nil
        }
        guard let final, inPlace || touched else { return }
        transaction.noteViewChange(name, touching: touched ? YapCollectionKey(collection: collection, key: key) : nil,
                                   groups: [final])
    }
}
