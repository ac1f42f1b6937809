import Foundation
import XCTest
import YapDB

/// Apps declare their blocks with the typedefs of YapDatabase's headers and hand them to the
/// factories later, and package views as `YapDatabaseAutoView` subclasses configured in
/// `override init()`. Written as such apps write it, against `import YapDB` only.
final class PortingBlockTypesTests: PortingTestCase {
    struct TodoItem: Codable {
        var title: String
        var priority: Int
        var done: Bool
    }

    // The blocks, declared ahead of use with the headers' names.
    static let groupByKey: YapDatabaseViewGroupingWithKeyBlock = { transaction, collection, key in
        collection == "tasks" ? "all" : nil
    }
    static let groupByObject: YapDatabaseViewGroupingWithObjectBlock = { transaction, collection, key, object in
        guard let task = object as? TodoItem else { return nil }
        return task.done ? "done" : "open"
    }
    static let groupByMetadata: YapDatabaseViewGroupingWithMetadataBlock = { transaction, collection, key, metadata in
        metadata as? String
    }
    static let groupByRow: YapDatabaseViewGroupingWithRowBlock = { transaction, collection, key, object, metadata in
        guard let task = object as? TodoItem else { return nil }
        return task.priority > 2 ? "urgent" : (metadata as? String ?? "normal")
    }
    static let sortByKey: YapDatabaseViewSortingWithKeyBlock = { transaction, group, collection1, key1, collection2, key2 in
        key1.compare(key2)
    }
    static let sortByObject: YapDatabaseViewSortingWithObjectBlock = { transaction, group, c1, k1, object1, c2, k2, object2 in
        let p1 = (object1 as? TodoItem)?.priority ?? 0, p2 = (object2 as? TodoItem)?.priority ?? 0
        return p1 == p2 ? k1.compare(k2) : (p1 > p2 ? .orderedAscending : .orderedDescending)
    }
    static let sortByMetadata: YapDatabaseViewSortingWithMetadataBlock = { transaction, group, c1, k1, metadata1, c2, k2, metadata2 in
        k1.compare(k2)
    }
    static let sortByRow: YapDatabaseViewSortingWithRowBlock = { transaction, group, c1, k1, object1, metadata1, c2, k2, object2, metadata2 in
        k2.compare(k1)
    }
    static let keepByKey: YapDatabaseViewFilteringWithKeyBlock = { transaction, group, collection, key in key != "t0" }
    static let keepByObject: YapDatabaseViewFilteringWithObjectBlock = { transaction, group, collection, key, object in
        (object as? TodoItem)?.done == false
    }
    static let keepByMetadata: YapDatabaseViewFilteringWithMetadataBlock = { transaction, group, collection, key, metadata in
        metadata == nil
    }
    static let keepByRow: YapDatabaseViewFilteringWithRowBlock = { transaction, group, collection, key, object, metadata in
        ((object as? TodoItem)?.priority ?? 0) >= 2
    }
    static let onlyTasks: YapWhitelistBlacklistFilterBlock = { item in (item as? String) == "tasks" }

    func makeDatabase(_ name: String) throws -> YapDatabase {
        let database = try XCTUnwrap(YapDatabase(url: directory.appendingPathComponent(name)))
        database.registerCodableSerialization(TodoItem.self, forCollection: "tasks")
        return database
    }

    func writeTasks(_ database: YapDatabase) {
        database.newConnection().readWrite { transaction in
            for i in 0..<6 {
                let task = TodoItem(title: "task \(i)", priority: i % 4, done: i % 3 == 0)
                transaction.setObject(task, forKey: "t\(i)", inCollection: "tasks", withMetadata: i % 2 == 0 ? nil : "later")
            }
            transaction.setObject("note", forKey: "n1", inCollection: "notes")
        }
    }

    func keys(_ transaction: YapDatabaseReadTransaction, _ view: String, _ group: String) -> [String] {
        guard let viewTransaction = transaction.ext(view) as? YapDatabaseViewTransaction else { return [] }
        var keys: [String] = []
        viewTransaction.iterateKeys(inGroup: group) { collection, key, index, stop in keys.append(key) }
        return keys
    }

