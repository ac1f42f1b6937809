import Foundation

/// A connection's handle on a secondary index (`connection.ext(name)`). It holds no state of
/// its own: queries run in transactions (`transaction.ext(name)`).
///
/// Threading: as its connection.
public final class YapDatabaseSecondaryIndexConnection {
    /// The index this connection reads.
    public let secondaryIndex: YapDatabaseSecondaryIndex
    let name: String
    /// The database connection it belongs to.
    public unowned let databaseConnection: YapDatabaseConnection

    init(index: YapDatabaseSecondaryIndex, name: String, connection: YapDatabaseConnection) {
        secondaryIndex = index
        self.name = name
        databaseConnection = connection
    }

    /// The parent extension (YapDatabase's `extension` property of extension connections).
    public var `extension`: YapDatabaseSecondaryIndex { secondaryIndex }
}
