import Foundation
import YapDBEngine
import Synchronization
import YapDBFullText

/// A view of the rows matching a full-text query (YapDatabase's `YapDatabaseSearchResultsView`),
/// kept like any view: grouped, sorted, read through mappings, with change sets. Set the query
/// with `performSearch(for:)` (or `performSearch(with:)`, fed by a `YapDatabaseSearchQueue` as
/// the user types) in a read-write transaction; rows written later are checked against the
/// query as they change (the index's handler runs on the row and `FTSMatcher` decides), so the
/// results stay current until the next search.
///
/// Two modes:
/// - **Parent view**: the results are the rows of a registered view that match, in that view's
///   groups and order (`allowedGroups` narrows the groups) — a filtered view whose filter is
///   the query. When the parent view is rebuilt (a new grouping, sorting or filter, or a new
///   version tag at registration), the results follow it in the same transaction.
/// - **Blocks**: the matching rows go through this view's own grouping and sorting (a grouping
///   that returns nil leaves the row out).
///
/// The query travels with the view's state in the snapshot: every connection's `query()` and
/// reads see it once they read a snapshot at or after the search. With
/// `YapDatabaseSearchResultsViewOptions.isPersistent` (false by default, as in YapDatabase),
/// checkpoints store the results and the query, and the view registered again after a reopen
/// shows them without a new search; otherwise it starts empty at every registration. Register
/// the full-text index (and the parent view) first; registration fails otherwise.
/// Unregistering either unregisters this view too.
///
/// `@unchecked Sendable`: the mutable parts sit in `Mutex`es (`config`, `live`).
open class YapDatabaseSearchResultsView: YapDatabaseAutoView, @unchecked Sendable {
    /// The registered name of the full-text index searched.
    public let fullTextSearchName: String
    /// The registered name of the parent view ("" in blocks mode).
    public let parentViewName: String
    /// A copy of the options at creation.
    let searchOptions: YapDatabaseSearchResultsViewOptions
    let allowedGroups: YapWhitelistBlacklist?
    let snippetOptions: YapDatabaseFullTextSearchSnippetOptions?
    /// Parent-view mode: the filtered view that does the work (registered under this view's name).
    let inner: YapDatabaseFilteredView?
    /// What the blocks read while the view runs: the live query check and, during a search, the
    /// rows the index found.
    let live: SearchResultsLive

    /// Results of `fullTextSearchName` among the rows of the view `parentViewName`, in its groups
    /// and order.
    /// - Parameters:
    ///   - fullTextSearchName: the registered name of a `YapDatabaseFullTextSearch`.
    ///   - parentViewName: the registered name of the view searched (an automatic or filtered view).
    ///   - versionTag: the caller's tag; the stored results are reused at registration whatever
    ///     it is (they follow the parent), and nil means "".
    ///   - options: nil for the defaults (not persistent, no snippets).
    public init(fullTextSearchName: String, parentViewName: String, versionTag: String?,
                options: YapDatabaseSearchResultsViewOptions?) {
        let live = SearchResultsLive()
        let options = (options ?? YapDatabaseSearchResultsViewOptions()).copy() as! YapDatabaseSearchResultsViewOptions
        let allowedGroups = options.allowedGroups
        self.fullTextSearchName = fullTextSearchName
        self.parentViewName = parentViewName
        searchOptions = options
        self.allowedGroups = allowedGroups
        snippetOptions = options.snippetOptions
        self.live = live
        let tag = Self.tag(Self.clean(versionTag ?? ""), query: "")
        let filtering = YapDatabaseViewFiltering.withOptions(.any, keyBlock: { tx, group, collection, key in
            (allowedGroups?.isAllowed(group) ?? true) && live.matches(tx, collection: collection, key: key)
        })
        inner = YapDatabaseFilteredView(parentViewName: parentViewName, filtering: filtering, versionTag: tag, options: options)
        super.init(grouping: .withKeyBlock { _, _, _ in nil }, sorting: .withKeyBlock { _, _, _, _, _, _ in .orderedSame },
                   versionTag: tag, options: options)
        live.view = self
    }

