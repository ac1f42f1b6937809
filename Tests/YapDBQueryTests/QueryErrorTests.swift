import TestSupport
import Testing
@testable import YapDBQuery

/// Every error shape: the reason and the character offset, never a trap.
@Suite struct QueryErrorTests {
    static let columns: [String: ColumnType] = ["age": .integer, "name": .text]

    func error(_ text: String, columns: [String: ColumnType]? = QueryErrorTests.columns) -> QueryError? {
        do {
            _ = try ParsedQuery(parsing: text, columns: columns)
            return nil
        } catch {
            return error
        }
    }

    @Test func unexpectedTokens() {
        #expect(error("WHERE age = = 1") == QueryError(offset: 12, reason: .unexpectedToken("=", expected: "a column, a value or ?")))
        #expect(error("WHERE age = 1 name") == QueryError(offset: 14, reason: .unexpectedToken("name", expected: "the end of the query")))
        #expect(error("SELECT * FROM t") == QueryError(offset: 0, reason: .unexpectedToken("SELECT", expected: "WHERE, ORDER BY or LIMIT")))
        #expect(error("WHERE (age = 1") == QueryError(offset: 14, reason: .unexpectedEnd(expected: "\")\"")))
        #expect(error("WHERE age BETWEEN 1 OR 2") == QueryError(offset: 20, reason: .unexpectedToken("OR", expected: "AND")))
        #expect(error("WHERE age IN 1") == QueryError(offset: 13, reason: .unexpectedToken("1", expected: "\"(\"")))
        #expect(error("WHERE age NOT 5") == QueryError(offset: 14, reason: .unexpectedToken("5", expected: "NULL, BETWEEN, IN or LIKE after NOT")))
        #expect(error("ORDER age") == QueryError(offset: 6, reason: .unexpectedToken("age", expected: "BY")))
        #expect(error("ORDER BY 1") == QueryError(offset: 9, reason: .unexpectedToken("1", expected: "a column name")))
        #expect(error("WHERE") == QueryError(offset: 5, reason: .unexpectedEnd(expected: "a column, a value or ?")))
        #expect(error("WHERE age = 1 AND") == QueryError(offset: 17, reason: .unexpectedEnd(expected: "a column, a value or ?")))
        #expect(error("LIMIT") == QueryError(offset: 5, reason: .unexpectedEnd(expected: "an integer")))
    }

    @Test func lexicalErrors() {
        #expect(error("WHERE name = 'abc") == QueryError(offset: 13, reason: .unterminatedString))
        #expect(error("WHERE name = 'it''s") == QueryError(offset: 13, reason: .unterminatedString))
        #expect(error("WHERE \"age = 1") == QueryError(offset: 6, reason: .unterminatedIdentifier))
        #expect(error("WHERE [age = 1") == QueryError(offset: 6, reason: .unterminatedIdentifier))
        #expect(error("WHERE `age = 1") == QueryError(offset: 6, reason: .unterminatedIdentifier))
        #expect(error("WHERE age = 12abc") == QueryError(offset: 12, reason: .malformedNumber("12abc")))
        #expect(error("WHERE age = 1e") == QueryError(offset: 12, reason: .malformedNumber("1e")))
        #expect(error("WHERE age = 0x") == QueryError(offset: 12, reason: .malformedNumber("0x")))
        #expect(error("WHERE age = X'0'") == QueryError(offset: 12, reason: .malformedNumber("X'0'")))
        #expect(error("WHERE age = X'zz'") == QueryError(offset: 12, reason: .malformedNumber("X'zz'")))
        #expect(error("WHERE age # 1") == QueryError(offset: 10, reason: .unexpectedCharacter("#")))
    }

    @Test func offsetsCountCharactersNotBytes() {
        // "é" is two UTF-8 bytes but one character.
        #expect(error("WHERE name = 'é' AND #") == QueryError(offset: 21, reason: .unexpectedCharacter("#")))
    }

