import Foundation
import Synchronization
import YapDBIndex
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
///   the query.
/// - **Blocks**: the matching rows go through this view's own grouping and sorting (a grouping
///   that returns nil leaves the row out).
///
/// The query travels with the view's state in the snapshot: every connection's `query()` and
/// reads see it once they read a snapshot at or after the search. The view starts empty at
/// every registration. Register the full-text index (and the parent view) first; registration
/// fails otherwise.
///
/// `@unchecked Sendable`: the mutable parts sit in `Mutex`es (`config`, `live`).
open class YapDatabaseSearchResultsView: YapDatabaseAutoView, @unchecked Sendable {
    /// The registered name of the full-text index searched.
    public let fullTextSearchName: String
    /// The registered name of the parent view ("" in blocks mode).
    public let parentViewName: String
    /// The options' values at creation.
    let allowedGroups: YapWhitelistBlacklist?
    let snippetOptions: YapDatabaseFullTextSearchSnippetOptions?
    /// Parent-view mode: the filtered view that does the work (registered under this view's name).
    let inner: YapDatabaseFilteredView?
    /// What the blocks read while the view runs: the live query check and, during a search, the
    /// rows the index found.
    let live: SearchResultsLive
    /// The tag the caller gave (the stored tag adds the query).
    let baseTag: String

    /// Results of `fullTextSearchName` among the rows of the view `parentViewName`, in its groups
    /// and order.
    public init(fullTextSearchName: String, parentViewName: String, versionTag: String?,
                options: YapDatabaseSearchResultsViewOptions?) {
        let live = SearchResultsLive()
        let allowedGroups = options?.allowedGroups
        self.fullTextSearchName = fullTextSearchName
        self.parentViewName = parentViewName
        self.allowedGroups = allowedGroups
        snippetOptions = options?.snippetOptions?.copy() as? YapDatabaseFullTextSearchSnippetOptions
        self.live = live
        baseTag = Self.clean(versionTag ?? "")
        let filtering = YapDatabaseViewFiltering.withOptions(.any, keyBlock: { tx, group, collection, key in
            (allowedGroups?.isAllowed(group) ?? true) && live.matches(tx, collection: collection, key: key)
        })
        let viewOptions = YapDatabaseViewOptions()
        viewOptions.allowedCollections = options?.allowedCollections
        viewOptions.isPersistent = options?.isPersistent ?? false
        inner = YapDatabaseFilteredView(parentViewName: parentViewName, filtering: filtering,
                                        versionTag: Self.tag(baseTag, query: ""), options: viewOptions)
        super.init(grouping: .withKeyBlock { _, _, _ in nil }, sorting: .withKeyBlock { _, _, _, _, _, _ in .orderedSame },
                   versionTag: Self.tag(baseTag, query: ""), options: viewOptions)
        live.view = self
    }

    /// Results of `fullTextSearchName` grouped and sorted by `grouping` and `sorting`.
    public init(fullTextSearchName: String, grouping: YapDatabaseViewGrouping, sorting: YapDatabaseViewSorting,
                versionTag: String?, options: YapDatabaseSearchResultsViewOptions?) {
        let live = SearchResultsLive()
        self.fullTextSearchName = fullTextSearchName
        parentViewName = ""
        allowedGroups = nil
        snippetOptions = options?.snippetOptions?.copy() as? YapDatabaseFullTextSearchSnippetOptions
        self.live = live
        inner = nil
        baseTag = Self.clean(versionTag ?? "")
        let viewOptions = YapDatabaseViewOptions()
        viewOptions.allowedCollections = options?.allowedCollections
        viewOptions.isPersistent = options?.isPersistent ?? false
        super.init(grouping: Self.matching(grouping, live), sorting: sorting, versionTag: Self.tag(baseTag, query: ""),
                   options: viewOptions)
        live.view = self
    }

    /// YapDatabase refuses the plain view initializer on a search results view (it throws);
    /// here it stops the program: use `init(fullTextSearchName:…)`.
    public override init(grouping: YapDatabaseViewGrouping, sorting: YapDatabaseViewSorting, versionTag: String? = nil,
                         options: YapDatabaseViewOptions? = nil) {
        preconditionFailure("YapDatabaseSearchResultsView misuse: use init(fullTextSearchName:parentViewName:…) or init(fullTextSearchName:grouping:…)")
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
        live.state.withLock { $0.name = name }
        let empty = Self.tag(baseTag, query: "")
        if let inner {
            guard database.registeredExtension(parentViewName) is YapDatabaseView else {
                YapDatabaseLogging.log(.error, "search results view \(name): no view is registered as \(parentViewName); register it first")
                return false
            }
            inner.config.withLock { $0.versionTag = empty }
            return inner.prepare(name: name, transaction: transaction)
        }
        config.withLock { $0.versionTag = empty }
        var state = ViewState(versionTag: empty, transaction: transaction)
        state.isPersistent = isPersistent
        transaction.setViewState(state, name)
        transaction.engineTransaction.markChanged()
        transaction.noteViewChange(name)
        return true
    }

    override func dropState(name: String, transaction: YapDatabaseReadWriteTransaction) {
        transaction.setExtensionState(nil, forKey: Self.stateKey(name))
        transaction.engineTransaction.markChanged()
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

    /// A search results view holds what its last search found; there is no rebuild to compare with.
    override func verifyState(name: String, transaction: YapDatabaseReadTransaction) -> [String] { [] }

    // MARK: The query in the stored tag

    /// Separates the caller's tag from the query in the stored tag.
    static let querySeparator = "\u{1E}"

    /// The stored tag for `query`.
    static func tag(_ base: String, query: String) -> String { base + querySeparator + clean(query) }

    /// `text` without the tag separators (control characters no one types).
    static func clean(_ text: String) -> String {
        text.contains(where: { $0 == "\u{1E}" || $0 == "\u{1F}" }) ? String(text.filter { $0 != "\u{1E}" && $0 != "\u{1F}" }) : text
    }

    /// The query in a stored tag ("" when none).
    static func query(inTag tag: String) -> String {
        guard let start = tag.firstIndex(of: "\u{1E}") else { return "" }
        let rest = tag[tag.index(after: start)...]
        return String(rest.prefix { $0 != "\u{1F}" })
    }

    /// The current query as of `transaction`.
    func query(in transaction: YapDatabaseReadTransaction, name: String) -> String {
        guard let state = transaction.viewState(name) else { return "" }
        return Self.query(inTag: state.versionTag)
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
        /// The query last read from the view's state or set by a search.
        var query = ""
    }
    let state = Mutex(State())

    /// Whether row (collection, key) matches the view's current query in `transaction`.
    func matches(_ transaction: YapDatabaseReadTransaction, collection: String, key: String) -> Bool {
        guard let view, let name = state.withLock({ $0.name }) else { return false }
        if let found = state.withLock({ $0.found }) {
            guard let entry = transaction.keydirEntry(collection: collection, key: key) else { return false }
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
