/// A query text parsed once: its `WHERE` expression, `ORDER BY` terms and `LIMIT`/`OFFSET`,
/// with its `?` parameters still open. Bind it to parameters (``ParsedQuery/bind(_:)``) as many
/// times as needed.
///
/// Two parsed queries are equal when their clauses and parameter count are (where the `?`s
/// stood in the text does not count), so the typed form equals the text it renders.
///
/// Threading: a plain value; safe to pass between threads.
package struct ParsedQuery: Sendable, Hashable {
    /// The `WHERE` expression; nil when the query has none (it matches every row).
    package var whereClause: QueryExpression?
    /// The `ORDER BY` terms, most significant first; empty for the index's own order (row id).
    package var orderBy: [OrderTerm]
    /// The `LIMIT`: an integer literal or a parameter; nil for none.
    package var limit: QueryOperand?
    /// The `OFFSET`: an integer literal or a parameter; nil for none.
    package var offset: QueryOperand?
    /// How many `?`s the text has; ``ParsedQuery/bind(_:)`` takes exactly that many.
    package private(set) var parameterCount: Int
    /// Character offsets of the `?`s, for error positions.
    package private(set) var parameterOffsets: [Int]
    /// Numbers of the `?`s that are elements of an `IN` list (the only place an array binds).
    package private(set) var listParameters: Set<Int>
    /// The text's length in characters (the offset of errors that have no single place).
    private(set) var textLength: Int

    /// Parses `text`, everything after `SELECT … FROM …`: `[WHERE expr] [ORDER BY col [ASC|DESC],
    /// …] [LIMIT n [OFFSET m]]`. An empty text matches every row.
    ///
    /// - Parameters:
    ///   - text: The query text. Keywords ignore case.
    ///   - columns: The index's columns and their types, when known. Then column names resolve
    ///     ignoring ASCII case (to the spelling given here), an unknown column is an error, and
    ///     a double-quoted name that is no column is a string literal (as in SQLite).
    /// - Throws: ``QueryError`` naming the character offset and the problem.
    package init(parsing text: String, columns: [String: ColumnType]? = nil) throws(QueryError) {
        do {
            var parser = QueryParser(tokens: try QueryLexer.tokens(of: text), columns: columns)
            let (whereClause, orderBy, limit, offset) = try parser.parseQuery()
            self.whereClause = whereClause
            self.orderBy = orderBy
            self.limit = limit
            self.offset = offset
            let characterOffsets = parser.parameterOffsets.map { Self.characterOffset(ofScalar: $0, in: text) }
            parameterOffsets = characterOffsets
            parameterCount = characterOffsets.count
            listParameters = parser.listParameters
            textLength = text.count
        } catch {
            throw QueryError(offset: Self.characterOffset(ofScalar: error.offset, in: text), reason: error.reason)
        }
    }

    /// A query built from its parts (the typed form). Parameters are numbered in the order of
    /// the text ``ParsedQuery/sql`` renders.
    package init(
        where whereClause: QueryExpression?, orderBy: [OrderTerm] = [],
        limit: QueryOperand? = nil, offset: QueryOperand? = nil
    ) {
        self.whereClause = whereClause
        self.orderBy = orderBy
        self.limit = limit
        self.offset = offset
        var count = 0
        var lists = Set<Int>()
        whereClause?.forEachOperand { operand in
            if case let .parameter(number) = operand { count = max(count, number + 1) }
        }
        whereClause?.forEachInList { items in
            for case let .parameter(number) in items { lists.insert(number) }
        }
        for case let .parameter(number)? in [limit, offset] { count = max(count, number + 1) }
        parameterCount = count
        listParameters = lists
        parameterOffsets = []
        textLength = 0
    }

    /// Every column the query names (in `WHERE`, then `ORDER BY`), without repeats.
    package var referencedColumns: [String] {
        var names = whereClause?.referencedColumns ?? []
        for term in orderBy where !names.contains(term.column) { names.append(term.column) }
        return names
    }

    /// Checks that every column the query names is one of `columns` (exactly as spelled).
    ///
    /// - Throws: ``QueryError/Reason/unknownColumn(_:)`` for the first unknown column.
    package func checkColumns(_ columns: [String: ColumnType]) throws(QueryError) {
        for name in referencedColumns where columns[name] == nil {
            throw QueryError(offset: textLength, reason: .unknownColumn(name))
        }
    }

    package static func == (lhs: ParsedQuery, rhs: ParsedQuery) -> Bool {
        lhs.whereClause == rhs.whereClause && lhs.orderBy == rhs.orderBy && lhs.limit == rhs.limit
            && lhs.offset == rhs.offset && lhs.parameterCount == rhs.parameterCount
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(whereClause)
        hasher.combine(orderBy)
        hasher.combine(limit)
        hasher.combine(offset)
        hasher.combine(parameterCount)
    }

    /// The character offset of the `scalarOffset`th Unicode scalar of `text`.
    static func characterOffset(ofScalar scalarOffset: Int, in text: String) -> Int {
        let scalars = text.unicodeScalars
        let end = scalars.index(scalars.startIndex, offsetBy: min(scalarOffset, scalars.count))
        return text.distance(from: text.startIndex, to: end)
    }
}

extension QueryExpression {
    /// Calls `body` with the element list of every `IN` in the expression.
    func forEachInList(_ body: ([QueryOperand]) -> Void) {
        if let chain {
            for operand in chain.operands { operand.forEachInList(body) }
            return
        }
        switch self {
        case let .inList(_, items, _): body(items)
        case let .and(lhs, rhs), let .or(lhs, rhs): lhs.forEachInList(body); rhs.forEachInList(body)
        case let .not(inner): inner.forEachInList(body)
        default: break
        }
    }
}
