import Synchronization

/// The initial cache settings of a new connection (YapDatabase's `YapDatabaseConnectionConfig`).
///
/// `database.connectionDefaults` holds one; `newConnection(_:)` takes one. A connection keeps a
/// copy, so changing a config afterwards does not change existing connections.
///
/// Threading: every property is guarded by a `Mutex` (`storage`); the class is `Sendable`
/// (checked by the compiler, no `@unchecked`).
public final class YapDatabaseConnectionConfig: Sendable {
    /// The plain values behind the properties; what a connection keeps.
    struct Values: Sendable, Equatable {
        var objectCacheEnabled = true
        var objectCacheLimit = 250
        var metadataCacheEnabled = true
        var metadataCacheLimit = 250
    }

    private let storage: Mutex<Values>

    /// The defaults: both caches enabled, 250 entries each.
    public init() { storage = Mutex(Values()) }

    /// A config holding `values`.
    init(values: Values) { storage = Mutex(values) }

    /// A snapshot of every property, taken under the lock.
    var values: Values { storage.withLock { $0 } }

    /// An independent copy: changing one does not change the other.
    public func copy() -> YapDatabaseConnectionConfig { YapDatabaseConnectionConfig(values: values) }

    /// Whether the connection caches deserialized objects. Default true.
    public var objectCacheEnabled: Bool {
        get { storage.withLock { $0.objectCacheEnabled } }
        set { storage.withLock { $0.objectCacheEnabled = newValue } }
    }

    /// The object cache's capacity in entries (a strict LRU by count); 0 means unlimited.
    /// Default 250. `UInt`, as Swift imports YapDatabase's `NSUInteger`.
    public var objectCacheLimit: UInt {
        get { UInt(storage.withLock { $0.objectCacheLimit }) }
        set { storage.withLock { $0.objectCacheLimit = Int(clamping: newValue) } }
    }

    /// Whether the connection caches deserialized metadata. Default true.
    public var metadataCacheEnabled: Bool {
        get { storage.withLock { $0.metadataCacheEnabled } }
        set { storage.withLock { $0.metadataCacheEnabled = newValue } }
    }

    /// The metadata cache's capacity in entries; 0 means unlimited. Default 250 (`UInt`).
    public var metadataCacheLimit: UInt {
        get { UInt(storage.withLock { $0.metadataCacheLimit }) }
        set { storage.withLock { $0.metadataCacheLimit = Int(clamping: newValue) } }
    }
}
