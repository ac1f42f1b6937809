import Foundation
import YapDBEngine

/// A read-only transaction: every read sees one snapshot from start to end. Valid only inside
/// the block it was passed to.
///
/// Threading: use it only inside its block, on the thread running the block.
public class YapDatabaseReadTransaction {
    /// The connection running this transaction.
    public let connection: YapDatabaseConnection
    /// Free for the caller's use during the transaction.
    public var userInfo: Any?
    /// Where this transaction's rows come from: its snapshot, or (a read-write transaction)
    /// the engine's write transaction, which reads its own writes. Every row read goes
    /// through it (YapDatabaseReadTransaction+Rows.swift).
    let reader: any RowReader
    /// Whether `reader` is a snapshot, which never changes: locations an index keeps may then
    /// be read in place (`RowReader.readObject`), and iterations walk it as it is.
    let readsSnapshot: Bool
    var isValid = true
    /// Iterations running now, and whether a write happened inside one.
    var iterationDepth = 0
    /// The object deserializer of the collection decoded last (the registrations a transaction
    /// uses do not change during it), so a walk over one collection chooses it once.
    /// (A class: reading it is one retain, where an optional tuple of an enum with a struct
    /// payload was copied field by field through its type's metadata on every row.)
    /// Unchecked for exclusive access: a transaction is used on one queue, and this is read
    /// per decoded object.
    @exclusivity(unchecked) var objectDeserializer: DeserializerMemo?
    var mutatedDuringIteration = false
    var extensionTransactions: [String: AnyObject] = [:]

    init(connection: YapDatabaseConnection, snapshot: EngineSnapshot) {
        self.connection = connection
        self.reader = snapshot
        self.readsSnapshot = true
    }

    /// A read-write transaction's base: `reader` is the engine's write transaction.
    init(connection: YapDatabaseConnection, writing reader: WriteTransaction) {
        self.connection = connection
        self.reader = reader
        self.readsSnapshot = false
    }

    /// The block returned: the transaction may no longer be used. The extension transactions
    /// are let go here, since each holds this transaction (a cycle that would otherwise keep
    /// the transaction, its connection and the database alive).
    func invalidate() {
        isValid = false
        extensionTransactions.removeAll()
    }

    func checkValid(_ function: String = #function) {
        precondition(isValid, "YapDatabaseTransaction misuse: \(function) called after the transaction's block returned")
    }

    // MARK: Counts and listings

    /// The number of collections that have at least one row (`UInt`, as Swift imports
    /// YapDatabase's `NSUInteger`).
    public func numberOfCollections() -> UInt {
        checkValid()
        return UInt(collectionCount())
    }

    /// The number of rows in `collection` (nil means "").
    public func numberOfKeys(inCollection collection: String?) -> UInt {
        checkValid()
        return UInt(rowCount(inCollection: collection ?? ""))
    }

    /// The number of rows in all collections.
    public func numberOfKeysInAllCollections() -> UInt {
        checkValid()
        return UInt(reader.rowCount)
    }

    /// The collections that have at least one row.
    public func allCollections() -> [String] {
        checkValid()
        return collectionNames()
    }

    /// Every key of `collection`.
    public func allKeys(inCollection collection: String?) -> [String] {
        checkValid()
        var keys: [String] = []
        keys.reserveCapacity(rowCount(inCollection: collection ?? ""))
        forEachKey(inCollection: collection ?? "") { key, _ in
            keys.append(key)
            return true
        }
        return keys
    }

    // MARK: Rows

    /// Whether the row exists.
    public func hasObject(forKey key: String, inCollection collection: String?) -> Bool {
        checkValid()
        return entry(collection: collection ?? "", key: key) != nil
    }

