import Foundation
import Synchronization
import YapDBIndex  // RowKey: the key directory's row key encoding, a value helper
import YapDBEngine
import YapDBQuery

/// An index of values the handler extracts from rows (YapDatabase's `YapDatabaseSecondaryIndex`),
/// queried with `YapDatabaseQuery`: `WHERE` conditions, `ORDER BY`, `LIMIT`, counts and
/// aggregates, answered from key-ordered trees (one per column) without loading objects.
///
/// The index changes in the same commit as the rows it indexes. Registering it again with the
/// same `versionTag` and columns keeps the stored index; a different tag or setup rebuilds it
/// from every allowed row.
///
/// ```swift
/// let setup = YapDatabaseSecondaryIndexSetup()
/// setup.addColumn("age", with: .integer)
/// let handler = YapDatabaseSecondaryIndexHandler.withObjectBlock { _, dict, _, _, object in
///     if let person = object as? Person { dict["age"] = person.age }
/// }
/// database.register(YapDatabaseSecondaryIndex(setup: setup, handler: handler, versionTag: "1"), withName: "idx")
/// ```
///
/// `@unchecked Sendable`: every stored property is immutable (the setup is copied at init).
open class YapDatabaseSecondaryIndex: YapDatabaseExtension, @unchecked Sendable {
    /// The columns, in setup order.
    let columns: [YapDatabaseSecondaryIndexColumn]
    let handler: YapDatabaseSecondaryIndexHandler
    let allowedCollections: YapWhitelistBlacklist?

    /// The version tag: a different tag at registration rebuilds the index.
    public let versionTag: String

    /// Query texts and aggregate functions already parsed against this index's columns, by
    /// text (valid parses only), so a query object made per call with a known text neither
    /// re-lexes it nor hashes the column table. Bounded by `ParseMemo.capacity`.
    let parses = Mutex(ParseMemo())

    /// A secondary index with the columns of `setup`, filled by `handler`.
    /// - Parameters:
    ///   - setup: the columns (copied: later changes to `setup` do not reach the index).
    ///   - handler: the block that reads each row's column values.
    ///   - versionTag: change it when the setup or the handler changes (nil: "").
    ///   - options: the allowed collections (nil: every collection).
    public init(setup: YapDatabaseSecondaryIndexSetup, handler: YapDatabaseSecondaryIndexHandler,
                versionTag: String? = nil, options: YapDatabaseSecondaryIndexOptions? = nil) {
        precondition(setup.count() > 0, "YapDatabaseSecondaryIndex: the setup has no columns")
        columns = setup.columns
        var queryColumns: [String: ColumnType] = [:], positions: [String: Int] = [:], lowercased: [String: Int] = [:]
        for (i, column) in columns.enumerated() {
            if let type = SecondaryIndexRow.columnType(column.type) { queryColumns[column.name] = type }
            positions[column.name] = i
            lowercased[column.name.lowercased()] = i
        }
        // `rowid`, as in the SQL table YapDatabase keeps per index: the row's id in the
        // database, an INTEGER (`rowids(forKeys:inCollection:)` gives them), unless a column
        // has that name.
        hasRowidColumn = lowercased[Self.rowidColumn] == nil
        if hasRowidColumn { queryColumns[Self.rowidColumn] = .integer }
        self.queryColumns = queryColumns
        hasBlobColumn = columns.contains { $0.type == .blob }
        self.positions = positions
        lowercasedPositions = lowercased
        names = columns.map(\.name)
        self.handler = handler
        self.versionTag = versionTag ?? ""
        allowedCollections = options?.allowedCollections
        super.init()
    }

    /// A copy of the options the index was made with.
    public var options: YapDatabaseSecondaryIndexOptions {
        let options = YapDatabaseSecondaryIndexOptions()
        options.allowedCollections = allowedCollections
        return options
    }

