/// One side of a comparison: a column, a literal, or a `?` parameter.
package enum QueryOperand: Sendable, Hashable {
    /// An indexed column, by name (the spelling inside quotes, brackets or backticks).
    case column(String)
    /// A literal value (no affinity of its own).
    case literal(SQLValue)
    /// The `index`th `?` of the query text, counting from 0 (no affinity of its own). In a
    /// ``BoundQuery`` every parameter has been replaced by its value.
    case parameter(Int)
}

/// A comparison operator. `==` parses as ``equal`` and `<>` as ``notEqual``.
package enum ComparisonOperator: String, Sendable, Hashable, CaseIterable {
    /// `=` (or `==`): NULL when either side is NULL.
    case equal = "="
    /// `!=` (or `<>`): NULL when either side is NULL.
    case notEqual = "!="
    /// `<`.
    case less = "<"
    /// `<=`.
    case lessOrEqual = "<="
    /// `>`.
    case greater = ">"
    /// `>=`.
    case greaterOrEqual = ">="
    /// `IS`: equality where NULL IS NULL is true; never NULL itself.
    case `is` = "IS"
    /// `IS NOT`: the negation of ``is``; never NULL itself.
    case isNot = "IS NOT"

    /// The operator with its operands swapped (`a < b` is `b > a`).
    package var swapped: ComparisonOperator {
        switch self {
        case .less: return .greater
        case .lessOrEqual: return .greaterOrEqual
        case .greater: return .less
        case .greaterOrEqual: return .lessOrEqual
        default: return self
        }
    }
}

/// A `WHERE` expression: the abstract syntax tree of the grammar YapDatabaseQuery accepts.
///
/// A planner reads it to pick index ranges: each leaf names its column(s) through
/// ``QueryOperand``; ``QueryExpression/referencedColumns`` lists them all.
package indirect enum QueryExpression: Sendable, Hashable {
    /// `lhs op rhs`.
    case comparison(QueryOperand, ComparisonOperator, QueryOperand)
    /// `operand IS NULL` (or, negated, `IS NOT NULL`; also `ISNULL`, `NOTNULL`, `NOT NULL`).
    case isNull(QueryOperand, negated: Bool)
    /// `operand [NOT] BETWEEN low AND high`: `operand >= low AND operand <= high`, each
    /// comparison with its own affinity conversions.
    case between(QueryOperand, low: QueryOperand, high: QueryOperand, negated: Bool)
    /// `operand [NOT] IN (list)`. A `?` in the list may be bound to an array, whose elements
    /// join the list (an empty array binds a single NULL, as YapDatabase does).
    case inList(QueryOperand, [QueryOperand], negated: Bool)
    /// `operand [NOT] LIKE pattern [ESCAPE escape]`: `%` matches any run of characters, `_`
    /// one character, ASCII letters match either case.
    case like(QueryOperand, pattern: QueryOperand, escape: QueryOperand?, negated: Bool)
    /// `operand IS [NOT] TRUE` / `IS [NOT] FALSE`: whether the operand's truth value (as for
    /// ``truth(_:)``) is `value`; never NULL (NULL is neither true nor false).
    case isBoolean(QueryOperand, value: Bool, negated: Bool)
    /// A bare operand used as a condition (`WHERE flag`): true when its numeric value is
    /// non-zero, NULL when it is NULL.
    case truth(QueryOperand)
    /// `lhs AND rhs`.
    case and(QueryExpression, QueryExpression)
    /// `lhs OR rhs`.
    case or(QueryExpression, QueryExpression)
    /// `NOT operand`.
    case not(QueryExpression)
}

/// One `ORDER BY` term.
package struct OrderTerm: Sendable, Hashable {
    /// The column sorted on.
    package var column: String
    /// Whether `DESC` was given (ascending otherwise, NULLs first).
    package var descending: Bool

    /// A term sorting on `column`, ascending unless `descending`.
    package init(column: String, descending: Bool = false) {
        self.column = column
        self.descending = descending
    }
}

/// The value bound to one `?`: a single value, or an array (only inside an `IN` list).
package enum QueryParameter: Sendable, Hashable {
    /// A single value.
    case value(SQLValue)
    /// An array's elements, spliced into the `IN` list where the `?` stands.
    case list([SQLValue])
}

extension QueryOperand {
    /// The column this operand names, if it is one.
    package var columnName: String? {
        if case let .column(name) = self { return name }
        return nil
    }
}

