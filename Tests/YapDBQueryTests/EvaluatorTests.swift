import Testing
@testable import YapDBQuery

/// SQLite's value rules, worked out from https://sqlite.org/datatype3.html and
/// https://sqlite.org/lang_expr.html, checked one by one.
@Suite struct EvaluatorTests {
    static let columns: [String: ColumnType] = ["a": .text, "b": .numeric, "i": .integer, "r": .real]
    let evaluator = QueryEvaluator(columns: EvaluatorTests.columns)

    /// The three-valued truth of `text` over `row`.
    func truth(_ text: String, _ row: [String: SQLValue] = [:], _ parameters: [QueryParameter] = []) throws -> Bool? {
        let parsed = try ParsedQuery(parsing: "WHERE " + text, columns: Self.columns)
        return evaluator.truth(of: parsed.whereClause!, parameters: parameters) { row[$0] ?? .null }
    }

    @Test func affinityOnStore() {
        #expect(SQLValue.text("12").applying(.integer) == .integer(12))
        #expect(SQLValue.text(" 12 ").applying(.integer) == .integer(12))
        #expect(SQLValue.text("3.0e+5").applying(.numeric) == .integer(300000))
        #expect(SQLValue.text("1.5").applying(.integer) == .real(1.5))
        #expect(SQLValue.text("12abc").applying(.integer) == .text("12abc"))
        #expect(SQLValue.text("0x10").applying(.numeric) == .text("0x10"))
        #expect(SQLValue.real(3.0).applying(.integer) == .integer(3))
        #expect(SQLValue.real(3.0).applying(.numeric) == .integer(3))
        #expect(SQLValue.real(-0.0).applying(.integer) == .integer(0))
        #expect(SQLValue.real(9.223372036854775807e18).applying(.integer) == .real(9.223372036854775807e18))
        #expect(SQLValue.integer(3).applying(.real) == .real(3.0))
        #expect(SQLValue.text("12").applying(.real) == .real(12.0))
        #expect(SQLValue.integer(12).applying(.text) == .text("12"))
        #expect(SQLValue.real(3.0).applying(.text) == .text("3.0"))
        #expect(SQLValue.real(1e20).applying(.text) == .text("1.0e+20"))
        #expect(SQLValue.real(1.0 / 3.0).applying(.text) == .text("0.333333333333333"))
        #expect(SQLValue.real(.infinity).applying(.text) == .text("Inf"))
        for type in ColumnType.allCases {
            #expect(SQLValue.null.applying(type) == .null)
            #expect(SQLValue.blob([1, 2]).applying(type) == .blob([1, 2]))
        }
        #expect(SQLValue.real(checking: .nan) == .null)
    }

    /// The example of §4.3 of SQLite's datatype page: t1(a TEXT, b NUMERIC) holding '500', '500'.
    @Test func comparisonAffinityExampleFromTheSQLiteDocs() throws {
        let row: [String: SQLValue] = ["a": .text("500"), "b": .text("500")]
        #expect(try [truth("a < 40", row), truth("a < 60", row), truth("a < 600", row)] == [false, true, true])
        #expect(try [truth("a < '40'", row), truth("a < '60'", row), truth("a < '600'", row)] == [false, true, true])
        #expect(try [truth("b < 40", row), truth("b < 60", row), truth("b < 600", row)] == [false, false, true])
        #expect(try [truth("b < '40'", row), truth("b < '60'", row), truth("b < '600'", row)] == [false, false, true])
        // Two literals have no affinity: a number is always less than a text.
        #expect(try truth("500 < '40'") == true)
        // A TEXT column against a NUMERIC one: numeric affinity goes to the TEXT side.
        #expect(try truth("a = b", row) == true)
        #expect(try truth("a = i", ["a": .text("7"), "i": .integer(7)]) == true)
    }

    @Test func parametersHaveNoAffinity() throws {
        #expect(try truth("i = ?", ["i": .integer(12)], [.value(.text("12"))]) == true)
        #expect(try truth("a = ?", ["a": .text("12")], [.value(.integer(12))]) == true)
        #expect(try truth("? = ?", [:], [.value(.integer(12)), .value(.text("12"))]) == false)
    }

