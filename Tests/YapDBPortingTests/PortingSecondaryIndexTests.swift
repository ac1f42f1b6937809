import Foundation
import XCTest
import YapDB

/// A secondary index registered and queried the way YapDatabase apps do it from Swift (a
/// message store looked up by unique id, a thread's unread count, the newest timestamp),
/// against `import YapDB` only.
final class PortingSecondaryIndexTests: PortingTestCase {
    struct Message: Codable {
        var uniqueId: String
        var threadId: String
        var timestamp: Int64
        var read: Bool
    }

    static let indexName = "messagesByThread"

    static func makeIndex() -> YapDatabaseSecondaryIndex {
        let setup = YapDatabaseSecondaryIndexSetup()
        setup.addColumn("uniqueId", with: .text)
        setup.addColumn("threadId", with: .text)
        setup.addColumn("timestamp", with: .integer)
        setup.addColumn("read", with: .integer)
        let handler = YapDatabaseSecondaryIndexHandler.withObjectBlock { transaction, dict, collection, key, object in
            guard let message = object as? Message else { return }
            dict["uniqueId"] = message.uniqueId
            dict["threadId"] = message.threadId
            dict["timestamp"] = NSNumber(value: message.timestamp)
            dict["read"] = message.read
        }
        let options = YapDatabaseSecondaryIndexOptions()
        options.allowedCollections = YapWhitelistBlacklist(whitelist: ["messages"])
        return YapDatabaseSecondaryIndex(setup: setup, handler: handler, versionTag: "2", options: options)
    }

    func testRegisterQueryIterateCountAndAggregate() throws {
        let database = try XCTUnwrap(YapDatabase(url: directory.appendingPathComponent("messages.sqlite")))
        database.registerCodableSerialization(Message.self, forCollection: "messages")
        let registered = expectation(description: "registered")
        database.asyncRegister(Self.makeIndex(), withName: Self.indexName, completionQueue: .global()) { ready in
            XCTAssertTrue(ready)
            registered.fulfill()
        }
        wait(for: [registered], timeout: 30)
        let connection = database.newConnection()
        connection.readWrite { transaction in
            for i in 0..<20 {
                let message = Message(uniqueId: "m\(i)", threadId: i % 2 == 0 ? "even" : "odd", timestamp: Int64(1000 + i), read: i < 15)
                transaction.setObject(message, forKey: message.uniqueId, inCollection: "messages")
            }
        }
        connection.read { transaction in
            guard let ext = transaction.ext(Self.indexName) as? YapDatabaseSecondaryIndexTransaction else {
                return XCTFail("the index transaction")
            }
            var found: Message?
            let byId = YapDatabaseQuery(string: "WHERE uniqueId = ?", parameters: ["m7"])
            ext.iterateKeysAndObjects(matching: byId) { collection, key, object, stop in
                found = object as? Message
                stop = true
            }
            XCTAssertEqual(found?.timestamp, 1007)

            let unread = YapDatabaseQuery(string: "WHERE threadId = ? AND read = 0", parameters: ["odd"])
            XCTAssertEqual(ext.numberOfRows(matching: unread), 3)

            var newest: [String] = []
            let page = YapDatabaseQuery(string: "WHERE \"threadId\" == ? ORDER BY timestamp DESC LIMIT 3", parameters: ["even"])
            XCTAssertTrue(ext.iterateKeys(matching: page) { _, key, _ in newest.append(key) })
            XCTAssertEqual(newest, ["m18", "m16", "m14"])

            let latest = YapDatabaseQuery(aggregateFunction: "MAX(timestamp)", string: "WHERE threadId = ?", parameters: ["odd"])
            XCTAssertEqual(ext.performAggregateQuery(latest) as? Int, 1019)

            var timestamps: [Int] = []
            ext.iterateIndexedValues(inColumn: "timestamp", matching: YapDatabaseQuery(string: "WHERE uniqueId IN (?)", parameters: [["m1", "m2"]])) { value, _ in
                timestamps.append(value as? Int ?? -1)
            }
            XCTAssertEqual(timestamps.sorted(), [1001, 1002])

            var rows = 0
            ext.iterateRows(matching: YapDatabaseQuery(string: "WHERE timestamp BETWEEN ? AND ?", parameters: [1005, 1009])) { _, _, object, metadata, _ in
                XCTAssertNotNil(object as? Message)
                XCTAssertNil(metadata)
                rows += 1
            }
            XCTAssertEqual(rows, 5)

            XCTAssertFalse(ext.iterateKeys(matching: YapDatabaseQuery(string: "WHERE nosuchcolumn = 1")) { _, _, _ in })
            XCTAssertNil(ext.numberOfRows(matching: YapDatabaseQuery(string: "WHERE timestamp >")))
        }
    }

    /// The header's example of a query over a known set of rows: row ids for keys, then an
    /// aggregate restricted with `rowid IN (?)`.
    func testAggregateOverKnownKeysByRowid() throws {
        let database = try XCTUnwrap(YapDatabase(url: directory.appendingPathComponent("playlist.sqlite")))
        database.registerCodableSerialization(Message.self, forCollection: "messages")
        XCTAssertTrue(database.register(Self.makeIndex(), withName: Self.indexName))
        let connection = database.newConnection()
        connection.readWrite { transaction in
            for i in 0..<10 {
                let message = Message(uniqueId: "m\(i)", threadId: "t", timestamp: Int64(i * 10), read: false)
                transaction.setObject(message, forKey: message.uniqueId, inCollection: "messages")
            }
        }
        connection.read { transaction in
            guard let ext = transaction.ext(Self.indexName) as? YapDatabaseSecondaryIndexTransaction else {
                return XCTFail("the index transaction")
            }
            let keys = ["m2", "m3", "m9"]
            let rowids = Array(ext.rowids(forKeys: keys, inCollection: "messages").values)
            let query = YapDatabaseQuery(aggregateFunction: "SUM(timestamp)", string: "WHERE rowid IN (?)", parameters: [rowids])
            XCTAssertEqual(ext.performAggregateQuery(query) as? Int, 20 + 30 + 90)
            var found: [String] = []
            ext.iterateKeys(matching: YapDatabaseQuery(string: "WHERE timestamp > 25 AND rowid IN (?)", parameters: [rowids])) { _, key, _ in
                found.append(key)
            }
            XCTAssertEqual(Set(found), ["m3", "m9"])
        }
    }
}
