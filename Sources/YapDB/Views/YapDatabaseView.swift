import Foundation
import Synchronization
import YapDBEngine

/// The base class of views (YapDatabase's `YapDatabaseView`).
open class YapDatabaseView: YapDatabaseExtension, @unchecked Sendable {}

/// A view kept up to date automatically: every row of the allowed collections is put into a
/// group by the grouping block and ordered within it by the sorting block, in the same commit as
/// the change. Reads are O(log n): index lookups, counts and binary-search ranges.
///
/// `@unchecked Sendable`: its mutable configuration (`setGrouping`/`setSorting`) sits in the
/// `config` `Mutex`; everything else is immutable.
///
/// `open`: apps subclass it to package a view (its grouping, sorting and version tag) as a type.
open class YapDatabaseAutoView: YapDatabaseView, @unchecked Sendable {
    struct Config: Sendable {
        var grouping: YapDatabaseViewGrouping
        var sorting: YapDatabaseViewSorting
        var versionTag: String
    }
    let config: Mutex<Config>
    let allowedCollections: YapWhitelistBlacklist?
    let skipInitialViewPopulation: Bool
    let isPersistent: Bool
    /// False for a view made by the bare `init()`: it has no grouping or sorting of its own
    /// and refuses registration.
    let isConfigured: Bool

    /// A view with the given grouping and sorting. Registering it again later with the same
    /// `versionTag` keeps its contents; a different tag rebuilds it.
    public init(grouping: YapDatabaseViewGrouping, sorting: YapDatabaseViewSorting, versionTag: String? = nil,
                options: YapDatabaseViewOptions? = nil) {
        config = Mutex(Config(grouping: grouping, sorting: sorting, versionTag: versionTag ?? ""))
        allowedCollections = options?.allowedCollections
        skipInitialViewPopulation = options?.skipInitialViewPopulation ?? false
        isPersistent = options?.isPersistent ?? true
        isConfigured = true
        super.init()
    }

    /// A view with no grouping or sorting, so that subclasses can override `init()` (as they do
    /// with YapDatabase's NSObject-based view) and configure themselves there:
    ///
    ///     final class InboxView: YapDatabaseAutoView {
    ///         override init() {
    ///             super.init(grouping: .withObjectBlock { … }, sorting: .withObjectBlock { … },
    ///                        versionTag: "1", options: nil)
    ///         }
    ///     }
    ///
    /// A view left as this initializer makes it cannot be registered: `register` logs why and
    /// returns false.
    public override init() {
        config = Mutex(Config(grouping: .withKeyBlock { _, _, _ in nil },
                              sorting: .withKeyBlock { _, _, _, _, _, _ in .orderedSame }, versionTag: ""))
        allowedCollections = nil
        skipInitialViewPopulation = false
        isPersistent = true
        isConfigured = false
        super.init()
    }

    /// The view's version tag.
    public var versionTag: String { config.withLock { $0.versionTag } }

    /// A copy of the options the view was made with.
    public var options: YapDatabaseViewOptions {
        let options = YapDatabaseViewOptions()
        options.isPersistent = isPersistent
        options.allowedCollections = allowedCollections
        options.skipInitialViewPopulation = skipInitialViewPopulation
        return options
    }

    /// The grouping in use (the latest `setGrouping` wins).
    public var grouping: YapDatabaseViewGrouping { config.withLock { $0.grouping } }

    /// The sorting in use (the latest `setGrouping`/`setSorting` wins).
    public var sorting: YapDatabaseViewSorting { config.withLock { $0.sorting } }

    static func stateKey(_ name: String) -> String { "view:" + name }

    func isAllowed(_ collection: String) -> Bool { allowedCollections?.isAllowed(collection) ?? true }

    // MARK: Extension hooks

