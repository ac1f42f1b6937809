import Foundation
import XCTest
import YapDB

/// YapDatabase's TestYapDatabaseSearchResultsView, written as its Swift users write it: a parent
/// view or blocks, memory or persistent, with or without snippets; the query seen by a second
/// connection; rows written after the search checked live. The persistent variants also reopen
/// the database and find the query and results still there.
final class PortingSearchResultsViewTests: PortingTestCase {
    let originalPhrases = [
        "0": "The duck quacks at midnight",
        "1": "You take the red pill, you stay in Wonderland, and I show you how deep the rabbit hole goes.",
        "2": "I am a fire gasoline. Come pour yourself all over me.",
        "3": "I am enjoying my coffee.",
        "4": "Are you gonna stay the night?",
        "5": "What it is hoe? What's up?",
        "6": "If Jimmy cracks corn and no one cares, then why does he keep doing it?",
    ]

    func test1_parentView_memory_withoutSnippets() throws { try run(parent: true, persistent: false, snippets: false) }
    func test1_parentView_memory_withSnippets() throws { try run(parent: true, persistent: false, snippets: true) }
    func test1_parentView_persistent_withoutSnippets() throws { try run(parent: true, persistent: true, snippets: false) }
    func test1_parentView_persistent_withSnippets() throws { try run(parent: true, persistent: true, snippets: true) }
    func test1_blocks_memory_withoutSnippets() throws { try run(parent: false, persistent: false, snippets: false) }
    func test1_blocks_memory_withSnippets() throws { try run(parent: false, persistent: false, snippets: true) }
    func test1_blocks_persistent_withoutSnippets() throws { try run(parent: false, persistent: true, snippets: false) }
    func test1_blocks_persistent_withSnippets() throws { try run(parent: false, persistent: true, snippets: true) }

    func options(persistent: Bool, snippets: Bool) -> YapDatabaseSearchResultsViewOptions {
        let searchViewOptions = YapDatabaseSearchResultsViewOptions()
        searchViewOptions.isPersistent = persistent
        if snippets {
            let snippetOptions = YapDatabaseFullTextSearchSnippetOptions()
            snippetOptions.numberOfTokens = 5
            searchViewOptions.snippetOptions = snippetOptions
        }
        return searchViewOptions
    }

    /// Registers "order" (parent mode), "fts" and "searchResults" as the YapDatabase test does.
    func register(_ database: YapDatabase, parent: Bool, options: YapDatabaseSearchResultsViewOptions) {
        let grouping = YapDatabaseViewGrouping.withKeyBlock { (transaction, collection, key) -> String? in "" }
        let sorting = YapDatabaseViewSorting.withObjectBlock { (transaction, group, collection1, key1, obj1, collection2, key2, obj2) in
            (obj1 as! String).compare(obj2 as! String, options: .literal)
        }
        if parent {
            let viewOptions = YapDatabaseViewOptions()
            viewOptions.isPersistent = false
            let view = YapDatabaseAutoView(grouping: grouping, sorting: sorting, versionTag: "1", options: viewOptions)
            XCTAssertTrue(database.register(view, withName: "order"), "Failure registering view extension")
        }
        let handler = YapDatabaseFullTextSearchHandler.withObjectBlock { (transaction, dict, collection, key, object) in
            dict["content"] = object
        }
        let fts = YapDatabaseFullTextSearch(columnNames: ["content"], handler: handler)
        XCTAssertTrue(database.register(fts, withName: "fts"), "Failure registering fts extension")
        let searchResultsView = parent
            ? YapDatabaseSearchResultsView(fullTextSearchName: "fts", parentViewName: "order", versionTag: "1", options: options)
            : YapDatabaseSearchResultsView(fullTextSearchName: "fts", grouping: grouping, sorting: sorting, versionTag: "1", options: options)
        XCTAssertTrue(database.register(searchResultsView, withName: "searchResults"), "Failure registering searchResults extension")
    }