    func testViewAndFilteredViewBlocksDeclaredWithTheHeaderTypes() throws {
        let database = try makeDatabase("blocks.sqlite")
        writeTasks(database)
        let options = YapDatabaseViewOptions()
        options.allowedCollections = YapWhitelistBlacklist(filterBlock: Self.onlyTasks)
        let views: [(String, YapDatabaseViewGrouping, YapDatabaseViewSorting)] = [
            ("byKey", .withKeyBlock(Self.groupByKey), .withKeyBlock(Self.sortByKey)),
            ("byObject", .withObjectBlock(Self.groupByObject), .withObjectBlock(Self.sortByObject)),
            ("byMetadata", .withMetadataBlock(Self.groupByMetadata), .withMetadataBlock(Self.sortByMetadata)),
            ("byRow", .withRowBlock(Self.groupByRow), .withRowBlock(Self.sortByRow)),
            ("byKeyOptions", .withOptions([], keyBlock: Self.groupByKey), .withOptions([], keyBlock: Self.sortByKey)),
            ("byObjectOptions", .withOptions(.defaultForBlockTypeWithObject, objectBlock: Self.groupByObject),
             .withOptions(.defaultForBlockTypeWithObject, objectBlock: Self.sortByObject)),
            ("byMetadataOptions", .withOptions(.defaultForBlockTypeWithMetadata, metadataBlock: Self.groupByMetadata),
             .withOptions(.defaultForBlockTypeWithMetadata, metadataBlock: Self.sortByMetadata)),
            ("byRowOptions", .withOptions(.defaultForBlockTypeWithRow, rowBlock: Self.groupByRow),
             .withOptions(.defaultForBlockTypeWithRow, rowBlock: Self.sortByRow)),
        ]
        for (name, grouping, sorting) in views {
            XCTAssertTrue(database.register(YapDatabaseAutoView(grouping: grouping, sorting: sorting, versionTag: "1", options: options),
                                            withName: name), name)
        }
        let filters: [(String, YapDatabaseViewFiltering)] = [
            ("keepByKey", .withKeyBlock(Self.keepByKey)),
            ("keepByObject", .withObjectBlock(Self.keepByObject)),
            ("keepByMetadata", .withMetadataBlock(Self.keepByMetadata)),
            ("keepByRow", .withRowBlock(Self.keepByRow)),
            ("keepByKeyOptions", .withOptions([], keyBlock: Self.keepByKey)),
            ("keepByObjectOptions", .withOptions(.defaultForBlockTypeWithObject, objectBlock: Self.keepByObject)),
            ("keepByMetadataOptions", .withOptions(.defaultForBlockTypeWithMetadata, metadataBlock: Self.keepByMetadata)),
            ("keepByRowOptions", .withOptions(.defaultForBlockTypeWithRow, rowBlock: Self.keepByRow)),
        ]
        for (name, filtering) in filters {
            XCTAssertTrue(database.register(YapDatabaseFilteredView(parentViewName: "byKey", filtering: filtering, versionTag: "1"),
                                            withName: name), name)
        }

        database.newConnection().read { transaction in
            XCTAssertEqual(keys(transaction, "byKey", "all"), ["t0", "t1", "t2", "t3", "t4", "t5"])
            XCTAssertEqual(keys(transaction, "byObject", "done"), ["t3", "t0"], "priority 3 before 0")
            XCTAssertEqual(keys(transaction, "byObject", "open"), ["t2", "t1", "t5", "t4"])
            XCTAssertEqual(keys(transaction, "byMetadata", "later"), ["t1", "t3", "t5"])
            XCTAssertEqual(keys(transaction, "byRow", "urgent"), ["t3"])
            XCTAssertEqual(keys(transaction, "byRow", "later"), ["t5", "t1"], "reversed key order")
            XCTAssertEqual(keys(transaction, "byRow", "normal"), ["t4", "t2", "t0"])
            XCTAssertEqual(keys(transaction, "byObjectOptions", "open"), keys(transaction, "byObject", "open"))
            XCTAssertEqual(keys(transaction, "byRowOptions", "normal"), keys(transaction, "byRow", "normal"))
            XCTAssertEqual(keys(transaction, "keepByKey", "all"), ["t1", "t2", "t3", "t4", "t5"])
            XCTAssertEqual(keys(transaction, "keepByObject", "all"), ["t1", "t2", "t4", "t5"])
            XCTAssertEqual(keys(transaction, "keepByMetadata", "all"), ["t0", "t2", "t4"])
            XCTAssertEqual(keys(transaction, "keepByRow", "all"), ["t2", "t3"])
            XCTAssertEqual(keys(transaction, "keepByRowOptions", "all"), ["t2", "t3"])
            XCTAssertEqual(keys(transaction, "keepByKeyOptions", "all"), keys(transaction, "keepByKey", "all"))
        }

        // The mappings' group blocks (YapDatabaseViewMappings.h).
        let everythingButUrgent: YapDatabaseViewMappingGroupFilter = { group, transaction in group != "urgent" }
        let byName: YapDatabaseViewMappingGroupSort = { group1, group2, transaction in group1.compare(group2) }
        let mappings = YapDatabaseViewMappings(groupFilterBlock: everythingButUrgent, sortBlock: byName, view: "byRow")
        let ui = database.newConnection()
        ui.beginLongLivedReadTransaction()
        ui.read { transaction in mappings.update(with: transaction) }
        XCTAssertEqual(mappings.numberOfSections(), 2)
        XCTAssertEqual(mappings.group(forSection: 0), "later")
        XCTAssertEqual(mappings.group(forSection: 1), "normal")
    }

