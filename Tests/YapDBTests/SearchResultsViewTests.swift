import Foundation
import Testing
@testable import YapDB

/// YapDatabaseSearchResultsView as TestYapDatabaseSearchResultsView.m drives it: parent-view and
/// blocks modes, with and without snippets; the query shared with a second connection; rows
/// written after the search checked live; plus the search queue and the view's change sets.
@Suite(.serialized) struct SearchResultsViewTests {
    static let phrases = [
        "The duck quacks at midnight",
        "You take the red pill, you stay in Wonderland, and I show you how deep the rabbit hole goes.",
        "I am a fire gasoline. Come pour yourself all over me.",
        "I am enjoying my coffee.",
        "Are you gonna stay the night?",
        "What it is hoe? What's up?",
        "If Jimmy cracks corn and no one cares, then why does he keep doing it?",
    ]

    static func grouping() -> YapDatabaseViewGrouping { .withObjectBlock { _, _, _, _ in "" } }

    static func sorting() -> YapDatabaseViewSorting {
        .withObjectBlock { _, _, _, _, a, _, _, b in
            (a as? String ?? "").compare(b as? String ?? "")
        }
    }

    /// Registers the index and the results view (`parent`: through a parent view).
    static func setUp(_ database: YapDatabase, parent: Bool, snippets: Bool) {
        let handler = YapDatabaseFullTextSearchHandler.withObjectBlock { _, dict, _, _, object in
            if let text = object as? String { dict["content"] = text }
        }
        #expect(database.register(YapDatabaseFullTextSearch(columnNames: ["content"], handler: handler), withName: "fts"))
        let options = YapDatabaseSearchResultsViewOptions()
        if snippets {
            let snippetOptions = YapDatabaseFullTextSearchSnippetOptions()
            snippetOptions.numberOfTokens = 5
            options.snippetOptions = snippetOptions
        }
        let view: YapDatabaseSearchResultsView
        if parent {
            #expect(database.register(YapDatabaseAutoView(grouping: grouping(), sorting: sorting(), versionTag: "1"), withName: "order"))
            view = YapDatabaseSearchResultsView(fullTextSearchName: "fts", parentViewName: "order", versionTag: "1", options: options)
        } else {
            view = YapDatabaseSearchResultsView(fullTextSearchName: "fts", grouping: grouping(), sorting: sorting(), versionTag: "1",
                                                options: options)
        }
        #expect(database.register(view, withName: "results"))
    }

    static func keys(_ tx: YapDatabaseReadTransaction) -> [String] {
        guard let view = tx.ext("results") as? YapDatabaseSearchResultsViewTransaction else { return [] }
        var keys: [String] = []
        view.iterateKeys(inGroup: "") { _, key, _, _ in keys.append(key) }
        return keys
    }

