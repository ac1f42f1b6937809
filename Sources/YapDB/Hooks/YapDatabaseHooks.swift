import Foundation
import Synchronization

/// What a modify hook is told about the write: insert or update (neither for a touch), and
/// which of object and metadata were set or touched.
public struct YapDatabaseHooksBitMask: OptionSet, Sendable, Hashable {
    /// The mask's bits (YapDatabase's values).
    public let rawValue: UInt

    /// Makes a mask from its raw bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// The row did not exist: it is being inserted (object and metadata are both set).
    public static let insertedRow = YapDatabaseHooksBitMask(rawValue: 1 << 0)
    /// The row existed: its object and/or metadata are being changed.
    public static let updatedRow = YapDatabaseHooksBitMask(rawValue: 1 << 1)
    /// The object is being set.
    public static let changedObject = YapDatabaseHooksBitMask(rawValue: 1 << 2)
    /// The metadata is being set (possibly to nil).
    public static let changedMetadata = YapDatabaseHooksBitMask(rawValue: 1 << 3)
    /// The object is being touched (`touchObject` or `touchRow`); its value does not change.
    public static let touchedObject = YapDatabaseHooksBitMask(rawValue: 1 << 4)
    /// The metadata is being touched (`touchMetadata` or `touchRow`); its value does not change.
    public static let touchedMetadata = YapDatabaseHooksBitMask(rawValue: 1 << 5)
}

/// Called before a row is inserted, changed or touched: (transaction, collection, key, object,
/// metadata, flags). The proxies hold the values being written, or load the stored ones.
public typealias YDBHooks_WillModifyRow =
    @Sendable (YapDatabaseReadWriteTransaction, String, String, YapProxyObject, YapProxyObject, YapDatabaseHooksBitMask) -> Void
/// Called after a row was inserted, changed or touched: (transaction, collection, key, object,
/// metadata, flags).
public typealias YDBHooks_DidModifyRow =
    @Sendable (YapDatabaseReadWriteTransaction, String, String, YapProxyObject, YapProxyObject, YapDatabaseHooksBitMask) -> Void
/// Called before a row is removed (one key, several keys, or a whole collection):
/// (transaction, collection, key).
public typealias YDBHooks_WillRemoveRow = @Sendable (YapDatabaseReadWriteTransaction, String, String) -> Void
/// Called after a row was removed: (transaction, collection, key).
public typealias YDBHooks_DidRemoveRow = @Sendable (YapDatabaseReadWriteTransaction, String, String) -> Void
/// Called before `removeAllObjectsInAllCollections()` (the row hooks are not called for it).
public typealias YDBHooks_WillRemoveAllRows = @Sendable (YapDatabaseReadWriteTransaction) -> Void
/// Called after `removeAllObjectsInAllCollections()`.
public typealias YDBHooks_DidRemoveAllRows = @Sendable (YapDatabaseReadWriteTransaction) -> Void

/// A value passed to a modify hook: either the value being written, or the stored value,
/// read from the transaction only when asked for (`realObject`). Valid only during the hook.
public final class YapProxyObject {
    private var loaded: Bool
    private var value: Any?
    private var loader: (() -> Any?)?

    /// An empty proxy (no value, loaded).
    public init() {
        loaded = true
    }

    init(value: Any?) {
        loaded = true
        self.value = value
    }

    init(loader: @escaping () -> Any?) {
        loaded = false
        self.loader = loader
    }

    /// Whether the value is at hand (true for values being written; false for a stored value
    /// not read yet).
    public var isRealObjectLoaded: Bool { loaded }

    /// The value (nil for no metadata), read from the transaction on first use.
    public var realObject: Any? {
        if !loaded {
            value = loader?()
            loader = nil
            loaded = true
        }
        return value
    }
}

