import Foundation
import Synchronization
import Testing
@testable import YapDB

/// Secondary indexes used the way YapDatabase's Swift clients use them: register from Swift,
/// query with `YapDatabaseQuery(string:parameters:)`, iterate with a stop flag, count,
/// aggregate; plus re-registration, reopening, `verify()` and `explain`.
@Suite(.serialized) struct SecondaryIndexClientTests {
    struct Person: Codable, Equatable {
        var name: String
        var age: Int
        var email: String?
        var salary: Double
    }

    /// How many times one index's handler ran (to tell a rebuild from a reuse). Per index, not
    /// global: other suites running at the same time register the same kind of index.
    final class HandlerRuns: Sendable {
        let count = Mutex(0)
    }

    static func peopleIndex(versionTag: String = "1", runs: HandlerRuns? = nil) -> YapDatabaseSecondaryIndex {
        let setup = YapDatabaseSecondaryIndexSetup()
        setup.addColumn("name", with: .text)
        setup.addColumn("age", with: .integer)
        setup.addColumn("email", with: .text)
        setup.addColumn("salary", with: .real)
        let handler = YapDatabaseSecondaryIndexHandler.withObjectBlock { _, dict, _, _, object in
            runs?.count.withLock { $0 += 1 }
            guard let person = object as? Person else { return }
            dict["name"] = person.name
            dict["age"] = person.age
            if let email = person.email { dict["email"] = email }
            dict["salary"] = person.salary
        }
        let options = YapDatabaseSecondaryIndexOptions()
        options.allowedCollections = YapWhitelistBlacklist(whitelist: ["people"])
        return YapDatabaseSecondaryIndex(setup: setup, handler: handler, versionTag: versionTag, options: options)
    }

    static let people = [
        Person(name: "Ada", age: 36, email: "ada@example.com", salary: 120),
        Person(name: "Bob", age: 25, email: nil, salary: 80),
        Person(name: "Cy", age: 62, email: "cy@example.com", salary: 95.5),
        Person(name: "dee", age: 25, email: "dee@example.com", salary: 70),
        Person(name: "Eve", age: 71, email: nil, salary: 60),
    ]

    static func fixture() throws -> DatabaseFixture {
        let fixture = try DatabaseFixture()
        try setUp(fixture.database, versionTag: "1")
        try fixture.database.newConnection().write { tx in
            for (i, person) in people.enumerated() { tx.setObject(person, forKey: "p\(i)", inCollection: "people") }
            tx.setObject(people[0], forKey: "other", inCollection: "elsewhere")
        }
        return fixture
    }

    static func setUp(_ database: YapDatabase, versionTag: String, runs: HandlerRuns? = nil) throws {
        database.registerCodableSerialization(Person.self, forCollection: "people")
        database.registerCodableSerialization(Person.self, forCollection: "elsewhere")
        try #require(database.register(peopleIndex(versionTag: versionTag, runs: runs), withName: "idx"))
    }

