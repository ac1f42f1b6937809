import Foundation
import YapDBEngine

/// Where a view held a row just before a change or touch of it: its group (nil: not in the
/// view) and, when the sorting will run again, its index there (found with the old sort
/// values, which the search needs). Kept by the read-write transaction for the row being
/// changed, by view name; after the change the view records whether it kept the row in place,
/// and a filtered view reads its parent's record to learn whether the row changed group or
/// place there.
struct ViewRowBefore {
    var rowid: UInt64
    var group: String?
    /// The row's index in its group before the change (nil: not looked up).
    var index: Int? = nil
    /// Set after the change: the view left the row where it was.
    var keptInPlace = false

    init(rowid: UInt64, group: String?, index: Int? = nil) {
        self.rowid = rowid
        self.group = group
        self.index = index
    }
}

extension YapDatabaseReadWriteTransaction {
    /// The record `view` made for row `rowid` before the current change (nil: none, or one
    /// for another row).
    func viewRowBefore(_ view: String, rowid: UInt64) -> ViewRowBefore? {
        guard let before = viewRowsBefore[view], before.rowid == rowid else { return nil }
        return before
    }

    /// Records that `view` left row `rowid` in place after the current change.
    func noteKeptInPlace(_ view: String, rowid: UInt64) {
        guard viewRowsBefore[view]?.rowid == rowid else { return }
        viewRowsBefore[view]?.keptInPlace = true
    }
}

extension YapDatabaseAutoView {
    /// Before a change (or touch) of an existing row: records where the view holds it (with its
    /// index when the sorting will run again for `change`).
    func recordRowBefore(_ name: String, collection: String, key: String, change: RowChange,
                         transaction: YapDatabaseReadWriteTransaction) {
        guard let entry = transaction.entry(collection: collection, key: key),
              let state = transaction.viewState(name) else { return }
        let engine = ViewEngine(view: self, config: config.withLock { $0 }, transaction: transaction)
        transaction.viewRowsBefore[name] = engine.rowBefore(rowid: entry.rowid, collection: collection, key: key, change: change, in: state)
    }

    /// After a change (or touch) of the row: runs the grouping and the sorting again as their
    /// options say for `change` (both for an insert, or when the view recorded nothing before
    /// the change). A row whose group is unchanged keeps its index while it still sorts between
    /// its neighbours (YapDatabase's rule: only new rows go after their equals); otherwise it
    /// moves. A row left in place is recorded as changed in its group for observers (and as
    /// touched, for a touch).
    func replaceRow(_ name: String, collection: String, key: String, change: RowChange,
                    transaction: YapDatabaseReadWriteTransaction, touched: Bool) {
        guard let entry = transaction.entry(collection: collection, key: key) else { return }
        let known = change.isInsert ? ViewRowBefore(rowid: entry.rowid, group: nil)
                                    : transaction.viewRowBefore(name, rowid: entry.rowid)
        let config = config.withLock { $0 }
        let regroups = known == nil || config.grouping.blockInvokeOptions.runs(for: change)
        let resorts = known == nil || config.sorting.blockInvokeOptions.runs(for: change)
        var final: String?
        var inPlace = false
        update(name, transaction) { state, engine in
            let before = known ?? ViewRowBefore(rowid: entry.rowid, group: engine.group(ofRowid: entry.rowid, in: state))
            let group = regroups ? engine.group(collection: collection, key: key) : before.group
            if let group, group == before.group,
               !resorts || engine.fitsInPlace(rowid: entry.rowid, collection: collection, key: key, at: before.index, group: group, in: state) {
                final = group
                inPlace = true
                return false
            }
            let removed = before.group != nil
                && engine.removeRow(rowid: entry.rowid, collection: collection, key: key, at: before.index, from: &state)
            if let group, engine.insertRow(rowid: entry.rowid, collection: collection, key: key, group: group, into: &state) { final = group }
            return removed || final != nil
        }
        if inPlace { transaction.noteKeptInPlace(name, rowid: entry.rowid) }
        guard let final, inPlace || touched else { return }
        transaction.noteViewRawChanges(name)
        transaction.noteViewChange(name, touching: touched ? YapCollectionKey(collection: collection, key: key) : nil,
                                   groups: [final])
    }
}
