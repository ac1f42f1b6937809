import Foundation
import Testing
@testable import YapDBQuery

/// Every element of the grammar parses to the expected tree.
@Suite struct GrammarTests {
    static let columns: [String: ColumnType] = ["age": .integer, "name": .text, "score": .real, "n": .numeric, "order": .text]

    func parse(_ text: String, columns: [String: ColumnType]? = GrammarTests.columns) throws -> ParsedQuery {
        try ParsedQuery(parsing: text, columns: columns)
    }

    func whereOf(_ text: String) throws -> QueryExpression? {
        try parse(text).whereClause
    }

    let age = QueryOperand.column("age")
    let name = QueryOperand.column("name")

    @Test func emptyQueryMatchesAll() throws {
        let parsed = try parse("")
        #expect(parsed.whereClause == nil && parsed.orderBy.isEmpty && parsed.limit == nil && parsed.offset == nil)
        #expect(try parse("   ;").whereClause == nil)
    }

    @Test(arguments: [("=", ComparisonOperator.equal), ("==", .equal), ("!=", .notEqual), ("<>", .notEqual),
                      ("<", .less), ("<=", .lessOrEqual), (">", .greater), (">=", .greaterOrEqual),
                      ("IS", .is), ("IS NOT", .isNot)])
    func comparisonOperators(_ spelling: String, _ op: ComparisonOperator) throws {
        #expect(try whereOf("WHERE age \(spelling) 5") == .comparison(age, op, .literal(.integer(5))))
    }

    @Test func nullTests() throws {
        #expect(try whereOf("WHERE age IS NULL") == .isNull(age, negated: false))
        #expect(try whereOf("WHERE age IS NOT NULL") == .isNull(age, negated: true))
        #expect(try whereOf("WHERE age ISNULL") == .isNull(age, negated: false))
        #expect(try whereOf("WHERE age NOTNULL") == .isNull(age, negated: true))
        #expect(try whereOf("WHERE age NOT NULL") == .isNull(age, negated: true))
        #expect(try whereOf("WHERE age IS TRUE") == .isBoolean(age, value: true, negated: false))
        #expect(try whereOf("WHERE age IS NOT FALSE") == .isBoolean(age, value: false, negated: true))
        #expect(try whereOf("WHERE age IS DISTINCT FROM 3") == .comparison(age, .isNot, .literal(.integer(3))))
        #expect(try whereOf("WHERE age IS NOT DISTINCT FROM ?") == .comparison(age, .is, .parameter(0)))
    }

