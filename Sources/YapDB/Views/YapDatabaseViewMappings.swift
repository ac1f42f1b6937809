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
    /// How many keys these mappings read from the view so far (tests check that an update
    /// re-reads only the groups that changed).
    var keysRead = 0
    /// Set by tests to read every group at each update (the path the notes' shortcut must match).
    var readsEveryGroup = false
    var reversedGroups: Set<String> = []
    var dynamicGroups: Set<String> = []
    var allGroupsDynamic = false
    /// Per group, the offsets of the neighbours each row's drawing depends on (in the view's
    /// order: a reversed group's offsets are negated).
    var dependencies: [String: Set<Int>] = [:]
    /// Per group, its range (pin in the view's order: a reversed group's pin is flipped), with
    /// the length and offset of the last update.
    var ranges: [String: YapDatabaseViewRangeOptions] = [:]
    /// Auto-consolidation: below this many shown rows, every group shows as one section.
    var consolidationThreshold: UInt = 0
    var consolidationName: String?
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
        copy.ranges = ranges.mapValues { $0.with(length: $0.length, offset: $0.offset) }
        copy.consolidationThreshold = consolidationThreshold
        copy.consolidationName = consolidationName
        return copy
    }

    /// Reads the groups' contents in `transaction`'s snapshot.
    public func update(with transaction: YapDatabaseReadTransaction) {
        let (groups, lists) = contents(in: transaction)
        adopt(groups: groups, lists: lists, snapshot: transaction.connection.snapshot)
    }

    /// Takes `lists` (each group's keys in view order) as the contents of `groups` at
    /// `snapshot`, with no change set (the ranges fit to the rows).
    func adopt(groups: [String], lists: [String: [YapCollectionKey]], snapshot: UInt64) {
        allGroups = groups
        self.lists = lists
        snapshotOfLastUpdate = snapshot
        resetRanges()
        validateConsolidation()
    }

    /// The groups (chosen again when there is a group filter) and their keys in `transaction`.
    /// A group in `kept` takes its keys from `lists` (these mappings' last update) instead of
    /// reading them: the caller knows its rows did not change since (see
    /// `YapDatabaseViewConnection.unchangedGroups`).
    func contents(in transaction: YapDatabaseReadTransaction, keeping kept: Set<String> = [])
        -> (groups: [String], lists: [String: [YapCollectionKey]]) {
        guard let viewTransaction = transaction.ext(view) as? YapDatabaseViewTransaction else { return (allGroups, [:]) }
        var groups = allGroups
        if let groupFilter, let groupSort {
            groups = viewTransaction.allGroups().sorted().filter { groupFilter($0, transaction) }
            groups.sort { groupSort($0, $1, transaction) == .orderedAscending }
        }
        var lists: [String: [YapCollectionKey]] = [:]
        for group in groups {
            if kept.contains(group), let known = self.lists[group] {
                lists[group] = known
                continue
            }
            var keys: [YapCollectionKey] = []
            keys.reserveCapacity(viewTransaction.count(group))
            viewTransaction.iterateKeys(inGroup: group) { collection, key, _, _ in keys.append(YapCollectionKey(collection: collection, key: key)) }
            keysRead += keys.count
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

    /// The groups shown as sections, in order (one, the consolidated group's name, while the
    /// groups are auto-consolidated).
    public func visibleGroups() -> [String] {
        isUsingConsolidatedGroup() ? [consolidationName ?? ""] : sectionGroups()
    }

    /// The groups that have a section of their own when not consolidated: all mapped groups
    /// but dynamic ones that show no row.
    func sectionGroups() -> [String] {
        allGroups.filter { !isDynamicSection(forGroup: $0) || shownCount($0) > 0 }
    }

    /// Whether no section has a row.
    public func isEmpty() -> Bool { numberOfItemsInAllGroups() == 0 }

    /// The number of sections shown.
    public func numberOfSections() -> UInt { UInt(visibleGroups().count) }

    /// The number of rows in `section` (0 when there is no such section).
    public func numberOfItems(inSection section: UInt) -> UInt {
        group(forSection: section).map { numberOfItems(inGroup: $0) } ?? 0
    }

    /// The number of rows shown of `group` (its range's length, if it has a range; every row
    /// of the groups, for the consolidated group).
    public func numberOfItems(inGroup group: String) -> UInt {
        if isUsingConsolidatedGroup() && group == consolidationName { return numberOfItemsInAllGroups() }
        return UInt(shownCount(group))
    }

    /// The number of rows shown in all sections.
    public func numberOfItemsInAllGroups() -> UInt { UInt(sectionGroups().reduce(0) { $0 + shownCount($1) }) }

    /// The number of rows of `group` in the view, as of the last update.
    func count(_ group: String) -> Int { lists[group]?.count ?? 0 }

    /// The number of rows of `group` shown (its range window).
    func shownCount(_ group: String) -> Int { window(group).count }

    // MARK: Mapping sections and rows to groups and indexes

    /// The group shown as `section`, or nil.
    public func group(forSection section: UInt) -> String? {
        let groups = visibleGroups()
        return section < UInt(groups.count) ? groups[Int(section)] : nil
    }

    /// The section showing `group`, or `UInt(NSNotFound)` when it is hidden or not mapped
    /// (while consolidated: 0 for the consolidated group and for every group it shows).
    public func section(forGroup group: String) -> UInt {
        if isUsingConsolidatedGroup() { return group == consolidationName || sectionGroups().contains(group) ? 0 : UInt(NSNotFound) }
        return sectionGroups().firstIndex(of: group).map(UInt.init) ?? UInt(NSNotFound)
    }

    /// The index in the view's group of `row` of `section` (reversed groups count from the
    /// end, ranges from their start), or `UInt(NSNotFound)` when there is no such row.
    public func index(forRow row: UInt, inSection section: UInt) -> UInt {
        groupIndex(row: row, section: section).map { UInt($0.index) } ?? UInt(NSNotFound)
    }

    /// The index in the view's `group` of the row shown as `row`, or `UInt(NSNotFound)`. For
    /// the consolidated group, the index in the group that row belongs to.
    public func index(forRow row: UInt, inGroup group: String) -> UInt {
        if isUsingConsolidatedGroup() && group == consolidationName {
            return groupIndex(row: row, section: 0).map { UInt($0.index) } ?? UInt(NSNotFound)
        }
        return index(ofShownRow: row, in: group).map(UInt.init) ?? UInt(NSNotFound)
    }

    /// The row showing the view's `index` of `group`, or `UInt(NSNotFound)` when the row is not
    /// shown (outside the group's range). While consolidated, the row in the one section.
    public func row(forIndex index: UInt, inGroup group: String) -> UInt {
        let window = window(group)
        guard index <= UInt(Int.max), window.contains(Int(index)) else { return UInt(NSNotFound) }
        let offset = Int(index) - window.lowerBound
        let row = isReversed(forGroup: group) ? window.count - 1 - offset : offset
        return UInt(row + (isUsingConsolidatedGroup() ? consolidatedOffset(of: group) : 0))
    }

    /// The (section, row) showing the view's `index` of `group`, or nil when the group is not
    /// shown or the row is outside its range.
    public func indexPath(forIndex index: UInt, inGroup group: String) -> IndexPath? {
        let section = section(forGroup: group), row = row(forIndex: index, inGroup: group)
        guard section != UInt(NSNotFound), row != UInt(NSNotFound) else { return nil }
        return IndexPath(indexes: [Int(section), Int(row)])
    }

    /// The (section, row) nearest to `row` of `group` (a view group, never the consolidated
    /// group's name), for keeping a selection after a change removed the selected row: the row
    /// itself, or the group's last row when `row` is past its end; when `group` shows no row,
    /// the last row of the nearest earlier group that shows one, else the first row of the
    /// nearest later one. While consolidated, the row in the one section. Nil before the first
    /// update, for a group the mappings do not map, and when no group shows a row.
    public func nearestIndexPath(forRow row: UInt, inGroup group: String) -> IndexPath? {
        guard snapshotOfLastUpdate != .max, let position = allGroups.firstIndex(of: group) else { return nil }
        let consolidated = isUsingConsolidatedGroup()
        let sections = sectionGroups()
        func path(_ group: String, _ row: Int) -> IndexPath? {
            guard let section = sections.firstIndex(of: group) else { return nil }
            return consolidated ? IndexPath(indexes: [0, row + consolidatedOffset(of: group)]) : IndexPath(indexes: [section, row])
        }
        let rows = shownCount(group)
        if rows > 0, let found = path(group, Int(min(row, UInt(rows - 1)))) { return found }
        for earlier in allGroups[..<position].reversed() {
            let count = shownCount(earlier)
            if count > 0, let found = path(earlier, count - 1) { return found }
        }
        for later in allGroups[(position + 1)...] where shownCount(later) > 0 {
            if let found = path(later, 0) { return found }
        }
        return nil
    }

    /// The (collection, key) shown at `row` of `section` (the `Int` form), as of the last update.
    public func collectionKey(atRow row: Int, inSection section: Int) -> YapCollectionKey? {
        guard row >= 0, section >= 0, let (group, index) = groupIndex(row: UInt(row), section: UInt(section)) else { return nil }
        return lists[group]?[index]
    }

    /// The group and the index in it of the row shown at `row` of `section`, or nil.
    func groupIndex(row: UInt, section: UInt) -> (group: String, index: Int)? {
        guard row <= UInt(Int.max) else { return nil }
        if isUsingConsolidatedGroup() {
            guard section == 0 else { return nil }
            var rest = Int(row)
            for group in sectionGroups() {
                let count = shownCount(group)
                if rest < count { return index(ofShownRow: UInt(rest), in: group).map { (group, $0) } }
                rest -= count
            }
            return nil
        }
        guard let group = group(forSection: section), let index = index(ofShownRow: row, in: group) else { return nil }
        return (group, index)
    }

    /// The index in the view's `group` of its shown `row` (through its range and reversal).
    func index(ofShownRow row: UInt, in group: String) -> Int? {
        let window = window(group)
        guard row < UInt(window.count) else { return nil }
        return isReversed(forGroup: group) ? window.upperBound - 1 - Int(row) : window.lowerBound + Int(row)
    }
}