    @Test func orderOfStorageClasses() {
        let ascending: [SQLValue] = [.null, .real(-.infinity), .real(-1e300), .integer(.min), .integer(-1), .real(-0.5), .integer(0), .real(0.5),
                                     .integer(1), .real(1e300), .real(.infinity), .text(""), .text("A"), .text("Z"), .text("a"),
                                     .text("é"), .blob([]), .blob([0]), .blob([0, 0]), .blob([1])]
        for (index, value) in ascending.enumerated() {
            for (other, otherValue) in ascending.enumerated() {
                let expected = index < other ? -1 : (index == other ? 0 : 1)
                #expect(SQLValue.compare(value, otherValue) == expected, "\(value) vs \(otherValue)")
            }
        }
        // Integers against reals exactly: 2^53 + 1 is not 2^53 as a real.
        #expect(SQLValue.compare(.integer(9_007_199_254_740_993), .real(9_007_199_254_740_992.0)) == 1)
        #expect(SQLValue.compare(.integer(3), .real(3.0)) == 0)
        #expect(SQLValue.compare(.integer(.max), .real(9.223372036854775807e18)) == -1)
        #expect(SQLValue.compare(.real(-0.0), .integer(0)) == 0)
        // Texts by bytes, not by Unicode equivalence: precomposed é (C3 A9) sorts after e + U+0301 (65 CC 81).
        #expect(SQLValue.compare(.text("\u{E9}"), .text("e\u{301}")) == 1)
        #expect(SQLValue.text("\u{E9}") != SQLValue.text("e\u{301}"))
    }

    @Test func threeValuedLogic() throws {
        let row: [String: SQLValue] = ["i": .null, "b": .integer(1)]
        #expect(try truth("i = 1", row) == nil)
        #expect(try truth("i != 1", row) == nil)
        #expect(try truth("NOT i = 1", row) == nil)
        #expect(try truth("i = 1 AND b = 1", row) == nil)
        #expect(try truth("i = 1 AND b = 2", row) == false)
        #expect(try truth("i = 1 OR b = 1", row) == true)
        #expect(try truth("i = 1 OR b = 2", row) == nil)
        #expect(try truth("i IS NULL", row) == true)
        #expect(try truth("i IS 1", row) == false)
        #expect(try truth("i IS NOT 1", row) == true)
        #expect(try truth("i IS NULL AND b IS NOT NULL", row) == true)
        #expect(try truth("NULL = NULL") == nil)
        #expect(try truth("NULL IS NULL") == true)
        #expect(try truth("i BETWEEN 0 AND 2", row) == nil)
        #expect(try truth("b BETWEEN NULL AND 0", row) == false)  // 1 <= 0 is false, so NULL AND false
        #expect(try truth("b BETWEEN 0 AND NULL", row) == nil)
        #expect(try truth("i IS TRUE", row) == false)
        #expect(try truth("i IS NOT TRUE", row) == true)
        #expect(try truth("i IS FALSE", row) == false)
        #expect(try truth("i", row) == nil)
        // Only a true WHERE selects the row.
        #expect(!evaluator.evaluate(where: .not(.comparison(.column("i"), .equal, .literal(.integer(1)))), row: row))
    }

    @Test func inLists() throws {
        let row: [String: SQLValue] = ["i": .integer(2), "a": .text("2")]
        #expect(try truth("i IN (1, 2, 3)", row) == true)
        #expect(try truth("i IN (1, 3)", row) == false)
        #expect(try truth("i IN (1, NULL)", row) == nil)
        #expect(try truth("i IN (2, NULL)", row) == true)
        #expect(try truth("i NOT IN (1, NULL)", row) == nil)
        #expect(try truth("i IN ()", row) == false)
        #expect(try truth("i NOT IN ()", row) == true)
        // The column's affinity applies to the list's elements.
        #expect(try truth("i IN ('2')", row) == true)
        #expect(try truth("a IN (2)", row) == true)
        // An array parameter joins the list; an empty array binds NULL, as in YapDatabase.
        #expect(try truth("i IN (?)", row, [.list([.integer(5), .integer(2)])]) == true)
        #expect(try truth("i IN (1, ?, 3)", row, [.list([.text("2")])]) == true)
        #expect(try truth("i IN (?)", row, [.list([])]) == nil)
        #expect(try truth("i NOT IN (?)", row, [.list([])]) == nil)
        let parsed = try ParsedQuery(parsing: "WHERE i IN (?)", columns: Self.columns)
        #expect(try parsed.bind([.list([])]).whereClause == .inList(.column("i"), [.literal(.null)], negated: false))
        #expect(try parsed.bind([.value(.integer(2))]).whereClause == .inList(.column("i"), [.literal(.integer(2))], negated: false))
    }

