import Foundation
import YapDBEngine

// The rules: run by `flush()`, which the commit calls first (before the other extensions
// finish), so the rows the rules delete are removed through the normal path — views, indexes
// and the changeset see them — and cascades finish in the same commit.
extension YapDatabaseRelationshipTransaction {
    /// Runs every pending rule now: edges removed or left out by their nodes, the ends of edges
    /// stored in this transaction (a missing row counts as deleted), and the edges of every row
    /// removed (cascades included, until nothing is left to do). The commit does this by
    /// itself; call it to see the rules' effects inside the transaction.
    ///
    /// Files the rules delete are deleted only after the commit is durable (never on rollback).
    public func flush() {
        let tx = requireWrite()
        guard !isFlushing else { return }
        isFlushing = true
        defer { isFlushing = false }
        while tx.pendingFailure == nil {
            if ruleCursor < pendingRules.count {
                let (edge, reason) = pendingRules[ruleCursor]
                ruleCursor += 1
                apply(edge, reason: reason)
            } else if checkCursor < checks.count {
                let edge = checks[checkCursor]
                checkCursor += 1
                checkEnds(edge)
            } else if deletedCursor < deletedOrder.count {
                // A run of removed rows with no edge left (a cascade's leaves): nothing to do.
                if deletedOrder.count - deletedCursor > 1, deletedCursor >= edgeFreeCheckFrom {
                    edgeFreeCheckFrom = deletedOrder.count
                    if noEdges(touch: deletedOrder[deletedCursor...]) {
                        deletedCursor = deletedOrder.count
                        continue
                    }
                }
                let node = deletedOrder[deletedCursor]
                deletedCursor += 1
                if deletedSet.contains(node), !exists(node) { processDeleted(node) }
            } else {
                break
            }
        }
        mergePendingTreeChanges()
        pendingRules.removeAll()
        ruleCursor = 0
        checks.removeAll()
        checkCursor = 0
        deletedOrder.removeAll()
        deletedCursor = 0
        edgeFreeCheckFrom = 0
        deletedSet.removeAll()
        if !filesToDelete.isEmpty {
            let files = filesToDelete
            filesToDelete.removeAll()
            tx.afterDurableCommit.append { Self.deleteFiles(files) }
        }
    }

    /// Runs an edge's rules for `reason` (the edge is already removed).
    func apply(_ edge: StoredEdge, reason: YDB_NotifyReason) {
        switch reason {
        case .edgeDeleted: break
        case .sourceNodeDeleted: sourceDeleted(edge)
        case .destinationNodeDeleted: destinationDeleted(edge)
        }
    }

    /// An edge stored in this transaction: a missing end counts as deleted (a manual edge's
    /// source; any edge's destination row).
    func checkEnds(_ edge: StoredEdge) {
        // Both ends present (the usual case): nothing to read.
        let sourceMissing = edge.isManual && !exists(edge.source)
        let destinationMissing = !sourceMissing && edge.destinationNode.map { !exists($0) } == true
        guard sourceMissing || destinationMissing else { return }
        var current: YDB_NodeDeleteRules?
        reading { state throws(EngineError) in current = try state.storedRules(of: edge) }
        guard let rules = current else { return }
        var stored = edge
        stored.rules = rules
        update { state throws(EngineError) in try state.removeStored(stored) }
        if sourceMissing {
            sourceDeleted(stored)
        } else {
            destinationDeleted(stored)
        }
    }

    /// A removed row: every edge from it or to it goes, then each one's rules run.
    func processDeleted(_ node: CollectionKeyPair) {
        var outgoing: [StoredEdge] = [], incoming: [StoredEdge] = []
        reading { state throws(EngineError) in
            try state.forEachEdge(from: node, name: nil) { edge in
                outgoing.append(edge)
                return true
            }
            try state.forEachEdge(to: .node(node), name: nil) { edge in
                if edge.source != node { incoming.append(edge) }
                return true
            }
        }
        guard !outgoing.isEmpty || !incoming.isEmpty else { return }
        removeStoredEdges(outgoing + incoming)
        for edge in outgoing { sourceDeletedInBatch(edge) }
        for edge in incoming { destinationDeletedInBatch(edge) }
        removeGatheredRows()
    }

