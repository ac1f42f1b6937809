import Foundation
import Testing
@testable import YapDB
import YapDBIndex
import YapDBEngine

/// Queries that hand out objects or metadata hold their matches back and look their entries up
/// in batches (`forEachMatch`, `PendingMatches`): the rows still come in the query's order, each
/// with its own object, metadata and entry; a stop ends the walk at once; matches whose column
/// entry carries no row key (a long key beside a long value) keep their place; a query run
/// from inside the block gets its own buffers; a read-write transaction sees its own writes.
@Suite(.serialized) struct SecondaryIndexBatchTests {
    typealias Client = SecondaryIndexClientTests
    typealias Person = Client.Person

    /// The number of rows; every `longEvery`-th has the longest key the key directory takes and
    /// a long name, too long together for the name's column entry to carry the row key.
    static let rows = 150, longEvery = 7

    static func isLong(_ i: Int) -> Bool { i % longEvery == 3 }

    static let longKeyLength: Int = {
        let limit = Keydir.maximumRowKeyLength(PageFormat())
        var length = limit
        while RowKey.encodedLength(collection: "people", key: String(repeating: "k", count: length)) > limit { length -= 1 }
        return length
    }()

    static func key(_ i: Int) -> String {
        isLong(i) ? "long" + String(format: "%03d", i) + String(repeating: "k", count: longKeyLength - 7) : "p\(i)"
    }

    /// Person `i`: names in row order, ages cycling.
    static func person(_ i: Int) -> Person {
        Person(name: String(format: "n%03d", i) + (isLong(i) ? String(repeating: "x", count: 200) : ""),
               age: 20 + (i * 37) % 60, email: i % 5 == 0 ? nil : "e\(i)", salary: Double(i))
    }

    /// A database with `rows` people (metadata: the row number) and the people index, written
    /// to index pages (a checkpoint, so the lookups walk mapped pages) and then changed a little
    /// (so some paths are dirty nodes).
    static func fixture() throws -> DatabaseFixture {
        let fixture = try DatabaseFixture()
        try Client.setUp(fixture.database, versionTag: "1")
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            for i in 0..<rows { tx.setObject(person(i), forKey: key(i), inCollection: "people", withMetadata: i) }
        }
        try fixture.database.checkpoint()
        try connection.write { tx in
            for i in stride(from: 1, to: rows, by: 11) { tx.setObject(person(i), forKey: key(i), inCollection: "people", withMetadata: i) }
        }
        return fixture
    }

    /// The row number of each key.
    static let row = Dictionary(uniqueKeysWithValues: (0..<rows).map { (key($0), $0) })

    /// The keys in the order `ORDER BY name` gives.
    static var expectedOrder: [String] { (0..<rows).map(key) }

    @Test func rowsComeInOrderWithTheirOwnObjectsMetadataAndEntries() throws {
        let fixture = try Self.fixture()
        let query = YapDatabaseQuery(string: "ORDER BY name")
        try fixture.database.newConnection().read { transaction in
            let idx = try #require(transaction.ext("idx") as? YapDatabaseSecondaryIndexTransaction)
            // Some column entries carry the row key and some do not (the long keys).
            var carried = 0, missing = 0
            let bound = try idx.index.bind(query)
            try idx.reading { executor throws(EngineError) in
                try executor.run(bound) { _, _, rowKey in
                    if rowKey.count > 0 { carried += 1 } else { missing += 1 }
                    return true
                }
            }
            #expect(carried > 100 && missing > 10)

            var keys: [String] = [], objectsMatch = true, metadataMatch = true
            #expect(idx.iterateRows(matching: query) { collection, key, object, metadata, _ in
                keys.append(key)
                let i = Self.row[key]!
                objectsMatch = objectsMatch && collection == "people" && (object as? Person) == Self.person(i)
                metadataMatch = metadataMatch && (metadata as? Int) == i
            })
            #expect(keys == Self.expectedOrder)
            #expect(objectsMatch && metadataMatch)

            var entriesMatch = true
            try idx.forEachMatch(try idx.index.bind(query), entries: true, objects: true) { collection, key, rowid, _, entry, _, _ in
                let looked = transaction.entry(collection: collection, key: key)
                entriesMatch = entriesMatch && entry != nil && entry == looked && entry?.rowid == rowid
            }
            #expect(entriesMatch)
        }
    }

    @Test(arguments: [0, 1, 14, 15, 16, 17, 40, 149])
    func aStopEndsTheWalkAtOnce(after stopAt: Int) throws {
        let fixture = try Self.fixture()
        fixture.database.newConnection().read { transaction in
            let idx = transaction.ext("idx") as! YapDatabaseSecondaryIndexTransaction
            var keys: [String] = [], objects = 0
            let ok = idx.iterateKeysAndObjects(matching: YapDatabaseQuery(string: "ORDER BY name")) { _, key, object, stop in
                if object is Person { objects += 1 }
                keys.append(key)
                if keys.count == stopAt + 1 { stop = true }
            }
            #expect(ok && objects == keys.count)
            #expect(keys == Array(Self.expectedOrder.prefix(stopAt + 1)))
        }
    }

    @Test func aQueryRunFromTheBlockGetsItsOwnBuffers() throws {
        let fixture = try Self.fixture()
        fixture.database.newConnection().read { transaction in
            let idx = transaction.ext("idx") as! YapDatabaseSecondaryIndexTransaction
            var outer: [String] = [], inner: [[String]] = []
            idx.iterateKeysAndObjects(matching: YapDatabaseQuery(string: "ORDER BY name")) { _, key, object, _ in
                outer.append(key)
                guard outer.count % 40 == 1, let person = object as? Person else { return }
                var same: [String] = []
                idx.iterateKeysAndMetadata(matching: YapDatabaseQuery(string: "WHERE age = ? ORDER BY name", parameters: [person.age])) { _, key, _, _ in
                    same.append(key)
                }
                inner.append(same)
            }
            #expect(outer == Self.expectedOrder)
            let expectedInner = stride(from: 0, to: Self.rows, by: 40).map { position in
                let age = Self.person(Self.row[Self.expectedOrder[position]]!).age
                return Self.expectedOrder.filter { Self.person(Self.row[$0]!).age == age }
            }
            #expect(inner == expectedInner)
        }
    }

    @Test func aReadWriteTransactionSeesItsOwnWrites() throws {
        let fixture = try Self.fixture()
        try fixture.database.newConnection().write { tx in
            for i in 0..<40 { tx.setObject(Person(name: "w\(i)", age: 99, email: nil, salary: 0), forKey: "w\(i)", inCollection: "people", withMetadata: -i) }
            tx.removeObject(forKey: Self.key(3), inCollection: "people")
            let idx = tx.ext("idx") as! YapDatabaseSecondaryIndexTransaction
            var seen: [String] = [], metadata: [Int] = []
            idx.iterateKeysAndMetadata(matching: YapDatabaseQuery(string: "WHERE age >= ? ORDER BY name", parameters: [79])) { _, key, value, _ in
                seen.append(key)
                metadata.append(value as? Int ?? 1_000)
            }
            let old = Self.expectedOrder.filter { Self.person(Self.row[$0]!).age >= 79 }
            let new = (0..<40).map { "w\($0)" }.sorted()
            #expect(seen == old.filter { $0 != Self.key(3) } + new)
            #expect(Array(metadata.suffix(40)) == new.map { -Int($0.dropFirst())! })
        }
    }
}
