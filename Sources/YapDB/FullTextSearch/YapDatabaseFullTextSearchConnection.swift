import Foundation

/// A connection's handle on a full-text index (`connection.ext(name)`). It holds no state of its
/// own: queries run in transactions (`transaction.ext(name)`).
///
/// Threading: as its connection.
public final class YapDatabaseFullTextSearchConnection {
    /// The index this connection reads.
    public let fullTextSearch: YapDatabaseFullTextSearch
    let name: String
    /// The database connection it belongs to.
    public unowned let databaseConnection: YapDatabaseConnection

    init(fullTextSearch: YapDatabaseFullTextSearch, name: String, connection: YapDatabaseConnection) {
        self.fullTextSearch = fullTextSearch
        self.name = name
        databaseConnection = connection
    }

    /// The parent extension (YapDatabase's `extension` property of extension connections).
    public var `extension`: YapDatabaseFullTextSearch { fullTextSearch }
}