    @Test func unknownColumns() {
        #expect(error("WHERE height > 2") == QueryError(offset: 6, reason: .unknownColumn("height")))
        #expect(error("WHERE age > 2 ORDER BY [height]") == QueryError(offset: 23, reason: .unknownColumn("height")))
        #expect(error("WHERE `height` IS NULL") == QueryError(offset: 6, reason: .unknownColumn("height")))
        // Without a column set, any name parses; checkColumns finds the unknown one later.
        let parsed = try? ParsedQuery(parsing: "WHERE height > 2")
        #expect(parsed != nil)
        #expect(throws: QueryError(offset: 16, reason: .unknownColumn("height"))) { try parsed?.checkColumns(Self.columns) }
    }

    @Test func unsupportedConstructs() {
        #expect(error("WHERE age = ?1")?.reason == .unsupported("a numbered parameter (?NNN)"))
        #expect(error("WHERE age = :age")?.reason == .unsupported("a named parameter (:name)"))
        #expect(error("WHERE lower(name) = 'a'") == QueryError(offset: 6, reason: .unsupported("the function lower()")))
        #expect(error("WHERE lower(name) = 'a'", columns: nil) == QueryError(offset: 6, reason: .unsupported("the function lower()")))
        #expect(error("WHERE age + 1 = 2") == QueryError(offset: 10, reason: .unsupported("the operator +")))
        #expect(error("WHERE name GLOB 'a*'") == QueryError(offset: 11, reason: .unsupported("GLOB")))
        #expect(error("WHERE age IN (SELECT 1)") == QueryError(offset: 14, reason: .unsupported("a subquery")))
        let collate = QueryError.Reason.unsupported("COLLATE (comparisons use SQLite's BINARY collation)")
        #expect(error("ORDER BY age COLLATE NOCASE") == QueryError(offset: 13, reason: collate))
        #expect(error("WHERE name = ? COLLATE NOCASE") == QueryError(offset: 15, reason: collate))
        #expect(error("WHERE name COLLATE NOCASE = ?") == QueryError(offset: 11, reason: collate))
        #expect(error("WHERE age IS DISTINCT 3") == QueryError(offset: 22, reason: .unexpectedToken("3", expected: "FROM")))
        #expect(error("LIMIT 2.5") == QueryError(offset: 6, reason: .limitNotInteger))
    }

