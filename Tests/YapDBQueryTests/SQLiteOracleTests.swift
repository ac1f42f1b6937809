import Testing
@testable import YapDBQuery

/// The evaluator against SQLite's own answers (SQLiteOracle.swift, generated from SQLite by
/// generate_sqlite_oracle.py): affinity on store, 600 seeded queries from the grammar with
/// their parameters, ORDER BY and LIMIT, and the aggregates.
@Suite struct SQLiteOracleTests {
    let evaluator = QueryEvaluator(columns: SQLiteOracle.columns)

    @Test func affinityOnStoreMatchesSQLite() {
        for (rowid, columns) in SQLiteOracle.rows {
            for (name, raw) in columns {
                let expected = SQLiteOracle.stored[rowid]?[name]
                let stored = raw.applying(SQLiteOracle.columns[name]!)
                #expect(stored == expected, "row \(rowid) column \(name): \(raw) stored as \(stored), SQLite: \(String(describing: expected))")
                // And the storage class agrees (== is structural, but say it plainly).
                #expect(stored.storageRank == expected?.storageRank)
            }
        }
    }

    @Test(arguments: SQLiteOracle.queries.indices)
    func queryMatchesSQLite(_ index: Int) throws {
        let (text, parameters, expected) = SQLiteOracle.queries[index]
        let parsed = try ParsedQuery(parsing: text, columns: SQLiteOracle.columns)
        let bound = try parsed.bind(parameters.map { .value($0) })
        let result = evaluator.run(bound, over: SQLiteOracle.rows)
        #expect(result == expected, "\(text) with \(parameters)")
        // The same query rendered to text and parsed again gives the same rows.
        let reparsed = try ParsedQuery(parsing: parsed.sql, columns: SQLiteOracle.columns)
        #expect(reparsed == parsed, "\(parsed.sql)")
    }

    @Test func aggregatesMatchSQLite() throws {
        for (function, text, expected) in SQLiteOracle.aggregates {
            let aggregate = try AggregateFunction(parsing: function, columns: SQLiteOracle.columns)
            let bound = try ParsedQuery(parsing: text, columns: SQLiteOracle.columns).bind([])
            let result = evaluator.aggregate(aggregate, of: bound, over: SQLiteOracle.rows)
            switch (result, expected) {
            case let (.real(ours)?, .real(theirs)?):
                // SQLite's sums may round differently in the last bits.
                #expect(ours == theirs || abs(ours - theirs) <= abs(theirs) * 1e-12, "\(function) \(text)")
            default:
                #expect(result == expected, "\(function) \(text): \(String(describing: result)) vs SQLite \(String(describing: expected))")
            }
        }
    }
}
