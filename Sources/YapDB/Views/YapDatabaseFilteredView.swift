import Foundation
import Synchronization
import YapDBEngine

/// A view of a view: it keeps its parent view's groups and order, holding only the rows the
/// filtering block lets through. It changes in the same commit as its parent (a row write, a
/// new grouping or sorting of the parent, a new filter), has its own view transaction
/// (`transaction.ext(name) as? YapDatabaseFilteredViewTransaction`), its own view connection
/// (mappings and change sets) and is stored in checkpoints like its parent. The parent may
/// itself be a filtered view.
///
/// Register the parent first: registration fails while no view is registered under
/// `parentViewName`. Unregistering the parent unregisters its filtered views too.
///
/// `@unchecked Sendable`: the filter and version tag sit in the `config` `Mutex`; everything
/// else is immutable.
open class YapDatabaseFilteredView: YapDatabaseView, @unchecked Sendable {
    struct Config: Sendable {
        var filtering: YapDatabaseViewFiltering
        var versionTag: String
    }
    let config: Mutex<Config>
    let allowedCollections: YapWhitelistBlacklist?

    /// The registered name of the view this one filters.
    public let parentViewName: String
    /// Whether checkpoints store the view (`YapDatabaseViewOptions.isPersistent`).
    let isPersistent: Bool

    /// A filtered view of the view registered as `parentViewName`.
    /// - Parameters:
    ///   - parentViewName: the registered name of the parent view (an automatic or a filtered view).
    ///   - filtering: which rows of the parent to keep.
    ///   - versionTag: registering again later with the same tag (and an unchanged parent)
    ///     keeps the stored contents; a different tag filters the parent anew.
    ///   - options: `allowedCollections` narrows the view further; `isPersistent = false` keeps
    ///     the view in memory only (filtered anew at every registration, never written by
    ///     checkpoints); `skipInitialViewPopulation` is not used by filtered views.
    public init(parentViewName: String, filtering: YapDatabaseViewFiltering, versionTag: String? = nil,
                options: YapDatabaseViewOptions? = nil) {
        self.parentViewName = parentViewName
        config = Mutex(Config(filtering: filtering, versionTag: versionTag ?? ""))
        allowedCollections = options?.allowedCollections
        isPersistent = options?.isPersistent ?? true
        super.init()
    }

    /// The current filter (replaced by `setFiltering(_:versionTag:)`).
    public var filtering: YapDatabaseViewFiltering { config.withLock { $0.filtering } }

    /// The view's own version tag.
    public var versionTag: String { config.withLock { $0.versionTag } }

    /// Separates the view's own tag from its parent's in the stored tag, so stored trees are
    /// reused only when neither this view nor any view above it changed.
    static let tagSeparator = "\u{1F}"

    func storedTag(parentState: ViewState) -> String {
        versionTag + Self.tagSeparator + parentState.versionTag
    }

    // MARK: Extension hooks

    override func prepare(name: String, transaction: YapDatabaseReadWriteTransaction) -> Bool {
        guard let context = FilteredViewContext(view: self, transaction: transaction) else {
            YapDatabaseLogging.log(.error, "filtered view \(name): no view is registered as \(parentViewName); register it first")
            return false
        }
        let key = YapDatabaseAutoView.stateKey(name)
        let tag = storedTag(parentState: context.parentState)
        if let existing = transaction.viewState(name), existing.versionTag == tag { return true }
        if isPersistent, let claimed = transaction.connection.database.engine.claimExtensionRoots(key),
           var state = ViewState(claimed: claimed), state.versionTag == tag {
            // Nothing written since and the parent as that checkpoint wrote it (had the parent
            // been rebuilt since, it would hold unwritten changes: a checkpoint in between
            // would have dropped these roots): the trees are right as they are.
            if claimed.catchUp.isEmpty && context.parentState.isAsWritten {
                transaction.setExtensionState(state, forKey: key)
                transaction.publishExtensionsWithoutCommit()
                return true
            }
            context.catchUp(&state, claimed.catchUp)
            transaction.setExtensionState(state, forKey: key)
            transaction.markChanged()
            // The catch-up may have moved rows: a change of the view for mappings.
            transaction.noteViewChange(name)
            return true
        }
        repopulate(name: name, context: context)
        return true
    }

    override func dropState(name: String, transaction: YapDatabaseReadWriteTransaction) {
        transaction.setViewState(nil, name)
        transaction.markChanged()
    }

    override func makeConnection(name: String, connection: YapDatabaseConnection) -> AnyObject? {
        guard let root = rootView(in: connection.database) else { return nil }
        return YapDatabaseFilteredViewConnection(filteredView: self, root: root, name: name, connection: connection)
    }