    /// Results of `fullTextSearchName` grouped and sorted by `grouping` and `sorting`.
    /// - Parameters:
    ///   - fullTextSearchName: the registered name of a `YapDatabaseFullTextSearch`.
    ///   - grouping: places each matching row in a group (nil leaves it out).
    ///   - sorting: orders the rows of a group.
    ///   - versionTag: the caller's tag (nil means ""): a stored view with another tag is
    ///     rebuilt at registration from its stored query.
    ///   - options: nil for the defaults (not persistent, no snippets).
    public init(fullTextSearchName: String, grouping: YapDatabaseViewGrouping, sorting: YapDatabaseViewSorting,
                versionTag: String?, options: YapDatabaseSearchResultsViewOptions?) {
        let live = SearchResultsLive()
        let options = (options ?? YapDatabaseSearchResultsViewOptions()).copy() as! YapDatabaseSearchResultsViewOptions
        self.fullTextSearchName = fullTextSearchName
        parentViewName = ""
        searchOptions = options
        allowedGroups = nil
        snippetOptions = options.snippetOptions
        self.live = live
        inner = nil
        super.init(grouping: Self.matching(grouping, live), sorting: sorting,
                   versionTag: Self.tag(Self.clean(versionTag ?? ""), query: ""), options: options)
        live.view = self
    }

    /// YapDatabase refuses the plain view initializer on a search results view (it throws);
    /// here it stops the program: use `init(fullTextSearchName:…)`.
    public override init(grouping: YapDatabaseViewGrouping, sorting: YapDatabaseViewSorting, versionTag: String? = nil,
                         options: YapDatabaseViewOptions? = nil) {
        preconditionFailure("YapDatabaseSearchResultsView misuse: use init(fullTextSearchName:parentViewName:…) or init(fullTextSearchName:grouping:…)")
    }

    /// The caller's version tag (the latest `setGrouping`/`setSorting` wins in blocks mode).
    public override var versionTag: String { Self.base(inTag: storedTagBase) }

    /// A copy of the options the view was made with (a `YapDatabaseSearchResultsViewOptions`).
    public override var options: YapDatabaseViewOptions {
        searchOptions.copy() as! YapDatabaseSearchResultsViewOptions
    }

    /// The tag the view's state is stored with now, as configured (query included).
    var storedTagBase: String {
        if let inner { return inner.config.withLock { $0.versionTag } }
        return config.withLock { $0.versionTag }
    }

    /// `grouping` answering nil for rows that do not match the current query. It runs again for
    /// the changes that run either the grouping or any handler (the match may change with them).
    static func matching(_ grouping: YapDatabaseViewGrouping, _ live: SearchResultsLive) -> YapDatabaseViewGrouping {
        switch grouping.block {
        case .key(let b):
            return .withOptions(.any, keyBlock: { tx, c, k in live.matches(tx, collection: c, key: k) ? b(tx, c, k) : nil })
        case .object(let b):
            return .withOptions(.any, objectBlock: { tx, c, k, o in live.matches(tx, collection: c, key: k) ? b(tx, c, k, o) : nil })
        case .metadata(let b):
            return .withOptions(.any, metadataBlock: { tx, c, k, m in live.matches(tx, collection: c, key: k) ? b(tx, c, k, m) : nil })
        case .row(let b):
            return .withOptions(.any, rowBlock: { tx, c, k, o, m in live.matches(tx, collection: c, key: k) ? b(tx, c, k, o, m) : nil })
        }
    }

    // MARK: Extension hooks
    // In parent-view mode they go to the filtered view that does the work, in blocks mode to
    // the automatic view's own (whose grouping answers nil for rows that do not match).

    override func prepare(name: String, transaction: YapDatabaseReadWriteTransaction) -> Bool {
        let database = transaction.connection.database
        guard fullTextSearch(in: database) != nil else {
            YapDatabaseLogging.log(.error, "search results view \(name): no full-text index is registered as \(fullTextSearchName); register it first")
            return false
        }
        if inner != nil, !(database.registeredExtension(parentViewName) is YapDatabaseView) {
            YapDatabaseLogging.log(.error, "search results view \(name): no view is registered as \(parentViewName); register it first")
            return false
        }
        // The query the stored view was left with (a persistent view), else none.
        let query = isPersistent ? storedQuery(name: name, database: database) : ""
        live.state.withLock {
            $0.name = name
            $0.query = query
        }
        let tag = Self.tag(versionTag, query: query)
        if let inner {
            inner.config.withLock { $0.versionTag = tag }
            return checkingWithTheIndex(query) { inner.prepare(name: name, transaction: transaction) }
        }
        config.withLock { $0.versionTag = tag }
        if !query.isEmpty {
            return checkingWithTheIndex(query) { super.prepare(name: name, transaction: transaction) }
        }
        // No query: the view is empty, and nothing needs reading.
        var state = ViewState(versionTag: tag, transaction: transaction)
        state.isPersistent = isPersistent
        transaction.setViewState(state, name)
        transaction.markChanged()
        transaction.noteViewChange(name)
        return true
    }

