/// A recursive-descent parser for the query language (the part of an SQL `SELECT` after
/// `FROM`), producing a ``ParsedQuery``. Precedence, loosest first: `OR`, `AND`, `NOT`, then the
/// predicates (`=`, `<`, `IS`, `BETWEEN`, `IN`, `LIKE`, …) over operands.
struct QueryParser {
    private let tokens: [QueryToken]
    private var index = 0
    /// The index's columns (name → type), when known: names resolve against them ignoring ASCII
    /// case, an unknown name is an error, and a double-quoted unknown name is a string literal.
    private let columns: [String: ColumnType]?
    private let columnsByFoldedName: [String: String]
    /// Offsets of the `?`s met so far, in order.
    private(set) var parameterOffsets: [Int] = []
    /// Indexes (into ``parameterOffsets``) of the `?`s that are elements of an `IN` list.
    private(set) var listParameters: Set<Int> = []

    init(tokens: [QueryToken], columns: [String: ColumnType]?) {
        self.tokens = tokens
        self.columns = columns
        var folded: [String: String] = [:]
        for name in (columns ?? [:]).keys.sorted() where folded[name.lowercased()] == nil {
            folded[name.lowercased()] = name
        }
        columnsByFoldedName = folded
    }

    // MARK: Tokens

    private var current: QueryToken { tokens[index] }

    private mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    private mutating func accept(keyword: String) -> Bool {
        guard current.isKeyword(keyword) else { return false }
        advance()
        return true
    }

    private mutating func accept(symbol: String) -> Bool {
        guard current.isSymbol(symbol) else { return false }
        advance()
        return true
    }

    private func unexpected(expected: String) -> QueryError {
        if current.kind == .end {
            return QueryError(offset: current.offset, reason: .unexpectedEnd(expected: expected))
        }
        return QueryError(offset: current.offset, reason: .unexpectedToken(current.spelling, expected: expected))
    }

    private mutating func expect(keyword: String) throws(QueryError) {
        guard accept(keyword: keyword) else { throw unexpected(expected: keyword) }
    }

    private mutating func expect(symbol: String) throws(QueryError) {
        guard accept(symbol: symbol) else { throw unexpected(expected: "\"\(symbol)\"") }
    }

    // MARK: Clauses

    /// The whole query: `[WHERE expr] [ORDER BY terms] [LIMIT n [OFFSET m | , m]] [;]`.
    mutating func parseQuery() throws(QueryError) -> (QueryExpression?, [OrderTerm], QueryOperand?, QueryOperand?) {
        var whereClause: QueryExpression?
        var orderBy: [OrderTerm] = []
        var limit: QueryOperand?
        var offset: QueryOperand?
        if accept(keyword: "WHERE") {
            whereClause = try parseOr().expression
        }
        if accept(keyword: "ORDER") {
            try expect(keyword: "BY")
            repeat {
                orderBy.append(try parseOrderTerm())
            } while accept(symbol: ",")
        }
        if accept(keyword: "LIMIT") {
            limit = try parseLimitValue()
            if accept(keyword: "OFFSET") {
                offset = try parseLimitValue()
            } else if accept(symbol: ",") {
                // SQLite's `LIMIT offset, count`.
                offset = limit
                limit = try parseLimitValue()
            }
        }
        _ = accept(symbol: ";")
        guard current.kind == .end else {
            let expected = whereClause == nil && orderBy.isEmpty && limit == nil
                ? "WHERE, ORDER BY or LIMIT" : "the end of the query"
            throw unexpected(expected: expected)
        }
        return (whereClause, orderBy, limit, offset)
    }

    private mutating func parseOrderTerm() throws(QueryError) -> OrderTerm {
        guard let name = try columnName() else {
            throw unexpected(expected: "a column name")
        }
        if current.isKeyword("COLLATE") {
            throw QueryError(offset: current.offset, reason: .unsupported("COLLATE (comparisons use SQLite's BINARY collation)"))
        }
        if accept(keyword: "DESC") { return OrderTerm(column: name, descending: true) }
        _ = accept(keyword: "ASC")
        return OrderTerm(column: name, descending: false)
    }

