/// A query with its parameters bound: no ``QueryOperand/parameter(_:)`` is left, every `IN`
/// list holds its final literal elements, and `LIMIT`/`OFFSET` are numbers. This is what a
/// planner plans and what the evaluator runs.
///
/// Threading: a plain value; safe to pass between threads.
package struct BoundQuery: Sendable, Hashable {
    /// The `WHERE` expression over columns and literals; nil matches every row.
    package var whereClause: QueryExpression?
    /// The `ORDER BY` terms; ties (and an empty list) order by row id ascending.
    package var orderBy: [OrderTerm]
    /// At most this many rows, or nil for no limit (a negative `LIMIT` means none, as in SQLite).
    package var limit: Int?
    /// Rows skipped before the first one returned (a negative `OFFSET` counts as 0).
    package var offset: Int

    /// A bound query from its parts.
    package init(whereClause: QueryExpression?, orderBy: [OrderTerm] = [], limit: Int? = nil, offset: Int = 0) {
        self.whereClause = whereClause
        self.orderBy = orderBy
        self.limit = limit
        self.offset = offset
    }

    /// Every column the query names (in `WHERE`, then `ORDER BY`), without repeats.
    package var referencedColumns: [String] {
        ParsedQuery(where: whereClause, orderBy: orderBy).referencedColumns
    }
}

extension ParsedQuery {
    /// Binds `parameters` to the `?`s, in order.
    ///
    /// A ``QueryParameter/list(_:)`` may bind only a `?` that is an element of an `IN` list; its
    /// elements join the list there (an empty array binds a single NULL, as YapDatabase does,
    /// so `IN (?)` with `[]` matches no row and `NOT IN (?)` with `[]` matches none either).
    /// A `LIMIT`/`OFFSET` parameter must be an integer or convert to one losslessly.
    ///
    /// - Throws: ``QueryError`` for a wrong parameter count, a list outside an `IN` list, or a
    ///   `LIMIT`/`OFFSET` value that is not an integer.
    package func bind(_ parameters: [QueryParameter]) throws(QueryError) -> BoundQuery {
        guard parameters.count == parameterCount else {
            let offset = parameters.count < parameterCount && parameters.count < parameterOffsets.count
                ? parameterOffsets[parameters.count] : (parameterOffsets.last ?? 0)
            throw QueryError(offset: offset, reason: .wrongParameterCount(expected: parameterCount, given: parameters.count))
        }
        let offsets = parameterOffsets
        func textOffset(of number: Int) -> Int { number < offsets.count ? offsets[number] : 0 }
        func single(_ operand: QueryOperand) throws(QueryError) -> QueryOperand {
            guard case let .parameter(number) = operand else { return operand }
            switch parameters[number] {
            case let .value(value): return .literal(value)
            case .list: throw QueryError(offset: textOffset(of: number), reason: .listParameterOutsideIn(index: number))
            }
        }
        func expanded(_ operand: QueryOperand) -> [QueryOperand]? {
            guard case let .parameter(number) = operand, case let .list(values) = parameters[number] else { return nil }
            return values.isEmpty ? [.literal(.null)] : values.map { .literal($0) }
        }
        func number(_ operand: QueryOperand?) throws(QueryError) -> Int? {
            guard let operand else { return nil }
            let value: SQLValue
            switch try single(operand) {
            case let .literal(literal): value = literal
            default: return nil
            }
            guard case let .integer(integer) = value.applying(.integer) else {
                let at = if case let .parameter(index) = operand { textOffset(of: index) } else { 0 }
                throw QueryError(offset: at, reason: .limitNotInteger)
            }
            return Int(clamping: integer)
        }
        let boundWhere = try whereClause?.mapOperands(single, expandList: expanded)
        if let bytes = boundWhere?.longestLiteralLikePattern, bytes > LikePattern.maximumPatternBytes {
            throw QueryError(offset: textLength, reason: .likePatternTooLong(bytes: bytes))
        }
        let boundLimit = try number(limit)
        let boundOffset = try number(offset)
        return BoundQuery(
            whereClause: boundWhere,
            orderBy: orderBy,
            limit: boundLimit.flatMap { $0 < 0 ? nil : $0 },
            offset: max(0, boundOffset ?? 0)
        )
    }
}
