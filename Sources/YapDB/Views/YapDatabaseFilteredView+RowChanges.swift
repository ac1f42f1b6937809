import Foundation
import YapDBEngine

extension YapDatabaseFilteredView {
    /// Before a change (or touch) of an existing row: records where this view holds it (with its
    /// index when the root view's sorting will run again for `change`: its place in every view
    /// of the chain may then change, and it is found with its old values).
    func recordRowBefore(_ name: String, collection: String, key: String, change: RowChange,
                         transaction: YapDatabaseReadWriteTransaction) {
        transaction.viewRowsBefore[name] = nil
        guard let entry = transaction.entry(collection: collection, key: key), let state = transaction.viewState(name),
              let context = FilteredViewContext(view: self, transaction: transaction) else { return }
        // The root's engine: its sorting orders this view too.
        transaction.viewRowsBefore[name] = context.sorter.rowBefore(rowid: entry.rowid, collection: collection, key: key,
                                                                    change: change, in: state)
    }

    /// After a change (or touch) of the row, once the parent view has placed it: the filter
    /// runs again when its options name `change`, when the row is new, or when it entered the
    /// parent view or changed group there (the group is one of the filter's inputs); otherwise
    /// the row stays in or out as before. A row still held in the same group keeps its index
    /// when the parent kept it in place (this view is a subsequence of the parent's order) or
    /// the sorting did not run; otherwise it moves. A row left in place is recorded as changed
    /// for observers (and as touched, for a touch). Without a record from before the change,
    /// everything runs.
    func refilterRow(_ name: String, collection: String, key: String, change: RowChange,
                     transaction: YapDatabaseReadWriteTransaction, touched: Bool) {
        guard let entry = transaction.entry(collection: collection, key: key) else { return }
        let rowid = entry.rowid
        let absent = ViewRowBefore(rowid: rowid, group: nil)
        let known = change.isInsert ? absent : transaction.viewRowBefore(name, rowid: rowid)
        let parentBefore = change.isInsert ? absent : transaction.viewRowBefore(parentViewName, rowid: rowid)
        var held = false
        var inPlace = false
        update(name, transaction) { state, context in
            let before = known ?? ViewRowBefore(rowid: rowid, group: context.sorter.group(ofRowid: rowid, in: state))
            // Takes the row out where it was.
            func takeOut(_ state: inout ViewState) -> Bool {
                before.group != nil && context.sorter.removeRow(rowid: rowid, collection: collection, key: key, at: before.index, from: &state)
            }
            guard let group = context.sorter.group(ofRowid: rowid, in: context.parentState) else { return takeOut(&state) }
            let filters = known == nil || parentBefore?.group != group || context.filtering.blockInvokeOptions.runs(for: change)
            let keeps = filters ? context.keeps(collection: collection, key: key, group: group) : before.group != nil
            let resorts = known == nil || context.sorter.config.sorting.blockInvokeOptions.runs(for: change)
            if keeps && before.group == group && (!resorts || parentBefore?.keptInPlace == true) {
                held = true
                inPlace = true
                return false
            }
            let removed = takeOut(&state)
            held = keeps && context.place(collection: collection, key: key, into: &state, filtered: true)
            return removed || held
        }
        if held && !inPlace { transaction.noteViewPlaced(name, [YapCollectionKey(collection: collection, key: key)]) }
        if inPlace { transaction.noteKeptInPlace(name, rowid: rowid) }
        guard held, inPlace || touched else { return }
        transaction.noteViewRawChanges(name)
        transaction.noteViewChange(name, touching: touched ? YapCollectionKey(collection: collection, key: key) : nil)
    }
}
