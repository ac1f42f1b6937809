import Foundation

/// A view's per-connection object: `connection.ext(name) as? YapDatabaseViewConnection`.
public class YapDatabaseViewConnection {
    let view: YapDatabaseAutoView
    let name: String
    /// The connection this belongs to.
    public unowned let connection: YapDatabaseConnection

    init(view: YapDatabaseAutoView, name: String, connection: YapDatabaseConnection) {
        self.view = view
        self.name = name
        self.connection = connection
    }

    /// How the mapped sections and rows changed between the mappings' last update and the
    /// connection's current snapshot (call after the connection moved forward, e.g. with
    /// `beginLongLivedReadTransaction()`, passing the notifications it returned). Updates the
    /// mappings to the current snapshot.
    ///
    /// Consolidated: a row deleted and inserted is a move; inserted then deleted is nothing;
    /// rows inside an inserted or deleted section are not listed separately.
    public func getChanges(forNotifications notifications: [Notification], withMappings mappings: YapDatabaseViewMappings)
        -> (sectionChanges: [YapDatabaseViewSectionChange], rowChanges: [YapDatabaseViewRowChange]) {
        let (lists, snapshot) = connection.read { tx in
            (YapDatabaseViewMappings.lists(of: mappings.allGroups, view: mappings.view, in: tx), tx.connection.snapshot)
        }
        defer {
            mappings.lists = lists
            mappings.setSnapshot(snapshot)
        }
        guard mappings.snapshotOfLastUpdate != .max else { return ([], []) }
        var changed: Set<YapCollectionKey> = []
        for changeset in ChangesetQueries.changesets(in: notifications) {
            changed.formUnion(changeset.objectChanges)
            changed.formUnion(changeset.metadataChanges)
        }
        for notification in notifications {
            if let extensions = notification.userInfo?[YapDatabaseNotificationKey.extensions] as? [String: Any],
               let touched = extensions[mappings.view] as? Set<YapCollectionKey> {
                changed.formUnion(touched)
            }
        }
        return ViewDiff(mappings: mappings, old: mappings.lists, new: lists, changed: changed).compute()
    }

    /// Whether any of `notifications` changed this view: a row entered, left, moved within or
    /// changed inside it, or a row in it was touched. False for commits that touched only rows
    /// the view does not hold (another collection, or rows its grouping leaves out).
    public func hasChanges(forNotifications notifications: [Notification]) -> Bool {
        notifications.contains { notification in
            (notification.userInfo?[YapDatabaseNotificationKey.extensions] as? [String: Any])?[name] != nil
        }
    }
}

/// The connection object of an automatic view.
public final class YapDatabaseAutoViewConnection: YapDatabaseViewConnection {}

/// The difference between two versions of a view's mapped groups.
struct ViewDiff {
    let mappings: YapDatabaseViewMappings
    let old: [String: [YapCollectionKey]]
    let new: [String: [YapCollectionKey]]
    let changed: Set<YapCollectionKey>

    typealias Place = (group: String, section: Int, row: Int)

    func compute() -> (sectionChanges: [YapDatabaseViewSectionChange], rowChanges: [YapDatabaseViewRowChange]) {
        let oldSections = mappings.visibleGroups(old), newSections = mappings.visibleGroups(new)
        var sectionChanges: [YapDatabaseViewSectionChange] = []
        for (index, group) in oldSections.enumerated() where !newSections.contains(group) {
            sectionChanges.append(.init(type: .delete, index: index, group: group))
        }
        for (index, group) in newSections.enumerated() where !oldSections.contains(group) {
            sectionChanges.append(.init(type: .insert, index: index, group: group))
        }
        let oldPlaces = places(old, oldSections), newPlaces = places(new, newSections)
        let deletedSections = Set(oldSections).subtracting(newSections), insertedSections = Set(newSections).subtracting(oldSections)

        var rowChanges: [YapDatabaseViewRowChange] = []
        for (key, from) in oldPlaces where newPlaces[key] == nil && !deletedSections.contains(from.group) {
            rowChanges.append(.init(type: .delete, collectionKey: key, from: from, to: nil))
        }
        for (key, to) in newPlaces where oldPlaces[key] == nil && !insertedSections.contains(to.group) {
            rowChanges.append(.init(type: .insert, collectionKey: key, from: nil, to: to))
        }
        // Rows in both: a change of group is a move; within a group, the rows outside the
        // longest run that kept its relative order moved.
        for group in newSections {
            let list = displayOrder(new, group)
            let common = list.filter { oldPlaces[$0]?.group == group }
            let oldRows = common.map { oldPlaces[$0]!.row }
            let stay = Set(longestIncreasingRun(oldRows).map { common[$0] })
            for key in list {
                guard let from = oldPlaces[key], let to = newPlaces[key] else { continue }
                if from.group != to.group || !stay.contains(key) {
                    rowChanges.append(.init(type: .move, collectionKey: key, from: from, to: to))
                } else if changed.contains(key) {
                    rowChanges.append(.init(type: .update, collectionKey: key, from: from, to: to))
                }
            }
        }
        return (sectionChanges, rowChanges)
    }

    /// Each key's (group, section, row) as shown.
    func places(_ lists: [String: [YapCollectionKey]], _ sections: [String]) -> [YapCollectionKey: Place] {
        var places: [YapCollectionKey: Place] = [:]
        for (section, group) in sections.enumerated() {
            for (row, key) in displayOrder(lists, group).enumerated() { places[key] = (group, section, row) }
        }
        return places
    }

    func displayOrder(_ lists: [String: [YapCollectionKey]], _ group: String) -> [YapCollectionKey] {
        let list = lists[group] ?? []
        return mappings.isReversed(forGroup: group) ? list.reversed() : list
    }

    /// Indexes (into `values`) of a longest strictly increasing subsequence. O(n log n).
    func longestIncreasingRun(_ values: [Int]) -> [Int] {
        var tails: [Int] = []          // index into values of the smallest tail of each length
        var previous = [Int](repeating: -1, count: values.count)
        for (i, value) in values.enumerated() {
            var low = 0, high = tails.count
            while low < high {
                let mid = (low + high) / 2
                if values[tails[mid]] < value { low = mid + 1 } else { high = mid }
            }
            if low > 0 { previous[i] = tails[low - 1] }
            if low == tails.count { tails.append(i) } else { tails[low] = i }
        }
        var result: [Int] = []
        var i = tails.last ?? -1
        while i >= 0 {
            result.append(i)
            i = previous[i]
        }
        return result.reversed()
    }
}