    @Test func betweenInAndLike() throws {
        #expect(try whereOf("WHERE age BETWEEN 1 AND ?")
                == .between(age, low: .literal(.integer(1)), high: .parameter(0), negated: false))
        #expect(try whereOf("WHERE age NOT BETWEEN -1 AND +2.5")
                == .between(age, low: .literal(.integer(-1)), high: .literal(.real(2.5)), negated: true))
        #expect(try whereOf("WHERE age IN (?)") == .inList(age, [.parameter(0)], negated: false))
        #expect(try whereOf("WHERE age NOT IN (?, ?, 3)") == .inList(age, [.parameter(0), .parameter(1), .literal(.integer(3))], negated: true))
        #expect(try whereOf("WHERE age IN ()") == .inList(age, [], negated: false))
        #expect(try whereOf("WHERE name LIKE 'a%'") == .like(name, pattern: .literal(.text("a%")), escape: nil, negated: false))
        #expect(try whereOf("WHERE name NOT LIKE ? ESCAPE '!'")
                == .like(name, pattern: .parameter(0), escape: .literal(.text("!")), negated: true))
    }

    @Test func precedenceOfOrAndNot() throws {
        let a = QueryExpression.comparison(age, .equal, .literal(.integer(1)))
        let b = QueryExpression.comparison(age, .equal, .literal(.integer(2)))
        let c = QueryExpression.comparison(age, .equal, .literal(.integer(3)))
        #expect(try whereOf("WHERE age = 1 OR age = 2 AND age = 3") == .or(a, .and(b, c)))
        #expect(try whereOf("WHERE (age = 1 OR age = 2) AND age = 3") == .and(.or(a, b), c))
        #expect(try whereOf("WHERE NOT age = 1 AND age = 2") == .and(.not(a), b))
        #expect(try whereOf("WHERE NOT (age = 1 AND age = 2)") == .not(.and(a, b)))
        #expect(try whereOf("WHERE NOT NOT age = 1") == .not(.not(a)))
        // BETWEEN's AND binds before the logical AND.
        #expect(try whereOf("WHERE age BETWEEN 1 AND 2 AND age = 3")
                == .and(.between(age, low: .literal(.integer(1)), high: .literal(.integer(2)), negated: false), c))
        // A parenthesised operand is an operand (client code writes `(column) = ?`).
        #expect(try whereOf("WHERE (age) = 1") == a)
        #expect(try whereOf("WHERE ((age)) = (1)") == a)
        #expect(try whereOf("WHERE age") == .truth(age))
        #expect(try whereOf("WHERE NOT (age)") == .not(.truth(age)))
    }

    @Test func operandsMayStandOnEitherSide() throws {
        #expect(try whereOf("WHERE 5 < age") == .comparison(.literal(.integer(5)), .less, age))
        #expect(try whereOf("WHERE ? = name") == .comparison(.parameter(0), .equal, name))
        #expect(try whereOf("WHERE age = score") == .comparison(age, .equal, .column("score")))
    }

    @Test func quotedIdentifiersAndCase() throws {
        for spelling in ["age", "AGE", "Age", "\"age\"", "[age]", "`age`", "\"AGE\""] {
            #expect(try whereOf("WHERE \(spelling) = 1") == .comparison(age, .equal, .literal(.integer(1))), "\(spelling)")
        }
        // A keyword as a column name, quoted.
        #expect(try whereOf("WHERE \"order\" = 'x'") == .comparison(.column("order"), .equal, .literal(.text("x"))))
        #expect(try whereOf("WHERE [order] = 'x'") == .comparison(.column("order"), .equal, .literal(.text("x"))))
        // Doubled delimiters inside quotes.
        let odd: [String: ColumnType] = ["a\"b": .text, "c`d": .text]
        #expect(try parse("WHERE \"a\"\"b\" = 1 AND `c``d` = 2", columns: odd).referencedColumns == ["a\"b", "c`d"])
        // Without a column set, names stay as written.
        #expect(try parse("WHERE Age = 1", columns: nil).whereClause == .comparison(.column("Age"), .equal, .literal(.integer(1))))
    }

    @Test func doubleQuotedUnknownNameIsAString() throws {
        // SQLite's rule: a double-quoted identifier that names no column is a string literal.
        #expect(try whereOf("WHERE name = \"bob\"") == .comparison(name, .equal, .literal(.text("bob"))))
        #expect(throws: QueryError.self) { try whereOf("WHERE name = [bob]") }
    }

    @Test func keywordsIgnoreCase() throws {
        let lower = try parse("where age between 1 and 2 or name not like 'x' order by age desc limit 3 offset 1")
        let upper = try parse("WHERE age BETWEEN 1 AND 2 OR name NOT LIKE 'x' ORDER BY age DESC LIMIT 3 OFFSET 1")
        #expect(lower == upper)
        #expect(try parse("wHeRe age iS nUlL") == (try parse("WHERE age IS NULL")))
    }

    @Test func literals() throws {
        func literal(_ text: String) throws -> SQLValue? {
            guard case let .comparison(_, _, .literal(value))? = try whereOf("WHERE age = \(text)") else { return nil }
            return value
        }
        #expect(try literal("42") == .integer(42))
        #expect(try literal("-42") == .integer(-42))
        #expect(try literal("+7") == .integer(7))
        #expect(try literal("0x1F") == .integer(31))
        #expect(try literal("9223372036854775807") == .integer(.max))
        #expect(try literal("-9223372036854775808") == .integer(.min))
        #expect(try literal("9223372036854775808") == .real(9223372036854775808.0))
        #expect(try literal("2.5") == .real(2.5))
        #expect(try literal(".5") == .real(0.5))
        #expect(try literal("5.") == .real(5.0))
        #expect(try literal("1e3") == .real(1000))
        #expect(try literal("1.5E-2") == .real(0.015))
        #expect(try literal("'it''s'") == .text("it's"))
        #expect(try literal("''") == .text(""))
        #expect(try literal("'café ☕'") == .text("café ☕"))
        #expect(try literal("X'00fF'") == .blob([0, 255]))
        #expect(try literal("x''") == .blob([]))
        #expect(try literal("NULL") == .null)
        #expect(try literal("null") == .null)
        #expect(try literal("TRUE") == .integer(1))
        #expect(try literal("false") == .integer(0))
    }

    @Test func commentsAndWhitespace() throws {
        let parsed = try parse("WHERE\n\tage = 1 -- a comment\n /* another */ AND name = 'x';")
        #expect(parsed.whereClause == .and(.comparison(age, .equal, .literal(.integer(1))), .comparison(name, .equal, .literal(.text("x")))))
    }

    @Test func orderByTerms() throws {
        #expect(try parse("ORDER BY age").orderBy == [OrderTerm(column: "age")])
        #expect(try parse("ORDER BY age ASC, name DESC, score").orderBy
                == [OrderTerm(column: "age"), OrderTerm(column: "name", descending: true), OrderTerm(column: "score")])
        #expect(try parse("order by [AGE] desc").orderBy == [OrderTerm(column: "age", descending: true)])
    }

    @Test func limitAndOffset() throws {
        let plain = try parse("LIMIT 10")
        #expect(plain.limit == .literal(.integer(10)) && plain.offset == nil)
        let both = try parse("LIMIT 10 OFFSET 5")
        #expect(both.limit == .literal(.integer(10)) && both.offset == .literal(.integer(5)))
        // SQLite's `LIMIT offset, count`.
        let comma = try parse("LIMIT 5, 10")
        #expect(comma.limit == .literal(.integer(10)) && comma.offset == .literal(.integer(5)))
        let parameters = try parse("WHERE age > ? LIMIT ? OFFSET ?")
        #expect(parameters.parameterCount == 3)
        #expect(parameters.limit == .parameter(1) && parameters.offset == .parameter(2))
        let bound = try parameters.bind([.value(.integer(1)), .value(.integer(4)), .value(.text("2"))])
        #expect(bound.limit == 4 && bound.offset == 2)
        // A negative LIMIT means none and a negative OFFSET counts as 0, as in SQLite.
        let negative = try parse("LIMIT -1 OFFSET -3").bind([])
        #expect(negative.limit == nil && negative.offset == 0)
    }

    @Test func fullQueryAndReferencedColumns() throws {
        let parsed = try parse("WHERE name LIKE ? AND (score > 1.5 OR age IN (?, 3)) ORDER BY n DESC, age LIMIT 10")
        #expect(parsed.parameterCount == 2)
        #expect(parsed.referencedColumns == ["name", "score", "age", "n"])
        #expect(parsed.listParameters == [1])
        #expect(parsed.orderBy == [OrderTerm(column: "n", descending: true), OrderTerm(column: "age")])
    }

    @Test func renderedTextParsesBackToTheSameQuery() throws {
        let texts = [
            "WHERE name LIKE ? ESCAPE '\\' AND (score > 1.5 OR age NOT IN (?, 3, 'x', X'01', NULL)) ORDER BY n DESC, age LIMIT 10 OFFSET ?",
            "WHERE NOT age BETWEEN -9223372036854775808 AND 9e999 OR age IS NOT TRUE OR name IS NOT 'q' OR \"order\" ISNULL",
            "WHERE age AND NOT score",
            "ORDER BY \"order\"",
            "LIMIT 3, 4",
        ]
        for text in texts {
            let parsed = try parse(text)
            #expect(try parse(parsed.sql) == parsed, "\(text) → \(parsed.sql)")
        }
    }

    @Test func parsedQueryIsReusableWithNewParameters() throws {
        let parsed = try parse("WHERE age >= ? AND name IN (?)")
        let evaluator = QueryEvaluator(columns: Self.columns)
        let rows: [QueryRow] = [(1, ["age": .integer(30), "name": .text("a")]), (2, ["age": .integer(10), "name": .text("b")])]
        let first = try parsed.bind([.value(.integer(18)), .list([.text("a"), .text("b")])])
        let second = try parsed.bind([.value(.integer(0)), .list([.text("b")])])
        let third = try parsed.bind([.value(.integer(0)), .value(.text("a"))])
        #expect(evaluator.run(first, over: rows) == [1])
        #expect(evaluator.run(second, over: rows) == [2])
        #expect(evaluator.run(third, over: rows) == [1])
        // Binding expanded the list into literals and left no parameter behind.
        #expect(first.whereClause == .and(.comparison(age, .greaterOrEqual, .literal(.integer(18))),
                                          .inList(name, [.literal(.text("a")), .literal(.text("b"))], negated: false)))
    }
}

