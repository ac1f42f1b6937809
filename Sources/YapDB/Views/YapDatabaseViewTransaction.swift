import Foundation
import YapDBEngine

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

    /// In a read-only transaction the view cannot change: its state and the tree of the group
    /// read last are kept, so repeated reads of one group walk only that group's pages.
    private var readOnlyState: ViewState?
    private var readOnlyTree: (group: String, tree: ExtensionRowTree?)?
    private var isReadOnly: Bool { !(transaction is YapDatabaseReadWriteTransaction) }

    var state: ViewState {
        if let readOnlyState { return readOnlyState }
        let state = transaction.viewState(name) ?? ViewState(versionTag: "", transaction: transaction)
        if isReadOnly { readOnlyState = state }
        return state
    }

    var engine: ViewEngine { ViewEngine(view: view, config: view.config.withLock { $0 }, transaction: transaction) }

    /// The tree of `group`, or nil when it has no rows (a page that cannot be read is logged).
    func tree(_ group: String) -> ExtensionRowTree? {
        if let readOnlyTree, readOnlyTree.group == group { return readOnlyTree.tree }
        let tree = engine.tree(group, in: state)
        if isReadOnly { readOnlyTree = (group, tree) }
        return tree
    }

    // MARK: Groups

    /// The number of non-empty groups (`UInt`, as Swift imports YapDatabase's `NSUInteger`).
    public func numberOfGroups() -> UInt { UInt(state.groupCount) }

    /// The non-empty groups, in UTF-8 byte order (YapDatabase promises no order).
    public func allGroups() -> [String] { engine.groupNames(state) }

    /// Whether `group` has at least one row.
    public func hasGroup(_ group: String) -> Bool { tree(group) != nil }

    /// The number of rows in `group`.
    public func numberOfItems(inGroup group: String) -> UInt { UInt(count(group)) }

    /// The number of rows in the view. O(1).
    public func numberOfItemsInAllGroups() -> UInt { UInt(state.rowCount) }

    /// Whether `group` has no rows.
    public func isEmptyGroup(_ group: String) -> Bool { tree(group) == nil }

    /// Whether the view has no rows.
    public func isEmpty() -> Bool { state.isEmpty }

    /// The number of rows in `group`, as `Int`.
    func count(_ group: String) -> Int { tree(group)?.count ?? 0 }

    /// The view's version tag.
    public func versionTag() -> String? {
        (self as? YapDatabaseFilteredViewTransaction)?.filteredView.versionTag ?? view.versionTag
    }

    /// Calls `block` with each non-empty group, until it sets `stop.pointee`.
    public func enumerateGroups(_ block: (String, UnsafeMutablePointer<ObjCBool>) -> Void) {
        var stop = false
        for group in allGroups() {
            withObjCStop(&stop) { block(group, $0) }
            if stop { return }
        }
    }

    // MARK: Rows by position

    /// The (collection, key) at `index` of `group`, or nil when out of range.
    public func getCollectionKey(atIndex index: Int, inGroup group: String) -> (String, String)? {
        guard let tree = tree(group), index >= 0, index < tree.count,
              let rowid = engine.run("row \(index) of group \(group)", nil, { () throws(EngineError) in try tree.element(at: index) })
        else { return nil }
        return transaction.owner(ofRowid: rowid).map { ($0.collection, $0.key) }
    }

    /// The group and index of a row, or nil when the row is not in the view.
    public func getGroupIndex(forKey key: String, inCollection collection: String?) -> (String, Int)? {
        let name = collection ?? ""
        let state = self.state, engine = self.engine
        guard let entry = transaction.entry(collection: name, key: key), let group = engine.group(ofRowid: entry.rowid, in: state),
              let tree = tree(group) else { return nil }
        let row = engine.row(collection: name, key: key, forGrouping: false)
        let found = engine.run("row \(name)/\(key) in group \(group)", nil) { () throws(EngineError) in
            try engine.position(of: entry.rowid, sortRow: row, in: tree, group: group)
        }
        return found.map { (group, $0) }
    }

    /// The group of a row, or nil when it is not in the view.
    public func group(forKey key: String, inCollection collection: String?) -> String? {
        guard let entry = transaction.entry(collection: collection ?? "", key: key) else { return nil }
        return engine.group(ofRowid: entry.rowid, in: state)
    }

    /// The object at `index` of `group`, or nil when out of range.
    public func object(at index: UInt, inGroup group: String) -> Any? {
        index > Int.max ? nil : object(atIndex: Int(index), inGroup: group)
    }

    /// The metadata at `index` of `group`, or nil when out of range or the row has none.
    public func metadata(at index: UInt, inGroup group: String) -> Any? {
        index > Int.max ? nil : metadata(atIndex: Int(index), inGroup: group)
    }

    /// The collection of the row at `index` of `group`, or nil when out of range.
    public func collection(at index: UInt, inGroup group: String) -> String? {
        index > Int.max ? nil : getCollectionKey(atIndex: Int(index), inGroup: group)?.0
    }

    /// The key of the row at `index` of `group`, or nil when out of range.
    public func key(at index: UInt, inGroup group: String) -> String? {
        index > Int.max ? nil : getCollectionKey(atIndex: Int(index), inGroup: group)?.1
    }

    /// The object at `index` of `group` (the `Int` form).
    public func object(atIndex index: Int, inGroup group: String) -> Any? {
        guard let (collection, key) = getCollectionKey(atIndex: index, inGroup: group) else { return nil }
        return transaction.object(forKey: key, inCollection: collection)
    }

    /// The metadata at `index` of `group` (the `Int` form).
    public func metadata(atIndex index: Int, inGroup group: String) -> Any? {
        guard let (collection, key) = getCollectionKey(atIndex: index, inGroup: group) else { return nil }
        return transaction.metadata(forKey: key, inCollection: collection)
    }

    /// The first object of `group`.
    public func firstObject(inGroup group: String) -> Any? { object(atIndex: 0, inGroup: group) }

    /// The last object of `group`.
    public func lastObject(inGroup group: String) -> Any? { object(atIndex: count(group) - 1, inGroup: group) }

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

    /// Calls `block` with (collection, key, metadata, index) of each row of `group` in `range`.
    public func iterateKeysAndMetadata(inGroup group: String, reversed: Bool = false, range: NSRange? = nil,
                                       using block: (String, String, Any?, Int, inout Bool) -> Void) {
        iterate(group, reversed, range) { collection, key, index, stop in
            block(collection, key, transaction.metadata(forKey: key, inCollection: collection), index, &stop)
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
        guard let tree = tree(group) else { return }
        var bounds = 0..<tree.count
        if let range, range.location != NSNotFound {
            let lower = min(max(0, range.location), tree.count)
            bounds = lower..<min(tree.count, lower + max(0, range.length))
        }
        let engine = self.engine
        transaction.iterate { stop in
            engine.run("rows of group \(group)", ()) { () throws(EngineError) in
                try tree.forEach(in: bounds, reversed: reversed) { index, rowid in
                    guard let (collection, key) = transaction.owner(ofRowid: rowid) else { return true }
                    step(collection, key, index, &stop)
                    return transaction.afterStep(stop)
                }
            }
        }
    }

    // MARK: Searching

    /// The range of rows of `group` for which `find` says `.orderedSame`, by binary search;
    /// `NSRange(location: NSNotFound, length: 0)` when there is none.
    public func findRange(inGroup group: String, using find: YapDatabaseViewFind) -> NSRange {
        guard let tree = tree(group) else { return NSRange(location: NSNotFound, length: 0) }
        let engine = self.engine
        let range = engine.run("search in group \(group)", 0..<0) { () throws(EngineError) in try tree.findRange { rowid in
            guard let row = engine.row(rowid: rowid).map({ Self.fill($0, for: find, transaction) }) else { return .orderedAscending }
            // The block says where the row is relative to the range; the tree wants where the
            // range is relative to the row.
            switch find.compare(row) {
            case .orderedAscending: return .orderedDescending
            case .orderedSame: return .orderedSame
            case .orderedDescending: return .orderedAscending
            }
        } }
        return range.isEmpty ? NSRange(location: NSNotFound, length: 0) : NSRange(location: range.lowerBound, length: range.count)
    }

    /// The index of the first row of `group` for which `find` says `.orderedSame`, or
    /// `UInt(NSNotFound)`.
    public func findFirstMatch(inGroup group: String, using find: YapDatabaseViewFind) -> UInt {
        UInt(findRange(inGroup: group, using: find).location)
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

/// The transaction object of an automatic view: `transaction.ext(name) as? YapDatabaseAutoViewTransaction`
/// in read and read-write transactions alike. The `set…` and `touch…` members change the view
/// and are for read-write transactions only (calling them in a read-only transaction stops the
/// program: API misuse). `YapDatabaseSearchResultsViewTransaction` subclasses it.
public class YapDatabaseAutoViewTransaction: YapDatabaseViewTransaction {
    /// The read-write transaction, for the members that change the view.
    func writeTransaction(_ function: String = #function) -> YapDatabaseReadWriteTransaction {
        guard let rw = transaction as? YapDatabaseReadWriteTransaction else {
            preconditionFailure("YapDatabaseAutoViewTransaction misuse: \(function) needs a read-write transaction")
        }
        return rw
    }

    /// Replaces the grouping and sorting and rebuilds the view (in this transaction). As in
    /// YapDatabase, nothing happens unless `versionTag` (nil means "") differs from the view's
    /// tag. Observers see every row still shown as a move (many to the place they had).
    public func setGrouping(_ grouping: YapDatabaseViewGrouping, sorting: YapDatabaseViewSorting, versionTag: String?) {
        let writeTransaction = writeTransaction()
        let tag = versionTag ?? ""
        let changed = view.config.withLock { config in
            guard config.versionTag != tag else { return false }
            config.grouping = grouping
            config.sorting = sorting
            config.versionTag = tag
            return true
        }
        guard changed else {
            YapDatabaseLogging.log(.warning, "view \(name): setGrouping with the view's own versionTag changes nothing")
            return
        }
        view.rebuild(name: name, transaction: writeTransaction, versionTag: tag, reported: .regrouped)
    }

    /// Replaces the sorting and re-sorts the view (in this transaction). As in YapDatabase,
    /// nothing happens unless `versionTag` (nil means "") differs from the view's tag. Observers
    /// see each row still shown as an update where it kept its place, else as a move.
    public func setSorting(_ sorting: YapDatabaseViewSorting, versionTag: String?) {
        let writeTransaction = writeTransaction()
        let tag = versionTag ?? ""
        let changed = view.config.withLock { config in
            guard config.versionTag != tag else { return false }
            config.sorting = sorting
            config.versionTag = tag
            return true
        }
        guard changed else {
            YapDatabaseLogging.log(.warning, "view \(name): setSorting with the view's own versionTag changes nothing")
            return
        }
        view.rebuild(name: name, transaction: writeTransaction, versionTag: tag, reported: .resorted)
    }

    /// `touchRow`'s work (a subclass whose rows are placed differently overrides it).
    func touch(collection name: String, key: String, writeTransaction: YapDatabaseReadWriteTransaction) {
        guard writeTransaction.entry(collection: name, key: key) != nil else { return }
        view.update(self.name, writeTransaction) { state, engine in engine.placeAgain(collection: name, key: key, in: &state) }
        view.noteTouch(name: self.name, collection: name, key: key, transaction: writeTransaction)
        writeTransaction.viewDidReplaceRow(self.name, collection: name, key: key)
        writeTransaction.markChanged()
    }
}

extension YapDatabaseAutoViewTransaction {
    /// Marks a row as changed in the view: its group and place are computed again (it keeps
    /// its index while it still sorts between its neighbours); observers see an update (or a
    /// move). Read-write transactions only.
    public func touchRow(forKey key: String, inCollection collection: String?) {
        touch(collection: collection ?? "", key: key, writeTransaction: writeTransaction())
    }

    /// `touchRow(forKey:inCollection:)`: the view does not tell object and metadata apart.
    public func touchObject(forKey key: String, inCollection collection: String?) {
        touchRow(forKey: key, inCollection: collection)
    }

    /// `touchRow(forKey:inCollection:)`: the view does not tell object and metadata apart.
    public func touchMetadata(forKey key: String, inCollection collection: String?) {
        touchRow(forKey: key, inCollection: collection)
    }
}