    @Test func parameterErrors() throws {
        let parsed = try ParsedQuery(parsing: "WHERE age > ? AND name = ?", columns: Self.columns)
        #expect(throws: QueryError(offset: 25, reason: .wrongParameterCount(expected: 2, given: 1))) {
            try parsed.bind([.value(.integer(1))])
        }
        #expect(throws: QueryError(offset: 25, reason: .wrongParameterCount(expected: 2, given: 3))) {
            try parsed.bind([.value(.null), .value(.null), .value(.null)])
        }
        #expect(throws: QueryError(offset: 12, reason: .listParameterOutsideIn(index: 0))) {
            try parsed.bind([.list([.integer(1)]), .value(.text("a"))])
        }
        let limited = try ParsedQuery(parsing: "LIMIT ?")
        #expect(throws: QueryError(offset: 6, reason: .limitNotInteger)) { try limited.bind([.value(.text("ten"))]) }
        #expect(throws: QueryError(offset: 6, reason: .limitNotInteger)) { try limited.bind([.value(.real(2.5))]) }
        #expect(try limited.bind([.value(.real(2.0))]).limit == 2)
    }

    /// A `LIKE` pattern longer than SQLite's 50,000-byte limit is refused when bound, from a
    /// literal or a parameter (matching costs text × pattern per row); at the limit it binds.
    /// A longer pattern met at run time (from a column) matches nothing, without the work.
    @Test func likePatternsOverTheLimitAreRefused() throws {
        let limit = LikePattern.maximumPatternBytes
        let parameter = try ParsedQuery(parsing: "WHERE name LIKE ?", columns: Self.columns)
        let long = String(repeating: "%a", count: limit / 2) + "b"
        #expect(throws: QueryError(offset: 17, reason: .likePatternTooLong(bytes: limit + 1))) { try parameter.bind([.value(.text(long))]) }
        _ = try parameter.bind([.value(.text(String(long.dropLast())))])
        let literal = try ParsedQuery(parsing: "WHERE NOT (age = 1 OR name LIKE '\(long)')", columns: Self.columns)
        #expect(throws: QueryError.self) { try literal.bind([]) }
        let evaluator = QueryEvaluator(columns: ["name": .text, "other": .text])
        let fromColumn = try ParsedQuery(parsing: "WHERE name LIKE other", columns: nil).bind([])
        #expect(!evaluator.evaluate(where: fromColumn.whereClause, row: ["name": .text("ab"), "other": .text(long)]))
        #expect(evaluator.evaluate(where: fromColumn.whereClause, row: ["name": .text("ab"), "other": .text("a%")]))
    }

    @Test func aggregateErrors() {
        func aggregateError(_ text: String) -> QueryError? {
            do { _ = try AggregateFunction(parsing: text, columns: Self.columns); return nil } catch { return error }
        }
        #expect(aggregateError("MEDIAN(age)")?.reason == .invalidAggregate("MEDIAN(age)"))
        #expect(aggregateError("SUM(*)")?.reason == .invalidAggregate("SUM(*)"))
        #expect(aggregateError("SUM(age")?.reason == .invalidAggregate("SUM(age"))
        #expect(aggregateError("SUM(age) x")?.reason == .invalidAggregate("SUM(age) x"))
        #expect(aggregateError("COUNT(DISTINCT *)")?.reason == .invalidAggregate("COUNT(DISTINCT *)"))
        #expect(aggregateError("SUM(height)") == QueryError(offset: 4, reason: .unknownColumn("height")))
        #expect(aggregateError("sum(AGE)") == nil)
        #expect(aggregateError("count(*)") == nil)
        #expect((try? AggregateFunction(parsing: "max(distinct [age])", columns: Self.columns))
                == AggregateFunction(.max, column: "age", distinct: true))
    }

    @Test func descriptionsNamePositionAndProblem() {
        let error = QueryError(offset: 13, reason: .unterminatedString)
        #expect(error.description == "unterminated string literal at character 13")
        let reasons: [QueryError.Reason] = [
            .unexpectedToken("x", expected: "y"), .unexpectedEnd(expected: "y"), .unterminatedString, .unterminatedIdentifier,
            .unexpectedCharacter("#"), .malformedNumber("1e"), .unknownColumn("c"), .wrongParameterCount(expected: 1, given: 2),
            .unsupportedParameter(index: 0, typeName: "URL"), .listParameterOutsideIn(index: 0), .limitNotInteger,
            .unsupported("GLOB"), .invalidAggregate("X"),
        ]
        #expect(Set(reasons.map { QueryError(offset: 0, reason: $0).problem }).count == reasons.count)
    }

    /// Random garbage never traps: every text either parses or gives an error inside it.
    @Test func randomTextsNeverTrap() {
        var generator = SeededRandom(seed: 11)
        let pieces = ["WHERE", "age", "name", "=", "<", "(", ")", "'", "\"", "[", "`", "?", "AND", "OR", "NOT", "IN", "LIKE",
                      "BETWEEN", "IS", "NULL", "1", "2.5", "-", "x'", "ORDER", "BY", "LIMIT", "OFFSET", ",", ";", " ", "é", "--", "/*"]
        for _ in 0..<3000 {
            let count = Int(generator.next() % 12)
            let text = (0..<count).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }.joined(separator: generator.next() % 3 == 0 ? "" : " ")
            if let error = error(text) {
                #expect(error.offset >= 0 && error.offset <= text.count, "\(text)")
            }
        }
    }
}
