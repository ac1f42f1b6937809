import Foundation
import Testing
import YapDB   // the only line a YapDatabase app changes

// Query construction as YapDatabase clients write it in Swift (Signal, ChatSecure, the
// YapDatabase Swift overlay's examples); running queries against an index is the secondary
// index's own test.

@Suite struct PortingQueryTests {
    @Test func queriesAreSpelledAsInYapDatabase() throws {
        let uuid = "6E0B5B0C"
        let byUUID = YapDatabaseQuery(string: "WHERE uuid = ?", parameters: [uuid])
        let everything = YapDatabaseQuery.queryMatchingAll()
        let ordered = YapDatabaseQuery(string: String(format: "ORDER BY %@", "sortId"), parameters: [])
        let salaries = YapDatabaseQuery(aggregateFunction: "SUM(salary)", string: "WHERE department = ?", parameters: ["dev"])
        let departments = YapDatabaseQuery(string: "WHERE title = ? AND department IN (?)", parameters: ["manager", ["dev", "ops"]])
        let quoted = YapDatabaseQuery(string: "WHERE (OTRAccountKeyColumn) = ?", parameters: ["account"])
        for query in [byUUID, everything, ordered, salaries, departments, quoted] {
            try query.validate()
        }
        #expect(byUUID.queryString == "WHERE uuid = ?")
        #expect(byUUID.queryParameters.first as? String == uuid)
        #expect(salaries.isAggregateQuery && salaries.aggregateFunction == "SUM(salary)")
        #expect(!everything.isAggregateQuery && everything.queryString.isEmpty)
    }

    @Test func aBadQueryIsAnErrorValue() {
        let query = YapDatabaseQuery(string: "WHERE uuid = = ?", parameters: ["x"])
        do {
            try query.validate()
            Issue.record("a malformed query validated")
        } catch let YapDatabaseError.invalidQuery(offset, reason) {
            #expect(offset == 13)
            #expect(reason.contains("unexpected"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func typedQueriesReadLikeSwift() throws {
        let adults = YapDatabaseQuery.where(.column("age") >= 18 && .column("name").like("a%"), orderBy: [.ascending("name")], limit: 20)
        #expect(adults.queryString == "WHERE age >= 18 AND name LIKE 'a%' ORDER BY name ASC LIMIT 20")
        try adults.validate()
    }
}
