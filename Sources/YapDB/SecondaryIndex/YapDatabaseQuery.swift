import Foundation
import Synchronization
import YapDBQuery

/// A query for a secondary index: the part of an SQL query after `SELECT … FROM …`, with `?`
/// parameters, as YapDatabase spells it.
///
/// ```swift
/// let query = YapDatabaseQuery(string: "WHERE department = ? AND salary >= ?", parameters: [dept, 50_000])
/// let adults = YapDatabaseQuery(string: "WHERE age >= 18 ORDER BY name LIMIT 20")
/// let total = YapDatabaseQuery(aggregateFunction: "SUM(salary)", string: "WHERE department = ?", parameters: ["dev"])
/// ```
///
/// The language: `WHERE` with `=`/`==`, `!=`/`<>`, `<`, `<=`, `>`, `>=`, `IS [NOT]`,
/// `IS [NOT] DISTINCT FROM`, `IS [NOT] NULL`, `IS [NOT] TRUE`/`FALSE`, `[NOT] BETWEEN … AND …`, `[NOT] IN (…)` (a `?` there may be an array, whose
/// elements join the list; an empty array binds NULL, as in YapDatabase), `[NOT] LIKE` with `%`
/// and `_` (ASCII letters match either case) and an optional `ESCAPE`, `AND`, `OR`, `NOT`,
/// parentheses; column names bare or quoted (in double quotes, square brackets or backticks),
/// matched ignoring ASCII case; literals (integers, reals, `'text'` with `''`, `X'…'` blobs, `NULL`, `TRUE`,
/// `FALSE`); `ORDER BY col [ASC|DESC], …`; `LIMIT n [OFFSET m]` (either may be `?`). Values
/// follow SQLite's rules: each column's affinity (from its `YapDatabaseSecondaryIndexType`),
/// the conversions before a comparison, NULL's three-valued logic, and SQLite's order of values.
///
/// Parameters, as YapDatabase takes them: numbers (`Int`, `Int64`, `UInt…`, `Double`, `Float`,
/// `Bool`, `NSNumber`, `Decimal`), `String`/`NSString`, `Data`/`NSData` (a blob), `Date`/`NSDate`
/// (its `timeIntervalSinceReferenceDate`, as a real), `NSNull` or `nil` (NULL), and arrays of
/// those for `IN (?)`.
///
/// Creating a query never fails: the text is parsed once, when the query is first used with an
/// index (its column names resolve against that index's columns), and the result is kept for
/// reuse. A malformed query, an unknown column or unfitting parameters make that use throw
/// ``YapDatabaseError/invalidQuery(offset:reason:)``; ``validate()`` checks the text without an
/// index. For queries built in Swift with the compiler's checks, see
/// ``YapDatabaseQuery/where(_:orderBy:limit:offset:)``.
///
/// Threading: immutable; a query may be shared between threads and used by several
/// transactions at once.
public final class YapDatabaseQuery: Sendable, CustomStringConvertible {
    /// The query text, everything after `SELECT … FROM …` (for a typed query, the text it
    /// renders to).
    public let queryString: String

    /// The aggregate function (`"SUM(salary)"`, `"COUNT(*)"`, `"MIN(age)"`, …), or nil for a
    /// query that selects rows.
    public let aggregateFunction: String?

    /// The parameters converted to SQL values, or why one could not be.
    let parameterValues: Result<[QueryParameter], QueryError>

    /// A query over `string` with `parameters` for its `?`s, in order (YapDatabase's
    /// `queryWithString:parameters:`).
    ///
    /// - Parameters:
    ///   - string: Everything after `SELECT … FROM …`: `"WHERE uuid = ?"`, `"ORDER BY date"`,
    ///     or `""` for every row.
    ///   - parameters: One value per `?`; see the type's documentation for the types accepted.
    ///     An unsupported type is reported when the query is used, not here.
    public convenience init(string: String, parameters: [Any] = []) {
        self.init(aggregateFunction: nil, queryString: string, parameters: Self.convert(parameters))
    }

    /// An aggregate query: `aggregateFunction` (`COUNT(*)`, `COUNT(col)`, `SUM`, `TOTAL`, `AVG`,
    /// `MIN`, `MAX`, each optionally with `DISTINCT`) over the rows `string` selects
    /// (YapDatabase's `queryWithAggregateFunction:string:parameters:`).
    ///
    /// - Parameters:
    ///   - aggregateFunction: The function and its column, such as `"SUM(salary)"`.
    ///   - string: The query text selecting the rows.
    ///   - parameters: One value per `?` in `string`.
    public convenience init(aggregateFunction: String, string: String, parameters: [Any] = []) {
        self.init(aggregateFunction: aggregateFunction, queryString: string, parameters: Self.convert(parameters))
    }

    /// The designated initializer: every other one converts its parameters first.
    init(aggregateFunction: String?, queryString: String, parameters: Result<[QueryParameter], QueryError>) {
        self.aggregateFunction = aggregateFunction
        self.queryString = queryString
        self.parameterValues = parameters
    }

    /// A query with no clauses: every row of the index, in row-id order (YapDatabase's
    /// `queryMatchingAll`).
    public class func queryMatchingAll() -> YapDatabaseQuery {
        YapDatabaseQuery(string: "")
    }