    @Test(arguments: [(true, false), (true, true), (false, false), (false, true)])
    func yapDatabaseScenario(parent: Bool, snippets: Bool) throws {
        let fixture = try DatabaseFixture()
        let database = fixture.database!
        Self.setUp(database, parent: parent, snippets: snippets)
        let connection = database.newConnection(), connection2 = database.newConnection()
        try connection.write { tx in
            for (i, phrase) in Self.phrases.enumerated() { tx.setObject(phrase, forKey: "\(i)", inCollection: nil) }
        }
        connection.read { tx in
            #expect((tx.ext("results") as? YapDatabaseSearchResultsViewTransaction)?.numberOfItems(inGroup: "") == 0)
        }
        var snippetsBefore: [String: String] = [:]
        try connection.write { tx in
            let view = tx.ext("results") as! YapDatabaseSearchResultsViewTransaction
            view.performSearch(for: "the")
            #expect(view.numberOfItems(inGroup: "") == 3)
            #expect(Set(Self.keys(tx)) == ["0", "1", "4"])
            for key in ["0", "1", "4"] { snippetsBefore[key] = view.snippet(forKey: key, inCollection: nil) }
        }
        try connection.write { tx in
            let view = tx.ext("results") as! YapDatabaseSearchResultsViewTransaction
            view.performSearch(for: "the you")
            #expect(Set(Self.keys(tx)) == ["1", "4"])
            if snippets {
                for key in ["1", "4"] {
                    let snippet = view.snippet(forKey: key, inCollection: nil)
                    #expect(snippet != nil)
                    #expect(snippet != snippetsBefore[key])
                }
            } else {
                #expect(view.snippet(forKey: "1", inCollection: nil) == nil)
            }
        }
        connection2.read { tx in
            let view = tx.ext("results") as! YapDatabaseSearchResultsViewTransaction
            #expect(view.query() == "the you")
            #expect(view.numberOfItems(inGroup: "") == 2)
        }
        try connection.write { tx in
            tx.setObject("The more you know...", forKey: "7", inCollection: nil)
            tx.setObject("All I wanna do is take you downtown baby.", forKey: "8", inCollection: nil)
        }
        connection2.read { tx in
            let view = tx.ext("results") as! YapDatabaseSearchResultsViewTransaction
            #expect(view.numberOfItems(inGroup: "") == 3)
            #expect(Set(Self.keys(tx)) == ["1", "4", "7"])
            if snippets { #expect(view.snippet(forKey: "7", inCollection: nil) != nil) }
        }
        // An update that stops matching leaves; a removal leaves.
        try connection.write { tx in
            tx.setObject("nothing here", forKey: "7", inCollection: nil)
            tx.removeObject(forKey: "1", inCollection: nil)
        }
        connection.read { tx in #expect(Self.keys(tx) == ["4"]) }
    }

    @Test func aQueueRunsOnlyTheNewestQuery() throws {
        let fixture = try DatabaseFixture()
        let database = fixture.database!
        Self.setUp(database, parent: true, snippets: false)
        let connection = database.newConnection()
        try connection.write { tx in
            for (i, phrase) in Self.phrases.enumerated() { tx.setObject(phrase, forKey: "\(i)", inCollection: nil) }
        }
        let queue = YapDatabaseSearchQueue()
        queue.enqueueQuery("duc*")
        queue.enqueueQuery("coff*")
        #expect(queue.enqueuedQueries() == ["duc*", "coff*"])
        #expect(queue.enqueuedQueryCount() == 2)
        try connection.write { tx in (tx.ext("results") as! YapDatabaseSearchResultsViewTransaction).performSearch(with: queue) }
        #expect(queue.enqueuedQueryCount() == 0)
        connection.read { tx in
            #expect(Self.keys(tx) == ["3"])
            #expect((tx.ext("results") as! YapDatabaseSearchResultsViewTransaction).query() == "coff*")
        }
        // An abort that comes last: no search runs.
        queue.enqueueQuery("duck")
        queue.abortSearchInProgressAndRollback(false)
        #expect(queue.enqueuedQueryCount() == 1)
        try connection.write { tx in (tx.ext("results") as! YapDatabaseSearchResultsViewTransaction).performSearch(with: queue) }
        connection.read { tx in #expect(Self.keys(tx) == ["3"]) }
    }

    @Test func searchesAreChangesLikeAnyView() throws {
        let fixture = try DatabaseFixture()
        let database = fixture.database!
        Self.setUp(database, parent: false, snippets: false)
        let writer = database.newConnection(), reader = database.newConnection()
        try writer.write { tx in
            for (i, phrase) in Self.phrases.enumerated() { tx.setObject(phrase, forKey: "\(i)", inCollection: nil) }
        }
        _ = reader.beginLongLivedReadTransaction()
        let mappings = YapDatabaseViewMappings(groups: [""], view: "results")
        reader.read { tx in mappings.update(with: tx) }
        try writer.write { tx in (tx.ext("results") as! YapDatabaseSearchResultsViewTransaction).performSearch(for: "stay") }
        let notifications = reader.beginLongLivedReadTransaction()
        let changes = (reader.ext("results") as! YapDatabaseViewConnection).getChanges(forNotifications: notifications, withMappings: mappings)
        #expect(changes.rowChanges.filter { $0.type == .insert }.count == 2)
        #expect(mappings.numberOfItems(inGroup: "") == 2)
    }

    @Test(arguments: [true, false])
    func afterAReopenTheViewStartsEmptyAndSearchesAgain(parent: Bool) throws {
        let fixture = try DatabaseFixture()
        Self.setUp(fixture.database, parent: parent, snippets: false)
        try fixture.database.newConnection().write { tx in
            for (i, phrase) in Self.phrases.enumerated() { tx.setObject(phrase, forKey: "\(i)", inCollection: nil) }
            (tx.ext("results") as! YapDatabaseSearchResultsViewTransaction).performSearch(for: "the")
        }
        try fixture.database.checkpoint()
        try fixture.reopen()
        Self.setUp(fixture.database, parent: parent, snippets: false)
        let connection = fixture.database.newConnection()
        connection.read { tx in
            #expect((tx.ext("results") as! YapDatabaseSearchResultsViewTransaction).query() == "")
            #expect(Self.keys(tx).isEmpty)
        }
        try connection.write { tx in (tx.ext("results") as! YapDatabaseSearchResultsViewTransaction).performSearch(for: "am") }
        connection.read { tx in #expect(Set(Self.keys(tx)) == ["2", "3"]) }
        #expect(try fixture.database.verify().isValid)
    }

    @Test func registrationNeedsTheIndexAndTheParent() throws {
        let fixture = try DatabaseFixture()
        let view = YapDatabaseSearchResultsView(fullTextSearchName: "missing", grouping: Self.grouping(), sorting: Self.sorting(),
                                                versionTag: nil, options: nil)
        #expect(!fixture.database.register(view, withName: "results"))
        #expect(YapDatabaseSearchResultsViewOptions().isPersistent == false)
    }
}
