import Foundation
import Testing
@testable import YapDB

/// `MIN`/`MAX` with no `WHERE` read the edge entry of the column's tree, and a transaction
/// keeps the last aggregate (and count) it prepared from its texts. These check the answers the
/// edge cannot settle alone (NULLs first, every value NULL, no rows, values cut to the key
/// limit, texts read from the row), that the kept parse never keeps an answer (a read-write
/// transaction sees its own writes; an older snapshot keeps its own extremes), and that another
/// function or text over the same query is not taken for the kept one.
@Suite(.serialized) struct SecondaryIndexExtremeTests {
    /// Rows of an index with an integer column `n`, a text column `t`, a real column `r` and an
    /// integer column `none` that no row sets.
    static func fixture(_ rows: [(n: Int?, t: String?, r: Double?)]) throws -> DatabaseFixture {
        let fixture = try DatabaseFixture()
        let database = fixture.database!
        let setup = YapDatabaseSecondaryIndexSetup()
        setup.addColumn("n", with: .integer)
        setup.addColumn("t", with: .text)
        setup.addColumn("r", with: .real)
        setup.addColumn("none", with: .integer)
        let handler = YapDatabaseSecondaryIndexHandler.withObjectBlock { _, dict, _, _, object in
            guard let row = object as? [String: Any] else { return }
            for (name, value) in row { dict[name] = value }
            dict["none"] = NSNull()
        }
        try #require(database.register(YapDatabaseSecondaryIndex(setup: setup, handler: handler, versionTag: "1"), withName: "idx"))
        try database.newConnection().write { tx in
            for (i, row) in rows.enumerated() { tx.setObject(Self.object(row), forKey: "k\(i)", inCollection: "rows") }
        }
        return fixture
    }

    static func object(_ row: (n: Int?, t: String?, r: Double?)) -> [String: Any] {
        var object: [String: Any] = [:]
        if let n = row.n { object["n"] = n }
        if let t = row.t { object["t"] = t }
        if let r = row.r { object["r"] = r }
        return object
    }

    static func aggregate(_ idx: YapDatabaseSecondaryIndexTransaction, _ function: String, _ text: String = "") -> Any? {
        idx.performAggregateQuery(YapDatabaseQuery(aggregateFunction: function, string: text))
    }

    /// `MIN`/`MAX` over a written (checkpointed) column tree read its edge leaf from where the
    /// table remembered it after the first descent (`MappedPages.EdgeLeaves`): the answers
    /// stay those of the snapshot asked — new extremes after a write (dirty trees) and after
    /// the next checkpoint (new roots), the old ones in a reader that began before the write.
    @Test func rememberedEdgeLeavesFollowEachSnapshot() throws {
        // Enough rows for column trees of more than one level at the default page size.
        let fixture = try Self.fixture((0..<3_000).map { (n: $0 + 10, t: nil, r: Double($0) / 4) })
        let database = fixture.database!
        try database.checkpoint()
        func extremes(_ connection: YapDatabaseConnection) -> [Int?] {
            var found: [Int?] = []
            connection.read { tx in
                guard let idx = tx.ext("idx") as? YapDatabaseSecondaryIndexTransaction else { return }
                for _ in 0..<3 {
                    found.append(Self.aggregate(idx, "MIN(n)") as? Int)
                    found.append(Self.aggregate(idx, "MAX(n)") as? Int)
                }
            }
            return found
        }
        let reader = database.newConnection()
        #expect(extremes(reader) == [10, 3_009, 10, 3_009, 10, 3_009])
        let old = database.newConnection()
        _ = old.beginLongLivedReadTransaction()
        let writer = database.newConnection()
        try writer.write { tx in
            tx.setObject(["n": 5], forKey: "low", inCollection: "rows")
            tx.setObject(["n": 5_000], forKey: "high", inCollection: "rows")
        }
        #expect(extremes(reader) == [5, 5_000, 5, 5_000, 5, 5_000], "a write: the trees are dirty")
        try database.checkpoint()
        #expect(extremes(reader) == [5, 5_000, 5, 5_000, 5, 5_000], "a checkpoint: new roots")
        try writer.write { tx in
            tx.removeObject(forKey: "low", inCollection: "rows")
            tx.removeObject(forKey: "k0", inCollection: "rows")
        }
        try database.checkpoint()
        #expect(extremes(reader) == [11, 5_000, 11, 5_000, 11, 5_000])
        #expect(extremes(old) == [10, 3_009, 10, 3_009, 10, 3_009], "the snapshot from before the writes")
        old.endLongLivedReadTransaction()
    }

