/// One row for the brute-force evaluator: its row id and its column values.
package typealias QueryRow = (rowid: Int64, columns: [String: SQLValue])

extension QueryEvaluator {
    /// The row ids matching `query`, in its order: the `ORDER BY` terms (SQLite's value order,
    /// NULLs first ascending and last descending), ties by row id ascending; then `OFFSET` and
    /// `LIMIT`.
    package func run(_ query: BoundQuery, over rows: [QueryRow]) -> [Int64] {
        let matching = rows.filter { row in
            evaluate(where: query.whereClause) { row.columns[$0] ?? .null }
        }
        let ordered = matching.sorted { lhs, rhs in
            let order = self.order(lhs, rhs, by: query.orderBy)
            return order != 0 ? order < 0 : lhs.rowid < rhs.rowid
        }
        let afterOffset = ordered.dropFirst(query.offset)
        let limited = query.limit.map { afterOffset.prefix($0) } ?? afterOffset
        return limited.map(\.rowid)
    }

    /// The order of two rows by `terms` (negative when `lhs` comes first, zero on a tie),
    /// comparing each term's column with its affinity applied.
    package func order(_ lhs: QueryRow, _ rhs: QueryRow, by terms: [OrderTerm]) -> Int {
        for term in terms {
            let left = storedValue(term.column, in: lhs.columns)
            let right = storedValue(term.column, in: rhs.columns)
            let order = SQLValue.compare(left, right)
            if order != 0 { return term.descending ? -order : order }
        }
        return 0
    }

    /// A column's value in `row` as the index stores it: the column's affinity applied, NULL
    /// when the row has no value.
    package func storedValue(_ column: String, in row: [String: SQLValue]) -> SQLValue {
        let raw = row[column] ?? .null
        return columns[column].map { raw.applying($0) } ?? raw
    }
}
