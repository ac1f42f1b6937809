import Foundation
import YapDBEngine

// Manual edges and the row hooks of a read-write transaction.
extension YapDatabaseRelationshipTransaction {
    /// Stops the program when called outside a read-write transaction (YapDatabase's exception).
    func requireWrite(_ function: String = #function) -> YapDatabaseReadWriteTransaction {
        databaseTransaction.checkValid(function)
        guard let tx = writeTransaction else {
            preconditionFailure("YapDatabaseRelationshipTransaction misuse: \(function) needs a read-write transaction")
        }
        return tx
    }

    // MARK: Manual edges

    /// Adds a manual edge (made with one of the initializers that name the source). An edge
    /// with the same name, source and destination as a manual edge already stored replaces its
    /// rules. Ignored (with a logged warning) when the edge names no source (protocol edges come
    /// from their nodes), or when its names and keys together exceed what an index entry holds.
    ///
    /// The edge's ends are checked when the transaction commits (or at `flush()`): a missing
    /// source counts as a deleted source and a missing destination row as a deleted destination,
    /// and their rules run (see the "Relationships" article).
    public func add(_ edge: YapDatabaseRelationshipEdge) {
        _ = requireWrite()
        guard let key = edge.sourceKey else {
            YapDatabaseLogging.log(.warning, "relationship \(name): add(_:) ignores an edge without a source: \(edge)")
            return
        }
        let source = CollectionKeyPair(collection: edge.sourceCollection ?? "", key: key)
        guard let stored = storedEdge(edge, source: source, manual: true) else {
            YapDatabaseLogging.log(.warning, "relationship \(name): add(_:) ignores an edge without a destination: \(edge)")
            return
        }
        store(stored)
    }

    /// Removes the manual edge `edge` names (by name, source and destination; its rules are the
    /// stored ones) and runs its rules for `reason`: `.edgeDeleted` runs none,
    /// `.sourceNodeDeleted` / `.destinationNodeDeleted` run them as if that node had been
    /// deleted (the node itself stays). Protocol edges are their node's: this never removes one.
    public func remove(_ edge: YapDatabaseRelationshipEdge, withProcessing reason: YDB_NotifyReason) {
        _ = requireWrite()
        guard let key = edge.sourceKey else { return }
        let source = CollectionKeyPair(collection: edge.sourceCollection ?? "", key: key)
        guard let stored = storedEdge(edge, source: source, manual: true) else { return }
        removeManual(stored, reason: reason)
    }

    /// Removes the manual edge named `edgeName` from one row to another and runs its rules for
    /// `reason` (see `remove(_:withProcessing:)`).
    public func removeEdge(withName edgeName: String, sourceKey: String, collection sourceCollection: String?,
                           destinationKey: String, collection destinationCollection: String?,
                           withProcessing reason: YDB_NotifyReason) {
        _ = requireWrite()
        let edge = StoredEdge(name: edgeName, source: CollectionKeyPair(collection: sourceCollection ?? "", key: sourceKey),
                              destination: .node(CollectionKeyPair(collection: destinationCollection ?? "", key: destinationKey)),
                              isManual: true, rules: [])
        removeManual(edge, reason: reason)
    }

    /// Stores `edge` (new, or with changed rules) and queues the check of its ends.
    func store(_ edge: StoredEdge) {
        // No copy of the state may outlive this check: `update` changes the trees in place only
        // while the transaction holds the one reference.
        guard let maximumEntrySize = state?.bySource.maximumEntrySize else { return }
        let fits = RelationshipState.fits(edge, maximumEntrySize: maximumEntrySize)
        guard fits else {
            YapDatabaseLogging.log(.error, "relationship \(name): an edge's names and keys are too long to store; ignored: \(publicEdge(edge))")
            return
        }
        var current: YDB_NodeDeleteRules?
        reading { state throws(EngineError) in current = try state.storedRules(of: edge) }
        guard current != edge.rules else { return }
        update { state throws(EngineError) in try state.insert(edge) }
        checks.append(edge)
    }

    func removeManual(_ identity: StoredEdge, reason: YDB_NotifyReason) {
        var removed: StoredEdge?
        update { state throws(EngineError) in
            guard let rules = try state.storedRules(of: identity) else { return }
            var edge = identity
            edge.rules = rules
            try state.remove(edge)
            removed = edge
        }
        if let removed, reason != .edgeDeleted { pendingRules.append((removed, reason)) }
    }

    // MARK: Row hooks

