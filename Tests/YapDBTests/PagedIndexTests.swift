import Foundation
import Testing
import YapDB

/// What the paged index (format 2) changes for a user of the public API.
@Suite struct PagedIndexTests {
    /// Keys enumerate in UTF-8 byte order, collections in name order, and a reopened database
    /// (read from its index pages) answers the same.
    @Test func keysAndCollectionsEnumerateInOrder() throws {
        let fixture = try DatabaseFixture()
        let keys = (0..<500).map { "key-\(($0 * 7919) % 500)" } + ["", "Z", "a", "é", "\u{1F600}"]
        let connection = fixture.database.newConnection()
        connection.readWrite { tx in
            for key in keys { tx.setObject("v", forKey: key, inCollection: "c") }
            tx.setObject("v", forKey: "x", inCollection: "b")
        }
        let expected = keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        func check(_ database: YapDatabase) {
            database.newConnection().read { tx in
                var seen: [String] = []
                tx.iterateKeys(inCollection: "c") { key, _ in seen.append(key) }
                #expect(seen == expected)
                #expect(tx.allKeys(inCollection: "c") == expected)
                #expect(tx.allCollections() == ["b", "c"])
                #expect(tx.numberOfKeys(inCollection: "c") == UInt(keys.count))
            }
        }
        check(fixture.database)
        try fixture.database.checkpoint()
        try fixture.reopen()
        check(fixture.database)
    }

    /// A collection and key too long for an index page are refused with `valueTooLarge`, and
    /// nothing of the transaction is written.
    @Test func aKeyTooLongForTheIndexIsRefused() throws {
        let fixture = try DatabaseFixture()
        let connection = fixture.database.newConnection()
        #expect(throws: YapDatabaseError.valueTooLarge) {
            try connection.write { tx in
                tx.setObject("short", forKey: "fine", inCollection: "c")
                tx.setObject("long", forKey: String(repeating: "k", count: 2_000), inCollection: "c")
            }
        }
        connection.read { tx in #expect(tx.numberOfKeys(inCollection: "c") == 0) }
        try connection.write { tx in tx.setObject("ok", forKey: String(repeating: "k", count: 900), inCollection: "c") }
        connection.read { tx in #expect(tx.numberOfKeys(inCollection: "c") == 1) }
    }
}

extension PagedIndexTests {
    /// The Swift-native range forms: bounds inclusive, either side open, reversed, stop flag.
    @Test func keyRangesInBothDirectionsWithAStopFlag() throws {
        let fixture = try DatabaseFixture()
        let connection = fixture.database.newConnection()
        connection.readWrite { tx in
            for i in 0..<100 { tx.setObject("v\(i)", forKey: String(format: "k%03d", i), inCollection: "c", withMetadata: "m\(i)") }
            tx.setObject("other", forKey: "k050", inCollection: "d")
        }
        connection.read { tx in
            var keys: [String] = []
            tx.iterateKeys(inCollection: "c", from: "k010", through: "k014") { key, _ in keys.append(key) }
            #expect(keys == ["k010", "k011", "k012", "k013", "k014"])
            keys = []
            tx.iterateKeys(inCollection: "c", from: "k0955", through: nil, reversed: true) { key, _ in keys.append(key) }
            #expect(keys == ["k099", "k098", "k097", "k096"])
            keys = []
            tx.iterateKeys(inCollection: "c", from: nil, through: "k002") { key, _ in keys.append(key) }
            #expect(keys == ["k000", "k001", "k002"])
            var objects: [String] = []
            tx.iterateKeysAndObjects(inCollection: "c", from: "k050", through: nil) { (_, object: String, stop: inout Bool) in
                objects.append(object)
                if objects.count == 3 { stop = true }
            }
            #expect(objects == ["v50", "v51", "v52"], "the stop flag ends the scan")
            var rows: [String] = []
            tx.iterateRows(inCollection: "c", from: "k020", through: "k021", reversed: true) { (key, object: String, metadata: String?, _: inout Bool) in
                rows.append("\(key)=\(object)/\(metadata ?? "-")")
            }
            #expect(rows == ["k021=v21/m21", "k020=v20/m20"])
        }
    }
}
