import Foundation
import YapDBEngine

/// Rows inserted into a view's collections that the view has not placed yet, in arrival order
/// (see `YapDatabaseReadWriteTransaction.deferViewInsert`). A class so appending to it does
/// not copy it out of the transaction's dictionary.
final class ViewPendingInserts {
    let view: YapDatabaseAutoView
    var rows: [(collection: String, key: String)] = []

    init(view: YapDatabaseAutoView) { self.view = view }
}

extension YapDatabaseReadWriteTransaction {
    /// Records a new row for `view` (registered as `name`) to place later, in one pass with the
    /// other new rows: before anything reads or changes the view (`viewState(_:)` places them
    /// first) and at the latest before the commit (`placeAllPendingViewRows`).
    ///
    /// Why waiting changes nothing a caller can see: the view's state is read only through
    /// `viewState(_:)`, which places the pending rows first, so every read — the view
    /// transaction's, a filtered view's of its parent, the view's own hooks for a later change
    /// or removal of any row — sees them placed; and a pending row cannot change before it is
    /// placed, since its change reads the view first. The blocks see the rows with the values
    /// they have when placed, which are the values they were inserted with.
    func deferViewInsert(_ name: String, view: YapDatabaseAutoView, collection: String, key: String) {
        if let pending = viewPendingInserts[name] {
            pending.rows.append((collection, key))
        } else {
            let pending = ViewPendingInserts(view: view)
            pending.rows.append((collection, key))
            viewPendingInserts[name] = pending
        }
    }

    /// Places the rows `name`'s view has pending, if any.
    func placePendingViewRows(_ name: String) {
        guard let pending = viewPendingInserts.removeValue(forKey: name) else { return }
        pending.view.update(name, self) { state, engine in engine.insertRows(pending.rows, into: &state) }
    }

    /// Places every view's pending rows (before the commit).
    func placeAllPendingViewRows() {
        while let name = viewPendingInserts.keys.first { placePendingViewRows(name) }
    }
}

extension ViewEngine {
    /// A new row on its way into a group: its id, key and sort values.
    struct NewRow {
        let rowid: UInt64
        let collection: String
        let key: String
        let sortRow: ViewRow
    }

    /// Puts new rows (inserted into the database, not yet in the view) into their groups, as
    /// placing them one by one in arrival order would (each after its equals), with fewer
    /// comparisons: each group's rows are sorted among themselves (their sort values are in
    /// memory, so no comparison loads a row), then merged into the group's tree in that order:
    /// once a row sorts at or past the group's last row, it and every row after it are
    /// appended without a comparison; before that, each is placed by a search of the tree.
    /// Returns whether any row entered the view.
    func insertRows(_ rows: [(collection: String, key: String)], into state: inout ViewState) -> Bool {
        var byGroup: [String: [NewRow]] = [:]
        for row in rows {
            guard let entry = transaction.entry(collection: row.collection, key: row.key),
                  let group = group(collection: row.collection, key: row.key) else { continue }
            guard group.utf8.count <= state.maximumGroupNameLength else {
                YapDatabaseLogging.log(.error, "view group name of \(group.utf8.count) bytes is longer than the \(state.maximumGroupNameLength) an index page holds: row \(row.collection)/\(row.key) left out of the view")
                continue
            }
            byGroup[group, default: []].append(NewRow(rowid: entry.rowid, collection: row.collection, key: row.key,
                                                      sortRow: self.row(collection: row.collection, key: row.key, forGrouping: false)))
        }
        var placedAny = false
        for (group, batch) in byGroup {
            // Stable: equal rows keep their arrival order. The positions are sorted, not the
            // rows (a row is large: moving it costs a dozen reference counts).
            // The sort values sit in an array of their own, so a comparison borrows them
            // instead of copying them out of the row.
            var order = Array(batch.indices)
            if batch.count > 1 {
                let sortRows = batch.map(\.sortRow)
                order.sort { i, j in
                    switch config.sorting.compare(transaction, group, sortRows[i], sortRows[j]) {
                    case .orderedAscending: return true
                    case .orderedDescending: return false
                    case .orderedSame: return i < j   // the rows are in arrival order
                    }
                }
            }
            let sorted = order.map { batch[$0] }
            let placed = run("insert into group \(group)", false) { () throws(EngineError) in
                try merge(sorted, into: group, of: &state)
                return true
            }
            guard placed else { continue }
            placedAny = true
            groupLog?.groups.insert(group)
            groupLog?.rawChanges += sorted.count
            if let last = sorted.last {
                // The next row placed in this group is compared with its last row first.
                rowKeys?.note(last.rowid, collection: last.collection, key: last.key)
            }
            // Not recorded as placed one by one: the change set counts every inserted key as
            // placed anew (`YapDatabaseViewConnection.getChanges`).
        }
        return placedAny
    }

    /// Merges `rows`, sorted by the view's sorting, into `group`'s tree (see `insertRows`).
    private func merge(_ rows: [NewRow], into group: String, of state: inout ViewState) throws(EngineError) {
        var appending = false
        try state.insert(rows.map(\.rowid), into: group) { tree, i throws(EngineError) in
            let row = rows[i]
            if !appending {
                if let last = try tree.last() {
                    appending = compare(row.sortRow, with: last, in: group) != .orderedAscending
                } else {
                    appending = true
                }
            }
            if appending { return tree.count }
            // A later row of the batch may be compared with this one.
            rowKeys?.note(row.rowid, collection: row.collection, key: row.key)
            return try tree.upperBound { existing in compare(row.sortRow, with: existing, in: group) }
        }
    }
}
