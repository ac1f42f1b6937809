import YapDBEngine

// Registration after a reopen: the edge records of the log, and edges whose rows are gone.
extension RelationshipEdgeLog {
    /// Applies `records` (payloads of this extension's extension data records, in commit order)
    /// to `state`, noting nothing in its change log (the records are in the log already).
    /// Returns whether every protocol edge must be gathered again from the rows: the last
    /// record says the extension was unregistered, or a record is of layout 1 (manual edges
    /// only). Throws `EngineError` when a payload does not decode or a page cannot be read.
    static func replay(_ records: [[UInt8]], into state: inout RelationshipState) throws(EngineError) -> Bool {
        var regather = false
        var legacy = false
        let kept = state.changeLog
        for payload in records {
            let log = try decode(payload)
            try log.apply(to: &state)
            // After a drop, the next record is a registration's, which starts empty.
            regather = log.dropped
            if log.isLegacy { legacy = true }
        }
        state.changeLog = kept
        return regather || legacy
    }
}

extension YapDatabaseRelationshipTransaction {
    /// Drops every edge with a row end that does not exist (rows removed while the extension was
    /// not registered, after edges replayed from the log); runs nothing.
    func dropEdgesWithMissingEnds() throws(EngineError) {
        var gone: [StoredEdge] = []
        reading { state throws(EngineError) in
            try state.forEachEdge { edge in
                if !exists(edge.source) || edge.destinationNode.map({ !exists($0) }) == true { gone.append(edge) }
                return true
            }
        }
        guard !gone.isEmpty else { return }
        update { state throws(EngineError) in for edge in gone { try state.remove(edge) } }
    }
}

extension YapDatabaseRelationshipTransaction {
    /// Takes the state's change log and writes it into the commit as edge records (none when
    /// it is empty, unless `evenIfEmpty`). Returns false (the transaction failed) when the log
    /// cannot be written.
    func appendEdgeRecord(evenIfEmpty: Bool) -> Bool {
        guard let tx = writeTransaction, let current = state else { return true }
        guard evenIfEmpty || !current.changeLog.isEmpty else { return true }
        var log = RelationshipEdgeLog()
        if !current.changeLog.isEmpty {
            update { state in
                log = state.changeLog
                state.changeLog = RelationshipEdgeLog()
            }
        }
        do throws(EngineError) {
            for payload in log.encodedPayloads(limit: WriteTransaction.extensionDataLimit) {
                try tx.appendExtensionData(name: stateKey, payload: payload)
            }
        } catch {
            tx.fail(YapDatabaseError(error))
            return false
        }
        return true
    }
}
