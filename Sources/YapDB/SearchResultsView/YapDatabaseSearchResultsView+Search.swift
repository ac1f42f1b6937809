import Foundation
import YapDBEngine

// Running a search: the index's matches become the view's rows. And the other times the whole
// view is placed again (its parent was rebuilt, a new grouping or sorting): the query is then
// answered by the index once, not by running the handler on every row.

extension YapDatabaseSearchResultsView {
    // MARK: Searching

    /// Runs `query` against the full-text index and makes the view hold the matches (in the
    /// parent's groups and order, or through the grouping and sorting). With a `queue`, the
    /// abort flag is checked every `abortCheckInterval` matches: an abort with rollback rolls
    /// the transaction back; without rollback the matches found so far are shown.
    func search(_ query: String, name: String, transaction: YapDatabaseReadWriteTransaction, queue: YapDatabaseSearchQueue?) {
        var found = Set<UInt64>()
        if !query.isEmpty, let fts = transaction.ext(fullTextSearchName) as? YapDatabaseFullTextSearchTransaction {
            do throws(YapDatabaseError) {
                found = try indexMatches(query, fts) { n in
                    guard let queue, n % YapDatabaseSearchQueue.abortCheckInterval == 0 else { return true }
                    return !queue.abortRequest.abort
                }
                // Asked to stop (during the search or while it was finishing) and roll back:
                // nothing of the transaction is kept, as in YapDatabase.
                if let request = queue?.abortRequest, request.abort, request.rollback {
                    transaction.rollback()
                    return
                }
            } catch {
                YapDatabaseLogging.log(.error, "search results view \(name): \(error)")
                found = []
            }
        }
        live.state.withLock {
            $0.found = found
            $0.query = YapDatabaseSearchResultsView.clean(query)
        }
        defer { live.state.withLock { $0.found = nil } }
        let tag = Self.tag(versionTag, query: query)
        if let inner {
            inner.config.withLock { $0.versionTag = tag }
            inner.repopulate(name: name, transaction: transaction)
            return
        }
        config.withLock { $0.versionTag = tag }
        // The search finds every matching row, those inserted earlier in this transaction
        // too: rows still waiting to be placed (`deferViewInsert`) are in the new state already.
        transaction.viewPendingInserts[name] = nil
        var state = ViewState(versionTag: tag, transaction: transaction)
        let engine = ViewEngine(view: self, config: config.withLock { $0 }, transaction: transaction)
        for rowid in found.sorted() {
            guard let owner = transaction.owner(ofRowid: rowid), isAllowed(owner.collection) else { continue }
            _ = engine.insertRow(collection: owner.collection, key: owner.key, into: &state)
        }
        state.isPersistent = isPersistent
        transaction.setViewState(state, name)
        transaction.markChanged()
        transaction.noteViewChange(name)
        transaction.viewDidRepopulate(name)
    }

    /// The row ids matching `query` in `fts`'s index; `proceed` gets the count so far after
    /// each match and stops the search by returning false.
    /// - Throws: `.invalidQuery` for a malformed query, `.corrupted` for a damaged index.
    func indexMatches(_ query: String, _ fts: YapDatabaseFullTextSearchTransaction,
                      proceed: (Int) -> Bool = { _ in true }) throws(YapDatabaseError) -> Set<UInt64> {
        let searcher = try fts.searcher(query)
        var found = Set<UInt64>()
        do throws(EngineError) {
            try searcher.forEachMatch { rowid in
                found.insert(rowid)
                return proceed(found.count)
            }
        } catch {
            throw fts.damaged(error)
        }
        return found
    }

    /// Runs `body` (which places many rows) with the rows matching `query` taken from the
    /// index, asked once when the first row is checked, instead of running the handler per row.
    func checkingWithTheIndex<T>(_ query: String, _ body: () -> T) -> T {
        guard !query.isEmpty else { return body() }
        live.state.withLock { $0.indexQuery = query }
        defer {
            live.state.withLock {
                $0.indexQuery = nil
                $0.found = nil
            }
        }
        return body()
    }

    // MARK: Following the parent, and a new grouping or sorting

    /// The parent view was rebuilt in this transaction (a new grouping, sorting or filter):
    /// the results are taken from it again, for the current query (as YapDatabase's search
    /// results view repopulates), then the views below this one follow.
    func parentDidRepopulate(name: String, transaction: YapDatabaseReadWriteTransaction, reported: ViewRebuild?) {
        guard let inner, transaction.viewState(name) != nil else { return }
        let query = query(in: transaction, name: name)
        live.state.withLock { $0.query = query }
        // The configured tag may hold a query rolled back since: the state's is the one.
        let tag = Self.tag(versionTag, query: query)
        inner.config.withLock { $0.versionTag = tag }
        checkingWithTheIndex(query) { inner.repopulate(name: name, transaction: transaction, reported: reported) }
    }

    /// Blocks mode: a new grouping (if given) and sorting, then the view built anew for the
    /// current query. Nothing happens when `versionTag` is the view's own (as for any view).
    func reconfigure(grouping: YapDatabaseViewGrouping?, sorting: YapDatabaseViewSorting, versionTag newTag: String?,
                     name: String, transaction: YapDatabaseReadWriteTransaction) {
        let base = Self.clean(newTag ?? "")
        guard base != versionTag else {
            YapDatabaseLogging.log(.warning, "search results view \(name): a new grouping or sorting with the view's own versionTag changes nothing")
            return
        }
        let query = query(in: transaction, name: name)
        let tag = Self.tag(base, query: query)
        config.withLock { config in
            if let grouping { config.grouping = Self.matching(grouping, live) }
            config.sorting = sorting
            config.versionTag = tag
        }
        checkingWithTheIndex(query) {
            rebuild(name: name, transaction: transaction, versionTag: tag, reported: grouping == nil ? .resorted : .regrouped)
        }
    }
}

extension YapDatabase {
    /// The registered search results views that depend on the extension `name` (their index
    /// or their parent view).
    func searchResultsViewNames(dependingOn name: String) -> [String] {
        extensionRegistry.all.compactMap { entry in
            guard let view = entry.ext as? YapDatabaseSearchResultsView,
                  view.fullTextSearchName == name || (view.inner != nil && view.parentViewName == name) else { return nil }
            return entry.name
        }
    }
}
