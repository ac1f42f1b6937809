import Foundation
import YapDBIndex

/// Reading a view inside a transaction: `transaction.ext(name) as? YapDatabaseViewTransaction`.
/// Index lookups, counts and searches are O(log n). Valid only inside the transaction's block.
public class YapDatabaseViewTransaction {
    let view: YapDatabaseAutoView
    let name: String
    /// The view connection of the transaction's connection.
    public let viewConnection: YapDatabaseViewConnection?
    let transaction: YapDatabaseReadTransaction

    init(view: YapDatabaseAutoView, name: String, viewConnection: YapDatabaseViewConnection?, transaction: YapDatabaseReadTransaction) {
        self.view = view
        self.name = name
        self.viewConnection = viewConnection
        self.transaction = transaction
    }

    var state: ViewState { transaction.extensionState(YapDatabaseAutoView.stateKey(name)) as? ViewState ?? ViewState(versionTag: "") }

    var engine: ViewEngine { ViewEngine(view: view, config: view.config.withLock { $0 }, transaction: transaction) }

    // MARK: Groups

    /// The number of non-empty groups.
    public func numberOfGroups() -> Int { state.groups.count }

    /// The non-empty groups, in no particular order.
    public func allGroups() -> [String] { Array(state.groups.keys) }

    /// Whether `group` has at least one row.
    public func hasGroup(_ group: String) -> Bool { state.groups[group] != nil }

    /// The number of rows in `group`.
    public func numberOfItems(inGroup group: String) -> Int { state.groups[group]?.count ?? 0 }

    /// The number of rows in the view.
    public func numberOfItemsInAllGroups() -> Int { state.groups.values.reduce(0) { $0 + $1.count } }

    /// Whether the view has no rows.
    public func isEmpty() -> Bool { state.groups.isEmpty }

    // MARK: Rows by position

    /// The (collection, key) at `index` of `group`, or nil when out of range.
    public func getCollectionKey(atIndex index: Int, inGroup group: String) -> (String, String)? {
        guard let tree = state.groups[group], index >= 0, index < tree.count else { return nil }
        return transaction.keydir.key(forRowid: tree[index]).map { ($0.collection, $0.key) }
    }

    /// The group and index of a row, or nil when the row is not in the view.
    public func getGroupIndex(forKey key: String, inCollection collection: String?) -> (String, Int)? {
        let name = collection ?? ""
        let state = self.state
        guard let entry = transaction.keydir.entry(collection: name, key: key), let group = state.rowGroups[entry.rowid],
              let tree = state.groups[group] else { return nil }
        let engine = self.engine
        let row = engine.row(collection: name, key: key, forGrouping: false)
        if let index = tree.firstIndex(of: entry.rowid, { existing in engine.compare(row, with: existing, in: group) }) {
            return (group, index)
        }
        var found: Int?
        tree.forEach { i, rowid in
            if rowid == entry.rowid { found = i; return false }
            return true
        }
        return found.map { (group, $0) }
    }

    /// The group of a row, or nil when it is not in the view.
    public func group(forKey key: String, inCollection collection: String?) -> String? {
        guard let entry = transaction.keydir.entry(collection: collection ?? "", key: key) else { return nil }
        return state.rowGroups[entry.rowid]
    }

    /// The object at `index` of `group`.
    public func object(atIndex index: Int, inGroup group: String) -> Any? {
        guard let (collection, key) = getCollectionKey(atIndex: index, inGroup: group) else { return nil }
        return transaction.object(forKey: key, inCollection: collection)
    }

    /// The metadata at `index` of `group`.
    public func metadata(atIndex index: Int, inGroup group: String) -> Any? {
        guard let (collection, key) = getCollectionKey(atIndex: index, inGroup: group) else { return nil }
        return transaction.metadata(forKey: key, inCollection: collection)
    }

    /// The first object of `group`.
    public func firstObject(inGroup group: String) -> Any? { object(atIndex: 0, inGroup: group) }

    /// The last object of `group`.
    public func lastObject(inGroup group: String) -> Any? { object(atIndex: numberOfItems(inGroup: group) - 1, inGroup: group) }

    // MARK: Iteration

    /// Calls `block` with (collection, key, index) of each row of `group` in `range` (nil: all),
    /// in order or reversed, until it sets `stop`.
    public func iterateKeys(inGroup group: String, reversed: Bool = false, range: NSRange? = nil,
                            using block: (String, String, Int, inout Bool) -> Void) {
        iterate(group, reversed, range) { collection, key, index, stop in block(collection, key, index, &stop) }
    }

    /// Calls `block` with (collection, key, object, index) of each row of `group` in `range`.
    public func iterateKeysAndObjects(inGroup group: String, reversed: Bool = false, range: NSRange? = nil,
                                      using block: (String, String, Any, Int, inout Bool) -> Void) {
        iterate(group, reversed, range) { collection, key, index, stop in
            guard let object = transaction.object(forKey: key, inCollection: collection) else { return }
            block(collection, key, object, index, &stop)
        }
    }

