import Foundation
import Testing
@testable import YapDB

/// Full-text search as YapDatabase's own tests use it (TestYapDatabaseFullTextSearch.m: the
/// four rows, prefix queries, an update, snippets), plus what YapDB adds: ranking, counts,
/// limits, typed query errors, the update that empties a row, reopening, verify.
@Suite(.serialized) struct FullTextSearchTests {
    static func handler() -> YapDatabaseFullTextSearchHandler {
        YapDatabaseFullTextSearchHandler.withObjectBlock { _, dict, _, _, object in
            if let text = object as? String { dict["content"] = text }
        }
    }

    static func register(_ database: YapDatabase, versionTag: String = "1", options: [AnyHashable: Any]? = nil) -> Bool {
        database.register(YapDatabaseFullTextSearch(columnNames: ["content"], options: options, handler: handler(),
                                                    ftsVersion: YapDatabaseFullTextSearchFTS5Version, versionTag: versionTag),
                          withName: "fts")
    }

    static func keys(_ tx: YapDatabaseReadTransaction, _ query: String) -> [String] {
        var keys: [String] = []
        (tx.ext("fts") as? YapDatabaseFullTextSearchTransaction)?.enumerateKeys(matching: query) { _, key, _ in keys.append(key) }
        return keys
    }

    @Test func yapDatabaseBasicTest() throws {
        let fixture = try DatabaseFixture()
        #expect(Self.register(fixture.database))
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            tx.setObject("hello world", forKey: "key1", inCollection: nil)
            tx.setObject("hello coffee shop", forKey: "key2", inCollection: nil)
            tx.setObject("hello laptop", forKey: "key3", inCollection: nil)
            tx.setObject("hello work", forKey: "key4", inCollection: nil)
            // Reads inside the read-write transaction see its writes.
            #expect(Self.keys(tx, "hello").count == 4)
        }
        connection.read { tx in
            #expect(Self.keys(tx, "hello") == ["key1", "key2", "key3", "key4"])
            #expect(Self.keys(tx, "coffee") == ["key2"])
            #expect(Set(Self.keys(tx, "hello wor*")) == ["key1", "key4"])
            #expect(Self.keys(tx, "quack").isEmpty)
        }
        try connection.write { tx in tx.setObject("hello distraction", forKey: "key4", inCollection: nil) }
        connection.read { tx in
            #expect(Self.keys(tx, "hello").count == 4)
            #expect(Self.keys(tx, "coffee") == ["key2"])
            #expect(Self.keys(tx, "hello wor*") == ["key1"])
            #expect(Self.keys(tx, "quack").isEmpty)
        }
    }

    @Test func snippetsMarkTheMatchesWhateverTheFTSVersion() throws {
        let fixture = try DatabaseFixture()
        #expect(Self.register(fixture.database))
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            tx.setObject("hello world", forKey: "key1", inCollection: nil)
            tx.setObject("hello coffee shop", forKey: "key2", inCollection: nil)
        }
        connection.read { tx in
            let fts = tx.ext("fts") as! YapDatabaseFullTextSearchTransaction
            var snippets: [String] = []
            fts.enumerateKeys(matching: "hello", with: nil) { snippet, _, _, _ in snippets.append(snippet) }
            #expect(snippets == ["<b>hello</b> world", "<b>hello</b> coffee shop"])
            let options = YapDatabaseFullTextSearchSnippetOptions()
            options.startMatchText = "[["
            options.endMatchText = "]]"
            options.ellipsesText = "…"
            options.columnName = "content"
            options.numberOfTokens = 2
            var found: [(String, String)] = []
            fts.enumerateKeysAndObjects(matching: "coffee", with: options) { snippet, _, key, _, _ in found.append((snippet, key)) }
            #expect(found.count == 1)
            #expect(found.first?.1 == "key2")
            #expect(found.first?.0.contains("[[coffee]]") == true)
        }
    }

    @Test func snippetOptionDefaultsAndResets() {
        let options = YapDatabaseFullTextSearchSnippetOptions()
        #expect(options.startMatchText == "<b>" && options.endMatchText == "</b>" && options.ellipsesText == "...")
        #expect(options.numberOfTokens == 15 && options.columnName == nil)
        options.numberOfTokens = 0
        #expect(options.numberOfTokens == 15)
        options.numberOfTokens = -100
        #expect(options.effectiveTokens == 64)
        let copy = options.copy() as! YapDatabaseFullTextSearchSnippetOptions
        #expect(copy.numberOfTokens == -100)
    }

    @Test func anUpdateThatIndexesNothingTakesTheRowOut() throws {
        let fixture = try DatabaseFixture()
        #expect(Self.register(fixture.database))
        let connection = fixture.database.newConnection()
        try connection.write { tx in tx.setObject("findable text", forKey: "a", inCollection: "c") }
        // Not a String: the handler sets nothing (YapDatabase kept the old entry matching).
        try connection.write { tx in tx.setObject(Data([1, 2, 3]), forKey: "a", inCollection: "c") }
        connection.read { tx in #expect(Self.keys(tx, "findable").isEmpty) }
        #expect(try fixture.database.verify().isValid)
    }

    @Test func malformedQueriesThrowWithTheirPositionAndTheCompatibleFormsLog() throws {
        let fixture = try DatabaseFixture()
        #expect(Self.register(fixture.database))
        let connection = fixture.database.newConnection()
        try connection.write { tx in tx.setObject("hello world", forKey: "a", inCollection: nil) }
        connection.read { tx in
            let fts = tx.ext("fts") as! YapDatabaseFullTextSearchTransaction
            #expect(Self.keys(tx, "hello AND").isEmpty)
            do {
                try fts.search("hello world OR") { _, _, _ in }
                Issue.record("a malformed query did not throw")
            } catch let error as YapDatabaseError {
                guard case .invalidQuery(let offset, _) = error else {
                    Issue.record("wrong error \(error)")
                    return
                }
                #expect(offset == 14)
            } catch {
                Issue.record("wrong error \(error)")
            }
        }
    }

    @Test func rankingCountsAndLimits() throws {
        let fixture = try DatabaseFixture()
        #expect(Self.register(fixture.database))
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            tx.setObject("apple banana cherry", forKey: "1", inCollection: nil)
            tx.setObject("apple apple apple", forKey: "2", inCollection: nil)
            tx.setObject("banana", forKey: "3", inCollection: nil)
            tx.setObject("apple and many other words that make this row long", forKey: "4", inCollection: nil)
        }
        try connection.read { tx in
            let fts = tx.ext("fts") as! YapDatabaseFullTextSearchTransaction
            #expect(try fts.numberOfMatches("apple") == 3)
            #expect(try fts.numberOfMatches("apple OR banana") == 4)
            #expect(try fts.numberOfMatches("apple NOT banana") == 2)
            var ranked: [String] = []
            fts.enumerateBm25OrderedKeys(matching: "apple", withWeights: nil) { _, key, _ in ranked.append(key) }
            #expect(ranked == ["2", "1", "4"])
            var top: [String] = []
            try fts.searchRanked("apple", limit: 1) { _, key, _, _ in top.append(key) }
            #expect(top == ["2"])
            var limited: [String] = []
            try fts.search("apple", limit: 2) { _, key, _ in limited.append(key) }
            #expect(limited == ["1", "2"])
            var stopped: [String] = []
            fts.enumerateKeys(matching: "apple") { _, key, stop in
                stopped.append(key)
                stop.pointee = true
            }
            #expect(stopped == ["1"])
        }
    }

    @Test func foldsCaseAndDiacriticsByDefault() throws {
        let fixture = try DatabaseFixture()
        #expect(Self.register(fixture.database))
        let connection = fixture.database.newConnection()
        try connection.write { tx in tx.setObject("Mon Résumé", forKey: "cv", inCollection: nil) }
        connection.read { tx in
            #expect(Self.keys(tx, "resume") == ["cv"])
            #expect(Self.keys(tx, "RÉSUMÉ") == ["cv"])
        }
    }

    @Test func reopeningWithTheSameTagKeepsTheIndexAndAChangedTagRebuilds() throws {
        let fixture = try DatabaseFixture()
        #expect(Self.register(fixture.database))
        try fixture.database.newConnection().write { tx in
            for i in 0..<300 { tx.setObject("row number \(i) word\(i % 7)", forKey: "\(i)", inCollection: "c") }
        }
        try fixture.database.checkpoint()
        try fixture.reopen()
        #expect(Self.register(fixture.database))
        try fixture.database.newConnection().write { tx in tx.setObject("late word3", forKey: "late", inCollection: "c") }
        fixture.database.newConnection().read { tx in
            #expect(Self.keys(tx, "word3").count == 44)
            #expect(Self.keys(tx, "late") == ["late"])
        }
        #expect(try fixture.database.verify().isValid)
        try fixture.reopen()
        #expect(Self.register(fixture.database, versionTag: "2"))
        fixture.database.newConnection().read { tx in #expect(Self.keys(tx, "word3").count == 44) }
        #expect(try fixture.database.verify().isValid)
    }

    @Test func columnFiltersPhrasesAndNear() throws {
        let fixture = try DatabaseFixture()
        let handler = YapDatabaseFullTextSearchHandler.withRowBlock { _, dict, _, _, object, metadata in
            dict["title"] = object as? String
            if let mark = metadata as? String { dict["favorite"] = mark }
        }
        #expect(fixture.database.register(YapDatabaseFullTextSearch(columnNames: ["title", "favorite"], handler: handler), withName: "fts"))
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            tx.setObject("the quick brown fox", forKey: "1", inCollection: "t", withMetadata: "FY")
            tx.setObject("quick the fox brown", forKey: "2", inCollection: "t", withMetadata: "FN")
            tx.setObject("brown", forKey: "3", inCollection: "t", withMetadata: "FY")
        }
        connection.read { tx in
            #expect(Self.keys(tx, "\"quick brown\"") == ["1"])
            #expect(Self.keys(tx, "favorite:FY title:brow*") == ["1", "3"])
            #expect(Self.keys(tx, "favorite:F* title:fox") == ["1", "2"])
            #expect(Self.keys(tx, "NEAR(quick fox, 1)") == ["1", "2"])
            #expect(Self.keys(tx, "NEAR(the brown, 0)").isEmpty)
            #expect(Self.keys(tx, "^quick") == ["2"])
            #expect(Self.keys(tx, "brown NOT \"the quick\"") == ["2", "3"])
        }
    }

    /// Phrases are checked on the positions directly: order, adjacency inside one column only,
    /// repeated terms, `^` at each column's start and column filters, alone and under AND.
    @Test func phrasesAreCheckedOnAdjacentPositionsInOneColumn() throws {
        let fixture = try DatabaseFixture()
        let handler = YapDatabaseFullTextSearchHandler.withRowBlock { _, dict, _, _, object, metadata in
            dict["title"] = object as? String
            dict["body"] = metadata as? String
        }
        #expect(fixture.database.register(YapDatabaseFullTextSearch(columnNames: ["title", "body"], handler: handler), withName: "fts"))
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            tx.setObject("alpha beta", forKey: "1", inCollection: "t", withMetadata: "zeta")
            tx.setObject("beta alpha", forKey: "2", inCollection: "t", withMetadata: "zeta")
            tx.setObject("zeta alpha", forKey: "3", inCollection: "t", withMetadata: "beta zeta")
            tx.setObject("alpha gamma beta", forKey: "4", inCollection: "t")
            tx.setObject("alpha zeta alpha", forKey: "5", inCollection: "t", withMetadata: "beta")
            tx.setObject("alpha alpha", forKey: "6", inCollection: "t", withMetadata: "alpha")
        }
        connection.read { tx in
            #expect(Self.keys(tx, "\"alpha beta\"") == ["1"])
            #expect(Self.keys(tx, "\"beta alpha\"") == ["2"])
            #expect(Self.keys(tx, "\"alpha gamma beta\"") == ["4"])
            #expect(Self.keys(tx, "\"alpha alpha\"") == ["6"])
            #expect(Self.keys(tx, "\"alpha alpha alpha\"").isEmpty)
            #expect(Self.keys(tx, "^beta") == ["2", "3", "5"])
            #expect(Self.keys(tx, "^\"alpha alpha\"") == ["6"])
            #expect(Self.keys(tx, "title:beta") == ["1", "2", "4"])
            #expect(Self.keys(tx, "body:beta") == ["3", "5"])
            #expect(Self.keys(tx, "\"alpha beta\" zeta") == ["1"])
            #expect(Self.keys(tx, "\"zeta alpha\" body:beta") == ["3", "5"])
            #expect(Self.keys(tx, "body:\"alpha alpha\"").isEmpty)
            let fts = tx.ext("fts") as? YapDatabaseFullTextSearchTransaction
            #expect((try? fts?.numberOfMatches("\"alpha beta\" OR \"beta alpha\"")) == 2)
        }
    }

    @Test func aRefusedTokenizerOptionFailsRegistration() throws {
        let fixture = try DatabaseFixture()
        #expect(!Self.register(fixture.database, options: ["tokenize": "no-such-tokenizer"]))
        #expect(Self.register(fixture.database, options: ["tokenize": "trigram"]))
        try fixture.database.newConnection().write { tx in tx.setObject("Terminator", forKey: "t", inCollection: nil) }
        fixture.database.newConnection().read { tx in #expect(Self.keys(tx, "rmina") == ["t"]) }
    }
}
