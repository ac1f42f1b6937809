import Foundation

extension YapDatabaseViewMappings {
    /// The section and row changes from `before` (a copy of these mappings as of their previous
    /// update) to these mappings (just updated), given what changed of each row, the rows the
    /// view placed anew, and how the view was rebuilt, if it was. Moves the ranges first.
    func changes(from before: YapDatabaseViewMappings, changed: [YapCollectionKey: YapDatabaseViewChangesBitMask],
                 placed: Set<YapCollectionKey> = [], rebuild: ViewRebuild?)
        -> (sectionChanges: [YapDatabaseViewSectionChange], rowChanges: [YapDatabaseViewRowChange]) {
        followRanges(from: before, placed: placed, rebuild: rebuild)
        validateConsolidation()
        let old = before.shownRows(), new = shownRows()
        let diff = ViewDiff(mappings: self, oldSections: old.sections, newSections: new.sections,
                            oldRows: old.rows, newRows: new.rows, changed: changed, placed: placed, rebuild: rebuild)
        return diff.compute()
    }

    /// The sections shown and the rows each shows, in view order (not reversed), through the
    /// ranges; while consolidated, one section whose rows are every group's as the table shows
    /// them.
    func shownRows() -> (sections: [String], rows: [String: ArraySlice<YapCollectionKey>]) {
        var rows: [String: ArraySlice<YapCollectionKey>] = [:]
        let sections = sectionGroups()
        for group in allGroups { rows[group] = lists[group]?[window(group)] ?? [] }
        guard isUsingConsolidatedGroup(), let name = consolidationName else { return (sections, rows) }
        var all: [YapCollectionKey] = []
        for group in sections {
            let shown = rows[group] ?? []
            all.append(contentsOf: isReversed(forGroup: group) ? Array(shown.reversed()) : Array(shown))
        }
        return ([name], [name: all[...]])
    }
}
