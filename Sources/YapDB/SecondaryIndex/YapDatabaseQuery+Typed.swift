import Foundation
import YapDBQuery

// The Swift-native form of a query: columns, values and conditions as typed values, combined
// with operators, checked by the compiler, and compiled to the same parsed query as the text
// form (the query's `queryString` is the SQL text it renders to).
//
//     let query = YapDatabaseQuery.where(.column("age") >= 18 && .column("name").like("a%"),
//                                        orderBy: [.descending("age")], limit: 10)

/// A column of a secondary index, named in a typed query (`.column("age")`).
///
/// Threading: a plain value; safe to pass between threads.
public struct YapDatabaseQueryColumn: Sendable {
    /// The column's name, as registered in the index's setup.
    public let name: String

    /// The column named `name`.
    public init(_ name: String) { self.name = name }

    /// The column named `name` (so a condition can start with `.column("age")`).
    public static func column(_ name: String) -> YapDatabaseQueryColumn { YapDatabaseQueryColumn(name) }

    var operand: QueryOperand { .column(name) }

    /// `column LIKE pattern`: `%` matches any run of characters, `_` one; ASCII letters match
    /// either case.
    public func like(_ pattern: String) -> YapDatabaseQueryCondition {
        YapDatabaseQueryCondition(.like(operand, pattern: .literal(.text(pattern)), escape: nil, negated: false))
    }

    /// `column NOT LIKE pattern`.
    public func notLike(_ pattern: String) -> YapDatabaseQueryCondition {
        YapDatabaseQueryCondition(.like(operand, pattern: .literal(.text(pattern)), escape: nil, negated: true))
    }

    /// `column IS NULL`.
    public var isNull: YapDatabaseQueryCondition { YapDatabaseQueryCondition(.isNull(operand, negated: false)) }

    /// `column IS NOT NULL`.
    public var isNotNull: YapDatabaseQueryCondition { YapDatabaseQueryCondition(.isNull(operand, negated: true)) }

    /// `column BETWEEN low AND high` (both ends included).
    public func between(_ low: YapDatabaseQueryValue, and high: YapDatabaseQueryValue) -> YapDatabaseQueryCondition {
        YapDatabaseQueryCondition(.between(operand, low: .literal(low.value), high: .literal(high.value), negated: false))
    }

    /// `column NOT BETWEEN low AND high`.
    public func notBetween(_ low: YapDatabaseQueryValue, and high: YapDatabaseQueryValue) -> YapDatabaseQueryCondition {
        YapDatabaseQueryCondition(.between(operand, low: .literal(low.value), high: .literal(high.value), negated: true))
    }

    /// `column IN (values…)`; an empty list matches no row.
    public func `in`(_ values: [YapDatabaseQueryValue]) -> YapDatabaseQueryCondition {
        YapDatabaseQueryCondition(.inList(operand, values.map { .literal($0.value) }, negated: false))
    }

    /// `column NOT IN (values…)`; an empty list matches every row.
    public func notIn(_ values: [YapDatabaseQueryValue]) -> YapDatabaseQueryCondition {
        YapDatabaseQueryCondition(.inList(operand, values.map { .literal($0.value) }, negated: true))
    }

    /// `column IS value`: equality where NULL is NULL (never unknown).
    public func `is`(_ value: YapDatabaseQueryValue) -> YapDatabaseQueryCondition {
        value.value.isNull ? isNull : YapDatabaseQueryCondition(.comparison(operand, .is, .literal(value.value)))
    }

    /// `column IS NOT value`.
    public func isNot(_ value: YapDatabaseQueryValue) -> YapDatabaseQueryCondition {
        value.value.isNull ? isNotNull : YapDatabaseQueryCondition(.comparison(operand, .isNot, .literal(value.value)))
    }

    /// This column, ascending, as an `ORDER BY` term.
    public var ascending: YapDatabaseQueryOrder { YapDatabaseQueryOrder(column: name, descending: false) }

    /// This column, descending, as an `ORDER BY` term.
    public var descending: YapDatabaseQueryOrder { YapDatabaseQueryOrder(column: name, descending: true) }
}

/// A value in a typed query: written as a literal (`18`, `2.5`, `"ann"`, `true`, `nil`) or
/// built from a `Date` or `Data`. Dates become their `timeIntervalSinceReferenceDate`, as query
/// parameters do.
///
/// Threading: a plain value; safe to pass between threads.
public struct YapDatabaseQueryValue: Sendable, Hashable, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByNilLiteral {
    let value: SQLValue

    init(_ value: SQLValue) { self.value = value }

