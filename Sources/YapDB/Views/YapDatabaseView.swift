import Foundation
import Synchronization
import YapDBIndex
import YapDBEngine
import YapDBStorage

/// A view's index: the ordered row ids of each group and each row's group. Immutable value,
/// stored in the engine's snapshot with the rows, so every snapshot has its own version.
struct ViewState: Sendable {
    var versionTag: String
    var groups: [String: OrderedRowTree] = [:]
    var rowGroups = PersistentHashMap<UInt64, String>()

    init(versionTag: String) { self.versionTag = versionTag }
}

/// A view's checkpoint image (docs/format.md §4, extension records): the tag, then each group's
/// name and row ids in view order.
extension ViewState: PersistentExtensionState {
    func persistentImage() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendString(versionTag)
        bytes.appendVarint(UInt64(groups.count))
        for group in groups.keys.sorted() {
            let tree = groups[group]!
            bytes.appendString(group)
            bytes.appendVarint(UInt64(tree.count))
            tree.forEach { _, rowid in
                bytes.appendVarint(rowid)
                return true
            }
        }
        return bytes
    }

    /// Decodes an image; nil when the bytes are not a valid one (the view then rebuilds).
    init?(image: [UInt8]) {
        var decoded: ViewState?
        image.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            do throws(ByteReader.Overrun) {
                var state = ViewState(versionTag: try reader.readString())
                let groupCount = try reader.readLength(max: raw.count)
                for _ in 0..<groupCount {
                    let group = try reader.readString()
                    let rows = try reader.readLength(max: reader.remaining)
                    var tree = OrderedRowTree()
                    for _ in 0..<rows {
                        let rowid = try reader.readVarint()
                        guard state.rowGroups.updateValue(group, forKey: rowid) == nil else { return }
                        tree.append(rowid)
                    }
                    guard !tree.isEmpty, state.groups.updateValue(tree, forKey: group) == nil else { return }
                }
                guard reader.isAtEnd else { return }
                decoded = state
            } catch {
                return
            }
        }
        guard let decoded else { return nil }
        self = decoded
    }
}

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

    /// A view with the given grouping and sorting. Registering it again later with the same
    /// `versionTag` keeps its contents; a different tag rebuilds it.
    public init(grouping: YapDatabaseViewGrouping, sorting: YapDatabaseViewSorting, versionTag: String? = nil,
                options: YapDatabaseViewOptions? = nil) {
        config = Mutex(Config(grouping: grouping, sorting: sorting, versionTag: versionTag ?? ""))
        allowedCollections = options?.allowedCollections
        skipInitialViewPopulation = options?.skipInitialViewPopulation ?? false
        isPersistent = options?.isPersistent ?? true
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
        let tag = versionTag
        let key = Self.stateKey(name)
        if let existing = transaction.extensionState(key) as? ViewState, existing.versionTag == tag {
            return true
        }
        // The checkpoint's image of this view, if its tag matches: keep it, and re-place only
        // the rows written since the checkpoint.
        if let claimed = transaction.connection.database.engine.claimExtensionImage(key),
           var state = ViewState(image: claimed.image), state.versionTag == tag {
            catchUp(&state, changedKeys: claimed.catchUp.changedKeys, transaction: transaction)
            transaction.setExtensionState(state, forKey: key)
            transaction.engineTransaction.markChanged()
            return true
        }
        rebuild(name: name, transaction: transaction, versionTag: tag)
        return true
    }

    /// Brings a view image up to the transaction's rows: rows that no longer exist leave it;
    /// rows written since the image was taken are placed anew.
    func catchUp(_ state: inout ViewState, changedKeys: Set<CollectionKeyPair>, transaction: YapDatabaseReadWriteTransaction) {
        let keydir = transaction.keydir
        var doomed = Set<UInt64>()
        state.rowGroups.forEach { rowid, _ in
            if keydir.owner(ofRowid: rowid) == nil { doomed.insert(rowid) }
            return true
        }
        var replace: [CollectionKeyPair] = []
        for pair in changedKeys where isAllowed(pair.collection) {
            if let entry = keydir.lookup(collection: pair.collection, key: pair.key) {
                if state.rowGroups[entry.rowid] != nil { doomed.insert(entry.rowid) }
                replace.append(pair)
            }
        }
        let engine = ViewEngine(view: self, config: config.withLock { $0 }, transaction: transaction)
        engine.removeRows(doomed, from: &state)
        for pair in replace { engine.insertRow(collection: pair.collection, key: pair.key, into: &state) }
    }

    override func dropState(name: String, transaction: YapDatabaseReadWriteTransaction) {
        transaction.setExtensionState(nil, forKey: Self.stateKey(name))
        transaction.engineTransaction.markChanged()
    }

    override func makeConnection(name: String, connection: YapDatabaseConnection) -> AnyObject? {
        YapDatabaseAutoViewConnection(view: self, name: name, connection: connection)
    }

    override func makeTransaction(name: String, extensionConnection: AnyObject?, transaction: YapDatabaseReadTransaction) -> AnyObject? {
        YapDatabaseAutoViewTransaction(view: self, name: name, viewConnection: extensionConnection as? YapDatabaseViewConnection,
                                       transaction: transaction)
    }

    override func willChangeRow(name: String, collection: String, key: String, transaction: YapDatabaseReadWriteTransaction) {
        guard isAllowed(collection) else { return }
        update(name, transaction) { state, engine in engine.removeRow(collection: collection, key: key, from: &state) }
    }

    override func didChangeRow(name: String, collection: String, key: String, transaction: YapDatabaseReadWriteTransaction) {
        guard isAllowed(collection) else { return }
        update(name, transaction) { state, engine in
            // An insert or a change: the old position, if any, was removed by willChangeRow.
            let removed = engine.removeRow(collection: collection, key: key, from: &state)
            return engine.insertRow(collection: collection, key: key, into: &state) || removed
        }
    }

    override func willRemoveRow(name: String, collection: String, key: String, transaction: YapDatabaseReadWriteTransaction) {
        guard isAllowed(collection) else { return }
        update(name, transaction) { state, engine in engine.removeRow(collection: collection, key: key, from: &state) }
    }

    override func willRemoveCollection(name: String, collection: String, transaction: YapDatabaseReadWriteTransaction) {
        guard isAllowed(collection) else { return }
        var doomed = Set<UInt64>()
        transaction.keydir.eachKey(inCollection: collection) { _, entry in
            doomed.insert(entry.rowid)
            return true
        }
        guard !doomed.isEmpty else { return }
        update(name, transaction) { state, engine in engine.removeRows(doomed, from: &state) }
    }

    override func willRemoveAll(name: String, transaction: YapDatabaseReadWriteTransaction) {
        update(name, transaction) { state, engine in
            guard !state.groups.isEmpty else { return false }
            engine.groupLog?.groups.formUnion(state.groups.keys)
            state = ViewState(versionTag: state.versionTag)
            return true
        }
    }

    override func didTouchRow(name: String, collection: String, key: String, transaction: YapDatabaseReadWriteTransaction) {
        guard isAllowed(collection), let entry = transaction.keydir.lookup(collection: collection, key: key),
              let group = (transaction.extensionState(Self.stateKey(name)) as? ViewState)?.rowGroups[entry.rowid] else { return }
        transaction.noteViewChange(name, touching: YapCollectionKey(collection: collection, key: key), groups: [group])
    }

    // MARK: Maintenance

    /// Runs `body` on the transaction's state of this view (taken out of the transaction so it
    /// is uniquely referenced and mutated in place), then puts it back. `body` returns whether
    /// it changed the view's rows; if so the commit is noted as changing the view.
    func update(_ name: String, _ transaction: YapDatabaseReadWriteTransaction, _ body: (inout ViewState, ViewEngine) -> Bool) {
        let key = Self.stateKey(name)
        guard var state = transaction.extensionState(key) as? ViewState else { return }
        transaction.setExtensionState(nil, forKey: key)
        var engine = ViewEngine(view: self, config: config.withLock { $0 }, transaction: transaction)
        let log = ViewGroupLog()
        engine.groupLog = log
        let changed = body(&state, engine)
        transaction.setExtensionState(state, forKey: key)
        if changed { transaction.noteViewChange(name, groups: log.groups) }
    }

    /// Builds the view from every allowed row (registration, or a new grouping or sorting).
    func rebuild(name: String, transaction: YapDatabaseReadWriteTransaction, versionTag: String) {
        var state = ViewState(versionTag: versionTag)
        if !skipInitialViewPopulation {
            let engine = ViewEngine(view: self, config: config.withLock { $0 }, transaction: transaction)
            let keydir = transaction.keydir
            for collection in keydir.collectionNames() where isAllowed(collection) {
                keydir.eachKey(inCollection: collection) { key, _ in
                    engine.insertRow(collection: collection, key: key, into: &state)
                    return true
                }
            }
        }
        transaction.setExtensionState(state, forKey: Self.stateKey(name))
        transaction.engineTransaction.markChanged()
        transaction.noteViewChange(name)
        transaction.viewDidRepopulate(name)
    }
}

