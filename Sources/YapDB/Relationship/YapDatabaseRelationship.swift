import Foundation
import YapDBEngine

/// Keeps an object graph consistent: edges between rows (and from rows to files) carry delete
/// and notify rules, run when the commit is made (YapDatabase's `YapDatabaseRelationship`).
///
/// ```swift
/// database.register(YapDatabaseRelationship(), withName: "relationships")
/// ```
///
/// Edges come from the objects themselves (`YapDatabaseRelationshipNode`) or are added by hand
/// (`YapDatabaseRelationshipTransaction.add(_:)`). They are stored on index pages beside the
/// rows, keyed by collection and key, and change in the same commit as the rows. See the
/// "Relationships" article for the rules, including the one that surprises: **an edge whose
/// destination row does not exist when the transaction commits counts as an edge whose
/// destination was deleted** — with `.deleteSourceIfDestinationDeleted`, the source is deleted.
///
/// `@unchecked Sendable`: every stored property is immutable (the options are copied into
/// `RelationshipSettings` at init).
open class YapDatabaseRelationship: YapDatabaseExtension, @unchecked Sendable {
    /// The version tag: a different tag at registration gathers every protocol edge again
    /// (manual edges are kept).
    public let versionTag: String
    let storedOptions: RelationshipSettings

    /// A relationship extension with the default options and tag "".
    public override convenience init() { self.init(versionTag: nil, options: nil) }

    /// A relationship extension with the tag `versionTag` (nil: "").
    public convenience init(versionTag: String?) { self.init(versionTag: versionTag, options: nil) }

    /// A relationship extension with the tag `versionTag` (nil: "") and `options` (copied; nil:
    /// the defaults).
    public init(versionTag: String?, options: YapDatabaseRelationshipOptions?) {
        self.versionTag = versionTag ?? ""
        storedOptions = (options ?? YapDatabaseRelationshipOptions()).settings
        super.init()
    }

    /// A copy of the options the extension was made with.
    public var options: YapDatabaseRelationshipOptions { storedOptions.options }

    static func stateKey(_ name: String) -> String { "relationship:" + name }

    /// Whether objects of `collection` are asked for their edges.
    func gathersEdges(in collection: String) -> Bool {
        !storedOptions.disableYapDatabaseRelationshipNodeProtocol && (storedOptions.allowedCollections?.isAllowed(collection) ?? true)
    }

    /// Whether `changeset` changed a row whose object is asked for edges (a remove-all counts):
    /// a commit that did must carry a record, even an empty one, or a replay would gather that
    /// row's edges again from its object. Other rows' changes need none: a row that gives no
    /// edges only loses the edges to it when removed, and that change is in the record.
    func changesGatheredRows(_ changeset: Changeset) -> Bool {
        if changeset.isEmpty { return false }
        if changeset.allKeysRemoved { return true }
        if storedOptions.disableYapDatabaseRelationshipNodeProtocol { return false }
        guard let allowed = storedOptions.allowedCollections else { return true }
        if changeset.removedCollections.contains(where: { allowed.isAllowed($0) }) { return true }
        var found = false
        changeset.forEachChange { key, _ in
            if !found && allowed.isAllowed(key.collection) { found = true }
        }
        return found
    }

    /// The extension transaction of `name` in `transaction` (made once per transaction; also
    /// while registering, before `transaction.ext(name)` knows the name).
    func relationshipTransaction(_ name: String, _ transaction: YapDatabaseReadWriteTransaction) -> YapDatabaseRelationshipTransaction? {
        if let existing = transaction.extensionTransactions[name] { return existing as? YapDatabaseRelationshipTransaction }
        let made = YapDatabaseRelationshipTransaction(relationship: self, name: name, transaction: transaction)
        transaction.extensionTransactions[name] = made
        return made
    }

    // MARK: Registration

    override func prepare(name: String, transaction: YapDatabaseReadWriteTransaction) -> Bool {
        let key = Self.stateKey(name)
        if let existing = transaction.extensionState(key) as? RelationshipState, existing.versionTag == versionTag {
            return true
        }
        let keydir = transaction.keydir
        let engine = transaction.connection.database.engine
        var state: RelationshipState
        var regather = true
        // Nothing of the log was replayed into the state: its record then starts with "every
        // edge removed", so that a replay gives the same trees whatever came before.
        var startsEmpty = false
        // The edge records of the commits since the roots (or, with no roots, since the newest
        // checkpoint), replayed in commit order, and the rows changed after the last of them.
        var catchUp: ExtensionCatchUp?
        if let claimed = engine.claimExtensionRoots(key, acceptingLostRowChanges: true) {
            catchUp = claimed.catchUp
            if let stored = RelationshipState(claimed: claimed) {
                state = stored
                // Rows changed that are no longer listed: every protocol edge is gathered again.
                regather = stored.versionTag != versionTag || claimed.catchUp.rowChangesLost
            } else {
                YapDatabaseLogging.log(.error, "relationship \(name): its stored roots do not decode; gathering its edges again")
                state = RelationshipState(versionTag: versionTag, emptyLike: keydir)
            }
        } else if let stored = transaction.extensionState(key) as? RelationshipState {
            state = stored
        } else {
            state = RelationshipState(versionTag: versionTag, emptyLike: keydir)
            catchUp = engine.claimExtensionRecords(key)
            // Records with no roots start from empty (the first is a registration's): exact.
            regather = catchUp.map { $0.records.isEmpty || $0.rowChangesLost } ?? true
            startsEmpty = catchUp?.records.isEmpty ?? true
        }
        if let records = catchUp?.records, !records.isEmpty {
            do throws(EngineError) {
                if try RelationshipEdgeLog.replay(records, into: &state) { regather = true }
            } catch {
                YapDatabaseLogging.log(.error, "relationship \(name): an edge record in the log does not decode (\(error)); "
                                       + "starting empty, manual edges are lost")
                state = RelationshipState(versionTag: versionTag, emptyLike: keydir)
                regather = true
                startsEmpty = true
            }
        }
        state.versionTag = versionTag
        state.changeLog = RelationshipEdgeLog()
        if startsEmpty { state.changeLog.removedEverything() }
        transaction.setExtensionState(state, forKey: key)
        transaction.markChanged()
        guard let ext = relationshipTransaction(name, transaction) else { return false }
        do throws(EngineError) {
            if regather {
                try ext.regatherAllProtocolEdges()
                // Manual edges whose rows were removed while the extension was not registered
                // go, as the rows did.
                try ext.dropEdgesWithMissingEnds()
            } else if let catchUp, !catchUp.isEmpty {
                try ext.catchUp(catchUp)
            } else if catchUp != nil {
                // The trees describe the rows as they are: no commit needed.
                transaction.publishExtensionsWithoutCommit()
                return true
            }
        } catch {
            YapDatabaseLogging.log(.error, "relationship \(name) could not be built: \(error)")
            return false
        }
        // The registration's own record: what it changed, even nothing, so that the rows
        // changed before it are covered (docs/format.md §11).
        return ext.appendEdgeRecord(evenIfEmpty: true)
    }

