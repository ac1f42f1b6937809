import Foundation
import Testing
@testable import YapDB

/// A search results view follows its parent view when the parent is rebuilt (a new grouping,
/// sorting or filter, a new version tag at registration), is a `YapDatabaseAutoView`'s kin
/// throughout (transaction, connection, options), and is unregistered with its parent or index.
@Suite(.serialized) struct SearchResultsViewFollowTests {
    typealias Base = SearchResultsViewTests

    /// The phrases, the index, the parent view "order" (one group, by text) and the results.
    static func setUp(_ database: YapDatabase, options: YapDatabaseSearchResultsViewOptions? = nil,
                      parentTag: String = "1", grouping: YapDatabaseViewGrouping = Base.grouping()) {
        let handler = YapDatabaseFullTextSearchHandler.withObjectBlock { _, dict, _, _, object in
            if let text = object as? String { dict["content"] = text }
        }
        #expect(database.register(YapDatabaseFullTextSearch(columnNames: ["content"], handler: handler), withName: "fts"))
        #expect(database.register(YapDatabaseAutoView(grouping: grouping, sorting: Base.sorting(), versionTag: parentTag), withName: "order"))
        let view = YapDatabaseSearchResultsView(fullTextSearchName: "fts", parentViewName: "order", versionTag: "1", options: options)
        #expect(database.register(view, withName: "results"))
    }

    static func write(_ connection: YapDatabaseConnection) throws {
        try connection.write { tx in
            for (i, phrase) in Base.phrases.enumerated() { tx.setObject(phrase, forKey: "\(i)", inCollection: nil) }
        }
    }

    /// Every group of the view `name`, with its keys in order.
    static func contents(_ tx: YapDatabaseReadTransaction, _ name: String = "results") -> [String: [String]] {
        guard let view = tx.ext(name) as? YapDatabaseViewTransaction else { return [:] }
        var result: [String: [String]] = [:]
        for group in view.allGroups() {
            var keys: [String] = []
            view.iterateKeys(inGroup: group) { _, key, _, _ in keys.append(key) }
            result[group] = keys
        }
        return result
    }

    /// Groups by the phrase's first word.
    static func byFirstWord() -> YapDatabaseViewGrouping {
        .withObjectBlock { _, _, _, object in (object as? String)?.split(separator: " ").first.map(String.init) }
    }

