import Foundation
import Testing
@testable import YapDB

/// A persistent search results view (`isPersistent = true`) keeps its results and its query
/// across a reopen, as YapDatabase's persistent view does; a non-persistent one (the default)
/// starts empty.
@Suite(.serialized) struct SearchResultsViewPersistenceTests {
    typealias Base = SearchResultsViewTests

    static func options(persistent: Bool) -> YapDatabaseSearchResultsViewOptions {
        let options = YapDatabaseSearchResultsViewOptions()
        options.isPersistent = persistent
        return options
    }

    /// The index and the results view (`parent`: through the parent view "order").
    static func setUp(_ database: YapDatabase, parent: Bool, persistent: Bool, tag: String = "1") {
        let handler = YapDatabaseFullTextSearchHandler.withObjectBlock { _, dict, _, _, object in
            if let text = object as? String { dict["content"] = text }
        }
        #expect(database.register(YapDatabaseFullTextSearch(columnNames: ["content"], handler: handler), withName: "fts"))
        let view: YapDatabaseSearchResultsView
        if parent {
            #expect(database.register(YapDatabaseAutoView(grouping: Base.grouping(), sorting: Base.sorting(), versionTag: "1"), withName: "order"))
            view = YapDatabaseSearchResultsView(fullTextSearchName: "fts", parentViewName: "order", versionTag: tag,
                                                options: options(persistent: persistent))
        } else {
            view = YapDatabaseSearchResultsView(fullTextSearchName: "fts", grouping: Base.grouping(), sorting: Base.sorting(),
                                                versionTag: tag, options: options(persistent: persistent))
        }
        #expect(database.register(view, withName: "results"))
    }

    static func query(_ tx: YapDatabaseReadTransaction) -> String? {
        (tx.ext("results") as? YapDatabaseSearchResultsViewTransaction)?.query()
    }

    @Test(arguments: [true, false])
    func aPersistentViewComesBackWithItsQueryAndResults(parent: Bool) throws {
        let fixture = try DatabaseFixture()
        Self.setUp(fixture.database, parent: parent, persistent: true)
        try fixture.database.newConnection().write { tx in
            for (i, phrase) in Base.phrases.enumerated() { tx.setObject(phrase, forKey: "\(i)", inCollection: nil) }
            (tx.ext("results") as! YapDatabaseSearchResultsViewTransaction).performSearch(for: "the")
        }
        try fixture.reopen()
        Self.setUp(fixture.database, parent: parent, persistent: true)
        let connection = fixture.database.newConnection()
        connection.read { tx in
            #expect(Self.query(tx) == "the")
            #expect(Base.keys(tx) == ["4", "0", "1"])
        }
        // Live maintenance continues with the stored query.
        try connection.write { tx in
            tx.setObject("The more you know...", forKey: "7", inCollection: nil)
            tx.setObject("nothing to see", forKey: "0", inCollection: nil)
        }
        connection.read { tx in #expect(Base.keys(tx) == ["4", "7", "1"]) }
        #expect(try fixture.database.verify().isValid)
    }

    @Test(arguments: [true, false])
    func rowsWrittenAfterTheLastCheckpointAreCaughtUp(parent: Bool) throws {
        let fixture = try DatabaseFixture()
        Self.setUp(fixture.database, parent: parent, persistent: true)
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            for (i, phrase) in Base.phrases.enumerated() { tx.setObject(phrase, forKey: "\(i)", inCollection: nil) }
            (tx.ext("results") as! YapDatabaseSearchResultsViewTransaction).performSearch(for: "am")
        }
        try fixture.database.checkpoint()
        // Written after the checkpoint: replayed from the log at the reopen, placed at registration.
        try connection.write { tx in
            tx.setObject("I am here", forKey: "8", inCollection: nil)
            tx.removeObject(forKey: "2", inCollection: nil)
        }
        try fixture.reopen()
        Self.setUp(fixture.database, parent: parent, persistent: true)
        fixture.database.newConnection().read { tx in
            #expect(Self.query(tx) == "am")
            #expect(Base.keys(tx) == ["3", "8"])
        }
    }

    @Test func aNewVersionTagBuildsTheViewAgainForTheStoredQuery() throws {
        let fixture = try DatabaseFixture()
        Self.setUp(fixture.database, parent: false, persistent: true)
        try fixture.database.newConnection().write { tx in
            for (i, phrase) in Base.phrases.enumerated() { tx.setObject(phrase, forKey: "\(i)", inCollection: nil) }
            (tx.ext("results") as! YapDatabaseSearchResultsViewTransaction).performSearch(for: "you")
        }
        try fixture.reopen()
        Self.setUp(fixture.database, parent: false, persistent: true, tag: "2")
        fixture.database.newConnection().read { tx in
            #expect(Self.query(tx) == "you")
            #expect(Base.keys(tx) == ["4", "1"])
            #expect((tx.ext("results") as! YapDatabaseSearchResultsViewTransaction).searchResultsView.versionTag == "2")
        }
    }

    @Test(arguments: [true, false])
    func aViewThatIsNotPersistentStartsEmpty(parent: Bool) throws {
        let fixture = try DatabaseFixture()
        Self.setUp(fixture.database, parent: parent, persistent: false)
        try fixture.database.newConnection().write { tx in
            for (i, phrase) in Base.phrases.enumerated() { tx.setObject(phrase, forKey: "\(i)", inCollection: nil) }
            (tx.ext("results") as! YapDatabaseSearchResultsViewTransaction).performSearch(for: "the")
        }
        try fixture.reopen()
        Self.setUp(fixture.database, parent: parent, persistent: false)
        fixture.database.newConnection().read { tx in
            #expect(Self.query(tx) == "")
            #expect(Base.keys(tx).isEmpty)
        }
    }

    /// `verify()` runs the query again: a row the view holds that does not match, or (parent
    /// mode) that sits in another group than the parent's, is a problem.
    @Test(arguments: [true, false])
    func verifyFindsAViewThatDisagreesWithItsQuery(parent: Bool) throws {
        let fixture = try DatabaseFixture()
        Self.setUp(fixture.database, parent: parent, persistent: true)
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            for (i, phrase) in Base.phrases.enumerated() { tx.setObject(phrase, forKey: "\(i)", inCollection: nil) }
            (tx.ext("results") as! YapDatabaseSearchResultsViewTransaction).performSearch(for: "am")
        }
        #expect(try fixture.database.verify().isValid)
        // Damage the view's state behind its back: "5" (no "am") in; "2" (parent mode) moved
        // to a group the parent does not have.
        try connection.write { tx in
            let view = fixture.database.registeredExtension("results") as! YapDatabaseSearchResultsView
            let root = view.rootView(in: fixture.database)!
            var config = root.config.withLock { $0 }
            config.grouping = .withKeyBlock { _, _, _ in "" }
            let engine = ViewEngine(view: root, config: config, transaction: tx)
            var state = tx.viewState("results")!
            #expect(engine.insertRow(collection: "", key: "5", into: &state))
            if parent {
                #expect(engine.removeRow(collection: "", key: "2", from: &state))
                #expect(engine.insertRow(collection: "", key: "2", group: "elsewhere", into: &state))
            }
            tx.setViewState(state, "results")
            tx.engineTransaction.markChanged()
        }
        let report = try fixture.database.verify()
        #expect(!report.isValid)
        #expect(report.problems.contains { $0.contains("/5 does not match") })
        #expect(report.problems.contains { $0.contains("/2 is in group elsewhere here, in group  in the parent") } == parent)
    }
}