    func run(parent: Bool, persistent: Bool, snippets: Bool) throws {
        let databaseURL = directory.appendingPathComponent("search.sqlite")
        let searchViewOptions = options(persistent: persistent, snippets: snippets)
        try firstLaunch(databaseURL, parent: parent, options: searchViewOptions)

        // Beyond YapDatabase's test: a reopen keeps a persistent view's query and results.
        let reopened = try XCTUnwrap(YapDatabase(url: databaseURL))
        register(reopened, parent: parent, options: searchViewOptions)
        reopened.newConnection().read { transaction in
            let searchResults = transaction.ext("searchResults") as! YapDatabaseSearchResultsViewTransaction
            XCTAssertEqual(searchResults.query(), persistent ? "the you" : "")
            XCTAssertEqual(searchResults.numberOfItems(inGroup: ""), persistent ? 3 : 0)
        }
    }

    /// The YapDatabase test itself; the database is closed at the end (the native `close()`).
    func firstLaunch(_ databaseURL: URL, parent: Bool, options searchViewOptions: YapDatabaseSearchResultsViewOptions) throws {
        let database = try XCTUnwrap(YapDatabase(url: databaseURL))
        register(database, parent: parent, options: searchViewOptions)

        let connection1 = database.newConnection(), connection2 = database.newConnection()
        connection1.name = "connection1"
        connection2.name = "connection2"
        connection1.readWrite { transaction in
            for (key, phrase) in self.originalPhrases { transaction.setObject(phrase, forKey: key, inCollection: nil) }
            let count = (transaction.ext("searchResults") as! YapDatabaseAutoViewTransaction).numberOfItems(inGroup: "")
            XCTAssertEqual(count, 0)
        }

        var snippetsByKey: [YapCollectionKey: String] = [:]
        func search(_ query: String, expected: UInt, snippetsMustChange: Bool) {
            connection1.readWrite { transaction in
                let searchResults = transaction.ext("searchResults") as! YapDatabaseSearchResultsViewTransaction
                searchResults.performSearch(for: query)
                searchResults.iterateKeysAndObjects(inGroup: "") { collection, key, object, index, stop in
                    guard searchViewOptions.snippetOptions != nil else { return }
                    let snippet = searchResults.snippet(forKey: key, inCollection: collection)
                    XCTAssertNotNil(snippet, "Expected a snippet")
                    let ck = YapCollectionKey(collection: collection, key: key)
                    if snippetsMustChange { XCTAssertNotEqual(snippet, snippetsByKey[ck], "Expected a diff snippet vs last time") }
                    snippetsByKey[ck] = snippet
                }
                XCTAssertEqual(searchResults.numberOfItems(inGroup: ""), expected)
            }
            for connection in [connection1, connection2] {
                connection.read { transaction in
                    let searchResults = transaction.ext("searchResults") as! YapDatabaseSearchResultsViewTransaction
                    XCTAssertEqual(searchResults.query(), query)
                    XCTAssertEqual(searchResults.numberOfItems(inGroup: ""), expected)
                }
            }
        }
        search("the", expected: 3, snippetsMustChange: false)
        search("the you", expected: 2, snippetsMustChange: true)

        // Rows that match the query show up without a new search.
        connection1.readWrite { transaction in
            transaction.setObject("The more you know...", forKey: "7", inCollection: nil)
            transaction.setObject("All I wanna do is take you downtown baby.", forKey: "8", inCollection: nil)
            let searchResults = transaction.ext("searchResults") as! YapDatabaseSearchResultsViewTransaction
            XCTAssertEqual(searchResults.numberOfItems(inGroup: ""), 3)
            if searchViewOptions.snippetOptions != nil {
                searchResults.iterateKeys(inGroup: "") { collection, key, index, stop in
                    XCTAssertNotNil(searchResults.snippet(forKey: key, inCollection: collection), "Expected a snippet")
                }
            }
        }
        try database.close()
    }
}
