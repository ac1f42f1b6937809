import YapDBEngine
import YapDBQuery

/// Counts, aggregates and `explain` of the executor. `COUNT` of an exact plan is a sum of
/// range sizes read from the trees' subtree counts (O(log n) per range); `MIN`/`MAX` of a
/// column the plan ranges over (or of every row) is the first non-NULL entry of that column's
/// tree in the range; the other aggregates read the candidates' stored values (never objects).
extension SecondaryIndexExecutor {
    /// The number of rows matching `whereClause`.
    func count(where whereClause: QueryExpression?) throws(EngineError) -> Int {
        guard let whereClause else { return state.rowCount }
        let (_, prepared, check) = try prepared(whereClause)
        if !check {
            switch prepared {
            case .nothing: return 0
            case .everything: return state.rowCount
            case let .rowids(rowids):
                var total = 0
                for rowid in rowids where try state.contains(rowid) { total += 1 }
                return total
            case let .ranges(column, ranges): return try rangeCount(column, ranges)
            default:
                var total = 0
                try forEachCandidate(prepared) { _, _ in total += 1; return true }
                return total
            }
        }
        var total = 0
        try run(BoundQuery(whereClause: whereClause)) { _, _, _ in total += 1; return true }
        return total
    }

    /// The value of `function` over the rows of `query` (its order, limit and offset, if any,
    /// apply first; the public aggregate passes the `WHERE` clause alone, as YapDatabase's
    /// `SELECT function FROM table <query>` counts every matching row); nil when an integer
    /// `SUM` overflows. `column` is the position of the function's column among the index's
    /// columns (nil for `COUNT(*)` and `rowid`), resolved once by the caller.
    func aggregate(_ function: AggregateFunction, of query: BoundQuery, column: Int?) throws(EngineError) -> SQLValue? {
        let unbounded = query.limit == nil && query.offset == 0
        // Cases matched by pattern: `==` on the kind would compare its raw value, a string.
        if unbounded, case .count = function.kind, function.column == nil {
            return .integer(Int64(try count(where: query.whereClause)))
        }
        let maximum: Bool? = switch function.kind {
        case .min: false
        case .max: true
        default: nil
        }
        if unbounded, !function.distinct, let maximum, let column,
           let value = try extreme(column: column, maximum: maximum, where: query.whereClause) {
            return value
        }
        var rows: [QueryRow] = []
        var failure: EngineError?
        try run(query) { rowid, known, _ in
            do throws(EngineError) {
                let read: [SQLValue]? = if let known { known } else { try rowValues(rowid) }
                guard let values = read else { return true }
                var dict: [String: SQLValue] = [:]
                for (i, name) in valueOrder.enumerated() { dict[name] = values[i] }
                rows.append((Int64(bitPattern: rowid), dict))
            } catch {
                failure = error
                return false
            }
            return true
        }
        if let failure { throw failure }
        return evaluator.aggregate(function, of: BoundQuery(whereClause: nil), over: rows)
    }

    /// `MIN` or `MAX` of `column` from its tree, when the plan of `whereClause` is exact and
    /// ranges over that column (or is every row); nil when the plan does not allow it (the
    /// caller then reads the candidates). `.null` when no non-NULL value matches.
    func extreme(column: Int, maximum: Bool, where whereClause: QueryExpression?) throws(EngineError) -> SQLValue? {
        let ranges: [ColumnRange]
        if whereClause == nil {
            if let value = try Self.edgeExtreme(state, column: column, type: columns[column].type, maximum: maximum) { return value }
            ranges = Self.nonNullRanges
        } else {
            let (_, prepared, check) = try prepared(whereClause)
            guard !check, let planned = streamableRanges(prepared, column: column) else { return nil }
            // Skip NULLs: start above them (or end there, walking down).
            ranges = planned.map { SecondaryIndexPlanner.overlap($0, Self.nonNullRanges[0]) }
        }
        return try walkExtreme(column: column, maximum: maximum, ranges: ranges)
    }

