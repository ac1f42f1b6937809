import Foundation

/// Reading a filtered view inside a transaction:
/// `transaction.ext(name) as? YapDatabaseFilteredViewTransaction`. Everything a view transaction
/// offers (counts, rows by index, iteration, binary searches over the parent's sorting), plus
/// `setFiltering(_:versionTag:)` in read-write transactions. Valid only inside the
/// transaction's block.
public final class YapDatabaseFilteredViewTransaction: YapDatabaseViewTransaction {
    /// The filtered view this transaction reads.
    public let filteredView: YapDatabaseFilteredView

    init(filteredView: YapDatabaseFilteredView, root: YapDatabaseAutoView, name: String,
         viewConnection: YapDatabaseViewConnection?, transaction: YapDatabaseReadTransaction) {
        self.filteredView = filteredView
        // Reads search the filtered view's own rows with the root view's sorting, which orders
        // every view of the chain.
        super.init(view: root, name: name, viewConnection: viewConnection, transaction: transaction)
    }

    /// Replaces the filter and filters the parent again, in this transaction; the views
    /// filtering this one follow. Observers' change sets list only the rows that appeared,
    /// disappeared or moved. As in YapDatabase, nothing happens unless `versionTag` differs from
    /// the view's current tag.
    ///
    /// - Parameters:
    ///   - filtering: the new filter.
    ///   - versionTag: the new tag (nil means "").
    /// - Precondition: called in a read-write transaction (misuse stops the program).
    public func setFiltering(_ filtering: YapDatabaseViewFiltering, versionTag: String?) {
        guard let writeTransaction = transaction as? YapDatabaseReadWriteTransaction else {
            preconditionFailure("YapDatabaseFilteredViewTransaction misuse: setFiltering(_:versionTag:) called in a read-only transaction")
        }
        let tag = versionTag ?? ""
        let changed = filteredView.config.withLock { config in
            guard config.versionTag != tag else { return false }
            config = .init(filtering: filtering, versionTag: tag)
            return true
        }
        if changed { filteredView.repopulate(name: name, transaction: writeTransaction) }
    }
}

/// A filtered view's per-connection object: `connection.ext(name) as? YapDatabaseFilteredViewConnection`
/// (mappings and `getChanges(forNotifications:withMappings:)` as for any view).
public final class YapDatabaseFilteredViewConnection: YapDatabaseViewConnection {
    /// The filtered view this connection reads.
    public let filteredView: YapDatabaseFilteredView

    init(filteredView: YapDatabaseFilteredView, root: YapDatabaseAutoView, name: String, connection: YapDatabaseConnection) {
        self.filteredView = filteredView
        super.init(view: root, name: name, connection: connection)
    }
}

extension YapDatabaseReadTransaction {
    /// The transaction of the filtered view registered as `extensionName`, or nil when no
    /// filtered view has that name.
    public func filteredViewTransaction(_ extensionName: String) -> YapDatabaseFilteredViewTransaction? {
        ext(extensionName) as? YapDatabaseFilteredViewTransaction
    }
}