extension YapDatabaseReadWriteTransaction {
    /// Records in the commit's notification that it changed the view registered as `name`
    /// (`"extensions"[name]` present: what `hasChanges(forNotifications:)` reads), and
    /// `touched`, a key touched in the view (the entry's value: the touched keys, which
    /// `getChanges` reports as updates). `groups`: the view's groups the change touched, or nil
    /// when not known (then `hasChanges(forGroup:in:)` answers true for any group).
    func noteViewChange(_ name: String, touching touched: YapCollectionKey? = nil, groups: Set<String>? = nil) {
        var keys = extensionChanges[name] as? Set<YapCollectionKey> ?? []
        if let touched { keys.insert(touched) }
        extensionChanges[name] = keys
        if let groups { viewGroupChanges[name, default: []].formUnion(groups) } else { viewGroupsUnknown.insert(name) }
    }
}

/// Collects the groups a view change touched (rows left or entered them).
final class ViewGroupLog {
    var groups: Set<String> = []
}

/// Where a commit's notification carries the groups each view changed in: a YapDB-private
/// `userInfo` entry, `[view name: Set<group>]`, for views whose changed groups are known.
enum ViewGroupChanges {
    static let userInfoKey = "YapDB.viewGroupChanges"
}

/// The view operations on a state, with the blocks and the transaction they read through.
struct ViewEngine {
    let view: YapDatabaseAutoView
    let config: YapDatabaseAutoView.Config
    let transaction: YapDatabaseReadTransaction
    /// Where rows' groups are recorded as they leave or enter (nil: not recorded).
    var groupLog: ViewGroupLog?

