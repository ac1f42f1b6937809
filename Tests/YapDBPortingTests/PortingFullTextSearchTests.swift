import Foundation
import XCTest
import YapDB

/// Full-text search written the way Signal, ChatSecure and Stage1st wrote it against
/// YapDatabase from Swift, against `import YapDB` only.
final class PortingFullTextSearchTests: PortingTestCase {
    final class TSMessage: NSObject, Codable {
        let body: String
        init(body: String) { self.body = body }
    }

    /// Signal's FullTextSearchFinder: one `content` column, FTS5, quoted prefix terms, snippets
    /// without marks, at most 500 results.
    func testSignalStyleQuotedPrefixSearchWithSnippetsAndACap() throws {
        let database = try XCTUnwrap(YapDatabase(url: directory.appendingPathComponent("signal.sqlite")))
        database.registerCodableSerialization(TSMessage.self, forCollection: "TSInteraction")
        let handler = YapDatabaseFullTextSearchHandler.withObjectBlock { (transaction, dict, collection, key, object) in
            if let message = object as? TSMessage {
                dict["content"] = message.body
            }
        }
        let fts = YapDatabaseFullTextSearch(columnNames: ["content"], options: nil, handler: handler,
                                            ftsVersion: YapDatabaseFullTextSearchFTS5Version, versionTag: "1")
        XCTAssertTrue(database.register(fts, withName: "FullTextSearchFinderExtension"))
        let connection = database.newConnection()
        connection.readWrite { transaction in
            let bodies = ["Hello Alice", "Goodbye Alice", "Hello Book Club", "Goodbye Book Club",
                          "My phone number is: 321-321-4321", "My fax is: 222-333-4444"]
            for (i, body) in bodies.enumerated() {
                transaction.setObject(TSMessage(body: body), forKey: "m\(i)", inCollection: "TSInteraction")
            }
            for i in 0..<600 {
                transaction.setObject(TSMessage(body: "bulk message \(i)"), forKey: "bulk\(i)", inCollection: "TSInteraction")
            }
        }
        func search(_ query: String) -> [String] {
            var keys: [String] = []
            connection.read { transaction in
                guard let ext = transaction.ext("FullTextSearchFinderExtension") as? YapDatabaseFullTextSearchTransaction else {
                    return XCTFail("no extension")
                }
                let snippetOptions = YapDatabaseFullTextSearchSnippetOptions()
                snippetOptions.startMatchText = ""
                snippetOptions.endMatchText = ""
                ext.enumerateKeysAndObjects(matching: query, with: snippetOptions) { (snippet: String, _: String, key: String, object: Any, stop: UnsafeMutablePointer<ObjCBool>) in
                    XCTAssertFalse(snippet.isEmpty)
                    XCTAssertFalse(snippet.contains("<b>"))
                    keys.append(key)
                    if keys.count >= 500 { stop.pointee = true }
                }
            }
            return keys
        }
        XCTAssertEqual(search("\"Hel\"*").count, 2)
        XCTAssertEqual(search("\"Ali\"* \"Hel\"*"), ["m0"])
        XCTAssertEqual(Set(search("\"CLU\"*")), ["m2", "m3"])
        XCTAssertEqual(search("\"3213\"* \"phone\"*"), [])
        XCTAssertEqual(search("\"321\"* \"phone\"*"), ["m4"])
        XCTAssertEqual(search("\"bulk\"*").count, 500)
    }

    final class OTRBuddy: NSObject, Codable {
        let username: String
        let displayName: String
        init(username: String, displayName: String) {
            self.username = username
            self.displayName = displayName
        }
    }

