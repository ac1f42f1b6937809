import YapDBIndex

// Registration after a reopen: the manual-edge records of the log, and edges whose rows are gone.
extension RelationshipManualEdgeLog {
    /// Applies `records` (payloads of this extension's extension data records, in commit order)
    /// to `state`. Returns whether one of them removed every edge (protocol edges included: the
    /// caller gathers them all again). Throws `PageError` when a payload does not decode or a
    /// page cannot be read.
    static func replay(_ records: [[UInt8]], into state: inout RelationshipState) throws(PageError) -> Bool {
        var removedEverything = false
        for payload in records {
            let log = try decode(payload)
            try log.apply(to: &state)
            if log.removedAll { removedEverything = true }
        }
        return removedEverything
    }
}

extension YapDatabaseRelationshipTransaction {
    /// Drops every edge with a row end that does not exist (rows removed while the extension was
    /// not registered, after edges replayed from the log); runs nothing.
    func dropEdgesWithMissingEnds() throws(PageError) {
        var gone: [StoredEdge] = []
        reading { state throws(PageError) in
            try state.forEachEdge { edge in
                if !exists(edge.source) || edge.destinationNode.map({ !exists($0) }) == true { gone.append(edge) }
                return true
            }
        }
        guard !gone.isEmpty else { return }
        update { state throws(PageError) in for edge in gone { try state.remove(edge) } }
    }
}