    func testFindBlocksDeclaredWithTheHeaderTypes() throws {
        let database = try makeDatabase("find.sqlite")
        writeTasks(database)
        XCTAssertTrue(database.register(YapDatabaseAutoView(grouping: .withKeyBlock(Self.groupByKey),
                                                            sorting: .withKeyBlock(Self.sortByKey)), withName: "byKey"))
        let fromT2: YapDatabaseViewFindWithKeyBlock = { collection, key in
            key < "t2" ? .orderedAscending : (key > "t3" ? .orderedDescending : .orderedSame)
        }
        let byObject: YapDatabaseViewFindWithObjectBlock = { collection, key, object in
            key < "t2" ? .orderedAscending : (key > "t3" ? .orderedDescending : .orderedSame)
        }
        let byMetadata: YapDatabaseViewFindWithMetadataBlock = { collection, key, metadata in
            key < "t4" ? .orderedAscending : .orderedSame
        }
        let byRow: YapDatabaseViewFindWithRowBlock = { collection, key, object, metadata in
            key < "t1" ? .orderedAscending : (key > "t1" ? .orderedDescending : .orderedSame)
        }
        database.newConnection().read { transaction in
            guard let view = transaction.ext("byKey") as? YapDatabaseViewTransaction else { return XCTFail("view") }
            XCTAssertEqual(view.findRange(inGroup: "all", using: .withKeyBlock(fromT2)), NSRange(location: 2, length: 2))
            XCTAssertEqual(view.findRange(inGroup: "all", using: .withObjectBlock(byObject)), NSRange(location: 2, length: 2))
            XCTAssertEqual(view.findRange(inGroup: "all", using: .withMetadataBlock(byMetadata)), NSRange(location: 4, length: 2))
            XCTAssertEqual(view.findFirstMatch(inGroup: "all", using: .withRowBlock(byRow)), 1)
        }
    }