    /// A query object asked again in a read-only transaction reads the edge leaf through the
    /// plain values kept for it (`lastEdgeRead`): each object keeps its own function and
    /// direction, another object is never answered from them, a read-write transaction sees
    /// its own writes, and a column whose first value is NULL still skips it.
    @Test func aQueryObjectAskedAgainReadsItsOwnEdge() throws {
        var rows = (0..<3_000).map { (n: Optional($0 + 10), t: Optional<String>.none, r: Optional(Double($0) / 4)) }
        rows.append((n: nil, t: nil, r: -8))
        let fixture = try Self.fixture(rows)
        let database = fixture.database!
        try database.checkpoint()
        let minimum = YapDatabaseQuery(aggregateFunction: "MIN(n)", string: "")
        let maximum = YapDatabaseQuery(aggregateFunction: "MAX(n)", string: "")
        let realMinimum = YapDatabaseQuery(aggregateFunction: "MIN(r)", string: "")
        let realMaximum = YapDatabaseQuery(aggregateFunction: "MAX(r)", string: "")
        func answers(_ connection: YapDatabaseConnection) throws -> [String] {
            var found: [String] = []
            try connection.read { tx in
                let idx = try #require(tx.ext("idx") as? YapDatabaseSecondaryIndexTransaction)
                for query in [minimum, maximum, realMaximum, realMinimum, maximum] {
                    for _ in 0..<3 {
                        found.append("\(query.aggregateFunction!)=\(idx.performAggregateQuery(query) ?? "nil")")
                        let typed: YapDatabaseQueryValue = try idx.aggregate(query)
                        found.append("\(query.aggregateFunction!)=\(typed.value.objectValue ?? "nil")")
                    }
                    if query !== minimum { continue }
                    // MIN(n) skips the NULL first: it never settles from the edge alone.
                    #expect(idx.lastEdgeRead == nil)
                }
                #expect(idx.lastEdgeRead != nil, "MAX(n) asked again reads through the kept values")
                // Another object over another column, after the kept one: its own answer.
                found.append("MIN(r)=\(idx.performAggregateQuery(YapDatabaseQuery(aggregateFunction: "MIN(r)", string: "")) ?? "nil")")
            }
            return found
        }
        func expected(_ low: Int, _ high: Int, _ realHigh: Double) -> [String] {
            [String](repeating: "MIN(n)=\(low)", count: 6) + [String](repeating: "MAX(n)=\(high)", count: 6)
                + [String](repeating: "MAX(r)=\(realHigh)", count: 6) + [String](repeating: "MIN(r)=-8.0", count: 6)
                + [String](repeating: "MAX(n)=\(high)", count: 6) + ["MIN(r)=-8.0"]
        }
        let reader = database.newConnection()
        #expect(try answers(reader) == expected(10, 3_009, 749.75))
        try database.newConnection().write { tx in
            tx.setObject(Self.object((4, nil, 800)), forKey: "high", inCollection: "rows")
            tx.setObject(Self.object((9_000, nil, nil)), forKey: "top", inCollection: "rows")
        }
        try database.checkpoint()
        #expect(try answers(reader) == expected(4, 9_000, 800), "a later transaction reads the new roots")
        try database.newConnection().write { tx in
            let idx = try #require(tx.ext("idx") as? YapDatabaseSecondaryIndexTransaction)
            #expect(idx.performAggregateQuery(maximum) as? Int == 9_000)
            #expect(idx.performAggregateQuery(maximum) as? Int == 9_000)
            tx.setObject(Self.object((9_500, nil, nil)), forKey: "top", inCollection: "rows")
            #expect(idx.performAggregateQuery(maximum) as? Int == 9_500, "a read-write transaction sees its write")
            #expect(idx.lastEdgeRead == nil)
        }
    }

