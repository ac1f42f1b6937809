import Foundation

/// Decides whether a group of the view is shown by mappings made with
/// `init(groupFilterBlock:sortBlock:view:)`: (group, transaction) → shown.
public typealias YapDatabaseViewMappingGroupFilter = (String, YapDatabaseReadTransaction) -> Bool

/// Orders the shown groups of mappings made with `init(groupFilterBlock:sortBlock:view:)`:
/// (group1, group2, transaction) → `.orderedAscending` puts group1's section first.
public typealias YapDatabaseViewMappingGroupSort = (String, String, YapDatabaseReadTransaction) -> ComparisonResult

/// Maps a view's groups onto the sections of a table or collection view, in order, and
/// remembers what they held at the last update, so `getChanges(forNotifications:withMappings:)`
/// can say how to animate the move to a newer snapshot. Updated in place.
///
/// The groups are either fixed (`init(groups:view:)`) or chosen at every update from the view's
/// non-empty groups by a filter block and ordered by a sort block
/// (`init(groupFilterBlock:sortBlock:view:)`), so sections appear and disappear as the blocks
/// decide.
///
/// Counts, sections and indexes are `UInt`, as Swift imports YapDatabase's `NSUInteger`.
///
/// Threading: use from one thread (typically the main thread).
public final class YapDatabaseViewMappings {
    /// The groups, in section order, as of the last update (empty groups of dynamic sections
    /// are among them but not shown).
    public internal(set) var allGroups: [String]
    /// The registered name of the view.
    public let view: String
    /// The snapshot the mappings reflect (`UInt64.max` until the first update).
    public private(set) var snapshotOfLastUpdate: UInt64 = .max
    /// Each group's keys in view order (not reversed), as of the last update.
    var lists: [String: [YapCollectionKey]] = [:]
    var reversedGroups: Set<String> = []
    var dynamicGroups: Set<String> = []
    var allGroupsDynamic = false
    /// Per group, the offsets of the neighbours each row's drawing depends on.
    var dependencies: [String: Set<Int>] = [:]
    let groupFilter: YapDatabaseViewMappingGroupFilter?
    let groupSort: YapDatabaseViewMappingGroupSort?

    /// Mappings of `groups` (in this order) of the view registered as `view`.
    public init(groups: [String], view: String) {
        self.allGroups = groups
        self.view = view
        self.groupFilter = nil
        self.groupSort = nil
    }

    /// Mappings of the view's groups that `filterBlock` accepts, ordered by `sortBlock`; both
    /// run again at every update (`update(with:)`, `getChanges(forNotifications:withMappings:)`).
    public init(groupFilterBlock filterBlock: @escaping YapDatabaseViewMappingGroupFilter,
                sortBlock: @escaping YapDatabaseViewMappingGroupSort, view: String) {
        self.allGroups = []
        self.view = view
        self.groupFilter = filterBlock
        self.groupSort = sortBlock
    }

    func setSnapshot(_ snapshot: UInt64) { snapshotOfLastUpdate = snapshot }

    /// An independent copy (configuration and the contents of the last update), as
    /// `NSCopying`'s `copy()` gives it: `mappings.copy() as! YapDatabaseViewMappings`.
    public func copy() -> Any {
        let copy = groupFilter.flatMap { filter in groupSort.map { YapDatabaseViewMappings(groupFilterBlock: filter, sortBlock: $0, view: view) } }
            ?? YapDatabaseViewMappings(groups: allGroups, view: view)
        copy.allGroups = allGroups
        copy.snapshotOfLastUpdate = snapshotOfLastUpdate
        copy.lists = lists
        copy.reversedGroups = reversedGroups
        copy.dynamicGroups = dynamicGroups
        copy.allGroupsDynamic = allGroupsDynamic
        copy.dependencies = dependencies
        return copy
    }

    /// Reads the groups' contents in `transaction`'s snapshot.
    public func update(with transaction: YapDatabaseReadTransaction) {
        (allGroups, lists) = contents(in: transaction)
        snapshotOfLastUpdate = transaction.connection.snapshot
    }

    /// The groups (chosen again when there is a group filter) and their keys in `transaction`.
    func contents(in transaction: YapDatabaseReadTransaction) -> (groups: [String], lists: [String: [YapCollectionKey]]) {
        guard let viewTransaction = transaction.ext(view) as? YapDatabaseViewTransaction else { return (allGroups, [:]) }
        var groups = allGroups
        if let groupFilter, let groupSort {
            groups = viewTransaction.allGroups().sorted().filter { groupFilter($0, transaction) }
            groups.sort { groupSort($0, $1, transaction) == .orderedAscending }
        }
        var lists: [String: [YapCollectionKey]] = [:]
        for group in groups {
            var keys: [YapCollectionKey] = []
            keys.reserveCapacity(viewTransaction.count(group))
            viewTransaction.iterateKeys(inGroup: group) { collection, key, _, _ in keys.append(YapCollectionKey(collection: collection, key: key)) }
            lists[group] = keys
        }
        return (groups, lists)
    }