    override func prepare(name: String, transaction: YapDatabaseReadWriteTransaction) -> Bool {
        guard isConfigured else {
            YapDatabaseLogging.log(.error, "view \(name) was made by init() without a grouping and sorting "
                                   + "(call init(grouping:sorting:versionTag:options:)); not registered")
            return false
        }
        let tag = config.withLock { $0.versionTag }
        let key = Self.stateKey(name)
        if let existing = transaction.viewState(name), existing.versionTag == tag {
            return true
        }
        // The trees the last checkpoint wrote of this view, if its tag matches: keep them
        // (reading nothing), and re-place only the rows written since.
        if isPersistent, let claimed = transaction.connection.database.engine.claimExtensionRoots(key),
           var state = ViewState(claimed: claimed), state.versionTag == tag {
            catchUp(&state, claimed.catchUp, transaction: transaction)
            transaction.setExtensionState(state, forKey: key)
            // Nothing to catch up: the trees are the rows as they are, and no commit (and no
            // sync) is needed to publish them.
            if claimed.catchUp.isEmpty {
                transaction.publishExtensionsWithoutCommit()
            } else {
                transaction.markChanged()
                // The catch-up may have moved rows: a change of the view for mappings, as a
                // rebuild is.
                transaction.noteViewChange(name)
            }
            return true
        }
        rebuild(name: name, transaction: transaction, versionTag: tag)
        return true
    }

    /// Brings a view's written trees up to the transaction's rows: rows removed since leave it;
    /// rows written since are placed anew. Reads only what those rows touch.
    func catchUp(_ state: inout ViewState, _ changes: ExtensionCatchUp, transaction: YapDatabaseReadWriteTransaction) {
        var engine = ViewEngine(view: self, config: config.withLock { $0 }, transaction: transaction)
        engine.groupLog = nil
        if changes.removedAll { state = state.emptied() }
        var doomed = Set<UInt64>()
        for rowid in changes.removedRowids where engine.holds(rowid, in: state) { doomed.insert(rowid) }
        var replace: [CollectionKeyPair] = []
        for pair in changes.changedKeys where isAllowed(pair.collection) {
            if let entry = transaction.entry(collection: pair.collection, key: pair.key) {
                if engine.holds(entry.rowid, in: state) { doomed.insert(entry.rowid) }
                replace.append(pair)
            }
        }
        engine.removeRows(doomed, from: &state)
        for pair in replace { engine.insertRow(collection: pair.collection, key: pair.key, into: &state) }
    }

    override func dropState(name: String, transaction: YapDatabaseReadWriteTransaction) {
        transaction.viewPendingInserts[name] = nil
        transaction.setViewState(nil, name)
        transaction.markChanged()
    }

    override func makeConnection(name: String, connection: YapDatabaseConnection) -> AnyObject? {
        YapDatabaseAutoViewConnection(view: self, name: name, connection: connection)
    }

    override func makeTransaction(name: String, extensionConnection: AnyObject?, transaction: YapDatabaseReadTransaction) -> AnyObject? {
        YapDatabaseAutoViewTransaction(view: self, name: name, viewConnection: extensionConnection as? YapDatabaseViewConnection,
                                       transaction: transaction)
    }

    override func willChangeRow(name: String, collection: String, key: String, change: RowChange,
                                transaction: YapDatabaseReadWriteTransaction) {
        transaction.viewRowsBefore[name] = nil
        guard isAllowed(collection) else { return }
        recordRowBefore(name, collection: collection, key: key, change: change, transaction: transaction)
    }

    override func didChangeRow(name: String, collection: String, key: String, change: RowChange,
                               transaction: YapDatabaseReadWriteTransaction) {
        guard isAllowed(collection) else { return }
        // A new row is placed later with the others (one sort and one merge per group).
        if change.isInsert { return transaction.deferViewInsert(name, view: self, collection: collection, key: key) }
        replaceRow(name, collection: collection, key: key, change: change, transaction: transaction, touched: false)
    }

