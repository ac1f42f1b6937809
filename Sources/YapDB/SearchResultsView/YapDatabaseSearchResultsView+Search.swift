import Foundation
import YapDBIndex

// Running a search: the index's matches become the view's rows.

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
                let searcher = try fts.searcher(query)
                var n = 0
                var aborted = false
                do throws(PageError) {
                    try searcher.forEachMatch { rowid in
                        found.insert(rowid)
                        n += 1
                        if let queue, n % YapDatabaseSearchQueue.abortCheckInterval == 0, queue.abortRequest.abort {
                            aborted = true
                            return false
                        }
                        return true
                    }
                } catch {
                    throw fts.damaged(error)
                }
                if aborted, queue?.abortRequest.rollback == true {
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
        let tag = Self.tag(baseTag, query: query)
        if let inner {
            inner.config.withLock { $0.versionTag = tag }
            inner.repopulate(name: name, transaction: transaction)
            return
        }
        config.withLock { $0.versionTag = tag }
        var state = ViewState(versionTag: tag, transaction: transaction)
        let engine = ViewEngine(view: self, config: config.withLock { $0 }, transaction: transaction)
        for rowid in found.sorted() {
            guard let owner = transaction.keydirOwner(ofRowid: rowid), isAllowed(owner.collection) else { continue }
            _ = engine.insertRow(collection: owner.collection, key: owner.key, into: &state)
        }
        state.isPersistent = isPersistent
        transaction.setViewState(state, name)
        transaction.engineTransaction.markChanged()
        transaction.noteViewChange(name)
        transaction.viewDidRepopulate(name)
    }
}