    // MARK: Configuration

    /// Shows `group` in reverse order.
    public func setIsReversed(_ reversed: Bool, forGroup group: String) {
        if reversed { reversedGroups.insert(group) } else { reversedGroups.remove(group) }
    }

    /// Whether `group` is shown reversed.
    public func isReversed(forGroup group: String) -> Bool { reversedGroups.contains(group) }

    /// Hides `group`'s section while it is empty.
    public func setIsDynamicSection(_ dynamic: Bool, forGroup group: String) {
        if dynamic { dynamicGroups.insert(group) } else { dynamicGroups.remove(group) }
    }

    /// Whether `group`'s section is hidden while empty.
    public func isDynamicSection(forGroup group: String) -> Bool { allGroupsDynamic || dynamicGroups.contains(group) }

    /// Hides every group's section while it is empty (or none, with false; per-group settings
    /// made afterwards apply on top).
    public func setIsDynamicSectionForAllGroups(_ dynamic: Bool) {
        allGroupsDynamic = dynamic
        if !dynamic { dynamicGroups.removeAll() }
    }

    /// Whether every group's section is hidden while empty.
    public func isDynamicSectionForAllGroups() -> Bool { allGroupsDynamic }

    // MARK: Sections and counts

    /// The groups shown as sections, in order.
    public func visibleGroups() -> [String] { visibleGroups(allGroups, lists) }

    func visibleGroups(_ groups: [String], _ lists: [String: [YapCollectionKey]]) -> [String] {
        groups.filter { !isDynamicSection(forGroup: $0) || !(lists[$0]?.isEmpty ?? true) }
    }

    /// Whether no section has a row.
    public func isEmpty() -> Bool { numberOfItemsInAllGroups() == 0 }

    /// The number of sections shown.
    public func numberOfSections() -> UInt { UInt(visibleGroups().count) }

    /// The number of rows in `section` (0 when there is no such section).
    public func numberOfItems(inSection section: UInt) -> UInt {
        group(forSection: section).map { numberOfItems(inGroup: $0) } ?? 0
    }

    /// The number of rows in `group`.
    public func numberOfItems(inGroup group: String) -> UInt { UInt(count(group)) }

    /// The number of rows in all shown sections.
    public func numberOfItemsInAllGroups() -> UInt { UInt(visibleGroups().reduce(0) { $0 + count($1) }) }

    func count(_ group: String) -> Int { lists[group]?.count ?? 0 }

    // MARK: Mapping sections and rows to groups and indexes

    /// The group shown as `section`, or nil.
    public func group(forSection section: UInt) -> String? {
        let groups = visibleGroups()
        return section < UInt(groups.count) ? groups[Int(section)] : nil
    }

    /// The section showing `group`, or `UInt(NSNotFound)` when it is hidden or not mapped.
    public func section(forGroup group: String) -> UInt {
        visibleGroups().firstIndex(of: group).map(UInt.init) ?? UInt(NSNotFound)
    }

    /// The index in the view's group of `row` of `section` (rows of reversed groups count from
    /// the end), or `UInt(NSNotFound)` when there is no such row.
    public func index(forRow row: UInt, inSection section: UInt) -> UInt {
        group(forSection: section).map { index(forRow: row, inGroup: $0) } ?? UInt(NSNotFound)
    }

    /// The index in the view's `group` of the row shown as `row`, or `UInt(NSNotFound)`.
    public func index(forRow row: UInt, inGroup group: String) -> UInt {
        let count = UInt(count(group))
        guard row < count else { return UInt(NSNotFound) }
        return reversedGroups.contains(group) ? count - 1 - row : row
    }

    /// The row showing the view's `index` of `group`, or `UInt(NSNotFound)`. Index and row are
    /// the same function both ways (reversal is its own inverse).
    public func row(forIndex index: UInt, inGroup group: String) -> UInt { self.index(forRow: index, inGroup: group) }

    /// The (section, row) showing the view's `index` of `group`, or nil when the group is not
    /// shown or the index is out of range.
    public func indexPath(forIndex index: UInt, inGroup group: String) -> IndexPath? {
        let section = section(forGroup: group), row = row(forIndex: index, inGroup: group)
        guard section != UInt(NSNotFound), row != UInt(NSNotFound) else { return nil }
        return IndexPath(indexes: [Int(section), Int(row)])
    }

    /// The (collection, key) shown at `row` of `section` (the `Int` form).
    public func collectionKey(atRow row: Int, inSection section: Int) -> YapCollectionKey? {
        guard row >= 0, section >= 0, let group = group(forSection: UInt(section)) else { return nil }
        let index = index(forRow: UInt(row), inGroup: group)
        return index == UInt(NSNotFound) ? nil : lists[group]?[Int(index)]
    }
}