    override func dropState(name: String, transaction: YapDatabaseReadWriteTransaction) {
        let key = Self.stateKey(name)
        (transaction.extensionTransactions[name] as? YapDatabaseRelationshipTransaction)?.dropPendingTreeChanges()
        if transaction.extensionState(key) != nil {
            // A reopen must not replay this extension's earlier edge records onto roots of a
            // checkpoint written before this commit: the record says every edge is gone, and
            // that the next registration gathers them from the rows.
            var reset = RelationshipEdgeLog()
            reset.removedEverything()
            reset.dropped = true
            do throws(EngineError) {
                try transaction.appendExtensionData(name: key, payload: reset.encoded())
            } catch {
                transaction.fail(YapDatabaseError(error))
            }
        }
        transaction.setExtensionState(nil, forKey: key)
        transaction.markChanged()
    }

    override func makeConnection(name: String, connection: YapDatabaseConnection) -> AnyObject? {
        YapDatabaseRelationshipConnection(relationship: self, name: name, connection: connection)
    }

    override func makeTransaction(name: String, extensionConnection: AnyObject?, transaction: YapDatabaseReadTransaction) -> AnyObject? {
        YapDatabaseRelationshipTransaction(relationship: self, name: name, transaction: transaction)
    }

    // MARK: Row hooks

    override func didChangeRow(name: String, collection: String, key: String, change: RowChange,
                               transaction: YapDatabaseReadWriteTransaction) {
        guard change.isInsert || change.invoke.contains(.ifObjectModified) else { return }
        relationshipTransaction(name, transaction)?.rowWritten(CollectionKeyPair(collection: collection, key: key),
                                                              isInsert: change.isInsert)
    }

    override func willRemoveRow(name: String, collection: String, key: String, transaction: YapDatabaseReadWriteTransaction) {
        relationshipTransaction(name, transaction)?.nodeRemoved(CollectionKeyPair(collection: collection, key: key))
    }

    override func willRemoveCollection(name: String, collection: String, transaction: YapDatabaseReadWriteTransaction) {
        guard let ext = relationshipTransaction(name, transaction) else { return }
        transaction.forEachKey(inCollection: collection) { key, _ in
            ext.nodeRemoved(CollectionKeyPair(collection: collection, key: key))
            return true
        }
    }

    override func willRemoveAll(name: String, transaction: YapDatabaseReadWriteTransaction) {
        relationshipTransaction(name, transaction)?.allNodesRemoved()
    }

    /// Runs the rules, then writes the transaction's net edge change into the commit (an
    /// extension data record, docs/format.md §3 and §11): for every commit that changed an edge
    /// or a row it gathers edges from, so that a crash leaves each commit's rows and edges all
    /// there or not at all, and a replay rebuilds the edges exactly as the rules left them.
    override func willCommit(name: String, transaction: YapDatabaseReadWriteTransaction) {
        let ext = transaction.extensionTransactions[name] as? YapDatabaseRelationshipTransaction
        ext?.flush()
        guard transaction.pendingFailure == nil else { return }
        let rowsChanged = changesGatheredRows(transaction.rowChangesSoFar)
        if let ext {
            _ = ext.appendEdgeRecord(evenIfEmpty: rowsChanged)
        } else if rowsChanged {
            // No hook made the extension's transaction (rows it does not read): an empty
            // record still says the commit is covered.
            _ = relationshipTransaction(name, transaction)?.appendEdgeRecord(evenIfEmpty: true)
        }
    }

    // MARK: Verification

    override func verifyState(name: String, transaction: YapDatabaseReadTransaction) -> [String] {
        guard let state = transaction.extensionState(Self.stateKey(name)) as? RelationshipState else {
            return ["relationship \(name): no stored edges"]
        }
        return RelationshipVerifier(relationship: self, state: state, transaction: transaction).problems()
            .map { "relationship \(name): \($0)" }
    }
}

/// The per-connection object of a relationship extension (`connection.ext(name)`); it holds no
/// state of its own.
public final class YapDatabaseRelationshipConnection {
    /// The extension.
    public let relationship: YapDatabaseRelationship
    let name: String
    /// The database connection.
    public unowned let databaseConnection: YapDatabaseConnection

    init(relationship: YapDatabaseRelationship, name: String, connection: YapDatabaseConnection) {
        self.relationship = relationship
        self.name = name
        databaseConnection = connection
    }
}