    /// A `LIMIT`/`OFFSET` value: an integer (optionally signed) or `?`.
    private mutating func parseLimitValue() throws(QueryError) -> QueryOperand {
        let token = current
        if case .parameter = token.kind {
            advance()
            return .parameter(noteParameter(at: token.offset))
        }
        guard let value = try numericLiteral() else { throw unexpected(expected: "an integer") }
        guard case .integer = value else {
            throw QueryError(offset: token.offset, reason: .limitNotInteger)
        }
        return .literal(value)
    }

    // MARK: Expressions

    /// The deepest expression tree accepted, counting each link of an `AND`/`OR` chain (SQLite's
    /// default SQLITE_MAX_EXPR_DEPTH): deeper trees are an error.
    static let maximumDepth = 1000

    /// An expression and the depth of its tree (a leaf is 1).
    typealias Parsed = (expression: QueryExpression, depth: Int)

    /// `parsed` after checking its depth against ``maximumDepth``.
    private func checked(_ parsed: Parsed, at offset: Int) throws(QueryError) -> Parsed {
        guard parsed.depth <= Self.maximumDepth else {
            throw QueryError(offset: offset, reason: .unsupported("an expression nested deeper than \(Self.maximumDepth) levels"))
        }
        return parsed
    }

    private mutating func parseOr() throws(QueryError) -> Parsed {
        try parseChain(.or)
    }

    /// A chain of operands joined by `connective`, nested to the left: ORs of ANDs of NOTs.
    private mutating func parseChain(_ connective: QueryConnective) throws(QueryError) -> Parsed {
        let keyword = connective == .or ? "OR" : "AND"
        var parsed = connective == .or ? try parseChain(.and) : try parseNot()
        while current.isKeyword(keyword) {
            let offset = current.offset
            advance()
            let rhs = connective == .or ? try parseChain(.and) : try parseNot()
            let joined = QueryExpression.joined(connective, [parsed.expression, rhs.expression])
            parsed = try checked((joined, max(parsed.depth, rhs.depth) + 1), at: offset)
        }
        return parsed
    }

    private mutating func parseNot() throws(QueryError) -> Parsed {
        let offset = current.offset
        if accept(keyword: "NOT") {
            nesting += 1
            defer { nesting -= 1 }
            try checkNesting(at: offset)
            let inner = try parseNot()
            return try checked((.not(inner.expression), inner.depth + 1), at: offset)
        }
        return try parsePredicate()
    }

    /// The most `NOT`s and parentheses that may enclose a part of the query. Chains of `AND`
    /// and `OR` are walked without recursion, but nesting is not: bounded, it keeps every walk
    /// of the tree (parser, evaluator, planner) far inside a 512 KiB thread stack.
    static let maximumNesting = 100

    /// How many `NOT`s and parentheses enclose the current token.
    private var nesting = 0

    private func checkNesting(at offset: Int) throws(QueryError) {
        if nesting > Self.maximumNesting {
            throw QueryError(offset: offset, reason: .unsupported("nesting deeper than \(Self.maximumNesting) parentheses or NOTs"))
        }
    }

    /// A parenthesised expression, or an operand followed by what is said of it. A parenthesised
    /// bare operand (`(col) = ?`) is an operand.
    private mutating func parsePredicate() throws(QueryError) -> Parsed {
        let operand: QueryOperand
        if current.isSymbol("(") {
            let offset = current.offset
            advance()
            nesting += 1
            try checkNesting(at: offset)
            let inner = try parseOr()
            nesting -= 1
            try expect(symbol: ")")
            guard case let .truth(bare) = inner.expression, startsPredicateTail else { return inner }
            operand = bare
        } else {
            operand = try parseOperand()
        }
        return (try parsePredicateTail(of: operand), 1)
    }

    /// Whether the current token continues an operand into a predicate.
    private var startsPredicateTail: Bool {
        if case let .symbol(symbol) = current.kind {
            return ["=", "==", "!=", "<>", "<", "<=", ">", ">="].contains(symbol)
        }
        return ["IS", "ISNULL", "NOTNULL", "NOT", "BETWEEN", "IN", "LIKE"].contains { current.isKeyword($0) }
    }