    func testSecondaryIndexAndHookBlocksDeclaredWithTheHeaderTypes() throws {
        let database = try makeDatabase("index.sqlite")
        let setup = YapDatabaseSecondaryIndexSetup()
        setup.addColumn("priority", with: .integer)
        let byKey: YapDatabaseSecondaryIndexWithKeyBlock = { transaction, dict, collection, key in
            dict["priority"] = Int(key.dropFirst()) ?? 0
        }
        let byObject: YapDatabaseSecondaryIndexWithObjectBlock = { transaction, dict, collection, key, object in
            if let task = object as? TodoItem { dict["priority"] = task.priority }
        }
        let byMetadata: YapDatabaseSecondaryIndexWithMetadataBlock = { transaction, dict, collection, key, metadata in
            dict["priority"] = metadata == nil ? 0 : 1
        }
        let byRow: YapDatabaseSecondaryIndexWithRowBlock = { transaction, dict, collection, key, object, metadata in
            if let task = object as? TodoItem, metadata == nil { dict["priority"] = task.priority }
        }
        let handlers: [(String, YapDatabaseSecondaryIndexHandler)] = [
            ("key", .withKeyBlock(byKey)), ("object", .withObjectBlock(byObject)),
            ("metadata", .withMetadataBlock(byMetadata)), ("row", .withRowBlock(byRow)),
            ("keyOptions", .withOptions([], keyBlock: byKey)),
            ("objectOptions", .withOptions(.defaultForBlockTypeWithObject, objectBlock: byObject)),
            ("metadataOptions", .withOptions(.defaultForBlockTypeWithMetadata, metadataBlock: byMetadata)),
            ("rowOptions", .withOptions(.defaultForBlockTypeWithRow, rowBlock: byRow)),
        ]
        let options = YapDatabaseSecondaryIndexOptions()
        options.allowedCollections = YapWhitelistBlacklist(filterBlock: Self.onlyTasks)
        for (name, handler) in handlers {
            XCTAssertTrue(database.register(YapDatabaseSecondaryIndex(setup: setup, handler: handler, versionTag: "1", options: options),
                                            withName: name), name)
        }

        let log = HookLog()
        let willModify: YDBHooks_WillModifyRow = { transaction, collection, key, proxyObject, proxyMetadata, flags in
            log.add("willModify \(key)")
        }
        let didModify: YDBHooks_DidModifyRow = { transaction, collection, key, proxyObject, proxyMetadata, flags in
            log.add("didModify \(key)")
        }
        let willRemove: YDBHooks_WillRemoveRow = { transaction, collection, key in log.add("willRemove \(key)") }
        let didRemove: YDBHooks_DidRemoveRow = { transaction, collection, key in log.add("didRemove \(key)") }
        let willRemoveAll: YDBHooks_WillRemoveAllRows = { transaction in log.add("willRemoveAll") }
        let didRemoveAll: YDBHooks_DidRemoveAllRows = { transaction in log.add("didRemoveAll") }
        let hooks = YapDatabaseHooks()
        hooks.willModifyRow = willModify
        hooks.didModifyRow = didModify
        hooks.willRemoveRow = willRemove
        hooks.didRemoveRow = didRemove
        hooks.willRemoveAllRows = willRemoveAll
        hooks.didRemoveAllRows = didRemoveAll
        XCTAssertTrue(database.register(hooks, withName: "hooks"))

        writeTasks(database)
        database.newConnection().read { transaction in
            func count(_ index: String, _ query: String) -> UInt? {
                (transaction.ext(index) as? YapDatabaseSecondaryIndexTransaction)?.numberOfRows(matching: YapDatabaseQuery(string: query, parameters: []))
            }
            XCTAssertEqual(count("key", "WHERE priority >= 3"), 3, "t3, t4, t5 by key")
            XCTAssertEqual(count("object", "WHERE priority = 3"), 1)
            XCTAssertEqual(count("metadata", "WHERE priority = 1"), 3)
            XCTAssertEqual(count("row", "WHERE priority >= 0"), 3, "rows without metadata")
            XCTAssertEqual(count("keyOptions", "WHERE priority >= 3"), 3)
            XCTAssertEqual(count("objectOptions", "WHERE priority = 3"), 1)
            XCTAssertEqual(count("metadataOptions", "WHERE priority = 1"), 3)
            XCTAssertEqual(count("rowOptions", "WHERE priority >= 0"), 3)
        }
        database.newConnection().readWrite { transaction in
            transaction.removeObject(forKey: "t1", inCollection: "tasks")
            transaction.removeAllObjectsInAllCollections()
        }
        let entries = log.all
        XCTAssertEqual(entries.filter { $0.hasPrefix("willModify") }.count, 7)
        XCTAssertEqual(entries.filter { $0.hasPrefix("didModify") }.count, 7)
        XCTAssertEqual(Array(entries.suffix(4)), ["willRemove t1", "didRemove t1", "willRemoveAll", "didRemoveAll"])
    }