    /// The parameters as the query holds them: integers as `Int64`, reals as `Double` (a date
    /// has become its `timeIntervalSinceReferenceDate`), texts as `String`, blobs as `Data`,
    /// NULL as `NSNull`, arrays as `[Any]`. Empty when a parameter had an unsupported type.
    public var queryParameters: [Any] {
        guard case let .success(parameters) = parameterValues else { return [] }
        return parameters.map { parameter -> Any in
            switch parameter {
            case let .value(value): return Self.object(for: value)
            case let .list(values): return values.map(Self.object(for:))
            }
        }
    }

    /// Whether this is an aggregate query (it has an ``aggregateFunction``).
    public var isAggregateQuery: Bool { aggregateFunction != nil }

    /// The query text, with the aggregate function first for an aggregate query.
    public var description: String {
        if let aggregateFunction { return "SELECT \(aggregateFunction) … \(queryString)" }
        return queryString
    }

    /// Checks the query's grammar, its aggregate function and its parameters (count and types)
    /// without an index; column names are checked only when the query is used with one.
    ///
    /// - Throws: ``YapDatabaseError/invalidQuery(offset:reason:)`` naming the position and the
    ///   problem.
    public func validate() throws(YapDatabaseError) {
        do {
            let parsed = try ParsedQuery(parsing: queryString)
            _ = try parsed.bind(try parameterValues.get())
            if let aggregateFunction { _ = try AggregateFunction(parsing: aggregateFunction) }
        } catch {
            throw Self.publicError(error)
        }
    }

    // MARK: For the secondary index (module-internal)

    /// The query parsed against an index's `columns` (names resolved to their spelling there),
    /// parsed once per text and column set (`SharedParseCache`; an index also keeps its own
    /// parses, so a query object holds none: it stays cheap to make and to drop per call).
    ///
    /// - Throws: ``YapDatabaseError/invalidQuery(offset:reason:)``.
    func parsed(columns: [String: ColumnType]) throws(YapDatabaseError) -> ParsedQuery {
        do { return try SharedParseCache.parsed(queryString, columns: columns).get() } catch { throw Self.publicError(error) }
    }

    /// The query parsed against `columns` with its parameters bound: what the planner plans
    /// and the evaluator runs.
    ///
    /// - Throws: ``YapDatabaseError/invalidQuery(offset:reason:)``.
    func bound(columns: [String: ColumnType]) throws(YapDatabaseError) -> BoundQuery {
        let parsed = try parsed(columns: columns)
        do { return try parsed.bind(try parameterValues.get()) } catch { throw Self.publicError(error) }
    }

    /// The aggregate function parsed against `columns`, or nil for a query that selects rows.
    ///
    /// - Throws: ``YapDatabaseError/invalidQuery(offset:reason:)``.
    func aggregate(columns: [String: ColumnType]) throws(YapDatabaseError) -> AggregateFunction? {
        guard let aggregateFunction else { return nil }
        do { return try AggregateFunction(parsing: aggregateFunction, columns: columns) } catch { throw Self.publicError(error) }
    }

    /// Whether the query has no parameters (its bound form then depends on its text alone).
    var hasNoParameters: Bool {
        if case let .success(parameters) = parameterValues { parameters.isEmpty } else { false }
    }

    /// The public error for a query error.
    static func publicError(_ error: QueryError) -> YapDatabaseError {
        .invalidQuery(offset: error.offset, reason: error.problem)
    }
}

/// Parses shared by every `YapDatabaseQuery` with the same text and index columns, so the usual
/// pattern — a new query object per call with the same text and new parameters — parses the
/// text once. Bounded: when full it starts over (queries are few distinct texts in practice).
///
/// Threading: one `Mutex` around the table; parsing happens outside it.
package enum SharedParseCache {
    struct Key: Hashable {
        let text: String
        let columns: [String: ColumnType]
    }

    /// The most parses kept.
    static let capacity = 256

    private static let entries = Mutex<[Key: Result<ParsedQuery, QueryError>]>([:])

    /// The parse of `text` against `columns`, from the table or made now and kept.
    static func parsed(_ text: String, columns: [String: ColumnType]) -> Result<ParsedQuery, QueryError> {
        let key = Key(text: text, columns: columns)
        if let known = entries.withLock({ $0[key] }) { return known }
        let parsed = Result { () throws(QueryError) -> ParsedQuery in try ParsedQuery(parsing: text, columns: columns) }
        entries.withLock { table in
            if table.count >= capacity { table.removeAll(keepingCapacity: true) }
            table[key] = parsed
        }
        return parsed
    }

    /// How many parses are kept (for tests).
    static var count: Int { entries.withLock { $0.count } }

    /// Forgets every kept parse. For the fuzz harness, which empties the table after each input:
    /// LeakSanitizer reports the kept parses as leaked, because it does not follow the pointers
    /// Swift stores inside enum payloads (a `QueryExpression` tree reachable only from this table
    /// looks unreachable to it), so a held parse and a lost one would look the same.
    package static func removeAll() {
        entries.withLock { $0.removeAll() }
    }
}