    /// A row was inserted or its object set or replaced: its protocol edges become the object's.
    func rowWritten(_ pair: CollectionKeyPair, isInsert: Bool) {
        let wasRemoved = !deletedSet.isEmpty && deletedSet.remove(pair) != nil
        guard relationship.gathersEdges(in: pair.collection), let tx = writeTransaction else { return }
        let object: Any?
        if let written = tx.objectBeingWritten, written.pair == pair {
            object = written.object
        } else {
            object = tx.object(forKey: pair.key, inCollection: pair.collection)
        }
        let edges = (object as? YapDatabaseRelationshipNode)?.yapDatabaseRelationshipEdges() ?? []
        // A row new to the database has no stored protocol edges: after every flush a protocol
        // edge's source exists, and a row removed since (whose edges wait for the next flush)
        // is in `deletedSet`. So an insert skips reading them.
        replaceProtocolEdges(of: pair, with: edges, noneStored: isInsert && !wasRemoved)
    }

    /// Makes `edges` the protocol edges of `source`: new ones are stored (and checked at flush),
    /// changed rules rewritten, and edges left out removed with their rules run as if their
    /// source had been deleted. Unchanged edges (the usual update) write nothing. While the rules
    /// run (a node's notify callback replaced it), a new edge to a row that does not exist is not
    /// stored, so a callback cannot start a loop. `noneStored`: the caller knows `source` has no
    /// stored protocol edges (they are not read).
    func replaceProtocolEdges(of source: CollectionKeyPair, with edges: [YapDatabaseRelationshipEdge], noneStored: Bool = false) {
        guard let maximumEntrySize else { return }
        // Deduplicated by identity, in first-seen order; the last rules given win.
        var wanted = EdgeIndex()
        for edge in edges {
            guard let stored = storedEdge(edge, source: source, manual: false) else {
                YapDatabaseLogging.log(.warning, "relationship \(name): \(source.collection)/\(source.key) returned an edge without a destination; ignored")
                continue
            }
            if isFlushing, let destination = stored.destinationNode, !exists(destination) { continue }
            if let i = wanted.position(of: stored) { wanted.edges[i].rules = stored.rules } else { wanted.append(stored) }
        }
        var old = EdgeIndex()
        if !noneStored {
            reading { state throws(EngineError) in
                try state.forEachEdge(from: source, name: nil) { edge in
                    if !edge.isManual { old.append(edge) }
                    return true
                }
            }
        }
        if old.edges.isEmpty && wanted.edges.isEmpty { return }
        var removed: [StoredEdge] = []
        for edge in old.edges where wanted.position(of: edge) == nil { removed.append(edge) }
        var added: [StoredEdge] = []
        for edge in wanted.edges {
            if let i = old.position(of: edge), old.edges[i].rules == edge.rules { continue }
            guard RelationshipState.fits(edge, maximumEntrySize: maximumEntrySize) else {
                YapDatabaseLogging.log(.error, "relationship \(name): an edge's names and keys are too long to store; ignored: \(publicEdge(edge))")
                continue
            }
            added.append(edge)
        }
        guard !removed.isEmpty || !added.isEmpty else { return }
        // Queued, merged into the trees at once before the next read (or at commit).
        for edge in removed { queueTreeChange(edge, remove: true) }
        for edge in added { queueTreeChange(edge, remove: false) }
        for edge in removed { pendingRules.append((edge, .sourceNodeDeleted)) }
        checks.append(contentsOf: added)
    }

    /// A row is about to be removed: its rules run at flush, and reads hide its edges.
    func nodeRemoved(_ pair: CollectionKeyPair) {
        if deletedSet.insert(pair).inserted { deletedOrder.append(pair) }
    }

    /// Every row is about to be removed: every edge goes, and each file edge whose rules delete
    /// its file when its sources are deleted has its file deleted after the commit. (YapDatabase
    /// deleted every file of every file edge here, whatever its rules.)
    func allNodesRemoved() {
        reading { state throws(EngineError) in
            try state.forEachFileEdge { edge in
                if edge.rules.contains(.deleteDestinationIfSourceDeleted) || edge.rules.contains(.deleteDestinationIfAllSourcesDeleted),
                   let url = publicEdge(edge).destinationFileURL {
                    filesToDelete.append(url)
                }
                return true
            }
        }
        update { state in state.removeAll() }
        deletedOrder.removeAll()
        deletedCursor = 0
        edgeFreeCheckFrom = 0
        deletedSet.removeAll()
        checks.removeAll()
        checkCursor = 0
        pendingRules.removeAll()
        ruleCursor = 0
    }

    // MARK: Registration

