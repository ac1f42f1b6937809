import Foundation
import Synchronization
import YapDBEngine
#if canImport(Glibc)
import Glibc
#endif

/// A connection to a database: it runs transactions one at a time and keeps its own caches of
/// decoded objects and metadata. Many connections read in parallel; one read-write transaction
/// runs at a time per database.
///
/// A connection's caches always match the snapshot it reads: before each transaction it applies
/// every changeset it missed, in commit order.
///
/// Threading: `@unchecked Sendable`. Transactions run on `queue` (a serial queue) one at a
/// time; the transaction-time state (caches, `cacheSnapshot`, the long-lived read, extension
/// connections) is touched only there. Settings that any thread may change sit in `settings`
/// (a `Mutex`) and atomics.
public final class YapDatabaseConnection: @unchecked Sendable {
    /// The database this connection belongs to.
    public let database: YapDatabase
    let id: UInt64
    let queue: DispatchQueue
    let consumerID: UInt64

    // Transaction-time state (on `queue` only).
    /// The registrations this connection's current (or last) transaction uses; see
    /// ``refreshSerialization()``.
    var serialization: SerializationRegistry.Snapshot
    var serializationVersion: UInt64
    var cacheSnapshot: UInt64
    var objectCache: ObjectCache
    var metadataCache: ObjectCache
    var objectCacheOn = true
    var metadataCacheOn = true
    var appliedSettings = 0
    var longLived: SnapshotLease?
    var extensionConnections: [String: AnyObject] = [:]

    // Any-thread state.
    struct Settings {
        var name: String?
        var objectCacheEnabled: Bool
        var objectCacheLimit: Int
        var metadataCacheEnabled: Bool
        var metadataCacheLimit: Int
        var permitted: YapDatabasePermittedTransactions = .anyTransaction
        var exceptionsForImplicitEnd = false
        var version = 1
    }
    let settings: Mutex<Settings>
    /// `settings.version`, readable without the lock: a transaction start compares it with
    /// `appliedSettings` and takes the lock only when the settings changed.
    let settingsVersion = Atomic<Int>(1)
    /// `settings.permitted`'s bits, readable without the lock (every transaction start checks them).
    let permittedBits = Atomic<UInt>(YapDatabasePermittedTransactions.anyTransaction.rawValue)
    let pending = Atomic<Int>(0)
    let reflectedSnapshot: Atomic<UInt64>
    /// The thread running this connection's transaction right now (0 when none): a sync
    /// transaction started on that thread again would deadlock.
    let activeThread = Atomic<UInt>(0)
    /// Held by whatever runs this connection's transaction-time work: a block on `queue`, or a
    /// synchronous transaction that found the connection idle and runs on its caller's thread
    /// (`onQueue`). It is what keeps that work one at a time now that not all of it is on the
    /// queue.
    let exclusive = Mutex<Void>(())

    init(database: YapDatabase, config: YapDatabaseConnectionConfig) {
        self.database = database
        self.id = database.nextConnectionID.add(1, ordering: .relaxed).oldValue
        self.queue = DispatchQueue(label: "YapDB.connection.\(id)")
        (self.serialization, self.serializationVersion) = database.registry.versionedSnapshot
        let start = database.engine.snapshot().number
        self.cacheSnapshot = start
        self.reflectedSnapshot = Atomic(start)
        self.consumerID = database.engine.registry.addConsumer(at: start)
        let values = config.values
        self.objectCache = ObjectCache(limit: values.objectCacheLimit)
        self.metadataCache = ObjectCache(limit: values.metadataCacheLimit)
        self.objectCacheOn = values.objectCacheEnabled
        self.metadataCacheOn = values.metadataCacheEnabled
        self.settings = Mutex(Settings(objectCacheEnabled: values.objectCacheEnabled, objectCacheLimit: values.objectCacheLimit,
                                       metadataCacheEnabled: values.metadataCacheEnabled, metadataCacheLimit: values.metadataCacheLimit))
        self.appliedSettings = 1
    }

    deinit {
        database.engine.registry.removeConsumer(consumerID)
    }

    // MARK: Properties

    /// An optional name, for debugging.
    public var name: String? {
        get { settings.withLock { $0.name } }
        set { settings.withLock { $0.name = newValue } }
    }

    /// The snapshot this connection's caches and last transaction reflect.
    public var snapshot: UInt64 { reflectedSnapshot.load(ordering: .acquiring) }

    /// Transactions queued or running on this connection (`UInt64`, as YapDatabase's `uint64_t`).
    public var pendingTransactionCount: UInt64 { UInt64(max(0, pending.load(ordering: .relaxed))) }

    /// Whether decoded objects are cached (true by default). Disabling drops the cache.
    public var objectCacheEnabled: Bool {
        get { settings.withLock { $0.objectCacheEnabled } }
        set { changeSettings { $0.objectCacheEnabled = newValue } }
    }

