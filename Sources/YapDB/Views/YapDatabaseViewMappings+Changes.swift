import Foundation

extension YapDatabaseViewMappings {
    /// The section and row changes from `before` (a copy of these mappings as of their previous
    /// update) to these mappings (just updated), given what changed of each row, the rows the
    /// view placed anew, and how the view was rebuilt, if it was.
    func changes(from before: YapDatabaseViewMappings, changed: [YapCollectionKey: YapDatabaseViewChangesBitMask],
                 placed: Set<YapCollectionKey> = [], rebuild: ViewRebuild?) -> (sectionChanges: [YapDatabaseViewSectionChange], rowChanges: [YapDatabaseViewRowChange]) {
        let diff = ViewDiff(mappings: self, oldSections: before.visibleGroups(), newSections: visibleGroups(),
                            oldRows: before.shownRows(), newRows: shownRows(), changed: changed, placed: placed, rebuild: rebuild)
        return diff.compute()
    }

    /// The rows each mapped group shows, in view order (not reversed).
    func shownRows() -> [String: ArraySlice<YapCollectionKey>] {
        var rows: [String: ArraySlice<YapCollectionKey>] = [:]
        for group in allGroups { rows[group] = lists[group]?[...] ?? [] }
        return rows
    }

    /// Sets each range to its configured length and offset against the groups' counts (the
    /// first update). Nothing yet: ranges come with `YapDatabaseViewMappings+Range.swift`.
    func resetRanges() {}
}