    private mutating func parsePredicateTail(of operand: QueryOperand) throws(QueryError) -> QueryExpression {
        if case let .symbol(symbol) = current.kind, let op = Self.comparisonOperators[symbol] {
            advance()
            return .comparison(operand, op, try parseOperand())
        }
        if accept(keyword: "ISNULL") { return .isNull(operand, negated: false) }
        if accept(keyword: "NOTNULL") { return .isNull(operand, negated: true) }
        if accept(keyword: "IS") {
            let negated = accept(keyword: "NOT")
            if accept(keyword: "NULL") { return .isNull(operand, negated: negated) }
            if let truth = booleanKeyword() { return .isBoolean(operand, value: truth, negated: negated) }
            // `IS [NOT] DISTINCT FROM x` is `IS NOT x` / `IS x`.
            if accept(keyword: "DISTINCT") {
                try expect(keyword: "FROM")
                return .comparison(operand, negated ? .is : .isNot, try parseOperand())
            }
            return .comparison(operand, negated ? .isNot : .is, try parseOperand())
        }
        let negated = accept(keyword: "NOT")
        if negated, accept(keyword: "NULL") { return .isNull(operand, negated: true) }
        if accept(keyword: "BETWEEN") {
            let low = try parseOperand()
            try expect(keyword: "AND")
            let high = try parseOperand()
            return .between(operand, low: low, high: high, negated: negated)
        }
        if accept(keyword: "IN") {
            return .inList(operand, try parseInList(), negated: negated)
        }
        if accept(keyword: "LIKE") {
            let pattern = try parseOperand()
            let escape = accept(keyword: "ESCAPE") ? try parseOperand() : nil
            return .like(operand, pattern: pattern, escape: escape, negated: negated)
        }
        if negated {
            throw unexpected(expected: "NULL, BETWEEN, IN or LIKE after NOT")
        }
        if ["GLOB", "REGEXP", "MATCH"].contains(where: { current.isKeyword($0) }) {
            throw QueryError(offset: current.offset, reason: .unsupported(current.spelling.uppercased()))
        }
        if case let .symbol(symbol) = current.kind, ["+", "-", "*", "/", "||"].contains(symbol) {
            throw QueryError(offset: current.offset, reason: .unsupported("the operator \(symbol)"))
        }
        return .truth(operand)
    }

    private static let comparisonOperators: [String: ComparisonOperator] = [
        "=": .equal, "==": .equal, "!=": .notEqual, "<>": .notEqual,
        "<": .less, "<=": .lessOrEqual, ">": .greater, ">=": .greaterOrEqual,
    ]

    /// `( [operand {, operand}] )`; a `?` here may be bound to an array.
    private mutating func parseInList() throws(QueryError) -> [QueryOperand] {
        try expect(symbol: "(")
        var items: [QueryOperand] = []
        if accept(symbol: ")") { return items }
        if current.isKeyword("SELECT") {
            throw QueryError(offset: current.offset, reason: .unsupported("a subquery"))
        }
        repeat {
            let item = try parseOperand()
            if case let .parameter(number) = item { listParameters.insert(number) }
            items.append(item)
        } while accept(symbol: ",")
        try expect(symbol: ")")
        return items
    }

    /// A column, a literal, a `?`, a signed number, or a parenthesised operand.
    private mutating func parseOperand() throws(QueryError) -> QueryOperand {
        let operand = try parseOperandItself()
        if current.isKeyword("COLLATE") {
            throw QueryError(offset: current.offset, reason: .unsupported("COLLATE (comparisons use SQLite's BINARY collation)"))
        }
        return operand
    }

    private mutating func parseOperandItself() throws(QueryError) -> QueryOperand {
        let token = current
        switch token.kind {
        case .parameter:
            advance()
            return .parameter(noteParameter(at: token.offset))
        case let .string(text):
            advance()
            return .literal(.text(text))
        case let .blob(bytes):
            advance()
            return .literal(.blob(bytes))
        case .number:
            return .literal(try numericLiteral()!)
        case .symbol("+"), .symbol("-"):
            if let value = try numericLiteral() { return .literal(value) }
            throw unexpected(expected: "a number after the sign")
        case .symbol("("):
            advance()
            nesting += 1
            try checkNesting(at: token.offset)
            let operand = try parseOperandItself()
            nesting -= 1
            try expect(symbol: ")")
            return operand
        default:
            if token.isKeyword("NULL") {
                advance()
                return .literal(.null)
            }
            if case let .word(word) = token.kind, index + 1 < tokens.count, tokens[index + 1].isSymbol("(") {
                throw QueryError(offset: token.offset, reason: .unsupported("the function \(word)()"))
            }
            if let column = try identifier(allowingLiteral: true) { return column }
            throw unexpected(expected: "a column, a value or ?")
        }
    }