    init(view: YapDatabaseAutoView, config: YapDatabaseAutoView.Config, transaction: YapDatabaseReadTransaction) {
        self.view = view
        self.config = config
        self.transaction = transaction
    }

    /// The row as the blocks need it (object and metadata loaded only when asked for).
    func row(collection: String, key: String, forGrouping: Bool) -> ViewRow {
        let needsObject = forGrouping ? config.grouping.needsObject : config.sorting.needsObject
        let needsMetadata = forGrouping ? config.grouping.needsMetadata : config.sorting.needsMetadata
        return ViewRow(collection: collection, key: key,
                       object: needsObject ? transaction.object(forKey: key, inCollection: collection) : nil,
                       metadata: needsMetadata ? transaction.metadata(forKey: key, inCollection: collection) : nil)
    }

    func row(rowid: UInt64) -> ViewRow? {
        guard let (collection, key) = transaction.keydir.owner(ofRowid: rowid) else { return nil }
        return row(collection: collection, key: key, forGrouping: false)
    }

    /// How `row` compares to the row `rowid` in `group` (the tree's search direction).
    func compare(_ row: ViewRow, with rowid: UInt64, in group: String) -> RowComparison {
        guard let other = self.row(rowid: rowid) else { return .orderedAscending }
        switch config.sorting.compare(transaction, group, row, other) {
        case .orderedAscending: return .orderedAscending
        case .orderedSame: return .orderedSame
        case .orderedDescending: return .orderedDescending
        }
    }

    /// Puts the row into its group at its sorted place (after its equals), if it belongs.
    /// Returns whether it did.
    @discardableResult
    func insertRow(collection: String, key: String, into state: inout ViewState) -> Bool {
        guard let entry = transaction.keydir.lookup(collection: collection, key: key) else { return false }
        guard let group = config.grouping.group(transaction, row(collection: collection, key: key, forGrouping: true)) else { return false }
        let sortRow = row(collection: collection, key: key, forGrouping: false)
        var tree = state.groups.removeValue(forKey: group) ?? OrderedRowTree()
        let index = tree.insertionIndex { existing in compare(sortRow, with: existing, in: group) }
        tree.insert(entry.rowid, at: index)
        state.groups[group] = tree
        state.rowGroups.updateValue(group, forKey: entry.rowid)
        groupLog?.groups.insert(group)
        return true
    }

    /// Takes the row out of the view, found with its current values (call before they change).
    /// Returns whether the row was in the view.
    @discardableResult
    func removeRow(collection: String, key: String, from state: inout ViewState) -> Bool {
        guard let entry = transaction.keydir.lookup(collection: collection, key: key),
              let group = state.rowGroups[entry.rowid], var tree = state.groups.removeValue(forKey: group) else { return false }
        let sortRow = row(collection: collection, key: key, forGrouping: false)
        var index = tree.firstIndex(of: entry.rowid) { existing in compare(sortRow, with: existing, in: group) }
        if index == nil {
            // The row's sort values changed without the view seeing the old ones: find it by scanning.
            tree.forEach { i, rowid in
                if rowid == entry.rowid { index = i; return false }
                return true
            }
        }
        if let index { _ = tree.remove(at: index) }
        if !tree.isEmpty { state.groups[group] = tree }
        state.rowGroups.removeValue(forKey: entry.rowid)
        groupLog?.groups.insert(group)
        return true
    }

    /// Takes many rows out at once (a collection clear): one pass over each group. Returns
    /// whether any of them was in the view.
    @discardableResult
    func removeRows(_ doomed: Set<UInt64>, from state: inout ViewState) -> Bool {
        guard doomed.contains(where: { state.rowGroups[$0] != nil }) else { return false }
        var groups: [String: OrderedRowTree] = [:]
        for (group, tree) in state.groups {
            var kept = OrderedRowTree()
            tree.forEach { _, rowid in
                if !doomed.contains(rowid) { kept.append(rowid) }
                return true
            }
            if kept.count != tree.count { groupLog?.groups.insert(group) }
            if !kept.isEmpty { groups[group] = kept }
        }
        state.groups = groups
        for rowid in doomed { state.rowGroups.removeValue(forKey: rowid) }
        return true
    }
}
