import Foundation
import Testing
@testable import YapDB
import YapDBQuery

/// The public YapDatabaseQuery: YapDatabase's spellings, parameter conversion, errors at use,
/// the parse cache, and the typed form compiling to the same query as the text.
@Suite struct YapDatabaseQueryTests {
    static let columns: [String: ColumnType] = ["age": .integer, "name": .text, "salary": .real, "department": .text, "born": .real]

    @Test func stringFormKeepsTextAndParameters() throws {
        let query = YapDatabaseQuery(string: "WHERE department = ? AND salary >= ?", parameters: ["dev", 50_000])
        #expect(query.queryString == "WHERE department = ? AND salary >= ?")
        #expect(query.aggregateFunction == nil && !query.isAggregateQuery)
        #expect(query.queryParameters.count == 2)
        #expect(query.queryParameters[0] as? String == "dev")
        #expect(query.queryParameters[1] as? Int64 == 50_000)
        let bound = try query.bound(columns: Self.columns)
        #expect(bound.whereClause == .and(.comparison(.column("department"), .equal, .literal(.text("dev"))),
                                          .comparison(.column("salary"), .greaterOrEqual, .literal(.integer(50_000)))))
        // Parameters default to none, as YapDatabase's Swift examples write it.
        #expect(try YapDatabaseQuery(string: "WHERE age >= 62").bound(columns: Self.columns).whereClause
                == .comparison(.column("age"), .greaterOrEqual, .literal(.integer(62))))
    }

    @Test func matchingAllAndAggregates() throws {
        let all = YapDatabaseQuery.queryMatchingAll()
        #expect(all.queryString == "" && all.queryParameters.isEmpty)
        #expect(try all.bound(columns: Self.columns) == BoundQuery(whereClause: nil))
        let sum = YapDatabaseQuery(aggregateFunction: "SUM(salary)", string: "WHERE department = ?", parameters: ["dev"])
        #expect(sum.isAggregateQuery && sum.aggregateFunction == "SUM(salary)")
        #expect(try sum.aggregate(columns: Self.columns) == AggregateFunction(.sum, column: "salary"))
        #expect(try all.aggregate(columns: Self.columns) == nil)
        #expect(throws: YapDatabaseError.self) {
            try YapDatabaseQuery(aggregateFunction: "MEDIAN(salary)", string: "", parameters: []).aggregate(columns: Self.columns)
        }
    }

    @Test func parameterTypesConvertAsYapDatabaseBindsThem() throws {
        let date = Date(timeIntervalSinceReferenceDate: 1234.5)
        let optionalNone: Int? = nil
        let parameters: [Any] = [
            1, Int64(2), Int32(3), UInt(4), UInt64.max, 2.5, Float(0.5), true, false, "text", "sub"[...], Data([1, 2]),
            date, NSNull(), optionalNone as Any, Optional(7) as Any, NSNumber(value: 8), NSNumber(value: 9.5),
            NSString(string: "ns"), NSDate(timeIntervalSinceReferenceDate: 10), Decimal(string: "1.25")!, [1, "two", 3.0] as [Any],
        ]
        let expected: [QueryParameter] = [
            .value(.integer(1)), .value(.integer(2)), .value(.integer(3)), .value(.integer(4)), .value(.real(Double(UInt64.max))),
            .value(.real(2.5)), .value(.real(0.5)), .value(.integer(1)), .value(.integer(0)), .value(.text("text")),
            .value(.text("sub")), .value(.blob([1, 2])), .value(.real(1234.5)), .value(.null), .value(.null),
            .value(.integer(7)), .value(.integer(8)), .value(.real(9.5)), .value(.text("ns")), .value(.real(10)),
            .value(.real(1.25)), .list([.integer(1), .text("two"), .real(3.0)]),
        ]
        let converted = try YapDatabaseQuery.convert(parameters).get()
        #expect(converted.count == expected.count)
        for (index, pair) in zip(converted, expected).enumerated() {
            #expect(pair.0 == pair.1, "parameter \(index): \(parameters[index])")
        }
        // Double.nan binds NULL, as SQLite stores NaN.
        #expect(try YapDatabaseQuery.convert([Double.nan]).get() == [.value(.null)])
    }

    @Test func arrayParametersFillInLists() throws {
        let query = YapDatabaseQuery(string: "WHERE name = ? AND department IN (?)", parameters: ["manager", ["dev", "ops"]])
        let bound = try query.bound(columns: Self.columns)
        #expect(bound.whereClause == .and(
            .comparison(.column("name"), .equal, .literal(.text("manager"))),
            .inList(.column("department"), [.literal(.text("dev")), .literal(.text("ops"))], negated: false)))
        #expect((query.queryParameters[1] as? [Any])?.count == 2)
    }

    @Test func malformedQueriesThrowAtUseNeverTrap() {
        let query = YapDatabaseQuery(string: "WHERE name = 'abc", parameters: [])
        #expect(throws: YapDatabaseError.invalidQuery(offset: 13, reason: "unterminated string literal")) { try query.validate() }
        #expect(throws: YapDatabaseError.invalidQuery(offset: 13, reason: "unterminated string literal")) {
            try query.bound(columns: Self.columns)
        }
        #expect(throws: YapDatabaseError.invalidQuery(offset: 6, reason: "no column named \"height\"")) {
            try YapDatabaseQuery(string: "WHERE height > 2").bound(columns: Self.columns)
        }
        // Unknown columns pass validate(), which knows no index.
        #expect(throws: Never.self) { try YapDatabaseQuery(string: "WHERE height > 2").validate() }
        let tooFew = YapDatabaseQuery(string: "WHERE age > ? AND name = ?", parameters: [1])
        #expect(throws: YapDatabaseError.invalidQuery(offset: 25, reason: "the query has 2 parameter placeholder(s) but 1 parameter(s) were given")) {
            try tooFew.validate()
        }
        let unsupported = YapDatabaseQuery(string: "WHERE name = ?", parameters: [URL(fileURLWithPath: "/tmp")])
        #expect(throws: YapDatabaseError.invalidQuery(offset: 0, reason: "parameter 0 has unsupported type URL")) {
            try unsupported.bound(columns: Self.columns)
        }
        #expect(unsupported.queryParameters.isEmpty)
        let arrayOutsideIn = YapDatabaseQuery(string: "WHERE name = ?", parameters: [["a"]])
        #expect(throws: YapDatabaseError.invalidQuery(offset: 13, reason: "parameter 0 is an array, which is allowed only as an element of an IN list")) {
            try arrayOutsideIn.validate()
        }
        let error = YapDatabaseError.invalidQuery(offset: 3, reason: "why")
        #expect(error.description.contains("3") && error.description.contains("why"))
    }

    @Test func parseIsCachedPerColumnSet() throws {
        let query = YapDatabaseQuery(string: "WHERE AGE > ?", parameters: [1])
        let first = try query.parsed(columns: Self.columns)
        let second = try query.parsed(columns: Self.columns)
        #expect(first == second)
        #expect(first.whereClause == .comparison(.column("age"), .greater, .parameter(0)))
        // A new query object with the same text reuses the parse (YapDatabase code makes one per call).
        let text = "WHERE age > ? -- shared \(UInt64.random(in: 0...UInt64.max))"
        _ = try YapDatabaseQuery(string: text, parameters: [1]).bound(columns: Self.columns)
        #expect(SharedParseCache.parsed(text, columns: Self.columns) == SharedParseCache.parsed(text, columns: Self.columns))
        #expect(try YapDatabaseQuery(string: text, parameters: [5]).bound(columns: Self.columns).whereClause
                == .comparison(.column("age"), .greater, .literal(.integer(5))))
        #expect(SharedParseCache.count <= SharedParseCache.capacity)
        // Another index's columns resolve the name afresh.
        let other = try query.parsed(columns: ["Age": .text])
        #expect(other.whereClause == .comparison(.column("Age"), .greater, .parameter(0)))
    }

    @Test func typedFormEqualsTheStringForm() throws {
        let pairs: [(YapDatabaseQuery, YapDatabaseQuery)] = [
            (.where(.column("age") >= 18 && .column("name").like("a%")),
             YapDatabaseQuery(string: "WHERE age >= ? AND name LIKE ?", parameters: [18, "a%"])),
            (.where(.column("age") == 3 || !(.column("salary") < 2.5), orderBy: [.descending("age"), .ascending("name")], limit: 10, offset: 5),
             YapDatabaseQuery(string: "WHERE age = 3 OR NOT salary < 2.5 ORDER BY age DESC, name LIMIT 10 OFFSET 5")),
            (.where(.column("department").in(["dev", "ops"]) && .column("name").isNotNull && .column("age").between(1, and: 9)),
             YapDatabaseQuery(string: "WHERE department IN (?) AND name IS NOT NULL AND age BETWEEN 1 AND 9", parameters: [["dev", "ops"]])),
            (.where(.column("name").notLike("x_") && .column("age").notIn([]) && .column("salary").notBetween(0, and: 1.5)),
             YapDatabaseQuery(string: "WHERE name NOT LIKE 'x_' AND age NOT IN () AND salary NOT BETWEEN 0 AND 1.5")),
            (.where(.column("name").isNull || .column("name").is(nil) || .column("age").isNot(true) || .column("age") != .column("salary")),
             YapDatabaseQuery(string: "WHERE name ISNULL OR name IS NULL OR age IS NOT 1 OR age <> salary")),
            (.where(.column("born") > YapDatabaseQueryValue(Date(timeIntervalSinceReferenceDate: 100)) && .column("age") <= 4 && .column("age") != 5),
             YapDatabaseQuery(string: "WHERE born > ? AND age <= 4 AND age != 5", parameters: [Date(timeIntervalSinceReferenceDate: 100)])),
            (.all(orderBy: [YapDatabaseQueryColumn("age").descending]), YapDatabaseQuery(string: "ORDER BY age DESC")),
            (.all(), .queryMatchingAll()),
        ]
        for (typed, text) in pairs {
            #expect(try typed.bound(columns: Self.columns) == text.bound(columns: Self.columns), "\(typed.queryString) vs \(text.queryString)")
        }
        // The typed query's text is real SQL that reads back to the same tree.
        let typed = YapDatabaseQuery.where(.column("order") == "x" && .column("first name").like("a%"))
        #expect(typed.queryString == "WHERE `order` = 'x' AND `first name` LIKE 'a%'")
        #expect(throws: YapDatabaseError.invalidQuery(offset: 6, reason: "no column named \"order\"")) {
            try typed.bound(columns: Self.columns)
        }
        let aggregate = YapDatabaseQuery.aggregate("COUNT(*)", where: .column("age") > 1)
        #expect(aggregate.isAggregateQuery && aggregate.queryString == "WHERE age > 1")
    }
}