    /// Drops every protocol edge and asks every allowed object again (a new version tag, or no
    /// stored edges). Runs no rule: edges to rows that do not exist are left out, so
    /// registering never deletes a row (YapDatabase flushed here, and could). Manual edges stay.
    func regatherAllProtocolEdges() throws(EngineError) {
        var protocolEdges: [StoredEdge] = []
        reading { state throws(EngineError) in
            try state.forEachEdge { edge in
                if !edge.isManual { protocolEdges.append(edge) }
                return true
            }
        }
        if !protocolEdges.isEmpty {
            update { state throws(EngineError) in
                for edge in protocolEdges { try state.remove(edge) }
            }
        }
        guard let tx = writeTransaction else { return }
        for collection in tx.collectionNames() where relationship.gathersEdges(in: collection) {
            var keys: [String] = []
            tx.forEachKey(inCollection: collection) { key, _ in
                keys.append(key)
                return true
            }
            for key in keys { regatherQuietly(CollectionKeyPair(collection: collection, key: key)) }
        }
    }

    /// Brings claimed edges (after their edge records were replayed) up to the rows no record
    /// covers: those changed while the extension was not registered (`ExtensionCatchUp`). No
    /// rule runs for them (YapDatabase's rule for changes made while unregistered): rows
    /// written give their protocol edges again (less edges to rows that do not exist), and the
    /// edges of rows removed are dropped.
    /// Files those commits' rules deleted are not deleted again (a crash after a commit and
    /// before its file deletions leaves the files).
    func catchUp(_ changes: ExtensionCatchUp) throws(EngineError) {
        for pair in changes.changedKeys {
            if exists(pair) {
                regatherQuietly(pair)
            } else {
                dropEdgesQuietly(of: pair)
            }
        }
        if changes.removedAll || !changes.removedRowids.isEmpty {
            // Rows removed with their collection (or all rows) are known only by row id: drop
            // every edge with an end that is gone.
            var gone: [StoredEdge] = []
            reading { state throws(EngineError) in
                try state.forEachEdge { edge in
                    if !exists(edge.source) || edge.destinationNode.map({ !exists($0) }) == true { gone.append(edge) }
                    return true
                }
            }
            update { state throws(EngineError) in for edge in gone { try state.remove(edge) } }
        }
    }

    /// Makes the row's protocol edges its object's (less edges to missing rows); runs nothing.
    func regatherQuietly(_ pair: CollectionKeyPair) {
        var wanted: [StoredEdge: YDB_NodeDeleteRules] = [:]
        if relationship.gathersEdges(in: pair.collection),
           let node = databaseTransaction.object(forKey: pair.key, inCollection: pair.collection) as? YapDatabaseRelationshipNode {
            for edge in node.yapDatabaseRelationshipEdges() ?? [] {
                guard let stored = storedEdge(edge, source: pair, manual: false), let maximumEntrySize = state?.bySource.maximumEntrySize,
                      RelationshipState.fits(stored, maximumEntrySize: maximumEntrySize) else { continue }
                if let destination = stored.destinationNode, !exists(destination) { continue }
                wanted[stored.identity] = stored.rules
            }
        }
        var old: [StoredEdge] = []
        reading { state throws(EngineError) in
            try state.forEachEdge(from: pair, name: nil) { edge in
                if !edge.isManual { old.append(edge) }
                return true
            }
        }
        update { state throws(EngineError) in
            for edge in old where wanted[edge.identity] != edge.rules { try state.remove(edge) }
            for (identity, rules) in wanted where !old.contains(where: { $0.identity == identity && $0.rules == rules }) {
                var edge = identity
                edge.rules = rules
                try state.insert(edge)
            }
        }
    }

    /// Drops every edge from or to the row; runs nothing.
    func dropEdgesQuietly(of pair: CollectionKeyPair) {
        var gone: [StoredEdge] = []
        reading { state throws(EngineError) in
            try state.forEachEdge(from: pair, name: nil) { edge in
                gone.append(edge)
                return true
            }
            try state.forEachEdge(to: .node(pair), name: nil) { edge in
                if edge.source != pair { gone.append(edge) }
                return true
            }
        }
        update { state throws(EngineError) in for edge in gone { try state.remove(edge) } }
    }
}

/// One source's edges by identity (name, ends, kind): a linear search while few, a hash table
/// past 16 (a node with many edges).
struct EdgeIndex {
    var edges: [StoredEdge] = []
    private var positions: [StoredEdge: Int]?

    /// The position of the edge with `edge`'s identity, or nil.
    func position(of edge: StoredEdge) -> Int? {
        if let positions { return positions[edge.identity] }
        return edges.firstIndex {
            $0.name == edge.name && $0.destination == edge.destination && $0.source == edge.source && $0.isManual == edge.isManual
        }
    }

    /// Adds `edge` (whose identity is not here yet) at the end.
    mutating func append(_ edge: StoredEdge) {
        edges.append(edge)
        if positions != nil {
            positions![edge.identity] = edges.count - 1
        } else if edges.count > 16 {
            var table: [StoredEdge: Int] = [:]
            for (i, e) in edges.enumerated() { table[e.identity] = i }
            positions = table
        }
    }
}
