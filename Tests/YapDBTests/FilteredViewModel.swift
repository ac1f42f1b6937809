import Foundation
import Testing
import YapDB

/// The rows, views and checks shared by the filtered-view tests: items in collections "a" and
/// "b" (collection "c" stays out of the views), an automatic view "all" grouping by score mod 3
/// and sorting by score (ties on purpose), a filtered view "flagged" of it, a filtered view
/// "deep" of "flagged", and hooks keeping collection "shadow" a copy of collection "a".
enum FilteredViewModel {
    struct Item: Codable, Equatable {
        var score: Int
        var flag: Bool
    }

    static let collections = ["a", "b", "c"]
    static let groups = ["g0", "g1", "g2"]

    static func configure(_ database: YapDatabase) {
        for collection in collections + ["shadow"] {
            database.registerCodableSerialization(Item.self, metadata: Int.self, forCollection: collection)
        }
    }

    /// Counts block calls (to tell a reused stored view from a rebuilt one).
    final class Calls: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        func increment() { lock.lock(); n += 1; lock.unlock() }
        var value: Int { lock.lock(); defer { lock.unlock() }; return n }
    }

    // MARK: The blocks, and the same rules for the model

    static func group(collection: String, item: Item) -> String? {
        collection == "a" || collection == "b" ? "g\(item.score % 3)" : nil
    }

    static func parentView(descending: Bool = false, versionTag: String = "1") -> YapDatabaseAutoView {
        let grouping = YapDatabaseViewGrouping.withObjectBlock { _, collection, _, object in
            (object as? Item).flatMap { group(collection: collection, item: $0) }
        }
        let sorting = YapDatabaseViewSorting.withObjectBlock { _, _, _, _, o1, _, _, o2 in
            compare((o1 as! Item).score, (o2 as! Item).score, descending: descending)
        }
        return YapDatabaseAutoView(grouping: grouping, sorting: sorting, versionTag: versionTag)
    }

    static func sorting(descending: Bool) -> YapDatabaseViewSorting {
        YapDatabaseViewSorting.withObjectBlock { _, _, _, _, o1, _, _, o2 in
            compare((o1 as! Item).score, (o2 as! Item).score, descending: descending)
        }
    }

    static func compare(_ a: Int, _ b: Int, descending: Bool) -> ComparisonResult {
        if a == b { return .orderedSame }
        return (a < b) != descending ? .orderedAscending : .orderedDescending
    }

    /// The "flagged" rule: version 1 keeps flagged items whose metadata is not 1; version 2
    /// keeps even scores.
    static func flaggedKeeps(version: Int, item: Item, metadata: Int?) -> Bool {
        version == 1 ? item.flag && metadata != 1 : item.score % 2 == 0
    }

    static func flaggedFiltering(version: Int, calls: Calls? = nil) -> YapDatabaseViewFiltering {
        YapDatabaseViewFiltering.withRowBlock { _, group, _, _, object, metadata in
            calls?.increment()
            precondition(group.hasPrefix("g"), "the filter sees the parent's group")
            return flaggedKeeps(version: version, item: object as! Item, metadata: metadata as? Int)
        }
    }

    /// The "deep" rule (by key only): the key's number is not a multiple of 3.
    static func deepKeeps(key: String) -> Bool { Int(key.dropFirst())! % 3 != 0 }

    static func deepFiltering(calls: Calls? = nil) -> YapDatabaseViewFiltering {
        YapDatabaseViewFiltering.withKeyBlock { _, _, _, key in
            calls?.increment()
            return deepKeeps(key: key)
        }
    }

    /// Hooks copying each row of collection "a" into collection "shadow" (same key), and
    /// removing the copy with the row.
    static func shadowHooks() -> YapDatabaseHooks {
        let hooks = YapDatabaseHooks()
        hooks.allowedCollections = YapWhitelistBlacklist(whitelist: ["a"])
        hooks.didModifyRow = { tx, _, key, object, _, flags in
            guard flags.contains(.changedObject) else { return }
            tx.setObject(object.realObject, forKey: key, inCollection: "shadow")
        }
        hooks.willRemoveRow = { tx, _, key in tx.removeObject(forKey: key, inCollection: "shadow") }
        return hooks
    }

    // MARK: Reading views

    typealias Lists = [String: [YapCollectionKey]]

    /// Each group's rows of `view`, in view order (every group of `groups`, empty ones too).
    static func lists(_ transaction: YapDatabaseReadTransaction, _ view: String) -> Lists {
        guard let viewTransaction = transaction.ext(view) as? YapDatabaseViewTransaction else { return [:] }
        var lists: Lists = [:]
        for group in groups {
            var keys: [YapCollectionKey] = []
            viewTransaction.iterateKeys(inGroup: group) { collection, key, _, _ in keys.append(YapCollectionKey(collection: collection, key: key)) }
            #expect(keys.count == Int(viewTransaction.numberOfItems(inGroup: group)), "count and iteration agree")
            lists[group] = keys
        }
        return lists
    }

    /// All three views' lists, and the shadow collection (as "shadow"/"rows", sorted by key,
    /// the item's score in place of the collection).
    static func allLists(_ transaction: YapDatabaseReadTransaction) -> [String: Lists] {
        var shadow: [YapCollectionKey] = []
        transaction.iterateKeysAndObjects(inCollection: "shadow") { (key: String, item: Item, _: inout Bool) in
            shadow.append(YapCollectionKey(collection: "\(item.score)", key: key))
        }
        return ["all": lists(transaction, "all"), "flagged": lists(transaction, "flagged"), "deep": lists(transaction, "deep"),
                "shadow": ["rows": shadow.sorted { $0.key < $1.key }]]
    }

    // MARK: Change sets

    /// Applies mapping row changes to the old lists the way a table view does (deletes and
    /// move sources by old index, from the bottom up; then inserts and move targets by new
    /// index, from the top down), checking each touched position holds the change's key; returns
    /// the lists it ends with (nil after a failed check).
    static func apply(_ changes: [YapDatabaseViewRowChange], to old: Lists, new: Lists) -> Lists? {
        var sections = groups.map { old[$0] ?? [] }
        let keys = changes.map(\.collectionKey)
        #expect(Set(keys).count == keys.count, "consolidated: one change per row")
        let removals = changes.filter { $0.type == .delete || $0.type == .move }
            .map { ($0.indexPath!, $0.collectionKey) }
            .sorted { ($0.0[0], $0.0[1]) > ($1.0[0], $1.0[1]) }
        for (path, key) in removals {
            guard path[1] < sections[path[0]].count, sections[path[0]][path[1]] == key else {
                Issue.record("removal \(path) of \(key) does not match the old list")
                return nil
            }
            sections[path[0]].remove(at: path[1])
        }
        let additions = changes.filter { $0.type == .insert || $0.type == .move }
            .map { ($0.newIndexPath!, $0.collectionKey) }
            .sorted { ($0.0[0], $0.0[1]) < ($1.0[0], $1.0[1]) }
        for (path, key) in additions {
            guard path[1] <= sections[path[0]].count else {
                Issue.record("insertion \(path) of \(key) is past the end")
                return nil
            }
            sections[path[0]].insert(key, at: path[1])
        }
        for change in changes where change.type == .update {
            let from = change.indexPath!, to = change.newIndexPath!
            #expect(old[groups[from[0]]]?[from[1]] == change.collectionKey && new[groups[to[0]]]?[to[1]] == change.collectionKey,
                    "an update names the row at its old and new places")
        }
        return Dictionary(uniqueKeysWithValues: zip(groups, sections))
    }
}
