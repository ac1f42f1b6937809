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
