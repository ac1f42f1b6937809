import YapDBEngine

// The bulk-insert path. A row just inserted (its row id above every indexed one) does not touch
// the trees at once: its postings, positions and document entry wait in `pending`
// (`FullTextPendingPostings`, a few flat arrays), and are merged per term — one dictionary
// update, whole blocks written once after the term's settled ones, its short last block read
// back only at the tail limit (FullTextState+Merge.swift) — before the commit (`willCommit`),
// before any read of the index, before any update or removal, and whenever `pending` passes
// `pendingLimit` bytes (so the memory of one huge transaction stays bounded). `pending` lives in
// the transaction's copy of the state, so a rollback drops it; it is never written to disk
// (`willCommit` merges it before the commit writes the state).

extension FullTextState {
    /// Whether postings or document entries wait to be merged.
    var hasPending: Bool { !pending.isEmpty }

    /// The highest row id waiting.
    var pendingLastRowid: UInt64? { pending.lastRowid }

    /// About the memory the waiting postings hold (compared with `pendingLimit`).
    var pendingBytes: Int { pending.byteSize }

    /// Moves every pending posting into the term dictionary and the postings blocks, then the
    /// pending rows' document entries into the documents tree.
    /// - Parameter keepingCapacity: keep the buffer's memory for more rows of this transaction
    ///   (a merge for the budget); false before a commit, so no snapshot holds it.
    /// - Throws: `EngineError`; the state is then half-changed and the transaction fails.
    mutating func mergePending(keepingCapacity: Bool = false) throws(EngineError) {
        guard !pending.isEmpty else { return }
        var waiting = FullTextPendingPostings()
        swap(&waiting, &pending)
        let names = waiting.termNames
        let termOrder = names.indices.sorted { Self.utf8Precedes(names[$0], names[$1]) }
        let (order, starts) = waiting.groupedByTerm()
        var ids = [UInt32](repeating: 0, count: names.count)
        var builder = FullTextBlockBuilder()
        var stored = FullTextStoredRows()
        for t in termOrder {
            ids[t] = try mergeTerm(names[t], waiting, order[starts[t]..<starts[t + 1]], builder: &builder, stored: &stored)
        }
        // Then the rows' document entries, in row id order (each at the end of the tree).
        var termIDs: [UInt32] = []
        for d in waiting.documents.indices {
            let document = waiting.documents[d]
            termIDs.removeAll(keepingCapacity: true)
            for place in waiting.documentTerms[waiting.documentTermsRange(d)] { termIDs.append(ids[Int(place)]) }
            let lengths = waiting.documentLengths[document.lengthsStart..<(document.lengthsStart + columnCount)]
            try Self.storeChunked(&documents, Self.encodeDocument(lengths: Array(lengths), termIDs: termIDs), chunkSize: chunkSize) {
                Self.documentKey(document.rowid, chunk: $0)
            }
        }
        if keepingCapacity {
            waiting.removeAll(keepingCapacity: true)
            pending = waiting
        }
    }
}
