import YapDBEngine

// Cascades in batches. A removed row's edges leave the trees as one batch per tree; the rows
// that its plain delete rules remove (no callback, no count of remaining edges: nothing in
// them reads what the other removals change) are gathered and removed together, in the order
// the rules named them, before any other rule runs; and a run of removed rows none of which
// has an edge left is passed over with two range counts instead of two walks per row. What
// each rule sees, which rows go and in which order, are what one rule at a time gives.
extension YapDatabaseRelationshipTransaction {
    /// Removes edges just read from the trees (no existence walk), one batch per tree.
    func removeStoredEdges(_ edges: [StoredEdge]) {
        guard !edges.isEmpty else { return }
        if edges.count == 1 {
            update { state throws(EngineError) in try state.removeStored(edges[0]) }
            return
        }
        let bySource = edges.map { (key: RelationshipState.sourceKey($0), value: [UInt8]?.none) }
        let byDestination = edges.map { (key: RelationshipState.destinationKey($0), value: [UInt8]?.none) }
        update { state throws(EngineError) in
            try state.bySource.apply(bySource)
            try state.byDestination.apply(byDestination)
            for edge in edges { state.changeLog.removed(edge) }
        }
    }

    /// The edge's source is gone: a plain delete of a row destination joins the batch of rows
    /// to remove; any other rule runs now, after the batch so far is removed.
    func sourceDeletedInBatch(_ edge: StoredEdge) {
        let rules = edge.rules
        if case .node(let destination) = edge.destination,
           rules.contains(.deleteDestinationIfSourceDeleted), !rules.contains(.notifyIfSourceDeleted) {
            rowsToRemove.append(destination)
            return
        }
        removeGatheredRows()
        sourceDeleted(edge)
    }

    /// The edge's destination row is gone: a plain delete of the source joins the batch of rows
    /// to remove; any other rule runs now, after the batch so far is removed.
    func destinationDeletedInBatch(_ edge: StoredEdge) {
        let rules = edge.rules
        if rules.contains(.deleteSourceIfDestinationDeleted), !rules.contains(.notifyIfDestinationDeleted) {
            rowsToRemove.append(edge.source)
            return
        }
        removeGatheredRows()
        destinationDeleted(edge)
    }

    /// Removes the gathered rows that still exist, in order, through the transaction's batch
    /// removal (hooks, other extensions, caches and the changeset hear of each one as of a
    /// `removeObject`); their own edges are processed later in this flush.
    func removeGatheredRows() {
        guard !rowsToRemove.isEmpty, let tx = writeTransaction else { return }
        let rows = rowsToRemove
        rowsToRemove = []
        guard hearsRowHooks else {
            for row in rows { deleteRow(row) }
            return
        }
        tx.removeRows(rows)
    }

    /// Whether none of `nodes` is the source or the destination of a stored edge: then
    /// processing them one by one would do nothing. Two range counts per collection (the
    /// nodes' keys from the smallest to the largest) in each tree.
    func noEdges(touch nodes: ArraySlice<CollectionKeyPair>) -> Bool {
        var bounds: [String: (low: String, high: String)] = [:]
        for node in nodes {
            if let known = bounds[node.collection] {
                if node.key.utf8.lexicographicallyPrecedes(known.low.utf8) { bounds[node.collection]!.low = node.key }
                if known.high.utf8.lexicographicallyPrecedes(node.key.utf8) { bounds[node.collection]!.high = node.key }
            } else {
                bounds[node.collection] = (node.key, node.key)
            }
        }
        var none = true
        reading { state throws(EngineError) in
            for (collection, range) in bounds where none {
                // A by-destination key starts with the row-destination byte (docs/format.md §11).
                for (tree, start) in [(state.bySource, [UInt8]()), (state.byDestination, [UInt8(1)])] where none {
                    var low = start
                    var high = low
                    RelationshipState.appendNode(CollectionKeyPair(collection: collection, key: range.low), to: &low)
                    RelationshipState.appendNode(CollectionKeyPair(collection: collection, key: range.high), to: &high)
                    none = try tree.count(from: low, below: RelationshipState.prefixEnd(high)) == 0
                }
            }
        }
        return none
    }
}