    /// `MIN` or `MAX` of `column` over `ranges` of its tree (in order, or reversed for `MAX`):
    /// the first entry's value, or, when that value was cut to the key limit, the least (or
    /// greatest) stored value among the entries sharing its prefix. `.null` when the ranges
    /// hold no entry.
    func walkExtreme(column: Int, maximum: Bool, ranges: [ColumnRange]) throws(EngineError) -> SQLValue {
        var found: SQLValue? = nil
        let tree = state.columns[column]
        let type = columns[column].type
        for range in maximum ? ranges.reversed() : ranges {
            var group: [UInt64] = []
            var prefix: [UInt8] = []
            try tree.forEachInKeyRange(from: range.lower, to: range.upper, reversed: maximum) { key, _ in
                let value = OrderedKeyEncoding.valueBytes(ofKey: key)
                if group.isEmpty {
                    // A whole number in a numeric column settles it from its key alone.
                    if !OrderedKeyEncoding.isTruncated(value), let number = SecondaryIndexRow.number(fromKey: value, type: type) {
                        found = number
                        return false
                    }
                    prefix = Array(value)
                } else if !prefix.withUnsafeBytes({ sameBytes($0, value) }) {
                    return false
                }
                group.append(OrderedKeyEncoding.rowid(ofKey: key))
                // One entry settles it unless the value was cut (then its equals decide).
                return OrderedKeyEncoding.isTruncated(value)
            }
            if found != nil { break }
            var candidates: [SQLValue] = []
            for rowid in group { if let values = try state.values(ofRow: rowid) { candidates.append(values[column]) } }
            let best = maximum ? candidates.max { SQLValue.compare($0, $1) < 0 } : candidates.min { SQLValue.compare($0, $1) < 0 }
            if let best {
                found = best
                break
            }
        }
        return found ?? .null
    }

    /// `MIN` or `MAX` of `column` (of `type`) over every row of `state`, from the one entry at
    /// the edge of its tree when that settles it: no entry, or a NULL last entry (every value
    /// is NULL), gives `.null`; a number gives itself (from its key); a value not cut to the
    /// key limit gives the row's stored value. Otherwise nil — NULLs come first, or the value
    /// was cut (its equals decide) — and the caller walks the non-NULL range
    /// (`walkExtreme` over `nonNullRanges`). Static, on the state alone: the shortest path
    /// from a prepared aggregate to the tree.
    static func edgeExtreme(_ state: SecondaryIndexState, column: Int, type: YapDatabaseSecondaryIndexType,
                            maximum: Bool) throws(EngineError) -> SQLValue? {
        var entry: OrderedKeyEncoding.EntryValue? = nil
        guard try state.columns.withEdgeEntry(ofTree: column, last: maximum, { key, _ in
            entry = OrderedKeyEncoding.entryValue(ofKey: key)
        }) else { return .null }
        switch entry {
        case .null?:
            return maximum ? .null : nil
        case let .number(number, rowid)?:
            if let value = SecondaryIndexRow.value(of: number, type: type) { return value }
            return try state.values(ofRow: rowid)?[column]
        case let .stored(rowid)?:
            return try state.values(ofRow: rowid)?[column]
        case .truncated?, nil:
            return nil
        }
    }

    /// Every non-NULL value of a column: the range `MIN`/`MAX` walk (made once).
    static let nonNullRanges = [ColumnRange(lower: SecondaryIndexPlanner.aboveNull, upper: nil, condition: "every non-NULL value")]

    // MARK: Explain

    /// The plan of `query` as text: the candidate source with estimated sizes, whether each
    /// candidate is checked against the `WHERE` clause, and how rows are ordered.
    func explain(_ query: BoundQuery) throws(EngineError) -> String {
        let (planned, prepared, check) = try prepared(query.whereClause)
        var lines: [String] = []
        try describe(planned.plan, indent: "", into: &lines)
        lines.append(check ? "check: each candidate against WHERE" : "check: none (the ranges are exact)")
        if query.orderBy.isEmpty {
            lines.append("order: index order")
        } else if let column = columnIndex(query.orderBy[0].column), streamableRanges(prepared, column: column) != nil {
            // OFFSET and LIMIT may each be near Int.max: the sum saturates instead of trapping.
            let stop = query.limit.map { limit in
                let (rows, overflow) = query.offset.addingReportingOverflow(limit)
                return ", stops after \(overflow ? Int.max : rows) rows"
            } ?? ""
            lines.append("order: streamed from column \(columns[column].name)\(query.orderBy[0].descending ? " descending" : "")\(stop)")
        } else {
            lines.append("order: sorted in memory")
        }
        return lines.joined(separator: "\n")
    }

    private func describe(_ plan: SecondaryIndexPlan, indent: String, into lines: inout [String]) throws(EngineError) {
        switch plan {
        case .nothing:
            lines.append(indent + "no rows")
        case .everything:
            lines.append(indent + "scan every row (\(state.rowCount) rows)")
        case let .rowids(rowids):
            lines.append(indent + "rows by id: \(rowids.count) listed")
        case let .ranges(column, ranges):
            var conditions: [String] = []
            for range in ranges where !conditions.contains(range.condition.description) { conditions.append(range.condition.description) }
            lines.append(indent + "range of column \(columns[column].name): \(conditions.joined(separator: "; ")) (\(try estimate(plan)) rows)")
        case let .intersection(parts):
            lines.append(indent + "intersect (\(try estimate(plan)) rows at most):")
            for part in parts { try describe(part, indent: indent + "  ", into: &lines) }
        case let .union(parts):
            lines.append(indent + "union (\(try estimate(plan)) rows at most):")
            for part in parts { try describe(part, indent: indent + "  ", into: &lines) }
        }
    }
}
