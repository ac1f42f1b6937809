import Foundation
import YapDBEngine

/// A transaction's handle on a relationship extension (`transaction.ext(name) as?
/// YapDatabaseRelationshipTransaction`): edge queries, and in a read-write transaction manual
/// edges and `flush()`.
///
/// Reads in a read-write transaction see its own edge changes, and hide the edges of rows it
/// removed; the rules of those removals run at `flush()` or when the transaction commits.
///
/// Threading: valid only inside its transaction's block, on the thread running it.
public final class YapDatabaseRelationshipTransaction {
    let relationship: YapDatabaseRelationship
    let name: String
    let stateKey: String
    /// The database transaction this handle reads through.
    public unowned let databaseTransaction: YapDatabaseReadTransaction

    // Pending work of a read-write transaction, done by `flush()`.
    /// Rows removed, in order (cascades append); `deletedCursor` is the next to process.
    var deletedOrder: [CollectionKeyPair] = []
    var deletedCursor = 0
    /// Where in `deletedOrder` the next check for a run of rows without edges may start: past
    /// the rows a failed check covered, so each row is in at most one failed check.
    var edgeFreeCheckFrom = 0
    /// Rows removed and not written again since (their edges are hidden from reads).
    var deletedSet: Set<CollectionKeyPair> = []
    /// Edges stored in this transaction whose ends are checked at flush (a missing end counts
    /// as deleted).
    var checks: [StoredEdge] = []
    var checkCursor = 0
    /// Removed edges whose rules run at flush, with the reason.
    var pendingRules: [(edge: StoredEdge, reason: YDB_NotifyReason)] = []
    var ruleCursor = 0
    /// Rows plain delete rules named, removed together (`removeGatheredRows`) before any other
    /// rule runs.
    var rowsToRemove: [CollectionKeyPair] = []
    /// Files the rules deleted, removed once the commit is durable.
    var filesToDelete: [URL] = []
    var isFlushing = false
    /// Tree changes queued by written nodes, merged before the trees are next read or changed
    /// (`mergePendingTreeChanges`): each tree's keys, and the edges for the state's change log.
    var pendingBySource: [(key: [UInt8], value: [UInt8]?)] = []
    var pendingByDestination: [(key: [UInt8], value: [UInt8]?)] = []
    var pendingEdges: [(edge: StoredEdge, removed: Bool)] = []

    init(relationship: YapDatabaseRelationship, name: String, transaction: YapDatabaseReadTransaction) {
        self.relationship = relationship
        self.name = name
        stateKey = YapDatabaseRelationship.stateKey(name)
        databaseTransaction = transaction
    }

    var writeTransaction: YapDatabaseReadWriteTransaction? { databaseTransaction as? YapDatabaseReadWriteTransaction }

    /// Whether the transaction calls this extension's row hooks (every read-write transaction
    /// but the one that registers it): then a row the rules remove is recorded by the hook.
    lazy var hearsRowHooks: Bool = writeTransaction?.extensions.contains { $0.name == name && $0.ext === relationship } ?? false

    /// The state as reads see it (queued tree changes merged first).
    var state: RelationshipState? {
        mergePendingTreeChanges()
        return databaseTransaction.extensionState(stateKey) as? RelationshipState
    }

    /// The largest entry the trees hold (nil: no state). Merges nothing.
    var maximumEntrySize: Int? {
        (databaseTransaction.extensionState(stateKey) as? RelationshipState)?.bySource.maximumEntrySize
    }

    /// Runs `body` on the transaction's state (taken out so its trees change in place), then puts
    /// it back. A damaged page fails the transaction. Queued tree changes are merged first.
    func update(_ body: (inout RelationshipState) throws(EngineError) -> Void) {
        mergePendingTreeChanges()
        updateMerged(body)
    }

