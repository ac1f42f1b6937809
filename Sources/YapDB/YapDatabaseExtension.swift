import Foundation
import Synchronization

/// The base class of database extensions (such as views). An extension is registered under a
/// name; each connection gets an extension connection (`connection.ext(name)`) and each
/// transaction an extension transaction (`transaction.ext(name)`), and the extension is told of
/// every change inside the read-write transaction that makes it, so it commits with the rows.
///
/// The hooks are internal: the extensions YapDB ships subclass this type.
///
/// `@unchecked Sendable`: the base class holds no state; each subclass guards its own.
open class YapDatabaseExtension: @unchecked Sendable {
    /// An extension; subclasses pass their configuration to their own initializers.
    public init() {}

    /// Called once, inside the registering read-write transaction: build or load the
    /// extension's state. Return false to refuse registration.
    func prepare(name: String, transaction: YapDatabaseReadWriteTransaction) -> Bool { true }

    /// Called inside the unregistering read-write transaction: drop the extension's state.
    func dropState(name: String, transaction: YapDatabaseReadWriteTransaction) {}

    /// The per-connection object `connection.ext(name)` returns (nil: none).
    func makeConnection(name: String, connection: YapDatabaseConnection) -> AnyObject? { nil }

    /// The per-transaction object `transaction.ext(name)` returns (nil: none).
    func makeTransaction(name: String, extensionConnection: AnyObject?, transaction: YapDatabaseReadTransaction) -> AnyObject? { nil }

    /// A row's object or metadata is about to change (it exists; its old values are readable).
    /// `change` says what will change (never an insert), so the extension can tell which of its
    /// blocks will run again (`YapDatabaseBlockInvoke`).
    func willChangeRow(name: String, collection: String, key: String, change: RowChange,
                       transaction: YapDatabaseReadWriteTransaction) {}

    /// A row was inserted or its object or metadata changed (after the change); `change` says
    /// which.
    func didChangeRow(name: String, collection: String, key: String, change: RowChange,
                      transaction: YapDatabaseReadWriteTransaction) {}

    /// A row is about to be removed.
    func willRemoveRow(name: String, collection: String, key: String, transaction: YapDatabaseReadWriteTransaction) {}

    /// Every row of `collection` is about to be removed.
    func willRemoveCollection(name: String, collection: String, transaction: YapDatabaseReadWriteTransaction) {}

    /// Every row is about to be removed.
    func willRemoveAll(name: String, transaction: YapDatabaseReadWriteTransaction) {}

    /// A row was touched (no data changed); `change` says whether its object, its metadata or
    /// both.
    func didTouchRow(name: String, collection: String, key: String, change: RowChange,
                     transaction: YapDatabaseReadWriteTransaction) {}

    /// The read-write transaction's block returned and it is about to commit: finish pending
    /// work (the relationship extension runs its rules here). Called once per extension, in
    /// registration order; rows it writes or removes go through the normal path, so every
    /// extension hears of them. Not called on rollback.
    func willCommit(name: String, transaction: YapDatabaseReadWriteTransaction) {}

    /// Checks the extension's stored state in `transaction`'s snapshot against a rebuild from
    /// its blocks (`YapDatabase.verify()`); returns one line per problem.
    func verifyState(name: String, transaction: YapDatabaseReadTransaction) -> [String] { [] }
}

/// The registered extensions, by name. Threading: one `Mutex`.
final class ExtensionRegistry: Sendable {
    private let state = Mutex<[(name: String, ext: YapDatabaseExtension)]>([])

    var all: [(name: String, ext: YapDatabaseExtension)] { state.withLock { $0 } }

    func extensionNamed(_ name: String) -> YapDatabaseExtension? {
        state.withLock { list in list.first { $0.name == name }?.ext }
    }

    func add(_ ext: YapDatabaseExtension, name: String) -> Bool {
        state.withLock { list in
            guard !list.contains(where: { $0.name == name }) else { return false }
            list.append((name, ext))
            return true
        }
    }

    @discardableResult
    func remove(_ name: String) -> YapDatabaseExtension? {
        state.withLock { list in
            guard let index = list.firstIndex(where: { $0.name == name }) else { return nil }
            return list.remove(at: index).ext
        }
    }
}

extension YapDatabase {
    /// Registers `ext` under `name`, preparing it in a read-write transaction. Returns false
    /// when the name is taken or the extension refuses.
    @discardableResult
    public func register(_ ext: YapDatabaseExtension, withName name: String) -> Bool {
        register(ext, withName: name, config: nil)
    }

    /// Registers `ext` under `name`, preparing it on a connection made with `config`.
    @discardableResult
    public func register(_ ext: YapDatabaseExtension, withName name: String, config: YapDatabaseConnectionConfig?) -> Bool {
        guard extensionRegistry.extensionNamed(name) == nil else { return false }
        let connection = newConnection(config)
        var accepted = false
        do {
            try connection.write { tx in
                accepted = ext.prepare(name: name, transaction: tx)
                if accepted {
                    accepted = extensionRegistry.add(ext, name: name)
                }
                if !accepted { tx.rollback() }
            }
        } catch {
            extensionRegistry.remove(name)
            YapDatabaseLogging.log(.error, "registering extension \(name) failed: \(error)")
            return false
        }
        return accepted
    }

    /// Registers `ext` in the background; `completionBlock` gets the result on
    /// `completionQueue` (default: main on Apple platforms, a private serial queue elsewhere).
    public func asyncRegister(_ ext: YapDatabaseExtension, withName name: String, completionQueue: DispatchQueue? = nil,
                              completionBlock: (@Sendable (Bool) -> Void)? = nil) {
        let box = ExtensionBox(ext)
        let queue = completionQueue ?? defaultCompletionQueueForUser
        DispatchQueue.global().async { [self] in
            let ok = register(box.ext, withName: name)
            if let completionBlock { queue.async { completionBlock(ok) } }
        }
    }

    /// Unregisters the extension named `name` and drops its state (and, first, the filtered
    /// views of it).
    public func unregisterExtension(withName name: String) {
        guard let ext = extensionRegistry.extensionNamed(name) else { return }
        for dependent in filteredViewNames(dependingOn: name) { unregisterExtension(withName: dependent) }
        let connection = newConnection()
        try? connection.write { tx in
            ext.dropState(name: name, transaction: tx)
            extensionRegistry.remove(name)
        }
    }

    /// The extension registered under `name`, if any.
    public func registeredExtension(_ name: String) -> YapDatabaseExtension? {
        extensionRegistry.extensionNamed(name)
    }

    /// Every registered extension by name.
    public func registeredExtensions() -> [String: YapDatabaseExtension] {
        Dictionary(extensionRegistry.all.map { ($0.name, $0.ext) }, uniquingKeysWith: { a, _ in a })
    }

    /// Where completion blocks run when the caller names no queue.
    var defaultCompletionQueueForUser: DispatchQueue {
        #if canImport(Darwin)
        return .main
        #else
        return defaultCompletionQueue
        #endif
    }
}

/// Moves an extension into a background registration. `@unchecked Sendable`: extensions are
/// `Sendable` by contract (the base class is), the box only carries the reference.
final class ExtensionBox: @unchecked Sendable {
    let ext: YapDatabaseExtension
    init(_ ext: YapDatabaseExtension) { self.ext = ext }
}