    @Test func like() throws {
        #expect(LikePattern.matches("abc", pattern: "a%"))
        #expect(LikePattern.matches("ABC", pattern: "a%"))
        #expect(LikePattern.matches("abc", pattern: "A_C"))
        #expect(LikePattern.matches("abc", pattern: "%"))
        #expect(LikePattern.matches("", pattern: "%"))
        #expect(!LikePattern.matches("", pattern: "_"))
        #expect(LikePattern.matches("é", pattern: "_"))  // one character, two bytes
        #expect(!LikePattern.matches("é", pattern: "É"))  // only ASCII letters fold
        #expect(LikePattern.matches("a%c", pattern: "a\\%c", escape: "\\"))
        #expect(!LikePattern.matches("abc", pattern: "a\\%c", escape: "\\"))
        #expect(LikePattern.matches("a_c", pattern: "a!_c", escape: "!"))
        #expect(LikePattern.matches("xxabyyab", pattern: "%ab"))
        #expect(!LikePattern.matches("abc", pattern: "ab"))
        #expect(LikePattern.matches("a\nb", pattern: "a_b"))
        // Numbers are matched as their text; NULL gives NULL; a blob never matches.
        #expect(try truth("i LIKE '1%'", ["i": .integer(12)]) == true)
        #expect(try truth("r LIKE '12.0'", ["r": .integer(12)]) == true)
        #expect(try truth("a LIKE NULL", ["a": .text("x")]) == nil)
        #expect(try truth("a LIKE 'A'", ["a": .blob([0x41])]) == false)
        #expect(try truth("a NOT LIKE 'A'", ["a": .blob([0x41])]) == true)
        #expect(try truth("a LIKE 'x' ESCAPE 'ab'", ["a": .text("x")]) == nil)
        // The literal prefix a planner can turn into a range.
        #expect(LikePattern.literalPrefix(of: "abc%") == ("abc", true))
        #expect(LikePattern.literalPrefix(of: "ab_c%") == ("ab", false))
        #expect(LikePattern.literalPrefix(of: "abc") == ("abc", true))
        #expect(LikePattern.literalPrefix(of: "%abc") == ("", false))
    }

    @Test func truthOfBareOperands() throws {
        #expect(try truth("i", ["i": .integer(0)]) == false)
        #expect(try truth("i", ["i": .integer(-3)]) == true)
        #expect(try truth("r", ["r": .real(0.25)]) == true)
        #expect(try truth("a", ["a": .text("12abc")]) == true)
        #expect(try truth("a", ["a": .text("abc")]) == false)
        #expect(try truth("a IS FALSE", ["a": .text("abc")]) == true)
    }

    @Test func runOrdersLimitsAndBreaksTiesByRowID() throws {
        let rows: [QueryRow] = [
            (5, ["i": .integer(2), "a": .text("x")]),
            (1, ["i": .null, "a": .text("y")]),
            (3, ["i": .integer(2), "a": .text("z")]),
            (2, ["i": .text("1"), "a": .null]),
            (4, ["a": .text("w")]),
        ]
        func run(_ text: String) throws -> [Int64] {
            evaluator.run(try ParsedQuery(parsing: text, columns: Self.columns).bind([]), over: rows)
        }
        #expect(try run("") == [1, 2, 3, 4, 5])
        #expect(try run("ORDER BY i") == [1, 4, 2, 3, 5])
        #expect(try run("ORDER BY i DESC") == [3, 5, 2, 1, 4])
        #expect(try run("ORDER BY i DESC, a DESC") == [3, 5, 2, 1, 4])
        #expect(try run("ORDER BY i, a DESC") == [1, 4, 2, 3, 5])
        #expect(try run("WHERE i >= 1 ORDER BY a") == [2, 5, 3])
        #expect(try run("ORDER BY i LIMIT 2") == [1, 4])
        #expect(try run("ORDER BY i LIMIT 2 OFFSET 2") == [2, 3])
        #expect(try run("ORDER BY i LIMIT 10 OFFSET 4") == [5])
        #expect(try run("LIMIT 0") == [])
        #expect(try run("LIMIT -1 OFFSET 3") == [4, 5])
    }