extension QueryExpression {
    /// Every column the expression names, in order of first appearance, without repeats.
    package var referencedColumns: [String] {
        var seen = Set<String>()
        var names: [String] = []
        forEachOperand { operand in
            if let name = operand.columnName, seen.insert(name).inserted { names.append(name) }
        }
        return names
    }

    /// Calls `body` with every operand, left to right.
    package func forEachOperand(_ body: (QueryOperand) -> Void) {
        if let chain {
            for operand in chain.operands { operand.forEachOperand(body) }
            return
        }
        switch self {
        case let .comparison(lhs, _, rhs): body(lhs); body(rhs)
        case let .isNull(operand, _), let .truth(operand), let .isBoolean(operand, _, _): body(operand)
        case let .between(operand, low, high, _): body(operand); body(low); body(high)
        case let .inList(operand, list, _): body(operand); list.forEach(body)
        case let .like(operand, pattern, escape, _):
            body(operand); body(pattern)
            if let escape { body(escape) }
        case let .and(lhs, rhs), let .or(lhs, rhs): lhs.forEachOperand(body); rhs.forEachOperand(body)
        case let .not(inner): inner.forEachOperand(body)
        }
    }

    /// The expression with every operand replaced by `transform(operand)`; an `IN` list
    /// operand may become several (or, with `nil` from `expandList`, stay as it is).
    package func mapOperands(
        _ transform: (QueryOperand) throws(QueryError) -> QueryOperand,
        expandList: (QueryOperand) throws(QueryError) -> [QueryOperand]?
    ) throws(QueryError) -> QueryExpression {
        if let chain {
            var operands: [QueryExpression] = []
            operands.reserveCapacity(chain.operands.count)
            for operand in chain.operands { operands.append(try operand.mapOperands(transform, expandList: expandList)) }
            return .joined(chain.connective, operands)
        }
        switch self {
        case let .comparison(lhs, op, rhs): return .comparison(try transform(lhs), op, try transform(rhs))
        case let .isNull(operand, negated): return .isNull(try transform(operand), negated: negated)
        case let .truth(operand): return .truth(try transform(operand))
        case let .isBoolean(operand, value, negated): return .isBoolean(try transform(operand), value: value, negated: negated)
        case let .between(operand, low, high, negated):
            return .between(try transform(operand), low: try transform(low), high: try transform(high), negated: negated)
        case let .inList(operand, list, negated):
            var items: [QueryOperand] = []
            for item in list {
                if let expanded = try expandList(item) { items += expanded } else { items.append(try transform(item)) }
            }
            return .inList(try transform(operand), items, negated: negated)
        case let .like(operand, pattern, escape, negated):
            let newEscape: QueryOperand? = if let escape { try transform(escape) } else { nil }
            return .like(try transform(operand), pattern: try transform(pattern), escape: newEscape, negated: negated)
        case let .and(lhs, rhs):
            return .and(try lhs.mapOperands(transform, expandList: expandList), try rhs.mapOperands(transform, expandList: expandList))
        case let .or(lhs, rhs):
            return .or(try lhs.mapOperands(transform, expandList: expandList), try rhs.mapOperands(transform, expandList: expandList))
        case let .not(inner): return .not(try inner.mapOperands(transform, expandList: expandList))
        }
    }
}

/// The connective of a chain of `AND`s or `OR`s.
package enum QueryConnective: Sendable, Hashable {
    /// `AND`.
    case and
    /// `OR`.
    case or
}

extension QueryExpression {
    /// For an `AND` or `OR`: its connective and its operands, the left-nested chain the parser
    /// builds flattened without recursion (`a AND b AND c`, which is `and(and(a, b), c)`, gives
    /// `(.and, [a, b, c])`). Nil for anything else. Walkers go through this so that a chain as
    /// long as the depth limit costs no stack.
    package var chain: (connective: QueryConnective, operands: [QueryExpression])? {
        let connective: QueryConnective
        switch self {
        case .and: connective = .and
        case .or: connective = .or
        default: return nil
        }
        var operands: [QueryExpression] = []
        var node = self
        while true {
            switch (connective, node) {
            case let (.and, .and(lhs, rhs)), let (.or, .or(lhs, rhs)):
                operands.append(rhs)
                node = lhs
            default:
                operands.append(node)
                return (connective, operands.reversed())
            }
        }
    }

    /// `operands` joined by `connective`, nested to the left as the parser nests them.
    package static func joined(_ connective: QueryConnective, _ operands: [QueryExpression]) -> QueryExpression {
        var result = operands[0]
        for operand in operands.dropFirst() {
            result = connective == .and ? .and(result, operand) : .or(result, operand)
        }
        return result
    }
}