    /// `update` without merging the queued tree changes first (the merge itself).
    func updateMerged(_ body: (inout RelationshipState) throws(EngineError) -> Void) {
        guard let tx = writeTransaction, var state = tx.extensionState(stateKey) as? RelationshipState else { return }
        tx.setExtensionState(nil, forKey: stateKey)
        do throws(EngineError) {
            try body(&state)
        } catch {
            tx.fail(.corrupted(offset: 0, reason: "relationship \(name): \(error)"))
        }
        tx.setExtensionState(state, forKey: stateKey)
        tx.markChanged()
    }

    /// Reads the state; a damaged page is logged (and, in a read-write transaction, fails it).
    func reading(_ body: (RelationshipState) throws(EngineError) -> Void) {
        guard let state else { return }
        do throws(EngineError) {
            try body(state)
        } catch {
            YapDatabaseLogging.log(.error, "relationship \(name): \(error)")
            writeTransaction?.fail(.corrupted(offset: 0, reason: "relationship \(name): \(error)"))
        }
    }

    func exists(_ pair: CollectionKeyPair) -> Bool {
        databaseTransaction.entry(collection: pair.collection, key: pair.key) != nil
    }

    /// Whether reads hide `edge`: one of its rows was removed in this transaction.
    func isHidden(_ edge: StoredEdge) -> Bool {
        guard !deletedSet.isEmpty else { return false }
        if deletedSet.contains(edge.source) { return true }
        if let destination = edge.destinationNode, deletedSet.contains(destination) { return true }
        return false
    }

    // MARK: Conversions

    /// The public edge of a stored one.
    func publicEdge(_ edge: StoredEdge) -> YapDatabaseRelationshipEdge {
        switch edge.destination {
        case .node(let destination):
            return YapDatabaseRelationshipEdge(name: edge.name, sourceKey: edge.source.key, sourceCollection: edge.source.collection,
                                               destinationKey: destination.key, destinationCollection: destination.collection,
                                               destinationFileURL: nil, rules: edge.rules, isManualEdge: edge.isManual)
        case .file(let bytes):
            let bare = YapDatabaseRelationshipEdge(name: edge.name, sourceKey: edge.source.key, sourceCollection: edge.source.collection,
                                                   destinationKey: nil, destinationCollection: nil, destinationFileURL: nil,
                                                   rules: edge.rules, isManualEdge: edge.isManual)
            let url = relationship.storedOptions.fileURLDeserializer(bare, Data(bytes))
            return YapDatabaseRelationshipEdge(name: edge.name, sourceKey: edge.source.key, sourceCollection: edge.source.collection,
                                               destinationKey: nil, destinationCollection: nil, destinationFileURL: url,
                                               rules: edge.rules, isManualEdge: edge.isManual)
        }
    }

    /// The stored bytes of a file destination (the options' serializer).
    func fileBytes(_ url: URL, name: String?) -> [UInt8]? {
        let probe = YapDatabaseRelationshipEdge(name: name ?? "", sourceKey: nil, sourceCollection: nil, destinationKey: nil,
                                                destinationCollection: nil, destinationFileURL: url, rules: [], isManualEdge: false)
        return relationship.storedOptions.fileURLSerializer(probe).map { Array($0) }
    }

    /// The stored form of `edge` with `source` as its source; nil when it has no destination.
    func storedEdge(_ edge: YapDatabaseRelationshipEdge, source: CollectionKeyPair, manual: Bool) -> StoredEdge? {
        let destination: StoredEdge.Destination
        if let key = edge.destinationKey {
            destination = .node(CollectionKeyPair(collection: edge.destinationCollection ?? "", key: key))
        } else if edge.destinationFileURL != nil, let bytes = relationship.storedOptions.fileURLSerializer(edge) {
            destination = .file(Array(bytes))
        } else {
            return nil
        }
        return StoredEdge(name: edge.name, source: source, destination: destination, isManual: manual, rules: edge.nodeDeleteRules)
    }

    // MARK: Queries