    override func willRemoveRow(name: String, collection: String, key: String, transaction: YapDatabaseReadWriteTransaction) {
        guard isAllowed(collection) else { return }
        update(name, transaction) { state, engine in engine.removeRow(collection: collection, key: key, from: &state) }
    }

    override func willRemoveCollection(name: String, collection: String, transaction: YapDatabaseReadWriteTransaction) {
        guard isAllowed(collection) else { return }
        var doomed = Set<UInt64>()
        transaction.forEachKey(inCollection: collection) { _, entry in
            doomed.insert(entry.rowid)
            return true
        }
        guard !doomed.isEmpty else { return }
        update(name, transaction) { state, engine in engine.removeRows(doomed, from: &state) }
    }

    override func willRemoveAll(name: String, transaction: YapDatabaseReadWriteTransaction) {
        // Placed first, so the cache is emptied after the placement noted its last rows.
        transaction.placePendingViewRows(name)
        transaction.viewRowKeys.forgetAll()
        update(name, transaction) { state, engine in
            guard !state.isEmpty else { return false }
            engine.groupLog?.groups.formUnion(engine.groupNames(state))
            state = state.emptied()
            return true
        }
    }

    override func didTouchRow(name: String, collection: String, key: String, change: RowChange,
                              transaction: YapDatabaseReadWriteTransaction) {
        transaction.viewRowsBefore[name] = nil
        guard isAllowed(collection) else { return }
        recordRowBefore(name, collection: collection, key: key, change: change, transaction: transaction)
        replaceRow(name, collection: collection, key: key, change: change, transaction: transaction, touched: true)
    }

    /// Records the row's view touch for observers (a view-level touch, which re-placed it).
    func noteTouch(name: String, collection: String, key: String, transaction: YapDatabaseReadWriteTransaction) {
        guard isAllowed(collection), let entry = transaction.entry(collection: collection, key: key),
              let state = transaction.viewState(name) else { return }
        let engine = ViewEngine(view: self, config: config.withLock { $0 }, transaction: transaction)
        guard let group = engine.group(ofRowid: entry.rowid, in: state) else { return }
        transaction.noteViewChange(name, touching: YapCollectionKey(collection: collection, key: key), groups: [group])
    }

    // MARK: Maintenance

    /// Runs `body` on the transaction's state of this view (taken out of the transaction so it
    /// is uniquely referenced and mutated in place), then puts it back. `body` returns whether
    /// it changed the view's rows; if so the commit is noted as changing the view.
    func update(_ name: String, _ transaction: YapDatabaseReadWriteTransaction, _ body: (inout ViewState, ViewEngine) -> Bool) {
        guard var state = transaction.viewState(name) else { return }
        transaction.setViewState(nil, name)
        var engine = ViewEngine(view: self, config: config.withLock { $0 }, transaction: transaction)
        let log = ViewGroupLog()
        engine.groupLog = log
        let changed = body(&state, engine)
        transaction.setViewState(state, name)
        if changed { transaction.noteViewChange(name, groups: log.groups) }
        if log.rawChanges > 0 { transaction.noteViewRawChanges(name, log.rawChanges) }
        if !log.placed.isEmpty { transaction.noteViewPlaced(name, log.placed) }
    }

    /// Builds the view from every allowed row (registration, or a new grouping or sorting:
    /// `reported` says how observers are told, nil at registration).
    func rebuild(name: String, transaction: YapDatabaseReadWriteTransaction, versionTag: String, reported: ViewRebuild? = nil) {
        let rowsBefore = transaction.viewState(name)?.rowCount ?? 0
        var state = ViewState(versionTag: versionTag, transaction: transaction)
        state.isPersistent = isPersistent
        if !skipInitialViewPopulation {
            let engine = ViewEngine(view: self, config: config.withLock { $0 }, transaction: transaction)
            for collection in transaction.collectionNames() where isAllowed(collection) {
                transaction.forEachKey(inCollection: collection) { key, _ in
                    engine.insertRow(collection: collection, key: key, into: &state)
                    return true
                }
            }
        }
        transaction.setViewState(state, name)
        transaction.markChanged()
        transaction.noteViewChange(name)
        if let reported {
            transaction.noteViewRebuild(name, reported)
            // As YapDatabase counts them: a new grouping deletes every row and inserts it
            // again; a new sorting places every row once.
            transaction.noteViewRawChanges(name, (reported == .regrouped ? rowsBefore : 0) + state.rowCount)
        }
        transaction.viewDidRepopulate(name, reported: reported)
    }
}