    override func makeTransaction(name: String, extensionConnection: AnyObject?, transaction: YapDatabaseReadTransaction) -> AnyObject? {
        guard let root = rootView(in: transaction.connection.database) else { return nil }
        return YapDatabaseFilteredViewTransaction(filteredView: self, root: root, name: name,
                                                  viewConnection: extensionConnection as? YapDatabaseViewConnection,
                                                  transaction: transaction)
    }

    override func willChangeRow(name: String, collection: String, key: String, change: RowChange,
                                transaction: YapDatabaseReadWriteTransaction) {
        recordRowBefore(name, collection: collection, key: key, change: change, transaction: transaction)
    }

    override func didChangeRow(name: String, collection: String, key: String, change: RowChange,
                               transaction: YapDatabaseReadWriteTransaction) {
        refilterRow(name, collection: collection, key: key, change: change, transaction: transaction, touched: false)
    }

    override func willRemoveRow(name: String, collection: String, key: String, transaction: YapDatabaseReadWriteTransaction) {
        guard holds(name, collection, key, transaction) else { return }
        update(name, transaction) { state, context in context.remove(collection: collection, key: key, from: &state) }
    }

    override func willRemoveCollection(name: String, collection: String, transaction: YapDatabaseReadWriteTransaction) {
        var rowids: [UInt64] = []
        transaction.forEachKey(inCollection: collection) { _, entry in
            rowids.append(entry.rowid)
            return true
        }
        guard !rowids.isEmpty else { return }
        update(name, transaction) { state, context in
            return context.sorter.removeRows(Set(rowids), from: &state)
        }
    }

    override func willRemoveAll(name: String, transaction: YapDatabaseReadWriteTransaction) {
        update(name, transaction) { state, _ in
            guard !state.isEmpty else { return false }
            state = state.emptied()
            return true
        }
    }

    /// A touched row is filtered again if the filter's options name the touch (or it moved in
    /// the parent view), and observers see it as updated. The views below this one get their
    /// own call from the transaction.
    override func didTouchRow(name: String, collection: String, key: String, change: RowChange,
                              transaction: YapDatabaseReadWriteTransaction) {
        recordRowBefore(name, collection: collection, key: key, change: change, transaction: transaction)
        refilterRow(name, collection: collection, key: key, change: change, transaction: transaction, touched: true)
    }

    // MARK: Maintenance

    /// Filters the row again after its parent re-placed it (or it was touched), records it as
    /// touched for observers when the view holds it, and (if `tellDependents`) tells the views
    /// below this one.
    func replaceRow(name: String, collection: String, key: String, transaction: YapDatabaseReadWriteTransaction,
                    tellDependents: Bool = true) {
        var held = false
        var inPlace = false
        update(name, transaction) { state, context in
            // Where the row was: a row put back at the same index of the same group is an
            // update for observers, not a move (YapDatabase tries the row's existing index first).
            let rowid = transaction.entry(collection: collection, key: key)?.rowid
            let before = rowid.flatMap { Self.place(of: $0, collection: collection, key: key, in: state, context.sorter) }
            let removed = context.remove(collection: collection, key: key, from: &state)
            held = context.place(collection: collection, key: key, into: &state)
            if held, let rowid, let before {
                let after = Self.place(of: rowid, collection: collection, key: key, in: state, context.sorter)
                inPlace = after?.group == before.group && after?.index == before.index
            }
            return removed || held
        }
        if held {
            transaction.noteViewChange(name, touching: YapCollectionKey(collection: collection, key: key))
            if !inPlace { transaction.noteViewPlaced(name, [YapCollectionKey(collection: collection, key: key)]) }
        }
        if tellDependents { transaction.viewDidReplaceRow(name, collection: collection, key: key) }
    }

    /// Row `rowid`'s group and index in `state` (nil: the view does not hold it).
    static func place(of rowid: UInt64, collection: String, key: String, in state: ViewState,
                      _ sorter: ViewEngine) -> (group: String, index: Int)? {
        guard let group = sorter.group(ofRowid: rowid, in: state), let tree = sorter.tree(group, in: state) else { return nil }
        let sortRow = sorter.row(collection: collection, key: key, forGrouping: false)
        let index = sorter.run("row id \(rowid) in group \(group)", nil) { () throws(EngineError) in
            try sorter.position(of: rowid, sortRow: sortRow, in: tree, group: group)
        }
        return index.map { (group, $0) }
    }