    /// The edge's source is gone (or left the edge out): the destination's rules.
    func sourceDeleted(_ edge: StoredEdge) {
        let rules = edge.rules
        switch edge.destination {
        case .node(let destination):
            guard exists(destination) else { return }
            let deletes = rules.contains(.deleteDestinationIfSourceDeleted)
                || (rules.contains(.deleteDestinationIfAllSourcesDeleted) && !hasEdges(to: edge.destination, otherThanFrom: edge.source))
            if rules.contains(.notifyIfSourceDeleted) {
                notify(destination, of: edge, reason: .sourceNodeDeleted, keepsResult: !deletes)
            }
            // Known to exist unless the node's callback ran (app code) since the check.
            if deletes { deleteRow(destination, known: !rules.contains(.notifyIfSourceDeleted)) }
        case .file:
            let deletes = rules.contains(.deleteDestinationIfSourceDeleted)
                || (rules.contains(.deleteDestinationIfAllSourcesDeleted) && !hasEdges(to: edge.destination, otherThanFrom: edge.source))
            if deletes, let url = publicEdge(edge).destinationFileURL { filesToDelete.append(url) }
        }
    }

    /// The edge's destination row is gone: the source's rules.
    func destinationDeleted(_ edge: StoredEdge) {
        let rules = edge.rules
        guard exists(edge.source) else { return }
        let deletes = rules.contains(.deleteSourceIfDestinationDeleted)
            || (rules.contains(.deleteSourceIfAllDestinationsDeleted) && !hasEdges(from: edge.source, otherThanTo: edge.destination))
        if rules.contains(.notifyIfDestinationDeleted) {
            notify(edge.source, of: edge, reason: .destinationNodeDeleted, keepsResult: !deletes)
        }
        if deletes { deleteRow(edge.source, known: !rules.contains(.notifyIfDestinationDeleted)) }
    }

    /// Whether an edge of any name points at `destination` from a source other than `source`.
    func hasEdges(to destination: StoredEdge.Destination, otherThanFrom source: CollectionKeyPair) -> Bool {
        var found = false
        reading { state throws(EngineError) in
            try state.forEachEdge(to: destination, name: nil) { edge in
                found = edge.source != source
                return !found
            }
        }
        return found
    }

    /// Whether `source` has an edge of any name to a destination other than `destination`.
    func hasEdges(from source: CollectionKeyPair, otherThanTo destination: StoredEdge.Destination) -> Bool {
        var found = false
        reading { state throws(EngineError) in
            try state.forEachEdge(from: source, name: nil) { edge in
                found = edge.destination != destination
                return !found
            }
        }
        return found
    }

    /// Calls the node's callback; a returned object replaces it (metadata kept) unless the same
    /// edge deletes it.
    func notify(_ node: CollectionKeyPair, of edge: StoredEdge, reason: YDB_NotifyReason, keepsResult: Bool) {
        guard let tx = writeTransaction,
              let object = tx.object(forKey: node.key, inCollection: node.collection) as? YapDatabaseRelationshipNode else { return }
        let replacement = object.yapDatabaseRelationshipEdgeDeleted(publicEdge(edge), with: reason)
        if keepsResult, let replacement { tx.replace(replacement, forKey: node.key, inCollection: node.collection) }
    }

    /// Removes a row through the normal path (other extensions and the changeset see it); its
    /// own rules run later in this flush. `known`: the caller has just seen the row exist.
    func deleteRow(_ node: CollectionKeyPair, known: Bool = false) {
        guard let tx = writeTransaction, known || exists(node) else { return }
        // The registering transaction does not call this extension's hooks: record it here.
        if !hearsRowHooks { nodeRemoved(node) }
        tx.removeObject(forKey: node.key, inCollection: node.collection)
    }

    /// Deletes the files (after a durable commit); a missing file is not an error.
    static func deleteFiles(_ files: [URL]) {
        for url in Set(files) {
            do {
                try FileManager.default.removeItem(at: url)
            } catch {
                if FileManager.default.fileExists(atPath: url.path) {
                    YapDatabaseLogging.log(.warning, "relationship: could not delete \(url.path): \(error)")
                }
            }
        }
    }
}
