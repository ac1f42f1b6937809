import Foundation

/// Maps a view's groups onto the sections of a table or collection view, in a fixed order, and
/// remembers what they held at the last update, so `getChanges(forNotifications:withMappings:)`
/// can say how to animate the move to a newer snapshot. Updated in place.
///
/// Threading: use from one thread (typically the main thread).
public final class YapDatabaseViewMappings {
    /// The groups, in section order (empty groups of dynamic sections are hidden).
    public let allGroups: [String]
    /// The registered name of the view.
    public let view: String
    /// The snapshot the mappings reflect (`UInt64.max` until the first update).
    public private(set) var snapshotOfLastUpdate: UInt64 = .max
    /// Each group's keys in view order (not reversed), as of the last update.
    var lists: [String: [YapCollectionKey]] = [:]
    var reversedGroups: Set<String> = []
    var dynamicGroups: Set<String> = []

    /// Mappings of `groups` (in this order) of the view registered as `view`.
    public init(groups: [String], view: String) {
        self.allGroups = groups
        self.view = view
    }

    func setSnapshot(_ snapshot: UInt64) { snapshotOfLastUpdate = snapshot }

    /// Reads the groups' contents in `transaction`'s snapshot.
    public func update(with transaction: YapDatabaseReadTransaction) {
        lists = Self.lists(of: allGroups, view: view, in: transaction)
        snapshotOfLastUpdate = transaction.connection.snapshot
    }

    static func lists(of groups: [String], view: String, in transaction: YapDatabaseReadTransaction) -> [String: [YapCollectionKey]] {
        guard let viewTransaction = transaction.ext(view) as? YapDatabaseViewTransaction else { return [:] }
        var lists: [String: [YapCollectionKey]] = [:]
        for group in groups {
            var keys: [YapCollectionKey] = []
            keys.reserveCapacity(viewTransaction.numberOfItems(inGroup: group))
            viewTransaction.iterateKeys(inGroup: group) { collection, key, _, _ in keys.append(YapCollectionKey(collection: collection, key: key)) }
            lists[group] = keys
        }
        return lists
    }

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

    /// The groups shown as sections, in order.
    public var visibleGroups: [String] { visibleGroups(lists) }

    func visibleGroups(_ lists: [String: [YapCollectionKey]]) -> [String] {
        allGroups.filter { !dynamicGroups.contains($0) || !(lists[$0]?.isEmpty ?? true) }
    }

    /// The number of sections shown.
    public func numberOfSections() -> Int { visibleGroups.count }

    /// The number of rows in `section`.
    public func numberOfItems(inSection section: Int) -> Int {
        group(forSection: section).map { numberOfItems(inGroup: $0) } ?? 0
    }

    /// The number of rows in `group`.
    public func numberOfItems(inGroup group: String) -> Int { lists[group]?.count ?? 0 }

    /// The group shown as `section`, or nil.
    public func group(forSection section: Int) -> String? {
        let groups = visibleGroups
        return section >= 0 && section < groups.count ? groups[section] : nil
    }

    /// The section showing `group`, or nil when it is hidden or not mapped.
    public func section(forGroup group: String) -> Int? { visibleGroups.firstIndex(of: group) }

    /// The (collection, key) shown at `row` of `section`.
    public func collectionKey(atRow row: Int, inSection section: Int) -> YapCollectionKey? {
        guard let group = group(forSection: section), let list = lists[group], row >= 0, row < list.count else { return nil }
        return list[reversedGroups.contains(group) ? list.count - 1 - row : row]
    }
}

/// What kind of change a section or row change is.
public enum YapDatabaseViewChangeType: Int, Sendable {
    case insert = 1
    case delete = 2
    case move = 3
    case update = 4
}

/// A section that appeared or disappeared.
public final class YapDatabaseViewSectionChange: CustomStringConvertible {
    public let type: YapDatabaseViewChangeType
    /// The section index: before the change for a delete, after it for an insert.
    public let index: Int
    public let group: String

    init(type: YapDatabaseViewChangeType, index: Int, group: String) {
        self.type = type
        self.index = index
        self.group = group
    }

    public var description: String { "section \(type) \(index) (\(group))" }
}

/// A row that was inserted, deleted, moved or updated.
public final class YapDatabaseViewRowChange: CustomStringConvertible {
    public let type: YapDatabaseViewChangeType
    public let collectionKey: YapCollectionKey
    /// Where the row was (delete, move, update), as (section, row) before the change.
    public let indexPath: IndexPath?
    /// Where the row is (insert, move, update), as (section, row) after the change.
    public let newIndexPath: IndexPath?
    public let originalGroup: String?
    public let finalGroup: String?

    init(type: YapDatabaseViewChangeType, collectionKey: YapCollectionKey, from: (group: String, section: Int, row: Int)?,
         to: (group: String, section: Int, row: Int)?) {
        self.type = type
        self.collectionKey = collectionKey
        self.indexPath = from.map { IndexPath(indexes: [$0.section, $0.row]) }
        self.newIndexPath = to.map { IndexPath(indexes: [$0.section, $0.row]) }
        self.originalGroup = from?.group
        self.finalGroup = to?.group
    }

    public var originalSection: Int? { indexPath?[0] }
    public var originalIndex: Int? { indexPath?[1] }
    public var finalSection: Int? { newIndexPath?[0] }
    public var finalIndex: Int? { newIndexPath?[1] }

    public var description: String {
        "row \(type) \(collectionKey) \(indexPath.map { "\($0)" } ?? "-") → \(newIndexPath.map { "\($0)" } ?? "-")"
    }
}