    /// The most objects cached (250 by default; 0 = unlimited). Lowering it evicts at once.
    /// `UInt`, as Swift imports YapDatabase's `NSUInteger` (limits above `Int.max` mean unlimited).
    public var objectCacheLimit: UInt {
        get { UInt(settings.withLock { $0.objectCacheLimit }) }
        set { changeSettings { $0.objectCacheLimit = Int(clamping: newValue) } }
    }

    /// Whether decoded metadata is cached (true by default). Disabling drops the cache.
    public var metadataCacheEnabled: Bool {
        get { settings.withLock { $0.metadataCacheEnabled } }
        set { changeSettings { $0.metadataCacheEnabled = newValue } }
    }

    /// The most metadata values cached (250 by default; 0 = unlimited), as `UInt`.
    public var metadataCacheLimit: UInt {
        get { UInt(settings.withLock { $0.metadataCacheLimit }) }
        set { changeSettings { $0.metadataCacheLimit = Int(clamping: newValue) } }
    }

    /// Which kinds of transaction this connection allows; a violation stops the program.
    public var permittedTransactions: YapDatabasePermittedTransactions {
        get { settings.withLock { $0.permitted } }
        set {
            settings.withLock { s in
                s.permitted = newValue
                permittedBits.store(newValue.rawValue, ordering: .releasing)
            }
        }
    }

    /// Applies a settings change now when called inside this connection's transaction (on its
    /// queue), otherwise at the start of the next transaction.
    func changeSettings(_ change: (inout Settings) -> Void) {
        settings.withLock { s in
            change(&s)
            s.version += 1
            settingsVersion.store(s.version, ordering: .releasing)
        }
        if activeThread.load(ordering: .acquiring) == Self.currentThread { applySettings() }
    }

    /// Brings the caches in line with the settings (on the queue).
    func applySettings() {
        guard settingsVersion.load(ordering: .acquiring) != appliedSettings else { return }
        let s = settings.withLock { $0 }
        guard s.version != appliedSettings else { return }
        appliedSettings = s.version
        if !s.objectCacheEnabled { objectCache.removeAll() }
        if !s.metadataCacheEnabled { metadataCache.removeAll() }
        objectCacheOn = s.objectCacheEnabled
        metadataCacheOn = s.metadataCacheEnabled
        objectCache.limit = s.objectCacheLimit
        metadataCache.limit = s.metadataCacheLimit
    }

    /// Takes the newest registrations if any were made since the last transaction (on the
    /// queue, before a transaction or a cache sync). Costs one atomic load when nothing changed.
    func refreshSerialization() {
        if let (snapshot, version) = database.registry.current(ifNewerThan: serializationVersion) {
            serialization = snapshot
            serializationVersion = version
        }
    }

    /// Frees memory: `.caches` empties the object and metadata caches; `.internal` drops the
    /// extension connections (rebuilt on demand).
    public func flush(with flags: YapDatabaseConnectionFlushMemoryFlags) {
        let work = { [self] in
            if flags.contains(.caches) {
                objectCache.removeAll()
                metadataCache.removeAll()
            }
            if flags.contains(.internal) { extensionConnections.removeAll() }
        }
        if activeThread.load(ordering: .acquiring) == Self.currentThread { work() } else { onQueueExclusively(work) }
    }

    /// `flush(with:)` under YapDatabase's name.
    public func flushMemory(with flags: YapDatabaseConnectionFlushMemoryFlags) { flush(with: flags) }

    // MARK: Extensions

    /// The extension connection of the extension registered as `name` (e.g. a view
    /// connection), or nil. Same as `ext(_:)`.
    public func `extension`(_ name: String) -> Any? { ext(name) }

    /// The extension connection of the extension registered as `name` (e.g. a view
    /// connection), or nil.
    public func ext(_ name: String) -> Any? {
        let work = { [self] () -> AnyObject? in extensionConnection(name) }
        if activeThread.load(ordering: .acquiring) == Self.currentThread { return work() }
        return onQueueExclusively(work)
    }

    func extensionConnection(_ name: String) -> AnyObject? {
        if let existing = extensionConnections[name] { return existing }
        guard let ext = database.extensionRegistry.extensionNamed(name),
              let made = ext.makeConnection(name: name, connection: self) else { return nil }
        extensionConnections[name] = made
        return made
    }

    // MARK: Threads

    static var currentThread: UInt { UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(pthreadSelfPointer()))) }
}

/// The calling thread's identity as a pointer-sized value.
func pthreadSelfPointer() -> UnsafeRawPointer? {
    #if canImport(Glibc)
    return UnsafeRawPointer(bitPattern: UInt(pthread_self()))
    #else
    return UnsafeRawPointer(pthread_self())
    #endif
}
