import Foundation

/// How a commit rebuilt a view, which decides how its surviving rows are reported (as
/// YapDatabase reports its repopulate and resort).
enum ViewRebuild: Int, Sendable, Comparable {
    /// A new sorting: each row was placed again; a row whose place still holds is an update
    /// (object and metadata changed), the others are moves.
    case resorted = 1
    /// A new grouping or filter: every row was taken out and put back, so every row still shown
    /// is a move (to the same place, for many of them).
    case regrouped = 2

    static func < (lhs: ViewRebuild, rhs: ViewRebuild) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The difference between two versions of a view's mapped groups, as section and row changes a
/// table view applies.
///
/// Each group is compared through the rows the mappings show of it (its range window, see
/// `YapDatabaseViewMappings+Range.swift`):
/// - a row shown only before is a delete, a row shown only after is an insert — also when its
///   section is inserted or deleted by the same change (the section change comes beside them);
/// - a row shown in another group than before is one move;
/// - within a group, a row the view placed anew moved (even back to its old index); of the
///   others, the largest set that kept its relative order stays, the rest moved;
/// - a row that stayed and changed is an update (a move when its section index changed); rows
///   a changed neighbour's drawing depends on get `.changedDependency` updates.
struct ViewDiff {
    typealias Place = (group: String, index: Int)

    let mappings: YapDatabaseViewMappings
    /// The groups shown as sections, before and after.
    let oldSections: [String]
    let newSections: [String]
    /// The rows each shown group shows (its window), in view order, before and after.
    let oldRows: [String: ArraySlice<YapCollectionKey>]
    let newRows: [String: ArraySlice<YapCollectionKey>]
    /// What changed of each changed row (object, metadata).
    let changed: [YapCollectionKey: YapDatabaseViewChangesBitMask]
    /// Rows the view placed anew (the others kept their index in their group).
    let placed: Set<YapCollectionKey>
    /// The strongest rebuild among the commits, if any.
    let rebuild: ViewRebuild?

    /// A row change in group coordinates (index within the group's window, view order).
    struct Raw {
        var type: YapDatabaseViewChangeType
        var key: YapCollectionKey
        var from: Place?
        var to: Place?
        var changes: YapDatabaseViewChangesBitMask
    }

    func compute() -> (sectionChanges: [YapDatabaseViewSectionChange], rowChanges: [YapDatabaseViewRowChange]) {
        var sectionChanges: [YapDatabaseViewSectionChange] = []
        let kept = Set(oldSections).intersection(newSections)
        for (index, group) in oldSections.enumerated() where !kept.contains(group) {
            sectionChanges.append(.init(type: .delete, index: index, group: group))
        }
        for (index, group) in newSections.enumerated() where !kept.contains(group) {
            sectionChanges.append(.init(type: .insert, index: index, group: group))
        }
        let raw = rawChanges()
        return (sectionChanges, raw.map(rowChange))
    }

    /// Each shown row's (group, index in its window).
    static func places(_ sections: [String], _ rows: [String: ArraySlice<YapCollectionKey>]) -> [YapCollectionKey: Place] {
        var places: [YapCollectionKey: Place] = [:]
        for group in sections {
            guard let list = rows[group] else { continue }
            for (offset, key) in list.enumerated() { places[key] = (group, offset) }
        }
        return places
    }

    func rawChanges() -> [Raw] {
        let oldPlaces = Self.places(oldSections, oldRows), newPlaces = Self.places(newSections, newRows)
        var raw: [Raw] = []
        for group in oldSections {
            for (index, key) in (oldRows[group] ?? []).enumerated() where newPlaces[key] == nil {
                raw.append(Raw(type: .delete, key: key, from: (group, index), to: nil, changes: changed[key] ?? []))
            }
        }
        var stayers: [YapCollectionKey: Place] = [:]   // final place of rows that stayed
        for group in newSections {
            let list = Array(newRows[group] ?? [])
            var common: [Int] = [], weights: [Int] = [], positions: [Int] = []
            for (position, key) in list.enumerated() {
                // A row the view placed anew is a move even where it landed in its old place
                // (YapDatabase: a delete and an insert of one row are always a move; only a
                // row whose index never budged is an update).
                guard let from = oldPlaces[key], from.group == group, !placed.contains(key) else { continue }
                common.append(from.index)
                weights.append(1)
                positions.append(position)
            }
            let stay = Set(Self.heaviestIncreasingRun(common, weights: weights, size: oldRows[group]?.count ?? 0).map { positions[$0] })
            for (index, key) in list.enumerated() {
                let to: Place = (group, index)
                guard let from = oldPlaces[key] else {
                    raw.append(Raw(type: .insert, key: key, from: nil, to: to, changes: changed[key] ?? []))
                    continue
                }
                if from.group != group || !stay.contains(index) || rebuild == .regrouped {
                    raw.append(Raw(type: .move, key: key, from: from, to: to, changes: changed[key] ?? []))
                } else if rebuild == .resorted {
                    raw.append(Raw(type: .update, key: key, from: from, to: to,
                                   changes: (changed[key] ?? []).union([.changedObject, .changedMetadata])))
                    stayers[key] = to
                } else {
                    if let changes = changed[key] {
                        raw.append(Raw(type: .update, key: key, from: from, to: to, changes: changes))
                    }
                    stayers[key] = to
                }
            }
        }
        addDependencies(to: &raw, stayers: stayers, oldPlaces: oldPlaces)
        return raw
    }

