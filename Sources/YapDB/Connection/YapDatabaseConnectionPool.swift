import Foundation
import Synchronization

/// A set of connections that spreads work: `connection()` returns an idle pooled connection
/// if there is one, else a new one while under `connectionLimit`, else the pooled connection
/// with the fewest pending transactions.
///
/// Threading: every member may be used from any thread; the pool's state sits in one `Mutex`.
public final class YapDatabaseConnectionPool: Sendable {
    /// The database the pool's connections belong to.
    public let database: YapDatabase
    /// The settings new pooled connections start with.
    public let connectionDefaults: YapDatabaseConnectionConfig

    struct State {
        var connections: [YapDatabaseConnection] = []
        var limit = YapDatabaseConnectionPool.defaultLimit
        var didCreate: (@Sendable (YapDatabaseConnection) -> Void)?
    }
    let state = Mutex(State())

    static let defaultLimit = 3

    /// A pool for `database`, starting empty.
    public init(database: YapDatabase) {
        self.database = database
        self.connectionDefaults = database.connectionDefaults.copy()
    }

    /// The most connections the pool makes (3 by default; setting 0 restores 3).
    /// `UInt`, as Swift imports YapDatabase's `NSUInteger`.
    public var connectionLimit: UInt {
        get { UInt(state.withLock { $0.limit }) }
        set { state.withLock { $0.limit = newValue == 0 ? Self.defaultLimit : Int(clamping: newValue) } }
    }

    /// Called with each connection the pool creates (to configure it).
    public var didCreateNewConnectionBlock: (@Sendable (YapDatabaseConnection) -> Void)? {
        get { state.withLock { $0.didCreate } }
        set { state.withLock { $0.didCreate = newValue } }
    }

    /// A connection to use now (see the type's description for the rule).
    public func connection() -> YapDatabaseConnection {
        let (connection, created, block) = state.withLock { state -> (YapDatabaseConnection, Bool, (@Sendable (YapDatabaseConnection) -> Void)?) in
            if let idle = state.connections.first(where: { $0.pendingTransactionCount == 0 }) {
                return (idle, false, nil)
            }
            if state.connections.count < state.limit {
                let made = database.newConnection(connectionDefaults)
                state.connections.append(made)
                return (made, true, state.didCreate)
            }
            let least = state.connections.min { $0.pendingTransactionCount < $1.pendingTransactionCount }!
            return (least, false, nil)
        }
        if created { block?(connection) }
        return connection
    }
}