/// Row hooks: blocks run inside the read-write transaction before and after each row is
/// inserted, changed, touched or removed, and around `removeAllObjectsInAllCollections()`.
/// A hook may read and write through the transaction it gets; what it writes commits with the
/// row, atomically, and is discarded if the transaction rolls back. Register it like any
/// extension: `database.register(hooks, withName: "hooks")`.
///
/// Threading: the properties may be set at any time from any thread (a `Mutex`); a write
/// transaction uses the blocks set when each hook fires.
public final class YapDatabaseHooks: YapDatabaseExtension, @unchecked Sendable {
    struct Blocks: Sendable {
        var allowedCollections: YapWhitelistBlacklist?
        var willModifyRow: YDBHooks_WillModifyRow?
        var didModifyRow: YDBHooks_DidModifyRow?
        var willRemoveRow: YDBHooks_WillRemoveRow?
        var didRemoveRow: YDBHooks_DidRemoveRow?
        var willRemoveAllRows: YDBHooks_WillRemoveAllRows?
        var didRemoveAllRows: YDBHooks_DidRemoveAllRows?
    }
    let blocks = Mutex(Blocks())

    /// Hooks with no blocks set.
    public override init() { super.init() }

    /// The collections whose rows the row hooks are told about (nil: all). The remove-all
    /// hooks are always called.
    public var allowedCollections: YapWhitelistBlacklist? {
        get { self[\.allowedCollections] }
        set { self[\.allowedCollections] = newValue }
    }

    /// Run before `setObject`, `replaceObject`, `replaceMetadata` (not before touches).
    public var willModifyRow: YDBHooks_WillModifyRow? {
        get { self[\.willModifyRow] }
        set { self[\.willModifyRow] = newValue }
    }

    /// Run after `setObject`, `replaceObject`, `replaceMetadata`, and after touches.
    public var didModifyRow: YDBHooks_DidModifyRow? {
        get { self[\.didModifyRow] }
        set { self[\.didModifyRow] = newValue }
    }

    /// Run before each row removed by `removeObject`, `removeObjects`, `removeAllObjects(inCollection:)`.
    public var willRemoveRow: YDBHooks_WillRemoveRow? {
        get { self[\.willRemoveRow] }
        set { self[\.willRemoveRow] = newValue }
    }

    /// Run after each row removed by `removeObject`, `removeObjects`, `removeAllObjects(inCollection:)`.
    public var didRemoveRow: YDBHooks_DidRemoveRow? {
        get { self[\.didRemoveRow] }
        set { self[\.didRemoveRow] = newValue }
    }

    /// Run before `removeAllObjectsInAllCollections()`.
    public var willRemoveAllRows: YDBHooks_WillRemoveAllRows? {
        get { self[\.willRemoveAllRows] }
        set { self[\.willRemoveAllRows] = newValue }
    }

    /// Run after `removeAllObjectsInAllCollections()`.
    public var didRemoveAllRows: YDBHooks_DidRemoveAllRows? {
        get { self[\.didRemoveAllRows] }
        set { self[\.didRemoveAllRows] = newValue }
    }

    /// One block (or the collection filter), read or set under the lock.
    subscript<T: Sendable>(_ path: WritableKeyPath<Blocks, T> & Sendable) -> T {
        get { blocks.withLock { $0[keyPath: path] } }
        set { blocks.withLock { $0[keyPath: path] = newValue } }
    }

    func isAllowed(_ collection: String) -> Bool { allowedCollections?.isAllowed(collection) ?? true }

    override func makeConnection(name: String, connection: YapDatabaseConnection) -> AnyObject? {
        YapDatabaseHooksConnection(parent: self)
    }

    override func makeTransaction(name: String, extensionConnection: AnyObject?, transaction: YapDatabaseReadTransaction) -> AnyObject? {
        YapDatabaseHooksTransaction()
    }
}

/// The hooks' per-connection object: `connection.ext(name) as? YapDatabaseHooksConnection`.
public final class YapDatabaseHooksConnection {
    /// The hooks extension.
    public let parent: YapDatabaseHooks

    init(parent: YapDatabaseHooks) { self.parent = parent }
}

/// The hooks' per-transaction object: `transaction.ext(name) as? YapDatabaseHooksTransaction`
/// (it has nothing to offer; the hooks run by themselves).
public final class YapDatabaseHooksTransaction {
    init() {}
}
