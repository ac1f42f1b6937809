import TestSupport
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
        // The prepared condition (the residual filter) selects the same rows as the evaluator.
        let order = SQLiteOracle.columns.keys.sorted()
        let prepared = evaluator.prepare(bound.whereClause, columnOrder: order)
        for (rowid, columns) in SQLiteOracle.rows {
            let stored = order.map { evaluator.storedValue($0, in: columns) }
            #expect(prepared.matches(stored) == evaluator.evaluate(where: bound.whereClause, row: columns), "\(text) row \(rowid)")
        }
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

/// The oracle's queries, mutated a character at a time: every variant parses or gives an error
/// inside the text, and whatever parses binds and runs without trapping.
@Suite struct MutatedQueryTests {
    @Test func mutationsNeverTrap() {
        var random = SeededRandom(seed: 0x6D75)
        let alphabet = Array("()'\"[]`?,;=<>!-+.*/%_eE0123456789 aANDORNOTINISLIKEBETWEENNULLX\u{E9}\u{1F600}\n")
        let evaluator = QueryEvaluator(columns: SQLiteOracle.columns)
        var parsedCount = 0
        for (text, _, _) in SQLiteOracle.queries {
            for _ in 0..<8 {
                var characters = Array(text)
                for _ in 0..<(1 + Int(random.next() % 3)) {
                    let position = Int(random.next() % UInt64(characters.count + 1))
                    let character = alphabet[Int(random.next() % UInt64(alphabet.count))]
                    switch random.next() % 3 {
                    case 0 where position < characters.count: characters.remove(at: position)
                    case 1 where position < characters.count: characters[position] = character
                    default: characters.insert(character, at: position)
                    }
                }
                let mutated = String(characters)
                do {
                    let parsed = try ParsedQuery(parsing: mutated, columns: SQLiteOracle.columns)
                    parsedCount += 1
                    let parameters = (0..<parsed.parameterCount).map { index -> QueryParameter in
                        parsed.listParameters.contains(index) && random.next() % 2 == 0 ? .list([.integer(1), .text("a")]) : .value(.integer(3))
                    }
                    if let bound = try? parsed.bind(parameters) {
                        _ = evaluator.run(bound, over: SQLiteOracle.rows)
                        _ = bound.whereClause?.constraint(on: "i", type: .integer)
                        _ = evaluator.prepare(bound.whereClause, columnOrder: ["i", "r", "n", "t"]).matches([.integer(1), .null, .text("a"), .real(2)])
                    }
                } catch {
                    #expect(error.offset >= 0 && error.offset <= mutated.count, "\(mutated): \(error)")
                }
            }
        }
        // Some mutations keep a valid query (a changed digit, a space), so both paths ran.
        #expect(parsedCount > 100)
    }
}