    @Test func aggregatesByHand() throws {
        let rows: [QueryRow] = [
            (1, ["i": .integer(3), "a": .text("b")]),
            (2, ["i": .text("4"), "a": .text("a")]),
            (3, ["i": .null, "a": .text("c")]),
            (4, ["i": .integer(3)]),
        ]
        func aggregate(_ text: String, _ query: BoundQuery = BoundQuery(whereClause: nil)) throws -> SQLValue? {
            evaluator.aggregate(try AggregateFunction(parsing: text, columns: Self.columns), of: query, over: rows)
        }
        #expect(try aggregate("COUNT(*)") == .integer(4))
        #expect(try aggregate("COUNT(i)") == .integer(3))
        #expect(try aggregate("COUNT(DISTINCT i)") == .integer(2))
        #expect(try aggregate("SUM(i)") == .integer(10))
        #expect(try aggregate("TOTAL(i)") == .real(10))
        #expect(try aggregate("AVG(i)") == .real(10.0 / 3.0))
        #expect(try aggregate("MIN(i)") == .integer(3))
        #expect(try aggregate("MAX(a)") == .text("c"))
        let none = BoundQuery(whereClause: .comparison(.column("i"), .greater, .literal(.integer(100))))
        #expect(try aggregate("SUM(i)", none) == .null)
        #expect(try aggregate("TOTAL(i)", none) == .real(0))
        #expect(try aggregate("AVG(i)", none) == .null)
        #expect(try aggregate("MIN(i)", none) == .null)
        #expect(try aggregate("COUNT(*)", none) == .integer(0))
        // As YapDatabase's `SELECT COUNT(*) FROM table LIMIT 2`: LIMIT and OFFSET apply to the
        // one result row, not to the rows counted.
        #expect(try aggregate("COUNT(*)", BoundQuery(whereClause: nil, limit: 2)) == .integer(4))
        #expect(try aggregate("MIN(i)", BoundQuery(whereClause: nil, orderBy: [OrderTerm(column: "i", descending: true)], limit: 1)) == .integer(3))
        #expect(try aggregate("COUNT(*)", BoundQuery(whereClause: nil, limit: 0)) == .null)
        #expect(try aggregate("COUNT(*)", BoundQuery(whereClause: nil, limit: 5, offset: 1)) == .null)
        // An integer SUM that overflows is an error (nil), as in SQLite.
        let huge: [QueryRow] = [(1, ["i": .integer(.max)]), (2, ["i": .integer(1)])]
        #expect(evaluator.aggregate(AggregateFunction(.sum, column: "i"), of: BoundQuery(whereClause: nil), over: huge) == nil)
        #expect(evaluator.aggregate(AggregateFunction(.total, column: "i"), of: BoundQuery(whereClause: nil), over: huge) == .real(9.223372036854775808e18))
    }

    @Test func boundQueryRendersAsSQL() throws {
        let bound = try ParsedQuery(parsing: "WHERE i IN (?) AND a LIKE ? ORDER BY i DESC LIMIT ? OFFSET 2", columns: Self.columns)
            .bind([.list([.integer(1), .integer(2)]), .value(.text("x%")), .value(.integer(5))])
        #expect(bound.sql == "WHERE i IN (1, 2) AND a LIKE 'x%' ORDER BY i DESC LIMIT 5 OFFSET 2")
        #expect(bound.referencedColumns == ["i", "a"])
    }
}

/// LIKE on hostile patterns: no recursion, bounded work.
@Suite struct LikePatternStressTests {
    @Test func manyPercentsNeitherRecurseNorExplode() {
        let text = String(repeating: "a", count: 2_000)
        let pattern = String(repeating: "%a", count: 10_000) + "%b"
        #expect(!LikePattern.matches(text, pattern: pattern))
        #expect(LikePattern.matches(text + "b", pattern: String(repeating: "%a", count: 1_000) + "%b"))
        #expect(LikePattern.matches(text, pattern: String(repeating: "%", count: 50_000)))
        #expect(!LikePattern.matches(String(repeating: "ab", count: 500), pattern: "%b%b%b_"))
        #expect(LikePattern.matches(String(repeating: "ab", count: 500), pattern: "%b%b%b"))
        #expect(!LikePattern.matches("abc", pattern: "abc\\", escape: "\\"))
        #expect(LikePattern.matches("a%", pattern: "a%%", escape: "%"))
        #expect(!LikePattern.matches("ab", pattern: "a%%", escape: "%"))
    }
}

/// Numeric prefixes of texts (SQLite's CAST to NUMERIC), as truth tests and sums read them.
@Suite struct NumericPrefixTests {
    @Test(arguments: [("12abc", SQLValue.integer(12)), (" 1.5e3x", .real(1500)), ("abc", .integer(0)), ("", .integer(0)),
                      ("-7", .integer(-7)), ("+.5.5", .real(0.5)), ("1e", .integer(1)), ("1e+", .integer(1)), (".", .integer(0)),
                      ("5.", .real(5)), ("  -", .integer(0)), ("99999999999999999999", .real(1e20)), ("0x10", .integer(0))])
    func prefixes(_ text: String, _ expected: SQLValue) {
        #expect(SQLValue.numericPrefix(of: text) == expected)
    }

    @Test func aLongTextIsReadInOnePass() {
        let long = "12" + String(repeating: "x", count: 1_000_000)
        #expect(SQLValue.text(long).numericValue == .integer(12))
    }
}

/// A NaN built directly (not through `real(checking:)`) never traps a comparison.
@Suite struct NaNTests {
    @Test func nanComparesWithoutTrapping() {
        #expect(SQLValue.compare(.integer(1), .real(.nan)) == 1)
        #expect(SQLValue.compare(.real(.nan), .integer(1)) == -1)
        // Affinity leaves it a real (no integer conversion of NaN).
        guard case let .real(value) = SQLValue.real(.nan).applying(.integer) else {
            Issue.record("NaN did not stay a real")
            return
        }
        #expect(value.isNaN)
        #expect(!SQLValue.text(fromReal: .nan).isEmpty)
    }
}