    @Test func aNewGroupingOfTheParentRegroupsTheResults() throws {
        let fixture = try DatabaseFixture()
        Self.setUp(fixture.database)
        let connection = fixture.database.newConnection()
        try Self.write(connection)
        try connection.write { tx in (tx.ext("results") as! YapDatabaseSearchResultsViewTransaction).performSearch(for: "am OR the") }
        connection.read { tx in #expect(Self.contents(tx) == ["": ["4", "2", "3", "0", "1"]]) }
        try connection.write { tx in
            (tx.ext("order") as! YapDatabaseAutoViewTransaction).setGrouping(Self.byFirstWord(), sorting: Base.sorting(), versionTag: "2")
        }
        connection.read { tx in
            #expect(Self.contents(tx) == ["I": ["2", "3"], "Are": ["4"], "The": ["0"], "You": ["1"]])
            #expect((tx.ext("results") as! YapDatabaseSearchResultsViewTransaction).query() == "am OR the")
        }
        // A reversed sorting of the parent reverses the results.
        let reversed = YapDatabaseViewSorting.withObjectBlock { _, _, _, _, a, _, _, b in
            (b as? String ?? "").compare(a as? String ?? "")
        }
        try connection.write { tx in (tx.ext("order") as! YapDatabaseAutoViewTransaction).setSorting(reversed, versionTag: "3") }
        connection.read { tx in #expect(Self.contents(tx)["I"] == ["3", "2"]) }
        // Rows written later still follow the query in the new groups.
        try connection.write { tx in tx.setObject("I am the walrus", forKey: "9", inCollection: nil) }
        connection.read { tx in #expect(Self.contents(tx)["I"] == ["9", "3", "2"]) }
    }

    @Test func observersSeeTheParentsRegroupingInTheResults() throws {
        let fixture = try DatabaseFixture()
        Self.setUp(fixture.database)
        let writer = fixture.database.newConnection(), reader = fixture.database.newConnection()
        try Self.write(writer)
        try writer.write { tx in (tx.ext("results") as! YapDatabaseSearchResultsViewTransaction).performSearch(for: "am") }
        _ = reader.beginLongLivedReadTransaction()
        let mappings = YapDatabaseViewMappings(groups: ["", "I"], view: "results")
        reader.read { tx in mappings.update(with: tx) }
        try writer.write { tx in
            (tx.ext("order") as! YapDatabaseAutoViewTransaction).setGrouping(Self.byFirstWord(), sorting: Base.sorting(), versionTag: "2")
        }
        let notifications = reader.beginLongLivedReadTransaction()
        let changes = (reader.ext("results") as! YapDatabaseViewConnection).getChanges(forNotifications: notifications, withMappings: mappings)
        #expect(changes.rowChanges.count == 2)
        #expect(changes.rowChanges.allSatisfy { $0.type == .move && $0.finalGroup == "I" })
        #expect(mappings.numberOfItems(inGroup: "I") == 2)
        #expect(mappings.numberOfItems(inGroup: "") == 0)
    }

    @Test func aNewFilterOfAFilteredParentIsFollowed() throws {
        let fixture = try DatabaseFixture()
        let database = fixture.database!
        let handler = YapDatabaseFullTextSearchHandler.withObjectBlock { _, dict, _, _, object in
            if let text = object as? String { dict["content"] = text }
        }
        #expect(database.register(YapDatabaseFullTextSearch(columnNames: ["content"], handler: handler), withName: "fts"))
        #expect(database.register(YapDatabaseAutoView(grouping: Base.grouping(), sorting: Base.sorting(), versionTag: "1"), withName: "order"))
        let short = YapDatabaseViewFiltering.withObjectBlock { _, _, _, _, object in ((object as? String)?.count ?? 0) < 30 }
        #expect(database.register(YapDatabaseFilteredView(parentViewName: "order", filtering: short, versionTag: "1"), withName: "short"))
        #expect(database.register(YapDatabaseSearchResultsView(fullTextSearchName: "fts", parentViewName: "short", versionTag: nil, options: nil),
                                  withName: "results"))
        let connection = database.newConnection()
        try Self.write(connection)
        try connection.write { tx in (tx.ext("results") as! YapDatabaseSearchResultsViewTransaction).performSearch(for: "the OR am") }
        connection.read { tx in #expect(Self.contents(tx) == ["": ["4", "3", "0"]]) }
        let all = YapDatabaseViewFiltering.withObjectBlock { _, _, _, _, _ in true }
        try connection.write { tx in (tx.ext("short") as! YapDatabaseFilteredViewTransaction).setFiltering(all, versionTag: "2") }
        connection.read { tx in #expect(Self.contents(tx) == ["": ["4", "2", "3", "0", "1"]]) }
    }

    @Test func aParentRebuiltAtRegistrationIsFollowed() throws {
        let fixture = try DatabaseFixture()
        let options = YapDatabaseSearchResultsViewOptions()
        options.isPersistent = true
        Self.setUp(fixture.database, options: options)
        let connection = fixture.database.newConnection()
        try Self.write(connection)
        try connection.write { tx in (tx.ext("results") as! YapDatabaseSearchResultsViewTransaction).performSearch(for: "am") }
        try fixture.reopen()
        Self.setUp(fixture.database, options: options, parentTag: "2", grouping: Self.byFirstWord())
        fixture.database.newConnection().read { tx in
            #expect(Self.contents(tx) == ["I": ["2", "3"]])
            #expect((tx.ext("results") as! YapDatabaseSearchResultsViewTransaction).query() == "am")
        }
        #expect(try fixture.database.verify().isValid)
    }

    @Test func unregisteringTheParentOrTheIndexUnregistersTheResults() throws {
        let fixture = try DatabaseFixture()
        Self.setUp(fixture.database)
        fixture.database.unregisterExtension(withName: "order")
        #expect(fixture.database.registeredExtension("results") == nil)
        #expect(fixture.database.register(YapDatabaseAutoView(grouping: Base.grouping(), sorting: Base.sorting(), versionTag: "1"),
                                          withName: "order"))
        #expect(fixture.database.register(YapDatabaseSearchResultsView(fullTextSearchName: "fts", parentViewName: "order", versionTag: "1",
                                                                       options: nil), withName: "results"))
        fixture.database.unregisterExtension(withName: "fts")
        #expect(fixture.database.registeredExtension("results") == nil)
        #expect(fixture.database.registeredExtension("order") != nil)
    }

    /// A filtered view of a search results view (of a parent view) keeps the parent's order as
    /// rows come one by one, and follows each search.
    @Test func aFilteredViewOfTheResultsKeepsTheParentsOrder() throws {
        let fixture = try DatabaseFixture()
        Self.setUp(fixture.database)
        let notSix = YapDatabaseViewFiltering.withKeyBlock { _, _, _, key in key != "6" }
        #expect(fixture.database.register(YapDatabaseFilteredView(parentViewName: "results", filtering: notSix, versionTag: "1"),
                                          withName: "filtered"))
        let connection = fixture.database.newConnection()
        try connection.write { tx in (tx.ext("results") as! YapDatabaseSearchResultsViewTransaction).performSearch(for: "a*") }
        for (i, phrase) in Base.phrases.enumerated().reversed() {
            try connection.write { tx in tx.setObject(phrase, forKey: "\(i)", inCollection: nil) }
        }
        connection.read { tx in
            let results = Self.contents(tx)[""] ?? []
            #expect(results == ["4", "2", "3", "6", "0", "1"])
            #expect(Self.contents(tx, "filtered")[""] == ["4", "2", "3", "0", "1"])
            let find = (tx.ext("filtered") as! YapDatabaseViewTransaction).findRange(inGroup: "", using: .withObjectBlock { _, _, object in
                let text = object as? String ?? ""
                return text.hasPrefix("I am") ? .orderedSame : (text < "I am" ? .orderedAscending : .orderedDescending)
            })
            #expect(find.location == 1 && find.length == 2)
        }
        try connection.write { tx in (tx.ext("results") as! YapDatabaseSearchResultsViewTransaction).performSearch(for: "am") }
        connection.read { tx in #expect(Self.contents(tx, "filtered") == ["": ["2", "3"]]) }
    }

    @Test func theResultsCanBeUnregisteredAndRegisteredAgain() throws {
        let fixture = try DatabaseFixture()
        Self.setUp(fixture.database)
        let connection = fixture.database.newConnection()
        try Self.write(connection)
        try connection.write { tx in (tx.ext("results") as! YapDatabaseSearchResultsViewTransaction).performSearch(for: "am") }
        fixture.database.unregisterExtension(withName: "results")
        #expect(fixture.database.register(YapDatabaseSearchResultsView(fullTextSearchName: "fts", parentViewName: "order", versionTag: "1",
                                                                       options: nil), withName: "results"))
        connection.read { tx in #expect(Self.contents(tx).isEmpty) }
        try connection.write { tx in (tx.ext("results") as! YapDatabaseSearchResultsViewTransaction).performSearch(for: "the") }
        connection.read { tx in #expect(Self.contents(tx) == ["": ["4", "0", "1"]]) }
    }

    /// Rows written before and after a search in one transaction are each shown once (views
    /// place a transaction's new rows in one pass, later than they are written).
    @Test(arguments: [true, false])
    func rowsWrittenAroundASearchInOneTransactionAppearOnce(parent: Bool) throws {
        let fixture = try DatabaseFixture()
        Base.setUp(fixture.database, parent: parent, snippets: false)
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            for (i, phrase) in Base.phrases.enumerated() { tx.setObject(phrase, forKey: "\(i)", inCollection: nil) }
            (tx.ext("results") as! YapDatabaseSearchResultsViewTransaction).performSearch(for: "the")
            tx.setObject("The more you know...", forKey: "7", inCollection: nil)
            tx.setObject("no match", forKey: "8", inCollection: nil)
            #expect(Base.keys(tx) == ["4", "0", "7", "1"])
        }
        connection.read { tx in #expect(Base.keys(tx) == ["4", "0", "7", "1"]) }
        #expect(try fixture.database.verify().isValid)
    }

    // MARK: The automatic view's classes

    @Test(arguments: [true, false])
    func theTransactionAndConnectionAreAnAutoViews(parent: Bool) throws {
        let fixture = try DatabaseFixture()
        Base.setUp(fixture.database, parent: parent, snippets: false)
        let connection = fixture.database.newConnection()
        try Self.write(connection)
        #expect(connection.ext("results") is YapDatabaseAutoViewConnection)
        #expect((connection.ext("results") as? YapDatabaseSearchResultsViewConnection)?.autoView === fixture.database.registeredExtension(parent ? "order" : "results"))
        try connection.write { tx in
            let auto = try #require(tx.ext("results") as? YapDatabaseAutoViewTransaction)
            (auto as? YapDatabaseSearchResultsViewTransaction)?.performSearch(for: "the")
            #expect(auto.numberOfItems(inGroup: "") == 3)
            let range = auto.findRange(inGroup: "", using: .withObjectBlock { _, _, object in
                (object as? String ?? "").hasPrefix("The") ? .orderedSame : ((object as? String ?? "") < "The" ? .orderedAscending : .orderedDescending)
            })
            #expect(range.length == 1)
        }
    }

    @Test func blocksModeTakesANewGroupingFromTheAutoViewTransaction() throws {
        let fixture = try DatabaseFixture()
        Base.setUp(fixture.database, parent: false, snippets: false)
        let connection = fixture.database.newConnection()
        try Self.write(connection)
        try connection.write { tx in (tx.ext("results") as! YapDatabaseSearchResultsViewTransaction).performSearch(for: "am OR the") }
        try connection.write { tx in
            (tx.ext("results") as! YapDatabaseAutoViewTransaction).setGrouping(Self.byFirstWord(), sorting: Base.sorting(), versionTag: "2")
        }
        connection.read { tx in
            #expect(Self.contents(tx) == ["I": ["2", "3"], "Are": ["4"], "The": ["0"], "You": ["1"]])
            let view = tx.ext("results") as! YapDatabaseSearchResultsViewTransaction
            #expect(view.query() == "am OR the")
            #expect(view.searchResultsView.versionTag == "2")
        }
        // A touch of a row that does not match leaves it out; of one that does, reports it.
        try connection.write { tx in
            let auto = tx.ext("results") as! YapDatabaseAutoViewTransaction
            auto.touchRow(forKey: "5", inCollection: nil)
            auto.touchRow(forKey: "2", inCollection: nil)
        }
        connection.read { tx in #expect(Self.contents(tx)["I"] == ["2", "3"]) }
    }

    @Test func aTouchInParentModeReportsTheRowAndAddsNothing() throws {
        let fixture = try DatabaseFixture()
        Self.setUp(fixture.database)
        let writer = fixture.database.newConnection(), reader = fixture.database.newConnection()
        try Self.write(writer)
        try writer.write { tx in (tx.ext("results") as! YapDatabaseSearchResultsViewTransaction).performSearch(for: "am") }
        _ = reader.beginLongLivedReadTransaction()
        let mappings = YapDatabaseViewMappings(groups: [""], view: "results")
        reader.read { tx in mappings.update(with: tx) }
        try writer.write { tx in
            let auto = tx.ext("results") as! YapDatabaseAutoViewTransaction
            auto.touchRow(forKey: "2", inCollection: nil)
            auto.touchRow(forKey: "5", inCollection: nil)
        }
        writer.read { tx in #expect(Self.contents(tx) == ["": ["2", "3"]]) }
        let changes = (reader.ext("results") as! YapDatabaseViewConnection)
            .getChanges(forNotifications: reader.beginLongLivedReadTransaction(), withMappings: mappings)
        #expect(changes.rowChanges.map(\.type) == [.update])
        #expect(changes.rowChanges.first?.collectionKey.key == "2")
    }

    @Test func theOptionsAreViewOptions() {
        let options = YapDatabaseSearchResultsViewOptions()
        let asViewOptions: YapDatabaseViewOptions = options
        #expect(asViewOptions.isPersistent == false)
        #expect(YapDatabaseViewOptions().isPersistent == true)
        #expect(options.allowedGroups == nil && options.snippetOptions == nil && options.allowedCollections == nil)
        let snippets = YapDatabaseFullTextSearchSnippetOptions()
        snippets.numberOfTokens = 7
        options.snippetOptions = snippets
        options.allowedGroups = YapWhitelistBlacklist(whitelist: ["a"])
        options.isPersistent = true
        snippets.numberOfTokens = 9
        #expect(options.snippetOptions?.numberOfTokens == 7)
        let copy = options.copy() as? YapDatabaseSearchResultsViewOptions
        #expect(copy?.isPersistent == true)
        #expect(copy?.snippetOptions?.numberOfTokens == 7)
        #expect(copy?.allowedGroups?.isAllowed("a") == true && copy?.allowedGroups?.isAllowed("b") == false)
        let view = YapDatabaseSearchResultsView(fullTextSearchName: "fts", parentViewName: "order", versionTag: "v", options: options)
        #expect((view.options as? YapDatabaseSearchResultsViewOptions)?.isPersistent == true)
        #expect(view.versionTag == "v")
    }
}
