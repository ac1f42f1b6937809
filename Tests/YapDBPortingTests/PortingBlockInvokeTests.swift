import Foundation
import XCTest
import YapDB

/// Extensions set up with `withOptions` the way YapDatabase apps write them from Swift: an
/// inbox view grouped by folder (decided once, when the message arrives), sorted by the
/// "last activity" date kept in the metadata, a filtered view of unread messages, and a
/// secondary index of senders that only cares about the object. Against `import YapDB` only.
final class PortingBlockInvokeTests: PortingTestCase {
    struct Mail: Codable {
        var folder: String
        var sender: String
        var unread: Bool
    }

    /// Counts block calls from any thread.
    final class Calls: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func hit() { lock.lock(); count += 1; lock.unlock() }
        var value: Int { lock.lock(); defer { lock.unlock() }; return count }
    }

    func testWithOptionsBlocksRunOnlyForTheChangesTheyName() throws {
        let database = try XCTUnwrap(YapDatabase(url: directory.appendingPathComponent("mail.sqlite")))
        database.registerCodableSerialization(Mail.self, metadata: Date.self, forCollection: "mail")
        let groupingCalls = Calls(), filterCalls = Calls(), indexCalls = Calls()

        // A message never changes folder here: group it when it is inserted only.
        let grouping = YapDatabaseViewGrouping.withOptions([], objectBlock: { transaction, collection, key, object in
            groupingCalls.hit()
            return (object as? Mail)?.folder
        })
        let sorting = YapDatabaseViewSorting.withOptions(.defaultForBlockTypeWithMetadata, metadataBlock: {
            transaction, group, collection1, key1, metadata1, collection2, key2, metadata2 in
            let date1 = metadata1 as? Date ?? .distantPast, date2 = metadata2 as? Date ?? .distantPast
            return date2.compare(date1) // newest first
        })
        XCTAssertEqual(grouping.blockType, .withObject)
        XCTAssertTrue(sorting.blockType.contains(.metadataFlag))
        XCTAssertEqual(sorting.blockInvokeOptions, [.ifMetadataModified, .ifMetadataTouched])
        XCTAssertTrue(database.register(YapDatabaseAutoView(grouping: grouping, sorting: sorting, versionTag: "1"), withName: "inbox"))

        let unread = YapDatabaseViewFiltering.withOptions([.ifObjectModified, .ifObjectTouched], objectBlock: {
            transaction, group, collection, key, object in
            filterCalls.hit()
            return (object as? Mail)?.unread ?? false
        })
        XCTAssertTrue(database.register(YapDatabaseFilteredView(parentViewName: "inbox", filtering: unread, versionTag: "1"),
                                        withName: "unread"))

        let setup = YapDatabaseSecondaryIndexSetup()
        setup.addColumn("sender", with: .text)
        let handler = YapDatabaseSecondaryIndexHandler.withOptions(.ifObjectModified, objectBlock: {
            transaction, dict, collection, key, object in
            indexCalls.hit()
            if let mail = object as? Mail { dict["sender"] = mail.sender }
        })
        XCTAssertTrue(database.register(YapDatabaseSecondaryIndex(setup: setup, handler: handler, versionTag: "1"), withName: "senders"))

        let connection = database.newConnection()
        let start = Date(timeIntervalSince1970: 1_000_000)
        connection.readWrite { transaction in
            for i in 0..<6 {
                let mail = Mail(folder: i % 2 == 0 ? "inbox" : "archive", sender: "s\(i % 3)", unread: true)
                transaction.setObject(mail, forKey: "m\(i)", inCollection: "mail", withMetadata: start.addingTimeInterval(Double(i)))
            }
        }
        XCTAssertEqual(groupingCalls.value, 6)
        XCTAssertEqual(indexCalls.value, 6)

        // New activity on m0: only the sorting looks at it; it moves to the top of its folder.
        let (g0, f0, i0) = (groupingCalls.value, filterCalls.value, indexCalls.value)
        connection.readWrite { transaction in
            transaction.replaceMetadata(start.addingTimeInterval(100), forKey: "m0", inCollection: "mail")
        }
        XCTAssertEqual(groupingCalls.value, g0, "the grouping runs on insert only")
        XCTAssertEqual(filterCalls.value, f0, "the filter reads the object, which did not change")
        XCTAssertEqual(indexCalls.value, i0, "the index reads the object, which did not change")
        connection.read { transaction in
            let inbox = transaction.ext("inbox") as! YapDatabaseViewTransaction
            XCTAssertEqual((0..<3).compactMap { inbox.key(at: UInt($0), inGroup: "inbox") }, ["m0", "m4", "m2"])
            let unread = transaction.ext("unread") as! YapDatabaseViewTransaction
            XCTAssertEqual((0..<3).compactMap { unread.key(at: UInt($0), inGroup: "inbox") }, ["m0", "m4", "m2"])
        }

        // m4 is read: the filter and the index look again; the grouping does not.
        connection.readWrite { transaction in
            transaction.replaceObject(Mail(folder: "inbox", sender: "s9", unread: false), forKey: "m4", inCollection: "mail")
        }
        XCTAssertEqual(groupingCalls.value, g0)
        XCTAssertEqual(filterCalls.value, f0 + 1)
        XCTAssertEqual(indexCalls.value, i0 + 1)
        connection.read { transaction in
            let unread = transaction.ext("unread") as! YapDatabaseViewTransaction
            XCTAssertEqual(unread.numberOfItems(inGroup: "inbox"), 2)
            XCTAssertEqual(unread.key(at: 1, inGroup: "inbox"), "m2")
            let senders = transaction.ext("senders") as! YapDatabaseSecondaryIndexTransaction
            XCTAssertEqual(senders.numberOfRows(matching: YapDatabaseQuery(string: "WHERE sender = ?", parameters: ["s9"])), 1)
        }

        // A touch of the object: the filter runs (its options name it), the index does not.
        connection.readWrite { transaction in transaction.touchObject(forKey: "m2", inCollection: "mail") }
        XCTAssertEqual(filterCalls.value, f0 + 2)
        XCTAssertEqual(indexCalls.value, i0 + 1)
        XCTAssertTrue(try database.verify().isValid)
    }
}
