import Testing
@testable import YapDBQuery

@Suite struct SmokeTests {
    @Test func parsesBindsAndRunsASimpleQuery() throws {
        let columns: [String: ColumnType] = ["age": .integer, "name": .text]
        let parsed = try ParsedQuery(parsing: "WHERE age >= ? AND name LIKE 'a%' ORDER BY age DESC LIMIT 2", columns: columns)
        #expect(parsed.parameterCount == 1)
        let bound = try parsed.bind([.value(.integer(18))])
        let rows: [QueryRow] = [
            (1, ["age": .integer(20), "name": .text("alice")]),
            (2, ["age": .text("30"), "name": .text("Anna")]),
            (3, ["age": .integer(10), "name": .text("al")]),
            (4, ["age": .integer(40), "name": .text("bob")]),
        ]
        #expect(QueryEvaluator(columns: columns).run(bound, over: rows) == [2, 1])
    }
}