extension YapDatabaseReadWriteTransaction {
    /// Records in the commit's notification that it changed the view registered as `name`
    /// (`"extensions"[name]` present: what `hasChanges(forNotifications:)` reads), and
    /// `touched`, a key touched in the view (the entry's value: the touched keys, which
    /// `getChanges` reports as updates). `groups`: the view's groups the change touched, or nil
    /// when not known (then `hasChanges(forGroup:in:)` answers true for any group).
    func noteViewChange(_ name: String, touching touched: YapCollectionKey? = nil, groups: Set<String>? = nil) {
        // Already recorded and nothing to add (every row a view places): leave the entry as it is
        // rather than copy the set out of its box and back.
        if touched != nil || !(extensionChanges[name] is Set<YapCollectionKey>) {
            var keys = extensionChanges[name] as? Set<YapCollectionKey> ?? []
            if let touched { keys.insert(touched) }
            extensionChanges[name] = keys
        }
        if let groups { viewGroupChanges[name, default: []].formUnion(groups) } else { viewGroupsUnknown.insert(name) }
    }
}

/// Collects the groups a view change touched (rows left or entered them).
final class ViewGroupLog {
    var groups: Set<String> = []
    /// Rows inserted into or deleted from the view (YapDatabase's raw changes).
    var rawChanges = 0
    /// Rows put (back) into the view at a place the sorting chose.
    var placed: Set<YapCollectionKey> = []
}

/// Where a commit's notification carries the groups each view changed in: a YapDB-private
/// `userInfo` entry, `[view name: Set<group>]`, for views whose changed groups are known.
enum ViewGroupChanges {
    static let userInfoKey = "YapDB.viewGroupChanges"
}

/// What a commit did to a view beyond its rows, for `getChanges` and `numberOfRawChanges`: a
/// YapDB-private `userInfo` entry, `[view name: ViewCommitNote]`.
struct ViewCommitNote: Sendable {
    static let userInfoKey = "YapDB.viewCommitNotes"

    /// How the commit rebuilt the view (the strongest, if several times).
    var rebuild: ViewRebuild?
    /// How many rows the view inserted, deleted or updated (YapDatabase's raw changes).
    var rawChanges = 0
    /// Rows the view put (back) at a place its sorting chose: a row among them that is in the
    /// same group before and after moved, unless the rows around it moved instead.
    var placed: Set<YapCollectionKey> = []

    static func note(for view: String, in notification: Notification) -> ViewCommitNote? {
        (notification.userInfo?[userInfoKey] as? [String: ViewCommitNote])?[view]
    }
}

extension YapDatabaseReadWriteTransaction {
    /// Records that the view registered as `name` was rebuilt in this transaction.
    func noteViewRebuild(_ name: String, _ kind: ViewRebuild) {
        let current = viewCommitNotes[name]?.rebuild
        viewCommitNotes[name, default: ViewCommitNote()].rebuild = max(current ?? kind, kind)
    }

    /// Records rows the view put (back) at a place its sorting chose.
    func noteViewPlaced(_ name: String, _ keys: Set<YapCollectionKey>) {
        viewCommitNotes[name, default: ViewCommitNote()].placed.formUnion(keys)
    }

    /// Counts `count` raw changes (rows inserted, deleted or updated) of the view `name`.
    func noteViewRawChanges(_ name: String, _ count: Int = 1) {
        viewCommitNotes[name, default: ViewCommitNote()].rawChanges += count
    }
}