    /// ChatSecure: two columns, a search results view over the buddy list, fed by a search
    /// queue inside `asyncReadWrite`.
    func testChatSecureStyleResultsViewFedByAQueue() throws {
        let database = try XCTUnwrap(YapDatabase(url: directory.appendingPathComponent("chatsecure.sqlite")))
        database.registerCodableSerialization(OTRBuddy.self, forCollection: "OTRBuddy")
        let handler = YapDatabaseFullTextSearchHandler.withObjectBlock { (transaction, dict, collection, key, object) in
            guard let buddy = object as? OTRBuddy else { return }
            dict["username"] = buddy.username
            dict["displayName"] = buddy.displayName
        }
        XCTAssertTrue(database.register(YapDatabaseFullTextSearch(columnNames: ["username", "displayName"], handler: handler),
                                        withName: "OTRBuddyFTS"))
        let grouping = YapDatabaseViewGrouping.withObjectBlock { _, collection, _, object in object is OTRBuddy ? "buddies" : nil }
        let sorting = YapDatabaseViewSorting.withObjectBlock { _, _, _, _, a, _, _, b in
            ((a as? OTRBuddy)?.displayName ?? "").compare((b as? OTRBuddy)?.displayName ?? "")
        }
        XCTAssertTrue(database.register(YapDatabaseAutoView(grouping: grouping, sorting: sorting, versionTag: "1"), withName: "AllBuddies"))
        let searchView = YapDatabaseSearchResultsView(fullTextSearchName: "OTRBuddyFTS", parentViewName: "AllBuddies",
                                                      versionTag: nil, options: nil)
        XCTAssertTrue(database.register(searchView, withName: "OTRBuddySearch"))
        let connection = database.newConnection()
        connection.readWrite { transaction in
            for (user, name) in [("alice@example.com", "Alice"), ("bob@example.com", "Bob"), ("alfred@example.org", "Alfred")] {
                transaction.setObject(OTRBuddy(username: user, displayName: name), forKey: user, inCollection: "OTRBuddy")
            }
        }
        let searchQueue = YapDatabaseSearchQueue()
        let background = database.newConnection()
        for text in ["a", "al", "alf"] { searchQueue.enqueueQuery(text + "*") }
        let done = expectation(description: "searched")
        background.asyncReadWrite({ transaction in
            (transaction.ext("OTRBuddySearch") as? YapDatabaseSearchResultsViewTransaction)?.performSearch(with: searchQueue)
        }, completionQueue: .global(), completionBlock: { done.fulfill() })
        wait(for: [done], timeout: 30)
        connection.read { transaction in
            guard let view = transaction.ext("OTRBuddySearch") as? YapDatabaseSearchResultsViewTransaction else { return XCTFail("no view") }
            XCTAssertEqual(view.query(), "alf*")
            XCTAssertEqual(view.numberOfItems(inGroup: "buddies"), 1)
        }
        XCTAssertEqual(searchQueue.enqueuedQueryCount(), 0)
    }

    /// Stage1st: a `favorite` facet column next to the title, queried with column filters.
    func testStage1stStyleColumnFilter() throws {
        let database = try XCTUnwrap(YapDatabase(url: directory.appendingPathComponent("stage1st.sqlite")))
        let handler = YapDatabaseFullTextSearchHandler.withRowBlock { (transaction, dict, collection, key, object, metadata) in
            guard let title = object as? String else { return }
            dict["title"] = title
            dict["favorite"] = (metadata as? Bool ?? false) ? "FY" : "FN"
        }
        XCTAssertTrue(database.register(YapDatabaseFullTextSearch(columnNames: ["title", "favorite"], handler: handler, versionTag: "1"),
                                        withName: "fts"))
        let connection = database.newConnection()
        connection.readWrite { transaction in
            transaction.setObject("Swift concurrency notes", forKey: "1", inCollection: "topics", withMetadata: true)
            transaction.setObject("Swift package tips", forKey: "2", inCollection: "topics", withMetadata: false)
            transaction.setObject("Cooking notes", forKey: "3", inCollection: "topics", withMetadata: true)
        }
        connection.read { transaction in
            guard let ext = transaction.ext("fts") as? YapDatabaseFullTextSearchTransaction else { return XCTFail("no extension") }
            func keys(_ query: String) -> [String] {
                var keys: [String] = []
                ext.enumerateKeys(matching: query) { _, key, _ in keys.append(key) }
                return keys
            }
            let searchText = "swi"
            XCTAssertEqual(keys("favorite:FY title:\(searchText)*"), ["1"])
            XCTAssertEqual(keys("favorite:F* title:\(searchText)*"), ["1", "2"])
            XCTAssertEqual(keys("favorite:FY title:notes*"), ["1", "3"])
        }
    }
}