    /// A number with an optional sign, or nil (consuming nothing) when none is here.
    private mutating func numericLiteral() throws(QueryError) -> SQLValue? {
        var negative = false
        let start = index
        if current.isSymbol("-") || current.isSymbol("+") {
            negative = current.isSymbol("-")
            advance()
        }
        guard case let .number(text) = current.kind else {
            index = start
            return nil
        }
        let token = current
        advance()
        if text.hasPrefix("0x") || text.hasPrefix("0X") {
            guard let bits = UInt64(text.dropFirst(2), radix: 16) else {
                throw QueryError(offset: token.offset, reason: .malformedNumber(text))
            }
            let value = Int64(bitPattern: bits)
            return .integer(negative ? 0 &- value : value)
        }
        let signed = (negative ? "-" : "") + text
        let isReal = text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" })
        if !isReal, let integer = Int64(signed) { return .integer(integer) }
        // An integer too large for 64 bits reads as a real, as in SQLite.
        guard case let .real(value)? = SQLValue.number(fromText: isReal ? signed : signed + ".0") else {
            throw QueryError(offset: token.offset, reason: .malformedNumber(text))
        }
        return .real(value)
    }

    /// `TRUE` or `FALSE` after `IS [NOT]` (consumed), unless a column has that name.
    private mutating func booleanKeyword() -> Bool? {
        guard case let .word(word) = current.kind, let truth = Self.booleanLiterals[word.uppercased()],
              columnsByFoldedName[word.lowercased()] == nil else { return nil }
        advance()
        return truth != 0
    }

    /// Records a `?` and returns its number.
    private mutating func noteParameter(at offset: Int) -> Int {
        parameterOffsets.append(offset)
        return parameterOffsets.count - 1
    }

    /// A column name (resolved against the columns when known), or — for an operand, when
    /// `allowingLiteral` — a double-quoted unknown name as a text literal and `TRUE`/`FALSE` as
    /// 1/0. Nil, consuming nothing, when the token is no identifier.
    private mutating func identifier(allowingLiteral: Bool) throws(QueryError) -> QueryOperand? {
        let token = current
        let name: String
        var doubleQuoted = false
        switch token.kind {
        case let .word(word):
            if Self.reservedWords.contains(word.uppercased()) { return nil }
            name = word
        case let .quotedIdentifier(quoted, isDouble):
            name = quoted
            doubleQuoted = isDouble
        default:
            return nil
        }
        advance()
        guard columns != nil else {
            if allowingLiteral, case .word = token.kind, let truth = Self.booleanLiterals[name.uppercased()] {
                return .literal(.integer(truth))
            }
            return .column(name)
        }
        if let resolved = columnsByFoldedName[name.lowercased()] { return .column(resolved) }
        if allowingLiteral {
            if doubleQuoted { return .literal(.text(name)) }
            if case .word = token.kind, let truth = Self.booleanLiterals[name.uppercased()] {
                return .literal(.integer(truth))
            }
        }
        throw QueryError(offset: token.offset, reason: .unknownColumn(name))
    }

    /// A column name for an `ORDER BY` term, or nil when the token is no identifier.
    private mutating func columnName() throws(QueryError) -> String? {
        try identifier(allowingLiteral: false)?.columnName
    }

    private static let booleanLiterals: [String: Int64] = ["TRUE": 1, "FALSE": 0]

    /// Keywords that never name a column when written bare.
    private static let reservedWords: Set<String> = [
        "WHERE", "ORDER", "BY", "LIMIT", "OFFSET", "AND", "OR", "NOT", "IS", "NULL", "ISNULL",
        "NOTNULL", "BETWEEN", "IN", "LIKE", "ESCAPE", "GLOB", "REGEXP", "MATCH", "SELECT", "FROM",
        "COLLATE", "GROUP", "HAVING",
    ]
}
