/// An aggregate function of a YapDatabase aggregate query (`"SUM(salary)"`, `"COUNT(*)"`).
///
/// Threading: a plain value; safe to pass between threads.
package struct AggregateFunction: Sendable, Hashable {
    /// Which function.
    package enum Kind: String, Sendable, Hashable, CaseIterable {
        /// `COUNT(*)` (every matching row) or `COUNT(col)` (rows where `col` is not NULL).
        case count = "COUNT"
        /// `SUM(col)`: NULL over no values; an integer when every value is one, else a real.
        case sum = "SUM"
        /// `TOTAL(col)`: as SUM but always a real, 0.0 over no values.
        case total = "TOTAL"
        /// `AVG(col)`: a real, NULL over no values.
        case avg = "AVG"
        /// `MIN(col)`: the least non-NULL value in SQLite's order, NULL when none.
        case min = "MIN"
        /// `MAX(col)`: the greatest non-NULL value, NULL when none.
        case max = "MAX"
    }

    /// The function.
    package var kind: Kind
    /// The column aggregated; nil only for `COUNT(*)`.
    package var column: String?
    /// Whether `DISTINCT` was given (each distinct value counted once).
    package var distinct: Bool

    /// An aggregate from its parts.
    package init(_ kind: Kind, column: String?, distinct: Bool = false) {
        self.kind = kind
        self.column = column
        self.distinct = distinct
    }

    /// Parses `FUNC([DISTINCT] column)` or `COUNT(*)`, names ignoring case.
    ///
    /// - Parameter columns: The index's columns, when known (names resolve ignoring ASCII case;
    ///   an unknown one is an error).
    /// - Throws: ``QueryError`` with ``QueryError/Reason/invalidAggregate(_:)`` for anything else.
    package init(parsing text: String, columns: [String: ColumnType]? = nil) throws(QueryError) {
        let tokens: [QueryToken]
        do {
            tokens = try QueryLexer.tokens(of: text)
        } catch {
            throw QueryError(offset: ParsedQuery.characterOffset(ofScalar: error.offset, in: text), reason: .invalidAggregate(text))
        }
        let invalid = QueryError(offset: 0, reason: .invalidAggregate(text))
        guard tokens.count >= 5, case let .word(name) = tokens[0].kind,
              let kind = Kind(rawValue: name.uppercased()), tokens[1].isSymbol("(") else { throw invalid }
        var position = 2
        let distinct = tokens[position].isKeyword("DISTINCT")
        if distinct { position += 1 }
        var column: String?
        switch tokens[position].kind {
        case .symbol("*") where kind == .count && !distinct:
            column = nil
        case let .word(word):
            column = word
        case let .quotedIdentifier(quoted, _):
            column = quoted
        default:
            throw invalid
        }
        position += 1
        guard position + 1 < tokens.count, tokens[position].isSymbol(")"), tokens[position + 1].kind == .end else { throw invalid }
        if let name = column, let columns {
            guard let resolved = columns.keys.sorted().first(where: { $0.lowercased() == name.lowercased() }) else {
                throw QueryError(offset: tokens[position - 1].offset, reason: .unknownColumn(name))
            }
            column = resolved
        }
        self.init(kind, column: column, distinct: distinct)
    }

    /// The function as SQL text (`SUM(salary)`, `COUNT(*)`).
    package var sql: String {
        let argument = column.map(SQLRenderer.identifier) ?? "*"
        return "\(kind.rawValue)(\(distinct ? "DISTINCT " : "")\(argument))"
    }
}

extension QueryEvaluator {
    /// The value of `function` over every row matching `query`'s `WHERE` clause, by brute
    /// force, as YapDatabase runs an aggregate query (`SELECT function FROM table <query>`):
    /// `ORDER BY` does not change it, and `LIMIT`/`OFFSET` apply to the one result row, so
    /// `LIMIT 0` or an `OFFSET` of 1 or more leaves no row (`.null`, which the public API
    /// reports as nil).
    ///
    /// - Returns: The aggregate, or nil when an integer `SUM` overflows 64 bits (SQLite's
    ///   "integer overflow" error).
    package func aggregate(_ function: AggregateFunction, of query: BoundQuery, over rows: [QueryRow]) -> SQLValue? {
        if query.leavesNoAggregateRow { return .null }
        let matchingIDs = run(BoundQuery(whereClause: query.whereClause), over: rows)
        let byID = Dictionary(rows.map { ($0.rowid, $0.columns) }, uniquingKeysWith: { first, _ in first })
        guard let column = function.column else { return .integer(Int64(matchingIDs.count)) }
        var values = matchingIDs.map { storedValue(column, in: byID[$0] ?? [:]) }.filter { !$0.isNull }
        if function.distinct {
            var seen: [SQLValue] = []
            for value in values where !seen.contains(where: { SQLValue.compare($0, value) == 0 }) {
                seen.append(value)
            }
            values = seen
        }
        return Self.aggregate(function.kind, of: values)
    }

    /// A number as a double (0 for anything else).
    static func double(_ value: SQLValue?) -> Double {
        switch value {
        case let .integer(integer)?: return Double(integer)
        case let .real(real)?: return real
        default: return 0
        }
    }

    /// An aggregate of non-NULL `values` (already with column affinity applied); nil when an
    /// integer SUM overflows.
    package static func aggregate(_ kind: AggregateFunction.Kind, of values: [SQLValue]) -> SQLValue? {
        switch kind {
        case .count: return .integer(Int64(values.count))
        case .min: return values.min(by: { SQLValue.compare($0, $1) < 0 }) ?? .null
        // The first of equal maxima, as SQLite keeps (Swift's `max(by:)` keeps the last).
        case .max: return values.reduce(nil) { best, value in best.map { SQLValue.compare(value, $0) > 0 ? value : $0 } ?? value } ?? .null
        case .sum, .total, .avg:
            var integerSum: Int64 = 0
            var realSum = 0.0
            var allIntegers = true
            var overflowed = false
            for value in values {
                // An integer, or a text spelling one, adds as an integer; anything else (a
                // real, another text, a blob) adds its numeric value as a real and makes SUM's
                // result a real, as in SQLite.
                let number: SQLValue
                switch value {
                case .integer: number = value
                case let .text(text): number = SQLValue.number(fromText: text) ?? .real(Self.double(value.numericValue))
                default: number = .real(Self.double(value.numericValue))
                }
                switch number {
                case let .integer(integer):
                    realSum += Double(integer)
                    let (sum, overflow) = integerSum.addingReportingOverflow(integer)
                    integerSum = sum
                    overflowed = overflowed || overflow
                default:
                    realSum += Self.double(number)
                    allIntegers = false
                }
            }
            switch kind {
            case .total: return .real(realSum)
            case .avg: return values.isEmpty ? .null : .real(realSum / Double(values.count))
            default:
                if values.isEmpty { return .null }
                if allIntegers { return overflowed ? nil : .integer(integerSum) }
                return .real(realSum)
            }
        }
    }
}

extension BoundQuery {
    /// Whether `LIMIT`/`OFFSET` remove the single row an aggregate query returns: `LIMIT 0`,
    /// or an `OFFSET` of 1 or more (SQLite reads a negative `LIMIT` as none and a negative
    /// `OFFSET` as 0).
    package var leavesNoAggregateRow: Bool { limit == 0 || offset > 0 }
}
