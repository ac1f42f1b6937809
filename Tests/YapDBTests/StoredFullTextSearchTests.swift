import Foundation
import Testing
@testable import YapDB

/// `yapdb search` (`YapDatabase.searchStoredFullTextIndex`): the stored index as the last
/// checkpoint wrote it, and every row committed since — matched by its text, or listed.
@Suite(.serialized) struct StoredFullTextSearchTests {
    static func options() -> YapDatabaseOptions {
        let options = DatabaseFixture.fastOptions()
        options.idleCheckpointDelay = 0
        return options
    }

    static func register(_ database: YapDatabase) {
        let handler = YapDatabaseFullTextSearchHandler.withObjectBlock { _, dict, _, _, object in
            if let text = object as? String { dict["content"] = text }
        }
        #expect(database.register(YapDatabaseFullTextSearch(columnNames: ["content"], handler: handler), withName: "fts"))
    }

    /// The database written by an app that registered the index, closed cleanly, then (as an
    /// app that stopped without closing leaves it) wrote more rows while the index's stored
    /// copy was not brought up to date.
    static func database() throws -> DatabaseFixture {
        let fixture = try DatabaseFixture(options: options())
        register(fixture.database)
        try fixture.database.newConnection().write { tx in
            tx.setObject("red apple", forKey: "a", inCollection: "fruit")
            tx.setObject("red cherry", forKey: "b", inCollection: "fruit")
            tx.setObject("red plum", forKey: "c", inCollection: "fruit")
            tx.setObject("green pear", forKey: "d", inCollection: "fruit")
        }
        try fixture.reopen(options: options())
        try fixture.database.newConnection().write { tx in
            tx.setObject("yellow banana", forKey: "b", inCollection: "fruit")   // no longer red
            tx.removeObject(forKey: "c", inCollection: "fruit")                 // gone
            tx.setObject("red currant", forKey: "e", inCollection: "fruit")     // new, text
            tx.setObject(Data([0x72, 0x65, 0x64]), forKey: "f", inCollection: "fruit") // new, not text
        }
        return fixture
    }

    @Test func rowsWrittenSinceTheCheckpointAreSearchedOrListed() throws {
        let fixture = try Self.database()
        let result = try fixture.database.searchStoredFullTextIndex("fts", query: "red", ranked: false, limit: nil)
        #expect(result.matches.map(\.key) == ["a", "e"])
        #expect(result.matches.map(\.byRowText) == [false, true])
        #expect(result.unsearched == [YapCollectionKey(collection: "fruit", key: "f")])
    }

    /// `yapdb search` opens the database read-only: the claim publishes without a commit.
    @Test func aReadOnlyDatabaseIsSearched() throws {
        let fixture = try DatabaseFixture(options: Self.options())
        Self.register(fixture.database)
        try fixture.database.newConnection().write { tx in
            tx.setObject("red apple", forKey: "a", inCollection: "fruit")
            tx.setObject("green pear", forKey: "d", inCollection: "fruit")
        }
        let options = Self.options()
        options.readOnly = true
        try fixture.reopen(options: options)
        let result = try fixture.database.searchStoredFullTextIndex("fts", query: "red OR pear", ranked: false, limit: nil)
        #expect(result.matches.map(\.key).sorted() == ["a", "d"])
        #expect(result.matches.allSatisfy { !$0.byRowText }, "from the stored index")
    }

    /// (Each search claims the stored roots, so each test searches once.)
    @Test func aRowRewrittenSinceIsMatchedByItsNewText() throws {
        let fixture = try Self.database()
        let result = try fixture.database.searchStoredFullTextIndex("fts", query: "green OR yellow", ranked: false, limit: nil)
        #expect(result.matches.map(\.key) == ["d", "b"])
        #expect(result.matches.map(\.byRowText) == [false, true])
    }

    @Test func rankedSearchesLeaveStaleRowsOut() throws {
        let fixture = try Self.database()
        let ranked = try fixture.database.searchStoredFullTextIndex("fts", query: "red", ranked: true, limit: 2)
        #expect(ranked.matches.map(\.key) == ["a", "e"])
        #expect(ranked.matches.first?.score != nil)
    }

    @Test func aLimitCountsEveryMatch() throws {
        let fixture = try Self.database()
        let one = try fixture.database.searchStoredFullTextIndex("fts", query: "red", ranked: false, limit: 1)
        #expect(one.matches.map(\.key) == ["a"])
    }

    @Test func afterACleanCloseTheIndexAnswersAlone() throws {
        let fixture = try DatabaseFixture(options: Self.options())
        Self.register(fixture.database)
        try fixture.database.newConnection().write { tx in
            tx.setObject("red apple", forKey: "a", inCollection: "fruit")
            tx.setObject(Data([1]), forKey: "f", inCollection: "fruit")
        }
        try fixture.reopen(options: Self.options())
        let result = try fixture.database.searchStoredFullTextIndex("fts", query: "red", ranked: false, limit: nil)
        #expect(result.matches.map(\.key) == ["a"])
        #expect(!result.matches[0].byRowText)
        #expect(result.unsearched.isEmpty)
    }
}