    @Test func queriesFromSwiftWithParametersAndAStopFlag() throws {
        let fixture = try Self.fixture()
        fixture.database.newConnection().read { transaction in
            guard let idx = transaction.ext("idx") as? YapDatabaseSecondaryIndexTransaction else {
                Issue.record("no index transaction")
                return
            }
            var keys: [String] = []
            let query = YapDatabaseQuery(string: "WHERE age >= ? ORDER BY age DESC, name", parameters: [30])
            var collections: Set<String> = []
            let ok = idx.iterateKeys(matching: query) { collection, key, _ in
                collections.insert(collection)
                keys.append(key)
            }
            #expect(ok && collections == ["people"])
            #expect(keys == ["p4", "p2", "p0"])

            var first: [String] = []
            idx.iterateKeysAndObjects(matching: YapDatabaseQuery(string: "ORDER BY salary")) { _, _, object, stop in
                first.append((object as? Person)?.name ?? "?")
                if first.count == 2 { stop = true }
            }
            #expect(first == ["Eve", "dee"])

            var rows: [String] = []
            idx.iterateRows(matching: YapDatabaseQuery(string: "WHERE email IS NULL")) { _, key, object, metadata, _ in
                #expect(metadata == nil)
                rows.append(key + ":" + ((object as? Person)?.name ?? "?"))
            }
            #expect(Set(rows) == ["p1:Bob", "p4:Eve"])

            var names: [String] = []
            idx.iterateIndexedValues(inColumn: "name", matching: YapDatabaseQuery(string: "WHERE name LIKE 'd%' OR age IN (?)", parameters: [[62, 71]])) { value, _ in
                names.append(value as? String ?? "?")
            }
            #expect(Set(names) == ["dee", "Cy", "Eve"])

            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "WHERE age BETWEEN 25 AND 40")) == 3)
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "WHERE age = '25'")) == 2, "text compared with an INTEGER column is converted")
            #expect(idx.numberOfRows(matching: YapDatabaseQuery.queryMatchingAll()) == 5, "rows of other collections are not indexed")
            #expect(idx.performAggregateQuery(YapDatabaseQuery(aggregateFunction: "MIN(age)", string: "")) as? Int == 25)
            #expect(idx.performAggregateQuery(YapDatabaseQuery(aggregateFunction: "max(salary)", string: "WHERE age < 60")) as? Double == 120)
            #expect(idx.performAggregateQuery(YapDatabaseQuery(aggregateFunction: "SUM(age)", string: "WHERE email IS NOT NULL")) as? Int == 123)
            #expect(idx.performAggregateQuery(YapDatabaseQuery(aggregateFunction: "AVG(salary)", string: "WHERE age = 25")) as? Double == 75)
            #expect(idx.performAggregateQuery(YapDatabaseQuery(aggregateFunction: "COUNT(email)", string: "")) as? Int == 3)
            #expect(idx.performAggregateQuery(YapDatabaseQuery(aggregateFunction: "MIN(age)", string: "WHERE age > 100")) == nil)
            // As YapDatabase's `SELECT COUNT(*) FROM table <query>`: LIMIT and OFFSET apply to the
            // one result row, ORDER BY changes nothing.
            #expect(idx.performAggregateQuery(YapDatabaseQuery(aggregateFunction: "COUNT(*)", string: "ORDER BY age LIMIT 2")) as? Int == 5)
            #expect(idx.performAggregateQuery(YapDatabaseQuery(aggregateFunction: "MIN(age)", string: "ORDER BY age DESC LIMIT 1")) as? Int == 25)
            #expect(idx.performAggregateQuery(YapDatabaseQuery(aggregateFunction: "COUNT(*)", string: "LIMIT 0")) == nil)
            #expect(idx.performAggregateQuery(YapDatabaseQuery(aggregateFunction: "COUNT(*)", string: "LIMIT 10 OFFSET 1")) == nil)

            // A bad query answers false / nil, never traps.
            #expect(!idx.iterateKeys(matching: YapDatabaseQuery(string: "WHERE nope = 1")) { _, _, _ in })
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "WHERE age >")) == nil)
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "WHERE age = ?")) == nil, "a missing parameter")
            #expect(throws: YapDatabaseError.self) { try idx.explain(YapDatabaseQuery(string: "ORDER BY")) }
        }
    }

    /// YapDatabase's documented pattern for a query over a known set of rows: row ids from
    /// `rowids(forKeys:inCollection:)`, then `rowid IN (?)` (any case), with other conditions,
    /// an aggregate, an order, and the row id as an indexed value.
    @Test func theRowidPseudoColumnSelectsKnownRows() throws {
        let fixture = try Self.fixture()
        fixture.database.newConnection().read { transaction in
            guard let idx = transaction.ext("idx") as? YapDatabaseSecondaryIndexTransaction else {
                Issue.record("no index transaction")
                return
            }
            let ids = idx.rowids(forKeys: ["p1", "p2", "p4", "missing"], inCollection: "people")
            #expect(Set(ids.keys) == ["p1", "p2", "p4"])
            let rowids = Array(ids.values)
            var keys: [String] = []
            idx.iterateKeys(matching: YapDatabaseQuery(string: "WHERE rowid IN (?)", parameters: [rowids])) { _, key, _ in keys.append(key) }
            #expect(Set(keys) == ["p1", "p2", "p4"])
            let sum = YapDatabaseQuery(aggregateFunction: "SUM(age)", string: "WHERE ROWID IN (?) AND age > ?", parameters: [rowids, 30])
            #expect(idx.performAggregateQuery(sum) as? Int == 62 + 71)
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "WHERE RowId = ?", parameters: [ids["p2"]!])) == 1)
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "WHERE rowid = ?", parameters: ["\(ids["p2"]!)"])) == 1,
                    "a text compared with rowid takes its INTEGER affinity")
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "WHERE rowid NOT IN (?)", parameters: [rowids])) == 2)
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "WHERE rowid IN (?)", parameters: [[Int64.max, -1]])) == 0)
            let p0 = idx.rowids(forKeys: ["p0"], inCollection: "people")["p0"]!.int64Value
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "WHERE rowid > ?", parameters: [p0])) == 4)

            var ordered: [String] = []
            idx.iterateKeys(matching: YapDatabaseQuery(string: "WHERE age = 25 ORDER BY rowid DESC")) { _, key, _ in ordered.append(key) }
            let expected = ["p1", "p3"].sorted { idx.rowids(forKeys: [$0], inCollection: "people")[$0]!.int64Value
                > idx.rowids(forKeys: [$1], inCollection: "people")[$1]!.int64Value }
            #expect(ordered == expected)
            var values: [Int] = []
            idx.iterateIndexedValues(inColumn: "rowid", matching: YapDatabaseQuery(string: "WHERE name = 'Cy'")) { value, _ in
                values.append(value as? Int ?? -1)
            }
            #expect(values == [ids["p2"]!.intValue])
            #expect(idx.performAggregateQuery(YapDatabaseQuery(aggregateFunction: "MIN(rowid)", string: "")) as? Int == Int(p0))
            let plan = try? idx.explain(YapDatabaseQuery(string: "WHERE rowid IN (?)", parameters: [rowids]))
            #expect(plan?.contains("rows by id: 3 listed") == true, "\(plan ?? "no plan")")
        }
    }

    /// A handler may spell column names in another case (SQL names ignore it) or set keys
    /// that are no column: the exact names are looked up first, the rest resolved by name.
    @Test func handlerKeysInAnotherCaseAreColumnsToo() throws {
        let fixture = try DatabaseFixture()
        let setup = YapDatabaseSecondaryIndexSetup()
        setup.addColumn("age", with: .integer)
        setup.addColumn("name", with: .text)
        let handler = YapDatabaseSecondaryIndexHandler.withKeyBlock { _, dict, _, key in
            dict["AGE"] = key.count
            dict["name"] = key
            if key == "extra" { dict["nope"] = 1 }
        }
        try #require(fixture.database.register(YapDatabaseSecondaryIndex(setup: setup, handler: handler), withName: "idx"))
        let connection = fixture.database.newConnection()
        connection.readWrite { tx in
            for key in ["a", "bb", "extra"] { tx.setObject(key, forKey: key, inCollection: "c") }
        }
        connection.read { tx in
            let idx = tx.ext("idx") as? YapDatabaseSecondaryIndexTransaction
            #expect(idx?.numberOfRows(matching: YapDatabaseQuery(string: "WHERE age = 2 AND name = 'bb'")) == 1)
            #expect(idx?.numberOfRows(matching: YapDatabaseQuery(string: "WHERE age = 5 AND name = 'extra'")) == 1)
            #expect(idx?.numberOfRows(matching: YapDatabaseQuery(string: "WHERE age IS NULL")) == 0)
        }
    }

    @available(*, deprecated)
    @Test func deprecatedEnumerateFormsStillWork() throws {
        let fixture = try Self.fixture()
        fixture.database.newConnection().read { transaction in
            let idx = transaction.ext("idx") as! YapDatabaseSecondaryIndexTransaction
            var keys: [String] = []
            idx.enumerateKeys(matching: YapDatabaseQuery(string: "WHERE age < ? ORDER BY name", parameters: [40])) { _, key, stop in
                keys.append(key)
                if keys.count == 2 { stop.pointee = true }
            }
            #expect(keys == ["p0", "p1"])
            var count: UInt = 0
            #expect(idx.getNumberOfRows(&count, matching: YapDatabaseQuery(string: "WHERE name = 'Ada'")))
            #expect(count == 1)
        }
    }

    @Test func changesMoveRowsInTheSameCommit() throws {
        let fixture = try Self.fixture()
        let connection = fixture.database.newConnection()
        let count = { (text: String) -> UInt? in
            connection.read { ($0.ext("idx") as? YapDatabaseSecondaryIndexTransaction)?.numberOfRows(matching: YapDatabaseQuery(string: text)) }
        }
        try connection.write { tx in
            tx.setObject(Person(name: "Bob", age: 26, email: "bob@example.com", salary: 80), forKey: "p1", inCollection: "people")
            let idx = tx.ext("idx") as? YapDatabaseSecondaryIndexTransaction
            #expect(idx?.numberOfRows(matching: YapDatabaseQuery(string: "WHERE age = 26")) == 1, "a transaction sees its own changes")
            tx.removeObject(forKey: "p4", inCollection: "people")
        }
        #expect(count("WHERE age = 25") == 1)
        #expect(count("WHERE email IS NULL") == 0)
        #expect(count("") == 4)
        try connection.write { tx in tx.removeAllObjects(inCollection: "people") }
        #expect(count("") == 0, "a cleared collection leaves nothing behind")
        #expect(try fixture.database.verify().isValid)
    }

    @Test func reopeningWithTheSameTagReusesTheIndexAndANewTagRebuildsIt() throws {
        let fixture = try Self.fixture()
        try fixture.reopen()
        let runs = HandlerRuns()
        try Self.setUp(fixture.database, versionTag: "1", runs: runs)
        #expect(runs.count.withLock { $0 } == 0, "the stored index was reused, not rebuilt")
        fixture.database.newConnection().read { tx in
            #expect((tx.ext("idx") as? YapDatabaseSecondaryIndexTransaction)?.numberOfRows(matching: YapDatabaseQuery(string: "WHERE age > 30")) == 3)
        }
        fixture.database.unregisterExtension(withName: "idx")
        try #require(fixture.database.register(Self.peopleIndex(versionTag: "2", runs: runs), withName: "idx"))
        #expect(runs.count.withLock { $0 } >= 5, "a new tag rebuilds")
        #expect(try fixture.database.verify().isValid)

        // Same tag, other columns: the stored roots do not fit, so the index rebuilds.
        try fixture.reopen()
        fixture.database.registerCodableSerialization(Person.self, forCollection: "people")
        let setup = YapDatabaseSecondaryIndexSetup()
        setup.addColumn("age", with: .text)
        let handler = YapDatabaseSecondaryIndexHandler.withObjectBlock { _, dict, _, _, object in
            if let person = object as? Person { dict["age"] = person.age }
        }
        try #require(fixture.database.register(YapDatabaseSecondaryIndex(setup: setup, handler: handler, versionTag: "2"), withName: "idx"))
        fixture.database.newConnection().read { tx in
            let idx = tx.ext("idx") as? YapDatabaseSecondaryIndexTransaction
            #expect(idx?.numberOfRows(matching: YapDatabaseQuery(string: "WHERE age = '25'")) == 2)
            #expect(idx?.numberOfRows(matching: YapDatabaseQuery(string: "WHERE name = 'Ada'")) == nil, "the old columns are gone")
            #expect(idx?.performAggregateQuery(YapDatabaseQuery(aggregateFunction: "MAX(age)", string: "")) as? String == "71",
                    "a TEXT column holds the ages as text")
        }
    }

    /// `verify()` compares each index with a rebuild from its handler and reports a difference.
    @Test func verifyReportsAnIndexThatDisagreesWithItsHandler() throws {
        let fixture = try Self.fixture()
        #expect(try fixture.database.verify().isValid)
        // Damage the stored index behind the extension's back: drop one row's entries.
        try fixture.database.newConnection().write { tx in
            let key = YapDatabaseSecondaryIndex.stateKey("idx")
            guard var state = tx.extensionState(key) as? SecondaryIndexState,
                  let rowid = tx.entry(collection: "people", key: "p2")?.rowid else {
                Issue.record("no state")
                return
            }
            try state.removeRow(rowid)
            tx.setExtensionState(state, forKey: key)
            tx.engineTransaction.markChanged()
        }
        let report = try fixture.database.verify()
        #expect(!report.isValid)
        #expect(report.problems.contains { $0.contains("secondary index idx") && $0.contains("missing") })
    }

    /// The engine's page check (`validatePages`) sees a column tree that lost an entry.
    @Test func verifyReportsAColumnTreeOutOfStepWithTheRows() throws {
        let fixture = try Self.fixture()
        try fixture.database.newConnection().write { tx in
            let key = YapDatabaseSecondaryIndex.stateKey("idx")
            guard var state = tx.extensionState(key) as? SecondaryIndexState, let first = try state.columns[1].firstEntry() else {
                Issue.record("no state")
                return
            }
            try state.columns[1].remove(first.key)
            tx.setExtensionState(state, forKey: key)
            tx.engineTransaction.markChanged()
        }
        let report = try fixture.database.verify()
        #expect(!report.isValid)
        #expect(report.problems.contains { $0.hasPrefix("extension secondaryIndex:idx") })
        #expect(report.problems.contains { $0.contains("column 1 entries differ") })
    }

    @Test func explainShowsRangesChecksAndOrder() throws {
        let fixture = try Self.fixture()
        fixture.database.newConnection().read { transaction in
            guard let idx = transaction.ext("idx") as? YapDatabaseSecondaryIndexTransaction else { return }
            let equality = try? idx.explain(YapDatabaseQuery(string: "WHERE age = ? ORDER BY age LIMIT 1", parameters: [25]))
            #expect(equality == """
                range of column age: age = 25 (2 rows)
                check: none (the ranges are exact)
                order: streamed from column age, stops after 1 rows
                """)
            let both = try? idx.explain(YapDatabaseQuery(string: "WHERE age > 30 AND name = 'Cy' ORDER BY salary DESC"))
            #expect(both == """
                intersect (1 rows at most):
                  range of column age: age > 30 (3 rows)
                  range of column name: name = 'Cy' (1 rows)
                check: none (the ranges are exact)
                order: sorted in memory
                """)
            let like = try? idx.explain(YapDatabaseQuery(string: "WHERE name LIKE 'a%' OR age IN (1, 2)"))
            #expect(like == """
                union (1 rows at most):
                  range of column name: name LIKE 'a%' (prefix) (1 rows)
                  range of column age: age = 1; age = 2 (0 rows)
                check: each candidate against WHERE
                order: index order
                """)
            let scan = try? idx.explain(YapDatabaseQuery(string: "WHERE age + 1 > 3 OR name = salary"))
            #expect(scan == nil || scan?.hasPrefix("scan every row (5 rows)") == true)
            let none = try? idx.explain(YapDatabaseQuery(string: "WHERE age = NULL"))
            #expect(none?.hasPrefix("no rows") == true)
            // OFFSET + LIMIT near Int.max saturates instead of overflowing.
            let huge = try? idx.explain(YapDatabaseQuery(string: "WHERE age > 0 ORDER BY age LIMIT 9223372036854775807 OFFSET 5"))
            #expect(huge?.hasSuffix("stops after \(Int.max) rows") == true, "\(huge ?? "no plan")")
        }
    }
}

/// Counts, `MIN`/`MAX` and the choice of rows come from the index: no object is deserialized
/// until a block asks for one.
@Suite struct SecondaryIndexNoObjectLoadTests {
    static let decoded = Mutex(0)

    @Test func countsAndExtremesReadNoObject() throws {
        let fixture = try DatabaseFixture()
        let database = fixture.database!
        database.registerSerializer({ _, _, object in Data(String(object as? Int ?? 0).utf8) }, forCollection: "n")
        database.registerDeserializer({ _, _, data in
            Self.decoded.withLock { $0 += 1 }
            return Int(String(decoding: data, as: UTF8.self))
        }, forCollection: "n")
        let setup = YapDatabaseSecondaryIndexSetup()
        setup.addColumn("value", with: .integer)
        let handler = YapDatabaseSecondaryIndexHandler.withObjectBlock { _, dict, _, _, object in dict["value"] = object }
        try #require(database.register(YapDatabaseSecondaryIndex(setup: setup, handler: handler, versionTag: "1"), withName: "idx"))
        try database.newConnection().write { tx in
            for i in 0..<300 { tx.setObject(i % 100, forKey: "k\(i)", inCollection: "n") }
        }
        let reader = database.newConnection()
        let before = Self.decoded.withLock { $0 }
        reader.read { tx in
            guard let idx = tx.ext("idx") as? YapDatabaseSecondaryIndexTransaction else { return }
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "WHERE value BETWEEN 10 AND 19")) == 30)
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "WHERE value IN (?) OR value > 97", parameters: [[1, 2]])) == 12)
            #expect(idx.performAggregateQuery(YapDatabaseQuery(aggregateFunction: "MIN(value)", string: "WHERE value > 41")) as? Int == 42)
            #expect(idx.performAggregateQuery(YapDatabaseQuery(aggregateFunction: "MAX(value)", string: "")) as? Int == 99)
            #expect(idx.performAggregateQuery(YapDatabaseQuery(aggregateFunction: "SUM(value)", string: "WHERE value < 3")) as? Int == 9)
            var keys = 0
            idx.iterateKeys(matching: YapDatabaseQuery(string: "WHERE value = 5")) { _, _, _ in keys += 1 }
            #expect(keys == 3)
        }
        #expect(Self.decoded.withLock { $0 } == before, "no object was read")
        reader.read { tx in
            _ = (tx.ext("idx") as? YapDatabaseSecondaryIndexTransaction)?.iterateKeysAndObjects(matching: YapDatabaseQuery(string: "WHERE value = 5")) { _, _, _, _ in }
        }
        #expect(Self.decoded.withLock { $0 } == before + 3, "objects are read for the rows a block asks for")
    }
}
