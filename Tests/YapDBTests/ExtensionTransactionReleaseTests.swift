import Foundation
import Testing
import YapDB
import TestSupport

/// A transaction that used an extension's transaction (`transaction.ext(name)`) is released
/// with it: nothing keeps the connection, and so the database, alive after the last reference
/// goes (each extension transaction holds its transaction; the transaction lets them go when
/// its block returns).
@Suite struct ExtensionTransactionReleaseTests {
    @Test(arguments: ["view", "filtered", "results"])
    func theDatabaseIsReleasedAfterReadsAndWritesThroughAnExtension(extensionName: String) throws {
        let directory = TemporaryDirectory("yapdb-release")
        defer { directory.remove() }
        weak var released: YapDatabase?
        do {
            let database = try YapDatabase.open(url: URL(fileURLWithPath: directory.file("release.yapdb")))
            released = database
            let handler = YapDatabaseFullTextSearchHandler.withObjectBlock { _, dict, _, _, object in dict["content"] = object }
            #expect(database.register(YapDatabaseFullTextSearch(columnNames: ["content"], handler: handler), withName: "fts"))
            #expect(database.register(YapDatabaseAutoView(grouping: SearchResultsViewTests.grouping(), sorting: SearchResultsViewTests.sorting()),
                                      withName: "view"))
            #expect(database.register(YapDatabaseFilteredView(parentViewName: "view", filtering: .withKeyBlock { _, _, _, _ in true }),
                                      withName: "filtered"))
            #expect(database.register(YapDatabaseSearchResultsView(fullTextSearchName: "fts", parentViewName: "view", versionTag: nil,
                                                                   options: nil), withName: "results"))
            let connection = database.newConnection()
            try connection.write { tx in
                tx.setObject("hello world", forKey: "k", inCollection: nil)
                (tx.ext("results") as? YapDatabaseSearchResultsViewTransaction)?.performSearch(for: "hello")
                _ = (tx.ext(extensionName) as? YapDatabaseViewTransaction)?.numberOfItemsInAllGroups()
            }
            let count = connection.read { tx in (tx.ext(extensionName) as? YapDatabaseViewTransaction)?.numberOfItemsInAllGroups() }
            #expect(count == 1)
        }
        // Background work of the last commit may hold the database a moment: a bounded wait.
        for _ in 0..<500 where released != nil { Thread.sleep(forTimeInterval: 0.01) }
        #expect(released == nil)
    }
}