/// Deep expressions: accepted up to SQLite's depth limit, an error beyond it, and evaluated
/// without running out of a secondary thread's stack.
@Suite struct DepthTests {
    static let columns: [String: ColumnType] = ["a": .integer]

    @Test func chainsAndNestingAreBounded() throws {
        let chain = "WHERE " + (0..<QueryParser.maximumDepth).map { "a = \($0)" }.joined(separator: " OR ")
        #expect(try ParsedQuery(parsing: chain, columns: Self.columns).parameterCount == 0)
        let tooLong = chain + " OR a = -1"
        #expect(throws: QueryError.self) { try ParsedQuery(parsing: tooLong, columns: Self.columns) }
        let deepParentheses = "WHERE " + String(repeating: "(", count: 100_000) + "a = 1" + String(repeating: ")", count: 100_000)
        #expect((try? ParsedQuery(parsing: deepParentheses, columns: Self.columns)) == nil)
        let nested = "WHERE " + String(repeating: "NOT (", count: QueryParser.maximumNesting / 2) + "a = 1"
            + String(repeating: ")", count: QueryParser.maximumNesting / 2)
        #expect(try ParsedQuery(parsing: nested, columns: Self.columns).whereClause != nil)
        let deepNot = "WHERE " + String(repeating: "NOT ", count: 100_000) + "a = 1"
        #expect((try? ParsedQuery(parsing: deepNot, columns: Self.columns)) == nil)
        let deepOperand = "WHERE a = " + String(repeating: "(", count: 100_000) + "1" + String(repeating: ")", count: 100_000)
        #expect((try? ParsedQuery(parsing: deepOperand, columns: Self.columns)) == nil)
    }