    final class HookLog: @unchecked Sendable {
        private let lock = NSLock()
        private var entries: [String] = []
        func add(_ entry: String) { lock.lock(); entries.append(entry); lock.unlock() }
        var all: [String] { lock.lock(); defer { lock.unlock() }; return entries }
    }

    /// The block typedefs declared as `id` in the headers.
    func testStoredBlockTypesAreAny() {
        let stored: [Any] = [
            Self.groupByKey as YapDatabaseViewGroupingBlock, Self.sortByKey as YapDatabaseViewSortingBlock,
            Self.keepByKey as YapDatabaseViewFilteringBlock,
        ]
        XCTAssertEqual(stored.count, 3)
        let find: YapDatabaseViewFindBlock = 1
        let index: YapDatabaseSecondaryIndexBlock = "handler"
        XCTAssertEqual(find as? Int, 1)
        XCTAssertEqual(index as? String, "handler")
    }
}

/// A view packaged as a type, configured in `override init()` as apps subclass YapDatabase's view.
final class OpenTasksView: YapDatabaseAutoView, @unchecked Sendable {
    static let name = "openTasks"

    override init() {
        let grouping = YapDatabaseViewGrouping.withObjectBlock(PortingBlockTypesTests.groupByObject)
        let sorting = YapDatabaseViewSorting.withObjectBlock(PortingBlockTypesTests.sortByObject)
        super.init(grouping: grouping, sorting: sorting, versionTag: "1", options: nil)
    }
}

/// A subclass that forgets to configure itself.
final class ForgetfulView: YapDatabaseAutoView, @unchecked Sendable {}

final class PortingAutoViewSubclassTests: PortingTestCase {
    func testSubclassConfiguredInOverrideInitRegistersAndAnUnconfiguredViewIsRefused() throws {
        let database = try XCTUnwrap(YapDatabase(url: directory.appendingPathComponent("subclass.sqlite")))
        database.registerCodableSerialization(PortingBlockTypesTests.TodoItem.self, forCollection: "tasks")
        database.newConnection().readWrite { transaction in
            transaction.setObject(PortingBlockTypesTests.TodoItem(title: "a", priority: 1, done: false), forKey: "a", inCollection: "tasks")
            transaction.setObject(PortingBlockTypesTests.TodoItem(title: "b", priority: 2, done: false), forKey: "b", inCollection: "tasks")
        }
        let view = OpenTasksView()
        XCTAssertEqual(view.versionTag, "1")
        XCTAssertTrue(database.register(view, withName: OpenTasksView.name))
        database.newConnection().read { transaction in
            let viewTransaction = transaction.ext(OpenTasksView.name) as? YapDatabaseViewTransaction
            XCTAssertEqual(viewTransaction?.numberOfItems(inGroup: "open"), 2)
            XCTAssertEqual(viewTransaction?.key(at: 0, inGroup: "open"), "b", "higher priority first")
        }

        XCTAssertFalse(database.register(ForgetfulView(), withName: "forgetful"), "no grouping or sorting: refused")
        XCTAssertFalse(database.register(YapDatabaseAutoView(), withName: "bare"))
        XCTAssertNil(database.registeredExtension("forgetful"))
        XCTAssertNil(database.registeredExtension("bare"))
        let refused = expectation(description: "async registration refused")
        database.asyncRegister(ForgetfulView(), withName: "forgetful", completionQueue: .global()) { ready in
            XCTAssertFalse(ready)
            refused.fulfill()
        }
        wait(for: [refused], timeout: 60)
    }
}
