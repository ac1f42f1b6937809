import Foundation
import Testing
@testable import YapDB

/// The comparands a write transaction's views keep (`ViewRowKeyCache`: row id → key for the
/// rows the sorting compares): each test changes, removes or rolls back rows the sorting has
/// already compared, then places more rows against them, and checks the view's order against
/// a plain sort of the rows as they are. A cache that served an old key, object or metadata
/// would misplace the later rows.
@Suite struct ViewComparandCacheTests {
    struct Score: Codable, Equatable {
        var value: Int
    }

    static func configure(_ database: YapDatabase) {
        database.registerCodableSerialization(Score.self, forCollection: "scores")
        database.registerCodableSerialization(Score.self, forCollection: "more")
    }

    static func byKey(_ a: String, _ b: String) -> ComparisonResult {
        a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending)
    }

    /// Every row of "scores" and "more" in one group, by score (then by key, so the expected
    /// order is unique), or with `keysOnly` by key alone.
    static func makeView(keysOnly: Bool = false) -> YapDatabaseAutoView {
        let grouping = YapDatabaseViewGrouping.withKeyBlock { _, collection, _ in
            collection == "scores" || collection == "more" ? "all" : nil
        }
        let sorting = keysOnly
            ? YapDatabaseViewSorting.withKeyBlock { _, _, c1, k1, c2, k2 in c1 == c2 ? Self.byKey(k1, k2) : Self.byKey(c1, c2) }
            : YapDatabaseViewSorting.withObjectBlock { _, _, c1, k1, o1, c2, k2, o2 in
                let a = (o1 as! Score).value, b = (o2 as! Score).value
                if a != b { return a < b ? .orderedAscending : .orderedDescending }
                return c1 == c2 ? Self.byKey(k1, k2) : Self.byKey(c1, c2)
            }
        return YapDatabaseAutoView(grouping: grouping, sorting: sorting, versionTag: "1")
    }

    func fixture(keysOnly: Bool = false) throws -> DatabaseFixture {
        let fixture = try DatabaseFixture(configure: Self.configure)
        #expect(fixture.database.register(Self.makeView(keysOnly: keysOnly), withName: "view"))
        return fixture
    }

    /// The view's rows in order, as "collection/key".
    func viewOrder(_ tx: YapDatabaseReadTransaction) -> [String] {
        var rows: [String] = []
        (tx.ext("view") as! YapDatabaseViewTransaction).iterateKeys(inGroup: "all") { collection, key, _, _ in
            rows.append("\(collection)/\(key)")
        }
        return rows
    }

    /// The rows of both collections sorted as the view sorts them.
    func expectedOrder(_ tx: YapDatabaseReadTransaction, keysOnly: Bool = false) -> [String] {
        var rows: [(collection: String, key: String, value: Int)] = []
        for collection in ["more", "scores"] {
            tx.iterateKeysAndObjects(inCollection: collection) { (key: String, object: Score, _: inout Bool) in
                rows.append((collection, key, object.value))
            }
        }
        rows.sort { a, b in
            if !keysOnly, a.value != b.value { return a.value < b.value }
            return a.collection != b.collection ? a.collection < b.collection : a.key < b.key
        }
        return rows.map { "\($0.collection)/\($0.key)" }
    }

    /// A fixed shuffle of 0..<n (so every run places the rows in the same order).
    func shuffled(_ n: Int, seed: UInt64) -> [Int] {
        var state = seed
        var values = Array(0..<n)
        for i in stride(from: n - 1, to: 0, by: -1) {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            values.swapAt(i, Int((state >> 33) % UInt64(i + 1)))
        }
        return values
    }

    func key(_ i: Int) -> String { String(format: "k%04d", i) }

    @Test func anObjectChangedInTheTransactionIsComparedWithItsNewValue() throws {
        let fixture = try fixture()
        let connection = fixture.database.newConnection()
        connection.readWrite { tx in
            for i in shuffled(200, seed: 1) { tx.setObject(Score(value: i * 10), forKey: key(i), inCollection: "scores") }
            // Rows the sorting has compared get new values (some move far, some to the ends).
            for i in stride(from: 0, to: 200, by: 7) { tx.setObject(Score(value: 2_000 - i * 10 + 5), forKey: key(i), inCollection: "scores") }
            // Then new rows are placed against them.
            for i in shuffled(200, seed: 2) { tx.setObject(Score(value: i * 10 + 3), forKey: key(i), inCollection: "more") }
            #expect(viewOrder(tx) == expectedOrder(tx), "inside the transaction")
        }
        connection.read { tx in #expect(viewOrder(tx) == expectedOrder(tx), "after the commit") }
    }

    @Test func metadataChangesAreSeenBySortingThatReadsMetadata() throws {
        let fixture = try DatabaseFixture(configure: Self.configure)
        let sorting = YapDatabaseViewSorting.withMetadataBlock { _, _, _, k1, m1, _, k2, m2 in
            let a = m1 as? Int ?? 0, b = m2 as? Int ?? 0
            if a != b { return a < b ? .orderedAscending : .orderedDescending }
            return k1 == k2 ? .orderedSame : (k1 < k2 ? .orderedAscending : .orderedDescending)
        }
        let view = YapDatabaseAutoView(grouping: .withKeyBlock { _, _, _ in "all" }, sorting: sorting, versionTag: "1")
        #expect(fixture.database.register(view, withName: "view"))
        let connection = fixture.database.newConnection()
        connection.readWrite { tx in
            for i in shuffled(100, seed: 3) { tx.setObject("x", forKey: key(i), inCollection: "m", withMetadata: i * 10) }
            for i in stride(from: 0, to: 100, by: 3) { tx.replaceMetadata(1_000 - i * 10 + 5, forKey: key(i), inCollection: "m") }
            for i in shuffled(100, seed: 4) { tx.setObject("y", forKey: key(i + 100), inCollection: "m", withMetadata: i * 10 + 1) }
            var expected: [(String, Int)] = []
            tx.iterateKeysAndMetadata(inCollection: "m") { (key: String, metadata: Int?, _: inout Bool) in expected.append((key, metadata ?? 0)) }
            expected.sort { $0.1 != $1.1 ? $0.1 < $1.1 : $0.0 < $1.0 }
            var order: [String] = []
            (tx.ext("view") as! YapDatabaseViewTransaction).iterateKeys(inGroup: "all") { _, key, _, _ in order.append(key) }
            #expect(order == expected.map(\.0))
        }
    }

    @Test func anotherConnectionsCommitIsSeenByTheNextTransaction() throws {
        let fixture = try fixture()
        let writer = fixture.database.newConnection(), other = fixture.database.newConnection()
        writer.readWrite { tx in
            for i in shuffled(150, seed: 5) { tx.setObject(Score(value: i * 10), forKey: key(i), inCollection: "scores") }
        }
        other.readWrite { tx in
            for i in stride(from: 0, to: 150, by: 4) { tx.setObject(Score(value: 1_500 - i * 10 + 5), forKey: key(i), inCollection: "scores") }
            tx.removeObject(forKey: key(1), inCollection: "scores")
        }
        writer.readWrite { tx in
            for i in shuffled(150, seed: 6) { tx.setObject(Score(value: i * 10 + 7), forKey: key(i), inCollection: "more") }
            #expect(viewOrder(tx) == expectedOrder(tx))
        }
        writer.read { tx in #expect(viewOrder(tx) == expectedOrder(tx)) }
    }

    @Test func aRolledBackTransactionLeavesNothingBehind() throws {
        let fixture = try fixture()
        let connection = fixture.database.newConnection()
        connection.readWrite { tx in
            for i in shuffled(100, seed: 7) { tx.setObject(Score(value: i * 10), forKey: key(i), inCollection: "scores") }
        }
        connection.readWrite { tx in
            for i in stride(from: 0, to: 100, by: 3) { tx.setObject(Score(value: 5_000 - i), forKey: key(i), inCollection: "scores") }
            for i in shuffled(100, seed: 8) { tx.setObject(Score(value: i * 10 + 1), forKey: key(i), inCollection: "more") }
            tx.removeObject(forKey: key(50), inCollection: "scores")
            tx.rollback()
        }
        connection.readWrite { tx in
            #expect(viewOrder(tx).count == 100, "the rolled-back rows never reached the view")
            for i in shuffled(100, seed: 9) { tx.setObject(Score(value: i * 10 + 2), forKey: key(i), inCollection: "more") }
            #expect(viewOrder(tx) == expectedOrder(tx))
        }
        connection.read { tx in #expect(viewOrder(tx) == expectedOrder(tx)) }
    }

    @Test func rowsRemovedAndWrittenAgainInTheTransactionArePlacedByTheirNewValues() throws {
        for keysOnly in [false, true] {
            let fixture = try fixture(keysOnly: keysOnly)
            let connection = fixture.database.newConnection()
            connection.readWrite { tx in
                for i in shuffled(120, seed: 10) { tx.setObject(Score(value: i * 10), forKey: key(i), inCollection: "scores") }
                // A collection clear, a row removed, then the same keys again (new row ids) with
                // other values, and rows of the other collection placed among them.
                tx.removeAllObjects(inCollection: "scores")
                for i in shuffled(60, seed: 11) { tx.setObject(Score(value: 1_200 - i * 10), forKey: key(i), inCollection: "scores") }
                tx.removeObject(forKey: key(5), inCollection: "scores")
                tx.setObject(Score(value: -1), forKey: key(5), inCollection: "scores")
                for i in shuffled(60, seed: 12) { tx.setObject(Score(value: i * 20 + 1), forKey: key(i), inCollection: "more") }
                #expect(viewOrder(tx) == expectedOrder(tx, keysOnly: keysOnly), "keys only: \(keysOnly)")
                tx.removeAllObjectsInAllCollections()
                #expect(viewOrder(tx).isEmpty)
                for i in shuffled(80, seed: 13) { tx.setObject(Score(value: (i * 37) % 80), forKey: key(i), inCollection: "scores") }
                #expect(viewOrder(tx) == expectedOrder(tx, keysOnly: keysOnly), "keys only: \(keysOnly), after removing everything")
            }
            connection.read { tx in #expect(viewOrder(tx) == expectedOrder(tx, keysOnly: keysOnly)) }
        }
    }

    @Test func equalRowsStayInArrivalOrderAfterTheirEquals() throws {
        let fixture = try DatabaseFixture(configure: Self.configure)
        // Only the score decides: equal scores keep the order the rows arrived in.
        let sorting = YapDatabaseViewSorting.withObjectBlock { _, _, _, _, o1, _, _, o2 in
            let a = (o1 as! Score).value, b = (o2 as! Score).value
            return a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending)
        }
        let view = YapDatabaseAutoView(grouping: .withKeyBlock { _, _, _ in "all" }, sorting: sorting, versionTag: "1")
        #expect(fixture.database.register(view, withName: "view"))
        let connection = fixture.database.newConnection()
        var arrival: [Int: [String]] = [:]
        connection.readWrite { tx in
            for i in shuffled(300, seed: 14) {
                let value = i % 5
                tx.setObject(Score(value: value), forKey: key(i), inCollection: "scores")
                arrival[value, default: []].append(key(i))
            }
        }
        connection.readWrite { tx in
            for i in shuffled(100, seed: 15) {
                let value = i % 5
                tx.setObject(Score(value: value), forKey: key(i + 300), inCollection: "scores")
                arrival[value, default: []].append(key(i + 300))
            }
        }
        connection.read { tx in
            var order: [String] = []
            (tx.ext("view") as! YapDatabaseViewTransaction).iterateKeys(inGroup: "all") { _, key, _, _ in order.append(key) }
            #expect(order == (0..<5).flatMap { arrival[$0]! })
        }
    }

    @Test func theCacheHoldsOnlyTheWriteTransactionsRowsAndForgetsRemovedOnes() throws {
        let fixture = try fixture(keysOnly: true)
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            for i in 0..<50 { tx.setObject(Score(value: i), forKey: key(i), inCollection: "scores") }
            #expect(tx.viewRowKeys.count == 0, "new rows wait to be placed together: nothing compared yet")
            #expect((tx.ext("view") as! YapDatabaseViewTransaction).numberOfItems(inGroup: "all") == 50, "a read places them")
            #expect(tx.viewRowKeys.count == 1, "placed in key order: only the group's last row is kept, for the next comparison")
            let rowid = try #require(tx.entry(collection: "scores", key: key(3))).rowid
            tx.removeObject(forKey: key(3), inCollection: "scores")
            #expect(tx.viewRowKeys.owner(of: rowid) == nil, "a removed row is forgotten")
            tx.removeAllObjects(inCollection: "scores")
            #expect(tx.viewRowKeys.count == 0)
            tx.setObject(Score(value: 0), forKey: key(0), inCollection: "more")
            tx.removeAllObjectsInAllCollections()
            #expect(tx.viewRowKeys.count == 0)
        }
        connection.readWrite { tx in #expect(tx.viewRowKeys.count == 0, "a new transaction starts empty") }
    }
}