    /// Whether the view registered as `name` holds the row now (a cheap test before the blocks run).
    func holds(_ name: String, _ collection: String, _ key: String, _ transaction: YapDatabaseReadWriteTransaction) -> Bool {
        guard let state = transaction.viewState(name),
              let entry = transaction.entry(collection: collection, key: key) else { return false }
        do { return try state.contains(rowid: entry.rowid) } catch {
            ViewEngine.report(error, "row id \(entry.rowid)", transaction)
            return false
        }
    }

    /// Runs `body` on the transaction's state of this view (taken out of the transaction so it
    /// is uniquely referenced and mutated in place), then puts it back. `body` returns whether
    /// it changed the view's rows; if so the commit is noted as changing the view. Does nothing
    /// while the parent view is not registered.
    func update(_ name: String, _ transaction: YapDatabaseReadWriteTransaction, _ body: (inout ViewState, FilteredViewContext) -> Bool) {
        guard var state = transaction.viewState(name),
              let context = FilteredViewContext(view: self, transaction: transaction) else { return }
        transaction.setViewState(nil, name)
        let changed = body(&state, context)
        transaction.setViewState(state, name)
        if changed {
            transaction.noteViewChange(name)
            // A rough count, as numberOfRawChanges promises: one per change that moved rows.
            transaction.noteViewRawChanges(name)
        }
    }

    /// Filters the whole parent view again (registration, a new filter, or a parent that was
    /// rebuilt), then tells the views below this one.
    func repopulate(name: String, transaction: YapDatabaseReadWriteTransaction, reported: ViewRebuild? = nil) {
        guard let context = FilteredViewContext(view: self, transaction: transaction) else { return }
        repopulate(name: name, context: context, reported: reported)
    }

    /// `reported`: how observers are told of the rows that stay (the parent's rebuild, passed
    /// down); nil reports only the rows that appeared or disappeared (a new filter, as
    /// YapDatabase's filtered view does).
    func repopulate(name: String, context: FilteredViewContext, reported: ViewRebuild? = nil) {
        var state = context.filteredParent(tag: storedTag(parentState: context.parentState))
        state.isPersistent = isPersistent
        context.transaction.setViewState(state, name)
        context.transaction.markChanged()
        context.transaction.noteViewChange(name)
        if let reported { context.transaction.noteViewRebuild(name, reported) }
        context.transaction.viewDidRepopulate(name, reported: reported)
    }

    /// The registered parent view, if it is a view.
    func parentView(in database: YapDatabase) -> YapDatabaseView? {
        database.registeredExtension(parentViewName) as? YapDatabaseView
    }

    /// The automatic view at the top of the chain of parents, whose sorting orders every view
    /// below it; nil when a parent is missing (or the chain loops).
    func rootView(in database: YapDatabase) -> YapDatabaseAutoView? {
        var view: YapDatabaseView? = self
        for _ in 0..<64 {
            switch view {
            case let auto as YapDatabaseAutoView: return auto
            case let filtered as YapDatabaseFilteredView: view = filtered.parentView(in: database)
            default: return nil
            }
        }
        return nil
    }
}

extension YapDatabaseReadWriteTransaction {
    /// The view registered as `name` was rebuilt in this transaction: the filtered views of it
    /// filter it again (and so on down).
    func viewDidRepopulate(_ name: String, reported: ViewRebuild? = nil) {
        for (extName, ext) in extensions {
            if let results = ext as? YapDatabaseSearchResultsView, results.parentViewName == name {
                results.parentDidRepopulate(name: extName, transaction: self, reported: reported)
            }
            guard let filtered = ext as? YapDatabaseFilteredView, filtered.parentViewName == name else { continue }
            filtered.repopulate(name: extName, transaction: self, reported: reported)
        }
    }

    /// The view registered as `name` took a row out and put it back (a view-level touch):
    /// the filtered views of it do the same.
    func viewDidReplaceRow(_ name: String, collection: String, key: String) {
        for (extName, ext) in extensions {
            if let results = ext as? YapDatabaseSearchResultsView, results.parentViewName == name {
                results.inner?.replaceRow(name: extName, collection: collection, key: key, transaction: self)
            }
            guard let filtered = ext as? YapDatabaseFilteredView, filtered.parentViewName == name else { continue }
            filtered.replaceRow(name: extName, collection: collection, key: key, transaction: self)
        }
    }
}

extension YapDatabase {
    /// The registered filtered views whose parent is `name`.
    func filteredViewNames(dependingOn name: String) -> [String] {
        extensionRegistry.all.compactMap { entry in
            (entry.ext as? YapDatabaseFilteredView)?.parentViewName == name ? entry.name : nil
        }
    }
}
