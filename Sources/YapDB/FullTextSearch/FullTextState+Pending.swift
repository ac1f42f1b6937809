import YapDBIndex
import YapDBStorage

// The bulk-insert path. A row just inserted (its row id above every indexed one) does not touch
// the term dictionary or the postings blocks at once: its postings wait in `pending`, per term,
// and are merged per term — one dictionary update, one last-block lookup, whole blocks written —
// before the commit (`willCommit`), before any read of the index, before any update or removal,
// and when `pendingBytes` passes `pendingLimit`. The row's document entry and positions are
// written at once. `pending` lives in the transaction's copy of the state, so a rollback drops it;
// it is never written to disk (`willCommit` merges it before the commit writes the state).

/// One deferred posting: the row's occurrences of the term, their positions
/// (`FullTextPositions` bytes) and the row's length.
struct PendingPosting: Sendable {
    var posting: FullTextPosting
    var positions: [UInt8]
    var length: Int
}

extension FullTextState {
    /// Whether postings or document entries wait to be merged.
    var hasPending: Bool { !pending.isEmpty || !pendingDocuments.isEmpty }

    /// The highest row id waiting (pending rows are added in ascending order).
    var pendingLastRowid: UInt64? { pendingRowid }

    /// A pending row's document entry, written by the merge once its terms have ids.
    struct PendingDocument: Sendable {
        var rowid: UInt64
        var lengths: [Int]
        var terms: [String]
    }

    mutating func addPendingDocument(_ rowid: UInt64, lengths: [Int], terms: [String]) {
        pendingDocuments.append(PendingDocument(rowid: rowid, lengths: lengths, terms: terms))
        pendingBytes += 48 + lengths.count * 8 + terms.count * 16
        pendingRowid = rowid
    }

    mutating func addPending(_ term: String, _ posting: FullTextPosting, positions: [UInt8], length: Int) {
        pending[term, default: []].append(PendingPosting(posting: posting, positions: positions, length: length))
        pendingBytes += 64 + posting.hits.count * 16 + positions.count + (pending[term]!.count == 1 ? term.utf8.count + 64 : 0)
        pendingRowid = posting.rowid
    }

    /// Moves every pending posting into the term dictionary and the postings blocks.
    /// - Throws: `PageError`; the state is then half-changed and the transaction fails.
    mutating func mergePending() throws(PageError) {
        guard !pending.isEmpty || !pendingDocuments.isEmpty else { return }
        let waiting = pending, documentsWaiting = pendingDocuments
        pending = [:]
        pendingDocuments = []
        pendingBytes = 0
        pendingRowid = nil
        var ids: [String: UInt32] = [:]
        ids.reserveCapacity(waiting.count)
        for term in waiting.keys.sorted(by: Self.utf8Precedes) {
            ids[term] = try mergeTerm(term, waiting[term]!)
        }
        // Then the rows' document entries, in row id order (each at the end of the tree).
        for document in documentsWaiting {
            var termIDs: [UInt32] = []
            termIDs.reserveCapacity(document.terms.count)
            for term in document.terms {
                guard let id = ids[term] else { throw FullTextPostingBlock.damaged }
                termIDs.append(id)
            }
            try Self.storeChunked(&documents, Self.encodeDocument(lengths: document.lengths, termIDs: termIDs), chunkSize: chunkSize) {
                Self.documentKey(document.rowid, chunk: $0)
            }
        }
    }

    /// Appends `list` (row ids ascending, all above the term's last) to the term's blocks: onto
    /// the last block while it has room, then into new full blocks, each written once with its
    /// positions entry.
    /// Returns the term's id.
    private mutating func mergeTerm(_ term: String, _ list: [PendingPosting]) throws(PageError) -> UInt32 {
        let id = try adjustFrequency(term, by: list.count)
        let limit = blockLimit(term)
        // The block being filled: its postings bytes, last row id and positions bytes.
        var current: (bytes: [UInt8], last: UInt64, positions: [UInt8])?
        var replaced: [UInt8]?
        if let (key, bytes) = try lastBlock(term) {
            let last = key.withUnsafeBytes { Self.lastRowid(ofKey: $0) }
            // Not above the term's last row (a damaged key): the general path, one at a time.
            if let first = list.first, first.posting.rowid <= last {
                for item in list {
                    try insertPosting(term, item.posting, positions: item.positions, length: item.length, newest: false)
                }
                return id
            }
            guard let stored = try blockPositions(key) else { throw FullTextPostingBlock.damaged }
            current = (bytes, last, stored)
            replaced = key
        }
        for item in list {
            if var open = current {
                if positionsFit(open.positions.count, adding: FullTextBlockPositions.size(of: item.positions)),
                   let appended = try FullTextPostingBlock.appending(item.posting, after: open.last, length: item.length, to: open.bytes),
                   appended.count <= limit {
                    FullTextBlockPositions.append(item.positions, to: &open.positions)
                    current = (appended, item.posting.rowid, open.positions)
                    continue
                }
                if let key = replaced { try removeBlock(key); replaced = nil }
                try writeBlock(term, open)
            }
            var positions: [UInt8] = []
            FullTextBlockPositions.append(item.positions, to: &positions)
            current = (FullTextPostingBlock(postings: [item.posting], minimumLength: item.length).encoded(), item.posting.rowid, positions)
        }
        if let open = current {
            if let key = replaced {
                if key == Self.postingsKey(term, lastRowid: open.last) { return id }
                try removeBlock(key)
            }
            try writeBlock(term, open)
        }
        return id
    }

    private mutating func writeBlock(_ term: String, _ block: (bytes: [UInt8], last: UInt64, positions: [UInt8])) throws(PageError) {
        let key = Self.postingsKey(term, lastRowid: block.last)
        _ = try postings.upsert(key, block.bytes)
        try storeBlockPositions(key, block.positions)
    }
}