    /// Calls `body` with every visible edge matching the filters (nil: any) until it stops.
    func forEachMatch(name: String?, source: CollectionKeyPair?, destination: StoredEdge.Destination?,
                      _ body: (StoredEdge) -> Bool) {
        reading { state throws(EngineError) in
            if let source {
                try state.forEachEdge(from: source, name: name) { edge in
                    if let destination, edge.destination != destination { return true }
                    return isHidden(edge) || body(edge)
                }
            } else if let destination {
                try state.forEachEdge(to: destination, name: name) { edge in isHidden(edge) || body(edge) }
            } else {
                try state.forEachEdge { edge in
                    if let name, edge.name != name { return true }
                    return isHidden(edge) || body(edge)
                }
            }
        }
    }

    /// The number of visible edges matching the filters: O(log n) when a tree's prefix is
    /// exactly the filter and nothing is hidden.
    func countMatches(name: String?, source: CollectionKeyPair?, destination: StoredEdge.Destination?) -> UInt {
        if deletedSet.isEmpty, let state, (source == nil) != (destination == nil) {
            var prefix: [UInt8] = []
            let tree: ExtensionTree
            if let source {
                RelationshipState.appendNode(source, to: &prefix)
                tree = state.bySource
            } else {
                RelationshipState.appendDestination(destination!, to: &prefix)
                tree = state.byDestination
            }
            if let name { RelationshipState.appendString(name, to: &prefix) }
            if let end = RelationshipState.prefixEnd(prefix),
               let count = try? tree.count(from: prefix, below: end) {
                return UInt(count)
            }
        }
        var count: UInt = 0
        forEachMatch(name: name, source: source, destination: destination) { _ in
            count += 1
            return true
        }
        return count
    }

    static func node(_ key: String?, _ collection: String?) -> CollectionKeyPair? {
        key.map { CollectionKeyPair(collection: collection ?? "", key: $0) }
    }

    /// The node filter of a file query: nil URL means any destination; a URL the serializer
    /// cannot store matches nothing.
    func fileFilter(_ url: URL?, name: String?) -> (destination: StoredEdge.Destination?, matchesNothing: Bool) {
        guard let url else { return (nil, false) }
        guard let bytes = fileBytes(url, name: name) else { return (nil, true) }
        return (.file(bytes), false)
    }

    /// Runs the matching edges through a Swift-native block.
    func iterate(name: String?, source: CollectionKeyPair?, destination: StoredEdge.Destination?,
                 _ block: (YapDatabaseRelationshipEdge, inout Bool) -> Void) {
        databaseTransaction.checkValid()
        forEachMatch(name: name, source: source, destination: destination) { edge in
            var stop = false
            block(publicEdge(edge), &stop)
            return !stop
        }
    }

    /// Runs the matching edges through a block with an `ObjCBool` stop pointer.
    func enumerate(name: String?, source: CollectionKeyPair?, destination: StoredEdge.Destination?,
                   _ block: (YapDatabaseRelationshipEdge, UnsafeMutablePointer<ObjCBool>) -> Void) {
        iterate(name: name, source: source, destination: destination) { edge, stop in
            var flag = ObjCBool(false)
            block(edge, &flag)
            stop = flag.boolValue
        }
    }

    // MARK: Nodes

    /// The object at the source of `edge`, or nil.
    public func sourceNode(for edge: YapDatabaseRelationshipEdge) -> Any? {
        guard let key = edge.sourceKey else { return nil }
        return databaseTransaction.object(forKey: key, inCollection: edge.sourceCollection)
    }

    /// The object at the destination of `edge`, or nil (always nil for a file edge).
    public func destinationNode(for edge: YapDatabaseRelationshipEdge) -> Any? {
        guard let key = edge.destinationKey else { return nil }
        return databaseTransaction.object(forKey: key, inCollection: edge.destinationCollection)
    }

    /// The number of stored edges (protocol and manual), as the last commit or this read-write
    /// transaction has them, removed rows' edges included until flush. The extension's figure
    /// for statistics.
    public func numberOfEdges() -> UInt {
        databaseTransaction.checkValid()
        return UInt(state?.count ?? 0)
    }
}