    /// The row's object, decoded by the collection's deserializer (from the connection's
    /// cache when it is there), or nil when there is no such row.
    public func object(forKey key: String, inCollection collection: String?) -> Any? {
        checkValid()
        let collection = collection ?? ""
        if let cached = cachedObject(collection: collection, key: key) { return cached }
        guard let entry = entry(collection: collection, key: key) else { return nil }
        return decodeObject(entry, collection: collection, key: key)
    }

    /// The row's metadata, or nil when there is no row or no metadata.
    public func metadata(forKey key: String, inCollection collection: String?) -> Any? {
        checkValid()
        let collection = collection ?? ""
        if let cached = cachedMetadata(collection: collection, key: key) { return cached }
        guard let entry = entry(collection: collection, key: key) else { return nil }
        return decodeMetadata(entry, collection: collection, key: key)
    }

    /// The row's object when its key-directory `entry` is already known (nil: no row): the
    /// connection's cache first, as `object(forKey:inCollection:)`, without a second lookup.
    func object(forKey key: String, inCollection collection: String, entry: KeydirEntry?) -> Any? {
        if let cached = cachedObject(collection: collection, key: key) { return cached }
        guard let entry else { return nil }
        return decodeObject(entry, collection: collection, key: key)
    }

    /// The row's metadata when its key-directory `entry` is already known (nil: no row).
    func metadata(forKey key: String, inCollection collection: String, entry: KeydirEntry?) -> Any? {
        if let cached = cachedMetadata(collection: collection, key: key) { return cached }
        guard let entry else { return nil }
        return decodeMetadata(entry, collection: collection, key: key)
    }

    /// The row's object as `O` and metadata as `M`, or nil when the row is missing or its
    /// object is not an `O`.
    public func row<O, M>(forKey key: String, inCollection collection: String?) -> (object: O, metadata: M?)? {
        guard let object = object(forKey: key, inCollection: collection) as? O else { return nil }
        return (object, metadata(forKey: key, inCollection: collection) as? M)
    }

    /// The row's object as stored (serialized), or nil.
    public func serializedObject(forKey key: String, inCollection collection: String?) -> Data? {
        checkValid()
        guard let entry = entry(collection: collection ?? "", key: key) else { return nil }
        return read(entry.object, owner: .object(entry.rowid), "object", collection: collection ?? "", key: key)
    }

    /// The row's metadata as stored (serialized), or nil.
    public func serializedMetadata(forKey key: String, inCollection collection: String?) -> Data? {
        checkValid()
        guard let entry = entry(collection: collection ?? "", key: key), let location = entry.metadata else { return nil }
        return read(location, owner: .metadata(entry.rowid), "metadata", collection: collection ?? "", key: key)
    }

    // MARK: Iteration

    /// Calls `block` with each collection name until it sets `stop`.
    public func iterateCollections(_ block: (String, inout Bool) -> Void) {
        checkValid()
        let names = collectionNames()
        iterate { stop in
            for collection in names {
                block(collection, &stop)
                if !afterStep(stop) { return }
            }
        }
    }

    /// Calls `block` with each key of `collection` until it sets `stop`.
    public func iterateKeys(inCollection collection: String?, using block: (String, inout Bool) -> Void) {
        iterateEntries(inCollection: collection) { _, key, _, stop in block(key, &stop) }
    }

    /// Calls `block` with each key and object of `collection` whose object is a `T`.
    public func iterateKeysAndObjects<T>(inCollection collection: String?, using block: (String, T, inout Bool) -> Void) {
        iterateKeysAndObjects(inCollection: collection, filter: nil, using: block)
    }

    /// Like `iterateKeysAndObjects(inCollection:using:)`, deciding by key (before decoding)
    /// which rows to visit (YapDatabase's order: the filter after the block).
    public func iterateKeysAndObjects<T>(inCollection collection: String?, using block: (String, T, inout Bool) -> Void,
                                         filter: ((String) -> Bool)?) {
        iterateKeysAndObjects(inCollection: collection, filter: filter, using: block)
    }

