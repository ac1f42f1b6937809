import Foundation

/// Reading a search results view inside a transaction:
/// `transaction.ext(name) as? YapDatabaseSearchResultsViewTransaction`. Everything a view
/// transaction offers (counts, rows by index, iteration, mappings), plus the query, snippets
/// and, in read-write transactions, `performSearch`.
///
/// YapDatabase makes this a subclass of `YapDatabaseAutoViewTransaction`; that class is final
/// here, so this one subclasses `YapDatabaseViewTransaction` (the reads are the same).
///
/// Threading: valid only inside its transaction's block, on the thread running it.
public final class YapDatabaseSearchResultsViewTransaction: YapDatabaseViewTransaction {
    /// The search results view this transaction reads.
    public let searchResultsView: YapDatabaseSearchResultsView

    init(searchResultsView: YapDatabaseSearchResultsView, root: YapDatabaseAutoView, name: String,
         viewConnection: YapDatabaseViewConnection?, transaction: YapDatabaseReadTransaction) {
        self.searchResultsView = searchResultsView
        super.init(view: root, name: name, viewConnection: viewConnection, transaction: transaction)
    }

    /// The query the view shows the results of ("" before the first search), as of this
    /// transaction's snapshot: a search made on another connection is seen once this
    /// connection reads a later snapshot.
    public func query() -> String {
        transaction.checkValid()
        return searchResultsView.query(in: transaction, name: name)
    }

    /// Makes the view show the rows matching `query` (SQLite FTS5 syntax), in this
    /// transaction; observers' change sets list the rows that came and went. A malformed query
    /// is logged and shows nothing. Does nothing in a read-only transaction (as in YapDatabase).
    public func performSearch(for query: String) {
        guard let writeTransaction = transaction as? YapDatabaseReadWriteTransaction else { return }
        writeTransaction.checkValid()
        searchResultsView.search(query, name: name, transaction: writeTransaction, queue: nil)
    }

    /// Runs the newest query of `queue` (and empties it); nothing when the queue is empty or an
    /// abort came last. The queue's abort request is checked during the search: with rollback
    /// the whole transaction is rolled back. Does nothing in a read-only transaction.
    public func performSearch(with queue: YapDatabaseSearchQueue) {
        guard let writeTransaction = transaction as? YapDatabaseReadWriteTransaction else { return }
        writeTransaction.checkValid()
        guard let query = queue.flush() else { return }
        searchResultsView.search(query, name: name, transaction: writeTransaction, queue: queue)
    }

    /// The snippet of row (collection, key) for the current query, made with the view's
    /// `snippetOptions` (the index's handler runs again on the row); nil when the view was made
    /// without snippet options or does not hold the row.
    public func snippet(forKey key: String, inCollection collection: String?) -> String? {
        transaction.checkValid()
        guard let options = searchResultsView.snippetOptions else { return nil }
        let collection = collection ?? ""
        guard let entry = transaction.keydirEntry(collection: collection, key: key),
              (try? state.contains(rowid: entry.rowid)) == true,
              let fts = transaction.ext(searchResultsView.fullTextSearchName) as? YapDatabaseFullTextSearchTransaction else {
            return nil
        }
        let text = query()
        guard let parsed = try? fts.parse(text) else { return nil }
        return fts.snippet(parsed, collection: collection, key: key, options: options)
    }
}

/// A search results view's per-connection object:
/// `connection.ext(name) as? YapDatabaseSearchResultsViewConnection` (mappings and
/// `getChanges(forNotifications:withMappings:)` as for any view).
public final class YapDatabaseSearchResultsViewConnection: YapDatabaseViewConnection {
    /// The search results view this connection reads.
    public let searchResultsView: YapDatabaseSearchResultsView

    init(searchResultsView: YapDatabaseSearchResultsView, root: YapDatabaseAutoView, name: String, connection: YapDatabaseConnection) {
        self.searchResultsView = searchResultsView
        super.init(view: root, name: name, connection: connection)
    }
}