    /// An integer.
    public init(_ value: Int) { self.value = .integer(Int64(value)) }
    /// An integer.
    public init(_ value: Int64) { self.value = .integer(value) }
    /// A real (NaN is NULL).
    public init(_ value: Double) { self.value = .real(checking: value) }
    /// A text.
    public init(_ value: String) { self.value = .text(value) }
    /// A blob.
    public init(_ value: Data) { self.value = .blob([UInt8](value)) }
    /// A date, as its `timeIntervalSinceReferenceDate` (a real).
    public init(_ value: Date) { self.value = .real(checking: value.timeIntervalSinceReferenceDate) }
    /// 1 for true, 0 for false.
    public init(_ value: Bool) { self.value = .integer(value ? 1 : 0) }

    /// An integer literal.
    public init(integerLiteral value: Int64) { self.value = .integer(value) }
    /// A real literal.
    public init(floatLiteral value: Double) { self.init(value) }
    /// A text literal.
    public init(stringLiteral value: String) { self.value = .text(value) }
    /// `true` (1) or `false` (0).
    public init(booleanLiteral value: Bool) { self.init(value) }
    /// `nil`: SQL NULL.
    public init(nilLiteral: ()) { self.value = .null }

    /// Whether this is SQL NULL.
    public var isNull: Bool { value.isNull }

    /// The integer, or nil for any other kind of value (a real is not converted).
    public var int64Value: Int64? {
        if case let .integer(v) = value { return v }
        return nil
    }

    /// The integer as an `Int`, or nil for any other kind of value (or one an `Int` cannot
    /// hold, on a 32-bit platform).
    public var intValue: Int? { int64Value.flatMap { Int(exactly: $0) } }

    /// The number as a `Double` (an integer converted, a real as it is), or nil for a text, a
    /// blob or NULL.
    public var doubleValue: Double? {
        switch value {
        case let .integer(v): Double(v)
        case let .real(v): v
        default: nil
        }
    }

    /// The text, or nil for any other kind of value.
    public var stringValue: String? {
        if case let .text(v) = value { return v }
        return nil
    }

    /// The blob, or nil for any other kind of value.
    public var dataValue: Data? {
        if case let .blob(v) = value { return Data(v) }
        return nil
    }
}

/// A condition of a typed query: a comparison or test of a column, or conditions combined with
/// `&&`, `||` and `!`.
///
/// Threading: a plain value; safe to pass between threads.
public struct YapDatabaseQueryCondition: Sendable {
    let expression: QueryExpression

    init(_ expression: QueryExpression) { self.expression = expression }

    /// The column named `name`, so a condition can start with `.column("name").like("a%")`.
    public static func column(_ name: String) -> YapDatabaseQueryColumn { YapDatabaseQueryColumn(name) }

    /// Both conditions (SQL `AND`).
    public static func && (lhs: YapDatabaseQueryCondition, rhs: YapDatabaseQueryCondition) -> YapDatabaseQueryCondition {
        YapDatabaseQueryCondition(.and(lhs.expression, rhs.expression))
    }

    /// Either condition (SQL `OR`).
    public static func || (lhs: YapDatabaseQueryCondition, rhs: YapDatabaseQueryCondition) -> YapDatabaseQueryCondition {
        YapDatabaseQueryCondition(.or(lhs.expression, rhs.expression))
    }

    /// The negation (SQL `NOT`; a condition that is unknown because of a NULL stays unknown).
    public static prefix func ! (condition: YapDatabaseQueryCondition) -> YapDatabaseQueryCondition {
        YapDatabaseQueryCondition(.not(condition.expression))
    }
}

extension YapDatabaseQueryColumn {
    /// `column = value` (unknown, so not matching, when either is NULL: use ``is(_:)`` or
    /// ``isNull`` for NULL).
    public static func == (lhs: YapDatabaseQueryColumn, rhs: YapDatabaseQueryValue) -> YapDatabaseQueryCondition {
        YapDatabaseQueryCondition(.comparison(lhs.operand, .equal, .literal(rhs.value)))
    }

    /// `column != value`.
    public static func != (lhs: YapDatabaseQueryColumn, rhs: YapDatabaseQueryValue) -> YapDatabaseQueryCondition {
        YapDatabaseQueryCondition(.comparison(lhs.operand, .notEqual, .literal(rhs.value)))
    }

    /// `column < value`, in SQLite's order (NULL < numbers < texts < blobs).
    public static func < (lhs: YapDatabaseQueryColumn, rhs: YapDatabaseQueryValue) -> YapDatabaseQueryCondition {
        YapDatabaseQueryCondition(.comparison(lhs.operand, .less, .literal(rhs.value)))
    }