    /// Calls `block` with (collection, key, object, metadata, index) of each row of `group` in `range`.
    public func iterateRows(inGroup group: String, reversed: Bool = false, range: NSRange? = nil,
                            using block: (String, String, Any, Any?, Int, inout Bool) -> Void) {
        iterate(group, reversed, range) { collection, key, index, stop in
            guard let object = transaction.object(forKey: key, inCollection: collection) else { return }
            block(collection, key, object, transaction.metadata(forKey: key, inCollection: collection), index, &stop)
        }
    }

    func iterate(_ group: String, _ reversed: Bool, _ range: NSRange?, _ step: (String, String, Int, inout Bool) -> Void) {
        guard let tree = state.groups[group] else { return }
        var bounds = 0..<tree.count
        if let range, range.location != NSNotFound {
            let lower = min(max(0, range.location), tree.count)
            bounds = lower..<min(tree.count, lower + max(0, range.length))
        }
        let keydir = transaction.keydir
        transaction.iterate { stop in
            tree.forEach(in: bounds, reversed: reversed) { index, rowid in
                guard let (collection, key) = keydir.key(forRowid: rowid) else { return true }
                step(collection, key, index, &stop)
                return transaction.afterStep(stop)
            }
        }
    }

    // MARK: Searching

    /// The range of rows of `group` for which `find` says `.orderedSame`, by binary search;
    /// `NSRange(location: NSNotFound, length: 0)` when there is none.
    public func findRange(inGroup group: String, using find: YapDatabaseViewFind) -> NSRange {
        guard let tree = state.groups[group] else { return NSRange(location: NSNotFound, length: 0) }
        let engine = self.engine
        let range = tree.findRange { rowid in
            guard let row = engine.row(rowid: rowid).map({ Self.fill($0, for: find, transaction) }) else { return .orderedAscending }
            // The block says where the row is relative to the range; the tree wants where the
            // range is relative to the row.
            switch find.compare(row) {
            case .orderedAscending: return .orderedDescending
            case .orderedSame: return .orderedSame
            case .orderedDescending: return .orderedAscending
            }
        }
        return range.isEmpty ? NSRange(location: NSNotFound, length: 0) : NSRange(location: range.lowerBound, length: range.count)
    }

    /// The index of the first row of `group` for which `find` says `.orderedSame`, or
    /// `NSNotFound`.
    public func findFirstMatch(inGroup group: String, using find: YapDatabaseViewFind) -> Int {
        findRange(inGroup: group, using: find).location
    }

    static func fill(_ row: ViewRow, for find: YapDatabaseViewFind, _ transaction: YapDatabaseReadTransaction) -> ViewRow {
        var row = row
        switch find.block {
        case .object, .row: row.object = row.object ?? transaction.object(forKey: row.key, inCollection: row.collection)
        default: break
        }
        switch find.block {
        case .metadata, .row: row.metadata = row.metadata ?? transaction.metadata(forKey: row.key, inCollection: row.collection)
        default: break
        }
        return row
    }
}

/// The read-write form: change the view's blocks, or touch a row in it.
public final class YapDatabaseAutoViewTransaction: YapDatabaseViewTransaction {
    let writeTransaction: YapDatabaseReadWriteTransaction

    init(view: YapDatabaseAutoView, name: String, viewConnection: YapDatabaseViewConnection?, transaction: YapDatabaseReadWriteTransaction) {
        writeTransaction = transaction
        super.init(view: view, name: name, viewConnection: viewConnection, transaction: transaction)
    }

    /// Replaces the grouping and sorting and rebuilds the view (in this transaction).
    public func setGrouping(_ grouping: YapDatabaseViewGrouping, sorting: YapDatabaseViewSorting, versionTag: String?) {
        view.config.withLock { config in
            config.grouping = grouping
            config.sorting = sorting
            config.versionTag = versionTag ?? ""
        }
        view.rebuild(name: name, transaction: writeTransaction, versionTag: versionTag ?? "")
    }

    /// Replaces the sorting and re-sorts the view (in this transaction).
    public func setSorting(_ sorting: YapDatabaseViewSorting, versionTag: String?) {
        view.config.withLock { config in
            config.sorting = sorting
            config.versionTag = versionTag ?? ""
        }
        view.rebuild(name: name, transaction: writeTransaction, versionTag: versionTag ?? "")
    }

    /// Marks a row as changed in the view (its position is recomputed; observers see an update).
    public func touchRow(forKey key: String, inCollection collection: String?) {
        let name = collection ?? ""
        guard writeTransaction.keydir.entry(collection: name, key: key) != nil else { return }
        view.update(self.name, writeTransaction) { state, engine in
            let removed = engine.removeRow(collection: name, key: key, from: &state)
            return engine.insertRow(collection: name, key: key, into: &state) || removed
        }
        view.didTouchRow(name: self.name, collection: name, key: key, transaction: writeTransaction)
        writeTransaction.viewDidReplaceRow(self.name, collection: name, key: key)
        writeTransaction.engineTransaction.markChanged()
    }
}
