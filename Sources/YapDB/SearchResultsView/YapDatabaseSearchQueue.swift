import Foundation
import Synchronization

/// Coalesces the queries a user types for a search results view (YapDatabase's
/// `YapDatabaseSearchQueue`): enqueue each keystroke's query from any thread, and let a
/// read-write transaction on a background connection run only the newest one with
/// `performSearch(with:)`. A search in progress can be aborted, with or without rolling back
/// its transaction.
///
/// ```swift
/// queue.enqueueQuery(text + "*")
/// backgroundConnection.asyncReadWrite { tx in
///     (tx.ext("searchResults") as? YapDatabaseSearchResultsViewTransaction)?.performSearch(with: queue)
/// }
/// ```
///
/// Threading: every method may be called from any thread (one `Mutex`).
public final class YapDatabaseSearchQueue: NSObject, Sendable {
    enum Item: Sendable {
        case query(String)
        /// An abort request (rolling back the search's transaction or not).
        case abort(rollback: Bool)
    }

    struct State: Sendable {
        var items: [Item] = []
        var abort = false
        var rollback = false
    }

    let state = Mutex(State())

    /// An empty queue.
    public override init() { super.init() }

    /// Adds `query`; the next `performSearch(with:)` runs the newest query only.
    public func enqueueQuery(_ query: String) {
        state.withLock { $0.items.append(.query(query)) }
    }

    /// The queries waiting, oldest first.
    public func enqueuedQueries() -> [String] {
        state.withLock { $0.items.compactMap { if case .query(let q) = $0 { q } else { nil } } }
    }

    /// The number of queries waiting.
    public func enqueuedQueryCount() -> UInt {
        UInt(enqueuedQueries().count)
    }

    /// Asks the search in progress to stop (it checks every 2,500 matching rows) and, if
    /// `shouldRollback`, to roll its transaction back; a search not yet started does not run
    /// unless a query is enqueued after this call.
    public func abortSearchInProgressAndRollback(_ shouldRollback: Bool) {
        state.withLock { state in
            state.items.append(.abort(rollback: shouldRollback))
            state.abort = true
            state.rollback = state.rollback || shouldRollback
        }
    }

    /// Takes the newest item and empties the queue: the query to run, or nil (nothing queued,
    /// or an abort came last).
    func flush() -> String? {
        state.withLock { state in
            let last = state.items.last
            state.items.removeAll()
            state.abort = false
            state.rollback = false
            if case .query(let query)? = last { return query }
            return nil
        }
    }

    /// Whether the search in progress was asked to stop, and to roll back.
    var abortRequest: (abort: Bool, rollback: Bool) {
        state.withLock { ($0.abort, $0.rollback) }
    }

    /// Matching rows between two checks of the abort flag.
    static let abortCheckInterval = 2_500
}