    /// `column <= value`.
    public static func <= (lhs: YapDatabaseQueryColumn, rhs: YapDatabaseQueryValue) -> YapDatabaseQueryCondition {
        YapDatabaseQueryCondition(.comparison(lhs.operand, .lessOrEqual, .literal(rhs.value)))
    }

    /// `column > value`.
    public static func > (lhs: YapDatabaseQueryColumn, rhs: YapDatabaseQueryValue) -> YapDatabaseQueryCondition {
        YapDatabaseQueryCondition(.comparison(lhs.operand, .greater, .literal(rhs.value)))
    }

    /// `column >= value`.
    public static func >= (lhs: YapDatabaseQueryColumn, rhs: YapDatabaseQueryValue) -> YapDatabaseQueryCondition {
        YapDatabaseQueryCondition(.comparison(lhs.operand, .greaterOrEqual, .literal(rhs.value)))
    }

    /// `lhs = rhs`, comparing two columns.
    public static func == (lhs: YapDatabaseQueryColumn, rhs: YapDatabaseQueryColumn) -> YapDatabaseQueryCondition {
        YapDatabaseQueryCondition(.comparison(lhs.operand, .equal, rhs.operand))
    }

    /// `lhs != rhs`, comparing two columns.
    public static func != (lhs: YapDatabaseQueryColumn, rhs: YapDatabaseQueryColumn) -> YapDatabaseQueryCondition {
        YapDatabaseQueryCondition(.comparison(lhs.operand, .notEqual, rhs.operand))
    }
}

/// An `ORDER BY` term of a typed query.
///
/// Threading: a plain value; safe to pass between threads.
public struct YapDatabaseQueryOrder: Sendable, Hashable {
    /// The column sorted on.
    public let column: String
    /// Whether the order is descending (NULLs last) rather than ascending (NULLs first).
    public let descending: Bool

    /// A term sorting on `column`.
    public init(column: String, descending: Bool = false) {
        self.column = column
        self.descending = descending
    }

    /// `column ASC`.
    public static func ascending(_ column: String) -> YapDatabaseQueryOrder { YapDatabaseQueryOrder(column: column) }

    /// `column DESC`.
    public static func descending(_ column: String) -> YapDatabaseQueryOrder {
        YapDatabaseQueryOrder(column: column, descending: true)
    }
}

extension YapDatabaseQuery {
    /// A typed query: the rows where `condition` holds, in `orderBy`'s order, skipping `offset`
    /// and returning at most `limit`. Its ``queryString`` is the SQL text it compiles to (values
    /// inline, no parameters), and it runs exactly as that text does.
    ///
    /// - Parameters:
    ///   - condition: The `WHERE` condition, built from ``YapDatabaseQueryColumn``s.
    ///   - orderBy: `ORDER BY` terms, most significant first; ties order by row id.
    ///   - limit: At most this many rows; nil for all.
    ///   - offset: Rows to skip first.
    public static func `where`(
        _ condition: YapDatabaseQueryCondition, orderBy: [YapDatabaseQueryOrder] = [], limit: Int? = nil, offset: Int = 0
    ) -> YapDatabaseQuery {
        typed(condition.expression, orderBy: orderBy, limit: limit, offset: offset)
    }

    /// A typed query over every row, in `orderBy`'s order, skipping `offset` and returning at
    /// most `limit`.
    public static func all(orderBy: [YapDatabaseQueryOrder] = [], limit: Int? = nil, offset: Int = 0) -> YapDatabaseQuery {
        typed(nil, orderBy: orderBy, limit: limit, offset: offset)
    }

    /// A typed aggregate query: `function` over the rows where `condition` holds (every row
    /// when nil).
    ///
    /// - Parameters:
    ///   - function: The aggregate, such as `"SUM(salary)"` or `"COUNT(*)"`.
    ///   - condition: The `WHERE` condition; nil for every row.
    public static func aggregate(_ function: String, where condition: YapDatabaseQueryCondition? = nil) -> YapDatabaseQuery {
        let parsed = ParsedQuery(where: condition?.expression)
        return YapDatabaseQuery(aggregateFunction: function, queryString: parsed.sql, parameters: .success([]))
    }

    private static func typed(_ expression: QueryExpression?, orderBy: [YapDatabaseQueryOrder], limit: Int?, offset: Int) -> YapDatabaseQuery {
        let parsed = ParsedQuery(
            where: expression,
            orderBy: orderBy.map { OrderTerm(column: $0.column, descending: $0.descending) },
            limit: limit.map { .literal(.integer(Int64($0))) } ?? (offset != 0 ? .literal(.integer(-1)) : nil),
            offset: offset != 0 ? .literal(.integer(Int64(offset))) : nil
        )
        return YapDatabaseQuery(aggregateFunction: nil, queryString: parsed.sql, parameters: .success([]))
    }
}