    @Test func theDeepestChainRunsOnASmallStack() async throws {
        let text = "WHERE " + (0..<QueryParser.maximumDepth).map { "a = \($0)" }.joined(separator: " OR ")
        let parsed = try ParsedQuery(parsing: text, columns: Self.columns)
        // A thread with 512 KiB of stack, as Dispatch's worker threads have on Apple platforms.
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<[Int64], Never>) in
            let thread = Thread {
                let bound = try! parsed.bind([])
                let rows: [QueryRow] = [(1, ["a": .integer(999)]), (2, ["a": .integer(5_000)])]
                var ids = QueryEvaluator(columns: Self.columns).run(bound, over: rows)
                // Rendering, re-parsing, hashing and the planner's constraint walk the tree too.
                if (try? ParsedQuery(parsing: bound.sql, columns: Self.columns)) == nil { ids.append(-1) }
                if bound.whereClause?.constraint(on: "a", type: .integer)?.intervals.count != QueryParser.maximumDepth { ids.append(-2) }
                _ = bound.hashValue
                if bound != bound { ids.append(-3) }
                // The deepest nesting accepted, parsed and run on this stack too.
                let nested = "WHERE " + String(repeating: "NOT (", count: QueryParser.maximumNesting / 2) + "a = 1"
                    + String(repeating: ")", count: QueryParser.maximumNesting / 2)
                if let deep = try? ParsedQuery(parsing: nested, columns: Self.columns).bind([]) {
                    ids += QueryEvaluator(columns: Self.columns).run(deep, over: [(7, ["a": .integer(1)])]).map { $0 + 100 }
                    if (try? ParsedQuery(parsing: deep.sql, columns: Self.columns).bind([])) != deep { ids.append(-4) }
                } else {
                    ids.append(-5)
                }
                continuation.resume(returning: ids)
            }
            thread.stackSize = 512 * 1024
            thread.start()
        }
        #expect(result == [1, 107])
    }
}