    /// Like `iterateKeysAndObjects(inCollection:using:)`, deciding by key (before decoding)
    /// which rows to visit.
    public func iterateKeysAndObjects<T>(inCollection collection: String?, filter: ((String) -> Bool)?,
                                         using block: (String, T, inout Bool) -> Void) {
        iterateEntries(inCollection: collection, readsObjects: true) { name, key, entry, stop in
            if let filter, !filter(key) { return }
            guard let object = cachedOrDecodedObject(entry, collection: name, key: key) as? T else { return }
            block(key, object, &stop)
        }
    }

    /// Calls `block` with each key of `collection` and its metadata as a `T` (nil when the row
    /// has no metadata or metadata of another type): every row is visited.
    public func iterateKeysAndMetadata<T>(inCollection collection: String?, using block: (String, T?, inout Bool) -> Void) {
        iterateKeysAndMetadata(inCollection: collection, using: block, filter: nil)
    }

    /// Like `iterateKeysAndMetadata(inCollection:using:)`, deciding by key (before decoding)
    /// which rows to visit.
    public func iterateKeysAndMetadata<T>(inCollection collection: String?, using block: (String, T?, inout Bool) -> Void,
                                          filter: ((String) -> Bool)?) {
        iterateEntries(inCollection: collection) { name, key, entry, stop in
            if let filter, !filter(key) { return }
            block(key, cachedOrDecodedMetadata(entry, collection: name, key: key) as? T, &stop)
        }
    }

    /// Calls `block` with each key, object (an `O`) and metadata (as `M`, or nil) of
    /// `collection`.
    public func iterateRows<O, M>(inCollection collection: String?, using block: (String, O, M?, inout Bool) -> Void) {
        iterateRows(inCollection: collection, using: block, filter: nil)
    }

    /// Like `iterateRows(inCollection:using:)`, deciding by key (before decoding) which rows
    /// to visit.
    public func iterateRows<O, M>(inCollection collection: String?, using block: (String, O, M?, inout Bool) -> Void,
                                  filter: ((String) -> Bool)?) {
        iterateEntries(inCollection: collection, readsObjects: true) { name, key, entry, stop in
            if let filter, !filter(key) { return }
            guard let object = cachedOrDecodedObject(entry, collection: name, key: key) as? O else { return }
            block(key, object, cachedOrDecodedMetadata(entry, collection: name, key: key) as? M, &stop)
        }
    }

    /// Calls `block` with the collection, key and object of every row.
    public func iterateKeysAndObjectsInAllCollections(_ block: (String, String, Any, inout Bool) -> Void) {
        iterateKeysAndObjectsInAllCollections(block, filter: nil)
    }

    /// Like `iterateKeysAndObjectsInAllCollections(_:)`, deciding by (collection, key) before
    /// decoding which rows to visit.
    public func iterateKeysAndObjectsInAllCollections(_ block: (String, String, Any, inout Bool) -> Void,
                                                      filter: ((String, String) -> Bool)?) {
        iterateAllEntries(filter: filter) { collection, key, entry, stop in
            guard let object = cachedOrDecodedObject(entry, collection: collection, key: key) else { return }
            block(collection, key, object, &stop)
        }
    }

    /// Calls `block` with the collection, key, object and metadata of every row.
    public func iterateRowsInAllCollections(_ block: (String, String, Any, Any?, inout Bool) -> Void) {
        iterateRowsInAllCollections(block, filter: nil)
    }

    /// Like `iterateRowsInAllCollections(_:)`, deciding by (collection, key) before decoding
    /// which rows to visit.
    public func iterateRowsInAllCollections(_ block: (String, String, Any, Any?, inout Bool) -> Void,
                                            filter: ((String, String) -> Bool)?) {
        iterateAllEntries(filter: filter) { collection, key, entry, stop in
            guard let object = cachedOrDecodedObject(entry, collection: collection, key: key) else { return }
            block(collection, key, object, cachedOrDecodedMetadata(entry, collection: collection, key: key), &stop)
        }
    }

