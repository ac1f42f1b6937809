import Foundation
import YapDB

extension Demo {
    /// Step 8: a full-text index, ranked and counted queries, and a search results view fed by
    /// a search queue keystroke by keystroke.
    func searchAsYouType(_ database: YapDatabase, writer: YapDatabaseConnection, ui: YapDatabaseConnection) throws {
        let handler = YapDatabaseFullTextSearchHandler.withObjectBlock { _, dict, _, _, object in
            guard let person = object as? Person else { return }
            dict["name"] = person.name
            dict["field"] = person.field
        }
        let fts = YapDatabaseFullTextSearch(columnNames: ["name", "field"], options: nil, handler: handler,
                                            ftsVersion: YapDatabaseFullTextSearchFTS5Version, versionTag: "1")
        guard database.register(fts, withName: "peopleSearch") else { throw ToolFailure("registering the full-text index failed", code: 1) }
        let results = YapDatabaseSearchResultsView(fullTextSearchName: "peopleSearch", parentViewName: "byCentury", versionTag: "1",
                                                   options: nil)
        guard database.register(results, withName: "searchResults") else { throw ToolFailure("registering the results view failed", code: 1) }
        ui.beginLongLivedReadTransaction()
        do {
            try rankedAndCounted(ui)
        } catch {
            throw ToolFailure("searching failed: \(error)", code: 1)
        }
        let queue = YapDatabaseSearchQueue()
        for typed in ["g", "gr", "gra"] {
            queue.enqueueQuery("\"\(typed)\"*")
            print("   the user types \"\(typed)\": \(queue.enqueuedQueryCount()) quer\(queue.enqueuedQueryCount() == 1 ? "y" : "ies") waiting")
        }
        try writer.write { tx in (tx.ext("searchResults") as? YapDatabaseSearchResultsViewTransaction)?.performSearch(with: queue) }
        ui.beginLongLivedReadTransaction()
        ui.read { tx in
            guard let view = tx.ext("searchResults") as? YapDatabaseSearchResultsViewTransaction else { return }
            var names: [String] = []
            for group in ["1800s", "1900s"] {
                view.iterateKeysAndObjects(inGroup: group) { _, _, object, _, _ in
                    if let person = object as? Person { names.append(person.name) }
                }
            }
            print("   only the newest query ran (\(view.query())): \(names.joined(separator: ", "))")
        }
    }

    /// A count from the index alone, a ranked top 3, and a malformed query's typed error.
    func rankedAndCounted(_ ui: YapDatabaseConnection) throws {
        var failure: YapDatabaseError?
        ui.read { tx in
            guard let search = tx.ext("peopleSearch") as? YapDatabaseFullTextSearchTransaction else { return }
            do throws(YapDatabaseError) {
                let count = try search.numberOfMatches("comput* OR algorithms")
                print("   \"comput* OR algorithms\" matches \(count) people (counted from the index, no row loaded)")
                var ranked: [String] = []
                try search.searchRanked("field:comput* OR grace", limit: 3) { _, key, score, _ in
                    ranked.append("\(key) \(String(format: "%.2f", score))")
                }
                print("   ranked by bm25: \(ranked.joined(separator: ", "))")
            } catch {
                failure = error
                return
            }
            do throws(YapDatabaseError) {
                try search.search("grace AND") { _, _, _ in }
            } catch {
                print("   a malformed query is a typed error: \(error)")
            }
        }
        if let failure { throw failure }
    }
}