    /// Marks the rows whose drawing depends on a changed neighbour (mappings'
    /// `setCellDrawingDependencyForNeighboringCell(withOffset:forGroup:)`): for a dependency
    /// offset `d`, the row at `i - d` of a row inserted, deleted, moved or updated at `i` (its
    /// place before the change for a delete or a move's source, after it for an insert or a
    /// move's destination) gets `.changedDependency`, if it stayed.
    func addDependencies(to raw: inout [Raw], stayers: [YapCollectionKey: Place], oldPlaces: [YapCollectionKey: Place]) {
        guard !mappings.dependencies.isEmpty, !stayers.isEmpty else { return }
        var marked: [YapCollectionKey] = []
        var markedSet: Set<YapCollectionKey> = []
        func mark(_ group: String, _ index: Int, old: Bool) {
            let rows = old ? oldRows[group] : newRows[group]
            guard let rows, index >= 0, index < rows.count else { return }
            let key = rows[rows.startIndex + index]
            guard stayers[key] != nil, markedSet.insert(key).inserted else { return }
            marked.append(key)
        }
        for change in raw {
            if let from = change.from, change.type != .update, let offsets = mappings.dependencies[from.group] {
                // The row that followed (or preceded) the one that left now neighbours another.
                for d in offsets { mark(from.group, from.index - d, old: true) }
            }
            if let to = change.to, let offsets = mappings.dependencies[to.group] {
                for d in offsets { mark(to.group, to.index - d, old: false) }
            }
        }
        guard !marked.isEmpty else { return }
        var updateAt: [YapCollectionKey: Int] = [:]
        for (i, change) in raw.enumerated() where change.type == .update { updateAt[change.key] = i }
        for key in marked {
            if let i = updateAt[key] {
                raw[i].changes.insert(.changedDependency)
            } else if let from = oldPlaces[key], let to = stayers[key] {
                raw.append(Raw(type: .update, key: key, from: from, to: to, changes: .changedDependency))
            }
        }
    }

    /// The change in section coordinates, with reversed groups counted from their ends.
    func rowChange(_ raw: Raw) -> YapDatabaseViewRowChange {
        func place(_ place: Place?, _ sections: [String], _ rows: [String: ArraySlice<YapCollectionKey>]) -> (group: String, section: Int, row: Int)? {
            guard let place, let section = sections.firstIndex(of: place.group) else { return nil }
            let count = rows[place.group]?.count ?? 0
            return (place.group, section, mappings.isReversed(forGroup: place.group) ? count - 1 - place.index : place.index)
        }
        let from = place(raw.from, oldSections, oldRows), to = place(raw.to, newSections, newRows)
        // An update whose section moved (a section inserted or deleted before it) is a move,
        // as YapDatabase reports it: table views mishandle such an update.
        let type = raw.type == .update && from?.section != to?.section ? .move : raw.type
        return YapDatabaseViewRowChange(changes: raw.changes, type: type, collectionKey: raw.key, from: from, to: to)
    }

    /// Indexes (into `values`) of a strictly increasing subsequence of greatest total weight.
    /// `values` are in `0..<size`. O(n log size), with a Fenwick tree of prefix maxima.
    static func heaviestIncreasingRun(_ values: [Int], weights: [Int], size: Int) -> [Int] {
        guard !values.isEmpty else { return [] }
        var tree = [(total: Int, at: Int)](repeating: (0, -1), count: size + 1)
        var previous = [Int](repeating: -1, count: values.count)
        var best = (total: 0, at: -1)
        for (i, value) in values.enumerated() {
            // The best run ending below `value`.
            var prefix = (total: 0, at: -1)
            var j = value
            while j > 0 {
                if tree[j].total > prefix.total { prefix = tree[j] }
                j -= j & -j
            }
            let total = prefix.total + weights[i]
            previous[i] = prefix.at
            if total > best.total { best = (total, i) }
            j = value + 1
            while j <= size {
                if total > tree[j].total { tree[j] = (total, i) }
                j += j & -j
            }
        }
        var result: [Int] = []
        var i = best.at
        while i >= 0 {
            result.append(i)
            i = previous[i]
        }
        return result.reversed()
    }
}