    /// A copy of the setup the index was made with.
    public var setup: YapDatabaseSecondaryIndexSetup {
        let setup = YapDatabaseSecondaryIndexSetup()
        for column in columns { setup.addColumn(column.name, with: column.type) }
        return setup
    }

    /// The column names and types, as the stored index records them, and the layout of its
    /// entries: an index stored before column entries carried object locations and row keys
    /// has a signature without `entryLayout` and rebuilds once.
    var signature: String { columns.map(\.description).joined(separator: ", ") + Self.entryLayout }

    /// The signature's mark of column entries that carry the object's location and the row
    /// key (docs/format.md §11).
    static let entryLayout = "; object locations and row keys"

    static func stateKey(_ name: String) -> String { "secondaryIndex:" + name }

    func isAllowed(_ collection: String) -> Bool { allowedCollections?.isAllowed(collection) ?? true }

    /// The columns as the query module sees them (BLOB columns have no affinity: left out).
    let queryColumns: [String: ColumnType]
    /// Whether a column is BLOB (queries are then parsed without the column list).
    let hasBlobColumn: Bool
    /// Column positions by name as spelled, and by lowercased name.
    let positions: [String: Int]
    let lowercasedPositions: [String: Int]

    /// The columns' names as spelled, in order.
    let names: [String]
    /// Up to this many columns, a name is found by comparing it with each spelling, which
    /// costs less than hashing it (a planned query looks its columns up every time it runs).
    static let scannedColumns = 8

    /// The index of column `name` (case-insensitive, as SQL names are), or nil.
    func columnIndex(_ name: String) -> Int? {
        if names.count <= Self.scannedColumns {
            for i in names.indices where names[i] == name { return i }
        } else if let i = positions[name] {
            return i
        }
        return lowercasedPositions[name.lowercased()]
    }

    /// The pseudo-column of each row's id, when no column is named so.
    static let rowidColumn = "rowid"
    /// Whether queries can name `rowid` (no column has that name).
    let hasRowidColumn: Bool

    /// Whether `name` names the `rowid` pseudo-column.
    func isRowid(_ name: String) -> Bool {
        // ASCII letters in either case, byte by byte: no character count, no lowercased copy.
        // (`byte | 0x20` equals a lowercase letter only for that letter in either case.)
        hasRowidColumn && name.utf8.count == Self.rowidColumn.utf8.count
            && name.utf8.elementsEqual(Self.rowidColumn.utf8) { $0 | 0x20 == $1 }
    }

    /// The position of `name` in a row's values as the executor reads them (the columns, then
    /// the row id: `SecondaryIndexExecutor.rowValues`), or nil.
    func valuePosition(_ name: String) -> Int? {
        columnIndex(name) ?? (isRowid(name) ? columns.count : nil)
    }

    /// The row's column values from the handler, after each column's affinity; nil when the
    /// handler set no value (the row is not in the index).
    func indexedValues(collection: String, key: String, transaction: YapDatabaseReadTransaction) -> [SQLValue]? {
        let dict = handler.values(transaction, collection: collection, key: key)
        let count = dict.count
        guard count > 0 else { return nil }
        var values = [SQLValue](repeating: .null, count: columns.count)
        // Most handlers set the columns by their exact names: look those up; any other key
        // (another case, no such column) takes the general path below.
        var found = 0
        for i in columns.indices {
            guard let raw = dict.value(named: columns[i].name, hint: i) else { continue }
            values[i] = SecondaryIndexRow.columnValue(raw, type: columns[i].type)
            found += 1
        }
        if found == count { return values }
        values = [SQLValue](repeating: .null, count: columns.count)
        for (rawKey, rawValue) in dict {
            guard let name = rawKey as? String, let i = columnIndex(name) else {
                YapDatabaseLogging.log(.warning, "secondary index: the handler set \(rawKey), which is not a column; ignored")
                continue
            }
            values[i] = SecondaryIndexRow.columnValue(rawValue, type: columns[i].type)
        }
        return values
    }

    // MARK: Extension hooks