    /// Texts longer than the key limit (256 bytes), equal in their first 300.
    static let long = String(repeating: "p", count: 300)

    @Test func extremesTheEdgeCannotSettleAloneAreRightToo() throws {
        let fixture = try Self.fixture([
            (nil, Self.long + "b", 2.5), (7, Self.long + "c", nil), (nil, Self.long + "a", -1),
            (3, nil, 0.5), (12, Self.long + "c", 9),
        ])
        fixture.database.newConnection().read { tx in
            let idx = tx.ext("idx") as! YapDatabaseSecondaryIndexTransaction
            #expect(Self.aggregate(idx, "MIN(n)") as? Int == 3, "NULLs come first: the walk skips them")
            #expect(Self.aggregate(idx, "MAX(n)") as? Int == 12)
            #expect(Self.aggregate(idx, "MIN(t)") as? String == Self.long + "a", "cut values: their full values decide")
            #expect(Self.aggregate(idx, "MAX(t)") as? String == Self.long + "c")
            #expect(Self.aggregate(idx, "MIN(r)") as? Double == -1)
            #expect(Self.aggregate(idx, "MAX(r)") as? Double == 9)
            #expect(Self.aggregate(idx, "MIN(none)") == nil && Self.aggregate(idx, "MAX(none)") == nil, "every value NULL")
            #expect(Self.aggregate(idx, "COUNT(*)") as? Int == 5)
            #expect(Self.aggregate(idx, "COUNT(n)") as? Int == 3)
            #expect(Self.aggregate(idx, "MAX(n)", "LIMIT 0") == nil, "LIMIT 0 leaves no result row")
            #expect(Self.aggregate(idx, "MAX(n)", "WHERE n < 10") as? Int == 7)
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "")) == 5)
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "WHERE n > 5")) == 2)
        }
    }

    @Test func shortTextsAreReadFromTheirRowsAndNoRowsGiveNil() throws {
        let fixture = try Self.fixture([(1, "pear", nil), (2, "apple", nil), (3, "fig", nil)])
        let connection = fixture.database.newConnection()
        connection.read { tx in
            let idx = tx.ext("idx") as! YapDatabaseSecondaryIndexTransaction
            #expect(Self.aggregate(idx, "MIN(t)") as? String == "apple")
            #expect(Self.aggregate(idx, "MAX(t)") as? String == "pear")
        }
        connection.readWrite { tx in tx.removeAllObjectsInAllCollections() }
        connection.read { tx in
            let idx = tx.ext("idx") as! YapDatabaseSecondaryIndexTransaction
            #expect(Self.aggregate(idx, "MIN(t)") == nil && Self.aggregate(idx, "MAX(n)") == nil)
            #expect(Self.aggregate(idx, "COUNT(*)") as? Int == 0)
        }
    }

    @Test func theKeptParseNeverKeepsAnAnswer() throws {
        let fixture = try Self.fixture([(5, "m", 1), (9, "q", 2)])
        let database = fixture.database!
        // An older snapshot, held open while a writer changes both ends.
        let old = database.newConnection()
        _ = old.beginLongLivedReadTransaction()
        database.newConnection().readWrite { tx in
            let idx = tx.ext("idx") as! YapDatabaseSecondaryIndexTransaction
            #expect(Self.aggregate(idx, "MIN(n)") as? Int == 5)
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "")) == 2)
            tx.setObject(Self.object((1, "a", nil)), forKey: "low", inCollection: "rows")
            tx.setObject(Self.object((nil, "z", nil)), forKey: "null", inCollection: "rows")
            #expect(Self.aggregate(idx, "MIN(n)") as? Int == 1, "the same text again sees the write")
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "")) == 4)
            tx.removeObject(forKey: "low", inCollection: "rows")
            #expect(Self.aggregate(idx, "MIN(n)") as? Int == 5)
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "")) == 3)
        }
        old.read { tx in
            let idx = tx.ext("idx") as! YapDatabaseSecondaryIndexTransaction
            #expect(Self.aggregate(idx, "MAX(t)") as? String == "q", "the old snapshot's extremes")
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "")) == 2)
        }
        database.newConnection().read { tx in
            let idx = tx.ext("idx") as! YapDatabaseSecondaryIndexTransaction
            // Same query text, another function (and back), then another text.
            #expect(Self.aggregate(idx, "MAX(t)") as? String == "z")
            #expect(Self.aggregate(idx, "MIN(t)") as? String == "m")
            #expect(Self.aggregate(idx, "MAX(t)") as? String == "z")
            #expect(Self.aggregate(idx, "MAX(t)", "WHERE t < 'z'") as? String == "q")
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "WHERE n > 6")) == 1)
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "WHERE n > 4")) == 2)
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "WHERE n > ?", parameters: [8])) == 1)
            #expect(idx.numberOfRows(matching: YapDatabaseQuery(string: "WHERE n > ?", parameters: [0])) == 2)
        }
        _ = old.endLongLivedReadTransaction()
    }
    @Test func theTypedAggregateGivesEachKindOfValueAndThrowsForBadQueries() throws {
        let fixture = try Self.fixture([(Int(Int64.min), "fig", 2), (Int(Int64.max), nil, 3), (4, "apple", nil)])
        let connection = fixture.database.newConnection()
        let minimum = YapDatabaseQuery(aggregateFunction: "MIN(n)", string: "")
        try connection.read { tx throws(YapDatabaseError) in
            let idx = tx.ext("idx") as! YapDatabaseSecondaryIndexTransaction
            #expect(try idx.aggregate(minimum).int64Value == Int64.min, "-2^63 is read from its row")
            #expect(try idx.aggregate(YapDatabaseQuery(aggregateFunction: "MAX(n)", string: "")).int64Value == Int64.max)
            #expect(try idx.aggregate(YapDatabaseQuery(aggregateFunction: "MIN(r)", string: "")).doubleValue == 2)
            #expect(try idx.aggregate(YapDatabaseQuery(aggregateFunction: "MIN(r)", string: "")).int64Value == nil,
                    "a REAL column's minimum is a real")
            #expect(try idx.aggregate(YapDatabaseQuery(aggregateFunction: "MIN(t)", string: "")).stringValue == "apple")
            #expect(try idx.aggregate(YapDatabaseQuery(aggregateFunction: "MAX(none)", string: "")).isNull)
            #expect(try idx.aggregate(YapDatabaseQuery(aggregateFunction: "COUNT(*)", string: "")).intValue == 3)
            #expect(try idx.aggregate(YapDatabaseQuery(aggregateFunction: "AVG(r)", string: "")).doubleValue == 2.5)
            #expect(throws: YapDatabaseError.self, "an integer SUM that overflows") {
                try idx.aggregate(YapDatabaseQuery(aggregateFunction: "SUM(n)", string: "WHERE n > 0"))
            }
            #expect(try idx.aggregate(YapDatabaseQuery(aggregateFunction: "TOTAL(n)", string: "WHERE n > 0")).doubleValue
                    == Double(Int64.max) + 4)
            do throws(YapDatabaseError) {
                _ = try idx.aggregate(YapDatabaseQuery(aggregateFunction: "MIN(nope)", string: ""))
                Issue.record("an unknown column is an error")
            } catch let error {
                guard case .invalidQuery = error else { Issue.record("not invalidQuery: \(error)"); return }
            }
            #expect(throws: YapDatabaseError.self, "a query without a function") { try idx.aggregate(YapDatabaseQuery(string: "")) }
        }
        // The same query object, kept across transactions, sees each one's snapshot.
        connection.readWrite { tx in
            let idx = tx.ext("idx") as! YapDatabaseSecondaryIndexTransaction
            #expect((try? idx.aggregate(minimum).int64Value) == Int64.min)
            tx.removeObject(forKey: "k0", inCollection: "rows")
            #expect((try? idx.aggregate(minimum).int64Value) == 4, "the kept query sees the transaction's own write")
            tx.removeAllObjectsInAllCollections()
            #expect((try? idx.aggregate(minimum).isNull) == true)
        }
    }

    /// Cut texts that tie on their prefix are ordered in the tree by row id, not by value: the
    /// edge entry alone does not settle them, in either direction.
    @Test func cutTextsTiedOnTheirPrefixAreSettledByTheirFullValues() throws {
        let fixture = try Self.fixture([(1, Self.long + "c", nil), (2, Self.long + "a", nil), (3, Self.long + "b", nil)])
        try fixture.database.newConnection().read { tx throws(YapDatabaseError) in
            let idx = tx.ext("idx") as! YapDatabaseSecondaryIndexTransaction
            #expect(try idx.aggregate(YapDatabaseQuery(aggregateFunction: "MIN(t)", string: "")).stringValue == Self.long + "a")
            #expect(try idx.aggregate(YapDatabaseQuery(aggregateFunction: "MAX(t)", string: "")).stringValue == Self.long + "c")
            #expect(Self.aggregate(idx, "MIN(t)") as? String == Self.long + "a")
        }
    }

    /// A BLOB column keeps numbers as they are, and its key cannot tell 3 from 3.0: the edge
    /// reads such a value from its row.
    @Test func aNumberInABlobColumnKeepsItsKind() throws {
        let fixture = try DatabaseFixture()
        let setup = YapDatabaseSecondaryIndexSetup()
        setup.addColumn("b", with: .blob)
        let handler = YapDatabaseSecondaryIndexHandler.withObjectBlock { _, dict, _, _, object in dict["b"] = object }
        try #require(fixture.database.register(YapDatabaseSecondaryIndex(setup: setup, handler: handler, versionTag: "1"), withName: "idx"))
        fixture.database.newConnection().readWrite { tx in
            tx.setObject(3.0, forKey: "real", inCollection: "rows")
            tx.setObject(5, forKey: "integer", inCollection: "rows")
        }
        try fixture.database.newConnection().read { tx throws(YapDatabaseError) in
            let idx = tx.ext("idx") as! YapDatabaseSecondaryIndexTransaction
            let minimum = try idx.aggregate(YapDatabaseQuery(aggregateFunction: "MIN(b)", string: ""))
            #expect(minimum.int64Value == nil && minimum.doubleValue == 3, "3.0 stays a real")
            let maximum = try idx.aggregate(YapDatabaseQuery(aggregateFunction: "MAX(b)", string: ""))
            #expect(maximum.int64Value == 5)
            #expect(Self.aggregate(idx, "MIN(b)") as? Double == 3)
        }
    }

    @Test func queryValuesReadBackAsTheirKindOnly() {
        let values: [YapDatabaseQueryValue] = [7, 2.5, "s", nil, YapDatabaseQueryValue(Data([1, 2]))]
        #expect(values.map(\.intValue) == [7, nil, nil, nil, nil])
        #expect(values.map(\.doubleValue) == [7, 2.5, nil, nil, nil])
        #expect(values.map(\.stringValue) == [nil, nil, "s", nil, nil])
        #expect(values.map(\.dataValue) == [nil, nil, nil, nil, Data([1, 2])])
        #expect(values.map(\.isNull) == [false, false, false, true, false])
    }
}
