import YapDBEngine

// Protocol-edge changes of a read-write transaction held as a batch and merged into the two
// trees at once: at the next read of the edges, at `flush()`, or at commit (which flushes).
// A node written with edges costs two key builds per edge here instead of two tree descents;
// the merge sorts the batch once and walks each tree in key order (or rebuilds a small tree).
extension YapDatabaseRelationshipTransaction {
    /// Queues the change of `edge`'s entries in both trees: stored with its rules, or removed
    /// (`remove`). Each key is built once. Reads see it: they merge the batch first.
    func queueTreeChange(_ edge: StoredEdge, remove: Bool) {
        let value = remove ? nil : RelationshipState.rulesValue(edge.rules)
        pendingBySource.append((key: RelationshipState.sourceKey(edge), value: value))
        pendingByDestination.append((key: RelationshipState.destinationKey(edge), value: value))
        pendingEdges.append((edge, remove))
    }

    /// Merges the queued tree changes into the state (nothing when none are queued). Called
    /// before every read and change of the trees, so no one sees them unmerged.
    func mergePendingTreeChanges() {
        guard !pendingBySource.isEmpty else { return }
        let bySource = pendingBySource, byDestination = pendingByDestination, edges = pendingEdges
        dropPendingTreeChanges()
        updateMerged { state throws(EngineError) in
            try state.bySource.apply(bySource)
            try state.byDestination.apply(byDestination)
            // The change log hears of each change, in order, as `insert`/`removeStored` note them.
            for (edge, removed) in edges {
                if removed { state.changeLog.removed(edge) } else { state.changeLog.stored(edge) }
            }
        }
    }

    /// Forgets the queued tree changes (the state they were for is dropped).
    func dropPendingTreeChanges() {
        pendingBySource = []
        pendingByDestination = []
        pendingEdges = []
    }
}