    override func prepare(name: String, transaction: YapDatabaseReadWriteTransaction) -> Bool {
        let key = Self.stateKey(name)
        if let existing = transaction.extensionState(key) as? SecondaryIndexState,
           existing.versionTag == versionTag, existing.signature == signature {
            return true
        }
        // The roots the last checkpoint recorded, if the tag and columns match: open them (no
        // page is read) and re-index only the rows changed since.
        if let claimed = transaction.connection.database.engine.claimExtensionRoots(key),
           var state = SecondaryIndexState(claimed: claimed), state.versionTag == versionTag, state.signature == signature,
           (try? catchUp(&state, claimed.catchUp, transaction: transaction)) != nil {
            transaction.setExtensionState(state, forKey: key)
            // Nothing to catch up: the trees describe the rows as they are, so publishing them
            // needs no commit (and no sync).
            if claimed.catchUp.isEmpty {
                transaction.publishExtensionsWithoutCommit()
            } else {
                transaction.markChanged()
            }
            return true
        }
        do throws(EngineError) {
            let state = try rebuild(transaction: transaction)
            transaction.setExtensionState(state, forKey: key)
            transaction.markChanged()
            return true
        } catch {
            YapDatabaseLogging.log(.error, "secondary index \(name) could not be built: \(error)")
            return false
        }
    }

    /// Brings claimed trees up to the transaction's rows: rows removed since leave them; rows
    /// written since are indexed anew.
    func catchUp(_ state: inout SecondaryIndexState, _ changes: ExtensionCatchUp,
                 transaction: YapDatabaseReadWriteTransaction) throws(EngineError) {
        if changes.removedAll { state.removeAll() }
        for rowid in changes.removedRowids { try state.removeRow(rowid) }
        for pair in changes.changedKeys {
            try reindex(collection: pair.collection, key: pair.key, in: &state, transaction: transaction)
        }
    }

    /// The index built from every allowed row of the transaction.
    func rebuild(transaction: YapDatabaseReadTransaction) throws(EngineError) -> SecondaryIndexState {
        // The index's page format, so the checkpoint can write these trees with the key directory.
        var state = SecondaryIndexState(versionTag: versionTag, signature: signature, columnCount: columns.count,
                                        empty: ExtensionTree(emptyLike: transaction.keydir))
        var failure: EngineError?
        for collection in transaction.collectionNames() where isAllowed(collection) {
            transaction.forEachKey(inCollection: collection) { key, entry in
                guard let values = indexedValues(collection: collection, key: key, transaction: transaction) else { return true }
                do throws(EngineError) {
                    try state.setRow(entry.rowid, rowKey: RowKey.encode(collection: collection, key: key), object: entry.object,
                                     values: values)
                } catch {
                    failure = error
                    return false
                }
                return true
            }
            if let failure { throw failure }
        }
        return state
    }

    /// Re-reads the row (collection, key) through the handler and puts its values in `state`
    /// (or takes it out when the row is gone, not allowed, or the handler sets nothing).
    func reindex(collection: String, key: String, in state: inout SecondaryIndexState,
                 transaction: YapDatabaseReadTransaction) throws(EngineError) {
        // One row key: for the lookup and for the column entries.
        let rowKey = RowKey.encode(collection: collection, key: key)
        guard let entry = transaction.entry(rowKey: rowKey, collection: collection, key: key) else { return }
        if isAllowed(collection), let values = indexedValues(collection: collection, key: key, transaction: transaction) {
            try state.setRow(entry.rowid, rowKey: rowKey, object: entry.object, values: values)
        } else {
            try state.removeRow(entry.rowid)
        }
    }

    override func dropState(name: String, transaction: YapDatabaseReadWriteTransaction) {
        transaction.setExtensionState(nil, forKey: Self.stateKey(name))
        transaction.markChanged()
    }

    override func makeConnection(name: String, connection: YapDatabaseConnection) -> AnyObject? {
        YapDatabaseSecondaryIndexConnection(index: self, name: name, connection: connection)
    }

