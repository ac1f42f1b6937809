import Foundation

/// Reading a search results view inside a transaction:
/// `transaction.ext(name) as? YapDatabaseSearchResultsViewTransaction`. Everything an automatic
/// view's transaction offers (it subclasses `YapDatabaseAutoViewTransaction`, as in
/// YapDatabase: counts, rows by index, iteration, finds, mappings), plus the query, snippets
/// and, in read-write transactions, `performSearch`.
///
/// Threading: valid only inside its transaction's block, on the thread running it.
public final class YapDatabaseSearchResultsViewTransaction: YapDatabaseAutoViewTransaction {
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

    // MARK: The automatic view's read-write members

    /// Blocks mode: replaces the grouping and sorting and builds the view again for the current
    /// query (in this transaction); nothing happens unless `versionTag` (nil means "") differs
    /// from the view's. A search results view of a parent view takes its groups and order from
    /// the parent: calling this on one stops the program (API misuse, as YapDatabase throws);
    /// change the parent's grouping instead.
    public override func setGrouping(_ grouping: YapDatabaseViewGrouping, sorting: YapDatabaseViewSorting, versionTag: String?) {
        let writeTransaction = writeTransaction()
        guard searchResultsView.inner == nil else {
            preconditionFailure("YapDatabaseSearchResultsViewTransaction misuse: setGrouping(_:sorting:versionTag:) on a search results view of the parent view \(searchResultsView.parentViewName); change the parent's grouping instead")
        }
        searchResultsView.reconfigure(grouping: grouping, sorting: sorting, versionTag: versionTag, name: name, transaction: writeTransaction)
    }

    /// Blocks mode: replaces the sorting and sorts the view again (in this transaction);
    /// nothing happens unless `versionTag` differs from the view's. Stops the program on a
    /// search results view of a parent view (API misuse): change the parent's sorting instead.
    public override func setSorting(_ sorting: YapDatabaseViewSorting, versionTag: String?) {
        let writeTransaction = writeTransaction()
        guard searchResultsView.inner == nil else {
            preconditionFailure("YapDatabaseSearchResultsViewTransaction misuse: setSorting(_:versionTag:) on a search results view of the parent view \(searchResultsView.parentViewName); change the parent's sorting instead")
        }
        searchResultsView.reconfigure(grouping: nil, sorting: sorting, versionTag: versionTag, name: name, transaction: writeTransaction)
    }

    /// A touched row is checked against the query again (and, in parent-view mode, placed as
    /// the parent holds it); observers see it as updated when the view holds it.
    override func touch(collection: String, key: String, writeTransaction: YapDatabaseReadWriteTransaction) {
        guard let inner = searchResultsView.inner else {
            return super.touch(collection: collection, key: key, writeTransaction: writeTransaction)
        }
        guard writeTransaction.entry(collection: collection, key: key) != nil else { return }
        if inner.holds(name, collection, key, writeTransaction),
           searchResultsView.live.matches(writeTransaction, collection: collection, key: key) {
            // Held and still matching: it keeps its place (the parent placed it); observers see an update.
            writeTransaction.noteViewChange(name, touching: YapCollectionKey(collection: collection, key: key))
            writeTransaction.viewDidReplaceRow(name, collection: collection, key: key)
        } else {
            inner.replaceRow(name: name, collection: collection, key: key, transaction: writeTransaction)
        }
        writeTransaction.markChanged()
    }

    /// The snippet of row (collection, key) for the current query, made with the view's
    /// `snippetOptions` (the index's handler runs again on the row); nil when the view was made
    /// without snippet options or does not hold the row.
    public func snippet(forKey key: String, inCollection collection: String?) -> String? {
        transaction.checkValid()
        guard let options = searchResultsView.snippetOptions else { return nil }
        let collection = collection ?? ""
        guard let entry = transaction.entry(collection: collection, key: key),
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
/// `getChanges(forNotifications:withMappings:)` as for any view). It subclasses
/// `YapDatabaseAutoViewConnection`, as in YapDatabase.
public final class YapDatabaseSearchResultsViewConnection: YapDatabaseAutoViewConnection {
    /// The search results view this connection reads.
    public let searchResultsView: YapDatabaseSearchResultsView

    init(searchResultsView: YapDatabaseSearchResultsView, root: YapDatabaseAutoView, name: String, connection: YapDatabaseConnection) {
        self.searchResultsView = searchResultsView
        super.init(view: root, name: name, connection: connection)
    }
}
