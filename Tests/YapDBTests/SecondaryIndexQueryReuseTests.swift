import Foundation
import Testing
@testable import YapDB
import YapDBIndex

/// The per-query shortcuts of the secondary index keep their answers: texts and aggregate
/// functions parsed once per index (new query objects with new parameters each call, invalid
/// texts failing every time), a read-only transaction's kept executor (a read-write one sees
/// its own writes between queries), parameters converted by exact type (optionals included),
/// and each match's key-directory entry read with its key.
@Suite(.serialized) struct SecondaryIndexQueryReuseTests {
    typealias Client = SecondaryIndexClientTests

    @Test func aTextParsedOnceAnswersEachNewQueryObjectWithItsOwnParameters() throws {
        let fixture = try Client.fixture()
        fixture.database.newConnection().read { transaction in
            let idx = transaction.ext("idx") as! YapDatabaseSecondaryIndexTransaction
            var answers: [[String]] = []
            for age in [25, 36, 62, 99] {
                var keys: [String] = []
                #expect(idx.iterateKeys(matching: YapDatabaseQuery(string: "WHERE age = ? ORDER BY name", parameters: [age])) { _, key, _ in keys.append(key) })
                answers.append(keys)
            }
            #expect(answers == [["p1", "p3"], ["p0"], ["p2"], []])
            #expect(idx.index.parses.withLock { $0.queries.count } == 1, "one text, parsed once for the index")
            for (low, high, count) in [(20, 30, 2), (30, 70, 2), (0, 100, 5)] {
                let query = YapDatabaseQuery(aggregateFunction: "COUNT(*)", string: "WHERE age BETWEEN ? AND ?", parameters: [low, high])
                #expect(idx.performAggregateQuery(query) as? Int == count)
            }
            #expect(idx.performAggregateQuery(YapDatabaseQuery(aggregateFunction: "min(AGE)", string: "")) as? Int == 25)
            #expect(idx.performAggregateQuery(YapDatabaseQuery(aggregateFunction: "min(AGE)", string: "WHERE age > ?", parameters: [30])) as? Int == 36)
            #expect(idx.index.parses.withLock { $0.aggregates.keys.sorted() } == ["COUNT(*)", "min(AGE)"])
        }
    }

    @Test func anInvalidTextOrFunctionFailsEveryTimeAndIsNotKept() throws {
        let fixture = try Client.fixture()
        fixture.database.newConnection().read { transaction in
            let idx = transaction.ext("idx") as! YapDatabaseSecondaryIndexTransaction
            for _ in 0..<2 {
                #expect(!idx.iterateKeys(matching: YapDatabaseQuery(string: "WHERE nope = ?", parameters: [1])) { _, _, _ in })
                #expect(idx.performAggregateQuery(YapDatabaseQuery(aggregateFunction: "MIN(nope)", string: "")) == nil)
                #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "WHERE age = ?")) == nil, "a missing parameter, after a valid parse")
            }
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "WHERE age = ?", parameters: [25])) == 2)
            #expect(idx.index.parses.withLock { ($0.queries.keys.sorted(), $0.aggregates.count) } == (["WHERE age = ?"], 0))
        }
    }

    @Test func optionalAndExactTypeParametersBindAsBefore() throws {
        let fixture = try Client.fixture()
        fixture.database.newConnection().read { transaction in
            let idx = transaction.ext("idx") as! YapDatabaseSecondaryIndexTransaction
            let some: Int? = 25, none: Int? = nil, text: String? = "Ada"
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "WHERE age = ?", parameters: [some as Any])) == 2)
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "WHERE email IS ?", parameters: [none as Any])) == 2, "nil binds NULL")
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "WHERE name = ?", parameters: [text as Any])) == 1)
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "WHERE age = ?", parameters: [Int64(36)])) == 1)
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "WHERE salary = ?", parameters: [95.5])) == 1)
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "WHERE name = ?", parameters: ["Bob"])) == 1)
        }
    }

    @Test func aReadWriteTransactionSeesItsOwnWritesBetweenQueries() throws {
        let fixture = try Client.fixture()
        fixture.database.newConnection().readWrite { transaction in
            let idx = transaction.ext("idx") as! YapDatabaseSecondaryIndexTransaction
            let query = { YapDatabaseQuery(string: "WHERE age = ?", parameters: [25]) }
            #expect(idx.numberOfRows(matching: query()) == 2)
            transaction.setObject(Client.Person(name: "Fay", age: 25, email: nil, salary: 1), forKey: "p9", inCollection: "people")
            #expect(idx.numberOfRows(matching: query()) == 3)
            transaction.removeObject(forKey: "p1", inCollection: "people")
            var keys: [String] = []
            idx.iterateKeysAndObjects(matching: query()) { _, key, object, _ in keys.append(key + ":" + ((object as? Client.Person)?.name ?? "?")) }
            #expect(keys.sorted() == ["p3:dee", "p9:Fay"])
        }
    }

    @Test func eachMatchsEntryIsTheOneItsKeyFinds() throws {
        let fixture = try Client.fixture()
        fixture.database.newConnection().read { transaction in
            var checked = 0
            var memo = CollectionMemo()
            let idx = transaction.ext("idx") as! YapDatabaseSecondaryIndexTransaction
            idx.iterateKeys(matching: YapDatabaseQuery.queryMatchingAll()) { collection, key, _ in
                guard let entry = transaction.entry(collection: collection, key: key),
                      let row = transaction.row(ofRowid: entry.rowid, memo: &memo) else {
                    Issue.record("no row for \(collection)/\(key)")
                    return
                }
                #expect(row.collection == collection && row.key == key && row.entry == entry)
                checked += 1
            }
            #expect(checked == 5)
            #expect(transaction.row(ofRowid: 999_999, memo: &memo) == nil)
            // The memo of "people" does not leak into a row of another collection.
            let other = transaction.entry(collection: "elsewhere", key: "other")!
            #expect(transaction.row(ofRowid: other.rowid, memo: &memo).map { [$0.collection, $0.key] } == ["elsewhere", "other"])
            let back = transaction.entry(collection: "people", key: "p2")!
            #expect(transaction.row(ofRowid: back.rowid, memo: &memo).map { [$0.collection, $0.key] } == ["people", "p2"])
        }
    }
}
