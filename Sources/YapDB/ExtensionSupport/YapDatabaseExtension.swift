import Foundation
import Synchronization
import YapDBEngine

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
    /// when the name is taken or the extension refuses (it logs why).
    ///
    /// Registrations run one at a time, in the order they were made, as on YapDatabase's
    /// serial queue: a `register` made after `asyncRegister` calls waits until they are done,
    /// so an extension may depend on one registered asynchronously just before it.
    @discardableResult
    public func register(_ ext: YapDatabaseExtension, withName name: String) -> Bool {
        register(ext, withName: name, config: nil)
    }

    /// Registers `ext` under `name`, preparing it on a connection made with `config`; in turn
    /// with the other registrations (see `register(_:withName:)`).
    @discardableResult
    public func register(_ ext: YapDatabaseExtension, withName name: String, config: YapDatabaseConnectionConfig?) -> Bool {
        inRegistrationTurn { registerNow(ext, withName: name, config: config) }
    }

    /// Registers `ext` in the background, after every registration made before it;
    /// `completionBlock` gets the result on `completionQueue` (default: `notificationQueue`,
    /// the main queue on Apple platforms).
    public func asyncRegister(_ ext: YapDatabaseExtension, withName name: String, completionQueue: DispatchQueue? = nil,
                              completionBlock: (@Sendable (Bool) -> Void)? = nil) {
        asyncRegister(ext, withName: name, config: nil, completionQueue: completionQueue, completionBlock: completionBlock)
    }

    /// Unregisters the extension named `name` and drops its state (and, first, the extensions
    /// that depend on it: the filtered views of it, the search results views of it or of its
    /// full-text index); in turn with the registrations made before it.
    public func unregisterExtension(withName name: String) {
        inRegistrationTurn { unregisterNow(name) }
    }

    /// Runs `work` on the registration queue and waits for it, or inline when already there
    /// (a registration that registers another).
    func inRegistrationTurn<T>(_ work: () -> T) -> T {
        if DispatchQueue.getSpecific(key: Self.registrationQueueKey) == ObjectIdentifier(self) { return work() }
        return registrationQueue.sync(execute: work)
    }

    /// The registration itself (on the registration queue).
    private func registerNow(_ ext: YapDatabaseExtension, withName name: String, config: YapDatabaseConnectionConfig?) -> Bool {
        guard extensionRegistry.extensionNamed(name) == nil else {
            YapDatabaseLogging.log(.error, "an extension named \(name) is already registered")
            return false
        }
        if engine.sharesProcesses && !(ext is YapDatabaseCrossProcessNotification) && !(ext is YapDatabaseHooks) {
            YapDatabaseLogging.log(.warning, "extension \(name) on a database shared by processes: it does not yet see rows other processes commit")
        }
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

    /// The unregistration itself (on the registration queue).
    private func unregisterNow(_ name: String) {
        guard let ext = extensionRegistry.extensionNamed(name) else {
            // Registered in an earlier session and not this one: what the database kept for it
            // (its trees, a relationship's manual edges) goes, for good once a checkpoint
            // records it (written here; if that fails, the next one does).
            if engine.dropUnclaimedExtension(named: name) {
                do throws(EngineError) { try engine.checkpoint() } catch {
                    YapDatabaseLogging.log(.warning, "unregistering \(name): the checkpoint that drops its stored state failed: \(error)")
                }
            }
            return
        }
        for dependent in filteredViewNames(dependingOn: name) + searchResultsViewNames(dependingOn: name) { unregisterNow(dependent) }
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

    /// The names of the extensions whose stored state the database held when it was opened —
    /// typically those registered the last time the app ran — for cleanup and upgrade tasks
    /// (YapDatabase's `previouslyRegisteredExtensionNames`). Only extensions that store state
    /// are listed (views, filtered views, secondary indexes, full-text search, relationships;
    /// not hooks or views with `isPersistent = false`), sorted.
    ///
    /// Unlike YapDatabase, YapDB does not drop the state of an extension that is not registered
    /// again before the first read-write transaction: it keeps it (through checkpoints) until the
    /// extension registers — then it catches up, and a relationship keeps its manual edges — or
    /// until `unregisterExtension(withName:)` names it. So the list does not change during the
    /// session; it is empty (never nil) for a new database.
    public func previouslyRegisteredExtensionNames() -> [String]? {
        var names: [String] = []
        for stateName in engine.previousExtensionStates {
            let name = stateName.split(separator: ":", maxSplits: 1).last.map(String.init) ?? stateName
            if !names.contains(name) { names.append(name) }
        }
        return names.sorted()
    }

    /// Where completion blocks run when the caller names no queue: `notificationQueue`, so a
    /// commit's notification is posted before its completion blocks run, as in YapDatabase.
    var defaultCompletionQueueForUser: DispatchQueue { notificationQueue }
}

/// Moves an extension into a background registration. `@unchecked Sendable`: extensions are
/// `Sendable` by contract (the base class is), the box only carries the reference.
final class ExtensionBox: @unchecked Sendable {
    let ext: YapDatabaseExtension
    init(_ ext: YapDatabaseExtension) { self.ext = ext }
}