    override func dropState(name: String, transaction: YapDatabaseReadWriteTransaction) {
        transaction.setExtensionState(nil, forKey: Self.stateKey(name))
        transaction.markChanged()
    }

    override func makeConnection(name: String, connection: YapDatabaseConnection) -> AnyObject? {
        guard let root = rootView(in: connection.database) else { return nil }
        return YapDatabaseSearchResultsViewConnection(searchResultsView: self, root: root, name: name, connection: connection)
    }

    override func makeTransaction(name: String, extensionConnection: AnyObject?, transaction: YapDatabaseReadTransaction) -> AnyObject? {
        guard let root = rootView(in: transaction.connection.database) else { return nil }
        return YapDatabaseSearchResultsViewTransaction(searchResultsView: self, root: root, name: name,
                                                       viewConnection: extensionConnection as? YapDatabaseViewConnection,
                                                       transaction: transaction)
    }

    override func willChangeRow(name: String, collection: String, key: String, change: RowChange,
                                transaction: YapDatabaseReadWriteTransaction) {
        if let inner {
            inner.willChangeRow(name: name, collection: collection, key: key, change: change, transaction: transaction)
        } else {
            super.willChangeRow(name: name, collection: collection, key: key, change: change, transaction: transaction)
        }
    }

    override func didChangeRow(name: String, collection: String, key: String, change: RowChange,
                               transaction: YapDatabaseReadWriteTransaction) {
        if let inner {
            inner.didChangeRow(name: name, collection: collection, key: key, change: change, transaction: transaction)
        } else {
            super.didChangeRow(name: name, collection: collection, key: key, change: change, transaction: transaction)
        }
    }

    override func willRemoveRow(name: String, collection: String, key: String, transaction: YapDatabaseReadWriteTransaction) {
        if let inner {
            inner.willRemoveRow(name: name, collection: collection, key: key, transaction: transaction)
        } else {
            super.willRemoveRow(name: name, collection: collection, key: key, transaction: transaction)
        }
    }

    override func willRemoveCollection(name: String, collection: String, transaction: YapDatabaseReadWriteTransaction) {
        if let inner {
            inner.willRemoveCollection(name: name, collection: collection, transaction: transaction)
        } else {
            super.willRemoveCollection(name: name, collection: collection, transaction: transaction)
        }
    }

    override func willRemoveAll(name: String, transaction: YapDatabaseReadWriteTransaction) {
        if let inner {
            inner.willRemoveAll(name: name, transaction: transaction)
        } else {
            super.willRemoveAll(name: name, transaction: transaction)
        }
    }

    override func didTouchRow(name: String, collection: String, key: String, change: RowChange,
                              transaction: YapDatabaseReadWriteTransaction) {
        if let inner {
            inner.didTouchRow(name: name, collection: collection, key: key, change: change, transaction: transaction)
        } else {
            super.didTouchRow(name: name, collection: collection, key: key, change: change, transaction: transaction)
        }
    }


    /// Checks the view against its query (`verifyResults`, YapDatabaseSearchResultsView+Verify.swift).
    override func verifyState(name: String, transaction: YapDatabaseReadTransaction) -> [String] {
        verifyResults(name: name, transaction: transaction)
    }

    /// The full-text index searched, if registered.
    func fullTextSearch(in database: YapDatabase) -> YapDatabaseFullTextSearch? {
        database.registeredExtension(fullTextSearchName) as? YapDatabaseFullTextSearch
    }

    /// The view whose sorting orders the results.
    func rootView(in database: YapDatabase) -> YapDatabaseAutoView? {
        inner.map { $0.rootView(in: database) } ?? self
    }
}