    // MARK: Extensions

    /// The extension transaction of the extension registered as `name`, or nil. Same as
    /// `ext(_:)`.
    public func `extension`(_ name: String) -> Any? { ext(name) }

    /// The extension transaction of the extension registered as `name` (e.g. a view
    /// transaction), or nil.
    public func ext(_ name: String) -> Any? {
        checkValid()
        if let existing = extensionTransactions[name] { return existing }
        guard let ext = connection.database.extensionRegistry.extensionNamed(name) else { return nil }
        let made = ext.makeTransaction(name: name, extensionConnection: connection.extensionConnection(name), transaction: self)
        if let made { extensionTransactions[name] = made }
        return made
    }

    // MARK: Iteration guard

    /// Runs an iteration over the rows of one collection (the reader walks them as they were
    /// when the walk began, so writes during it do not disturb it): `step` handles one row and
    /// may set `stop`. With `readsObjects`, each row's object is prefetched from its segment's
    /// map a few rows before `step` gets the row (`RowReader.forEachKey(…prefetching:…)`).
    func iterateEntries(inCollection collection: String?, from: String? = nil, through: String? = nil, reversed: Bool = false,
                        readsObjects: Bool = false, _ step: (String, String, KeydirEntry, inout Bool) -> Void) {
        checkValid()
        let name = collection ?? ""
        let reader = self.reader
        let prefetch = readsObjects ? { (entry: KeydirEntry) in reader.prefetch(entry.object) } : nil
        iterate { stop in
            forEachKey(inCollection: name, from: from, through: through, reversed: reversed, prefetching: prefetch) { key, entry in
                step(name, key, entry, &stop)
                return afterStep(stop)
            }
        }
    }

    /// Runs an iteration over the rows of every collection that `filter` (if any) accepts by
    /// (collection, key); `step` handles one row and may set `stop`. (The reader walks each
    /// collection as it was when that walk began, so writes during it do not disturb it.)
    func iterateAllEntries(filter: ((String, String) -> Bool)?, _ step: (String, String, KeydirEntry, inout Bool) -> Void) {
        checkValid()
        let names = collectionNames()
        iterate { stop in
            for collection in names {
                forEachKey(inCollection: collection) { key, entry in
                    if let filter, !filter(collection, key) { return true }
                    step(collection, key, entry, &stop)
                    return afterStep(stop)
                }
                if stop { return }
            }
        }
    }

    /// Runs an iteration, tracking writes made inside it.
    func iterate(_ body: (inout Bool) -> Void) {
        iterationDepth += 1
        defer {
            iterationDepth -= 1
            if iterationDepth == 0 { mutatedDuringIteration = false }
        }
        var stop = false
        body(&stop)
    }

    /// After each step of an iteration: a write during the step is a programming error unless
    /// the block then stopped. Returns whether to go on.
    func afterStep(_ stop: Bool) -> Bool {
        if mutatedDuringIteration {
            precondition(stop, "YapDatabaseTransaction misuse: the database was modified during an iteration without stopping it (set stop = true after writing)")
        }
        return !stop
    }
}

/// Marks "no metadata" in a metadata cache, so a nil is a cache hit too.
struct NoMetadata: Sendable {
    static let marker = NoMetadata()
}

/// The deserializer a read transaction chose for one collection's objects.
final class DeserializerMemo {
    let collection: String
    let chosen: SerializationRegistry.Deserialize?
    /// The chosen deserializer when it is the application's own block, called directly: a
    /// copy of the enum per row goes through its outlined copy, which costs more than the call.
    let custom: YapDatabaseDeserializer?

    init(collection: String, chosen: SerializationRegistry.Deserialize?) {
        self.collection = collection
        self.chosen = chosen
        if case .custom(let block)? = chosen { custom = block } else { custom = nil }
    }
}
