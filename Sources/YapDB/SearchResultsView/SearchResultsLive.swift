import Foundation
import Synchronization
import YapDBFullText

/// What a search results view's blocks read: the view and name (set at registration), the
/// parsed query of the last text asked, and, during `performSearch`, the rows the index found.
///
/// `@unchecked Sendable`: every mutable field is inside `state`, a `Mutex`; `view` is set once
/// before the view is registered and is weak (the view owns this object).
final class SearchResultsLive: @unchecked Sendable {
    weak var view: YapDatabaseSearchResultsView?
    struct State {
        var name: String?
        var parsed: (text: String, query: FTSQuery?)?
        /// During a search: the matching row ids (a row in it matches without the handler running).
        var found: Set<UInt64>?
        /// While many rows are placed at once: the query whose matches the index gives (into
        /// `found`) when the first row is checked.
        var indexQuery: String?
        /// The query last read from the view's state or set by a search.
        var query = ""
    }
    let state = Mutex(State())

    /// Whether row (collection, key) matches the view's current query in `transaction`.
    func matches(_ transaction: YapDatabaseReadTransaction, collection: String, key: String) -> Bool {
        guard let view, let name = state.withLock({ $0.name }) else { return false }
        if let query = state.withLock({ $0.indexQuery }) {
            var found = Set<UInt64>()
            if let fts = transaction.ext(view.fullTextSearchName) as? YapDatabaseFullTextSearchTransaction {
                do throws(YapDatabaseError) { found = try view.indexMatches(query, fts) } catch {
                    YapDatabaseLogging.log(.error, "search results view \(name): \(error)")
                }
            }
            state.withLock {
                $0.indexQuery = nil
                $0.found = found
            }
        }
        if let found = state.withLock({ $0.found }) {
            guard let entry = transaction.entry(collection: collection, key: key) else { return false }
            return found.contains(entry.rowid)
        }
        // While the view changes its state is out of the transaction (it is being updated in
        // place): the query is then the one last seen, which is the state's (a search sets both).
        let text: String
        if let state = transaction.viewState(name) {
            text = YapDatabaseSearchResultsView.query(inTag: state.versionTag)
            self.state.withLock { $0.query = text }
        } else {
            text = self.state.withLock { $0.query }
        }
        guard !text.isEmpty, let fts = view.fullTextSearch(in: transaction.connection.database),
              let query = parsed(text, fts) else { return false }
        guard let texts = fts.texts(collection: collection, key: key, transaction: transaction, name: view.fullTextSearchName) else {
            return false
        }
        return FTSMatcher.matches(query, FTSDocument(texts: texts, tokenizer: fts.tokenizer))
    }

    /// `text` parsed for `fts` (the last text's parse is kept); nil when malformed.
    func parsed(_ text: String, _ fts: YapDatabaseFullTextSearch) -> FTSQuery? {
        if let last = state.withLock({ $0.parsed }), last.text == text { return last.query }
        let query = try? FTSQuery.parse(text, columnNames: fts.columnNames, tokenizer: fts.tokenizer)
        state.withLock { $0.parsed = (text, query) }
        return query
    }
}