    override func makeTransaction(name: String, extensionConnection: AnyObject?, transaction: YapDatabaseReadTransaction) -> AnyObject? {
        YapDatabaseSecondaryIndexTransaction(index: self, name: name, transaction: transaction)
    }

    /// A new row is indexed; a changed one again only when the handler's options name the
    /// change (otherwise its values stay as they are, and a new object's location is written
    /// into its column entries).
    override func didChangeRow(name: String, collection: String, key: String, change: RowChange,
                               transaction: YapDatabaseReadWriteTransaction) {
        guard isAllowed(collection) else { return }
        if handler.blockInvokeOptions.runs(for: change) {
            update(name, transaction) { state throws(EngineError) in
                try reindex(collection: collection, key: key, in: &state, transaction: transaction)
            }
        } else if change.invoke.contains(.ifObjectModified) {
            let rowKey = RowKey.encode(collection: collection, key: key)
            guard let entry = transaction.entry(rowKey: rowKey, collection: collection, key: key) else { return }
            update(name, transaction) { state throws(EngineError) in
                try state.moveObject(ofRow: entry.rowid, rowKey: rowKey, to: entry.object)
            }
        }
    }

    /// A touched row is indexed again when the handler's options name the touch.
    override func didTouchRow(name: String, collection: String, key: String, change: RowChange,
                              transaction: YapDatabaseReadWriteTransaction) {
        didChangeRow(name: name, collection: collection, key: key, change: change, transaction: transaction)
    }

    override func willRemoveRow(name: String, collection: String, key: String, transaction: YapDatabaseReadWriteTransaction) {
        guard isAllowed(collection), let entry = transaction.entry(collection: collection, key: key) else { return }
        update(name, transaction) { state throws(EngineError) in try state.removeRow(entry.rowid) }
    }

    override func willRemoveCollection(name: String, collection: String, transaction: YapDatabaseReadWriteTransaction) {
        guard isAllowed(collection) else { return }
        let rowids = transaction.rowids(inCollection: collection)
        update(name, transaction) { state throws(EngineError) in
            for rowid in rowids { try state.removeRow(rowid) }
        }
    }

    override func willRemoveAll(name: String, transaction: YapDatabaseReadWriteTransaction) {
        update(name, transaction) { state in state.removeAll() }
    }

    /// Runs `body` on the transaction's state of this index (taken out of the transaction so it
    /// is uniquely referenced and its trees change in place), then puts it back. A failure
    /// (a damaged page) fails the transaction.
    func update(_ name: String, _ transaction: YapDatabaseReadWriteTransaction,
                _ body: (inout SecondaryIndexState) throws(EngineError) -> Void) {
        transaction.updateExtensionState(Self.stateKey(name), as: SecondaryIndexState.self, label: "secondary index \(name)", body)
    }

    // MARK: Verification

    override func verifyState(name: String, transaction: YapDatabaseReadTransaction) -> [String] {
        guard let stored = transaction.extensionState(Self.stateKey(name)) as? SecondaryIndexState else {
            return ["secondary index \(name): no stored index"]
        }
        do throws(EngineError) {
            let rebuilt = try rebuild(transaction: transaction)
            let reader = transaction.reader
            let readsSnapshot = transaction.readsSnapshot
            return try stored.differences(from: rebuilt) { rowid, kept, current in
                // A kept location the reader would use must give the row's current object.
                guard readsSnapshot else { return false }
                var keptBytes: [UInt8]?, currentBytes: [UInt8]?
                guard reader.readObject(at: kept, ofRowid: rowid, { keptBytes = Array($0) }) else { return true }
                _ = reader.readObject(at: current, ofRowid: rowid) { currentBytes = Array($0) }
                return keptBytes == currentBytes
            }.map { "secondary index \(name): \($0)" }
        } catch {
            return ["secondary index \(name): \(error)"]
        }
    }
}
