import YapDBIndex
import YapDBStorage

// The bulk-insert path. A row just inserted (its row id above every indexed one) does not touch
// the trees at once: its postings, positions and document entry wait in `pending`
// (`FullTextPendingPostings`, a few flat arrays), and are merged per term — one dictionary
// update, one last-block lookup, whole blocks written once — before the commit (`willCommit`),
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
    /// - Throws: `PageError`; the state is then half-changed and the transaction fails.
    mutating func mergePending(keepingCapacity: Bool = false) throws(PageError) {
        guard !pending.isEmpty else { return }
        var waiting = FullTextPendingPostings()
        swap(&waiting, &pending)
        let names = waiting.termNames
        let termOrder = names.indices.sorted { Self.utf8Precedes(names[$0], names[$1]) }
        let (order, starts) = waiting.groupedByTerm()
        var ids = [UInt32](repeating: 0, count: names.count)
        var builder = FullTextBlockBuilder()
        for t in termOrder {
            ids[t] = try mergeTerm(names[t], waiting, order[starts[t]..<starts[t + 1]], builder: &builder)
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

    /// Appends the entries `run` of `waiting` (one term's, row ids ascending, all above the
    /// term's last) to the term's blocks: onto the last block while it has room, then into new
    /// full blocks, each encoded and written once with its positions entry. Returns the term's id.
    private mutating func mergeTerm(_ term: String, _ waiting: FullTextPendingPostings, _ run: ArraySlice<Int32>,
                                    builder: inout FullTextBlockBuilder) throws(PageError) -> UInt32 {
        let id = try adjustFrequency(term, by: run.count)
        let limit = blockLimit(term), chunk = chunkSize
        builder.reset()
        // The stored block being extended, if any (removed once a new key replaces it).
        var replaced: [UInt8]?
        if let (key, bytes) = try lastBlock(term) {
            let last = key.withUnsafeBytes { Self.lastRowid(ofKey: $0) }
            // Not above the term's last row (a damaged key): the general path, one at a time.
            if let first = run.first, waiting.entries[Int(first)].rowid <= last {
                for i in run {
                    let range = waiting.positionsRange(Int(i))
                    try insertPosting(term, waiting.posting(Int(i)), positions: Array(waiting.positions[range]),
                                      length: waiting.entries[Int(i)].length, newest: false)
                }
                return id
            }
            guard let stored = try blockPositions(key) else { throw FullTextPostingBlock.damaged }
            try builder.start(from: bytes, last: last, positions: stored)
            replaced = key
        }
        try waiting.counts.withBytes { counts throws(PageError) in
            try waiting.positions.withBytes { positions throws(PageError) in
                for i in run {
                    let entry = waiting.entries[Int(i)]
                    let countsRange = waiting.countsRange(Int(i)), positionsRange = waiting.positionsRange(Int(i))
                    if !builder.accepts(rowid: entry.rowid, countsBytes: countsRange.count, total: entry.total, length: entry.length,
                                        positionsBytes: positionsRange.count, limit: limit, chunkSize: chunk) {
                        try flush(term, &builder, replacing: &replaced)
                        builder.reset()
                    }
                    builder.append(rowid: entry.rowid, counts: UnsafeRawBufferPointer(rebasing: counts[countsRange]), total: entry.total,
                                   length: entry.length, positions: UnsafeRawBufferPointer(rebasing: positions[positionsRange]))
                }
            }
        }
        try flush(term, &builder, replacing: &replaced)
        return id
    }

    /// Writes the builder's block under its key, taking out the stored block it extends first;
    /// a stored block nothing was added to stays as it is.
    private mutating func flush(_ term: String, _ builder: inout FullTextBlockBuilder, replacing replaced: inout [UInt8]?) throws(PageError) {
        guard !builder.isEmpty else { return }
        if let key = replaced {
            replaced = nil
            guard builder.added > 0 else { return }
            try removeBlock(key)
        }
        let key = Self.postingsKey(term, lastRowid: builder.last)
        _ = try postings.upsert(key, builder.encoded())
        try storeBlockPositions(key, builder.positions)
    }
}
