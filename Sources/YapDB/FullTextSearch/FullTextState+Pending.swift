import YapDBIndex
import YapDBStorage

// The bulk-insert path. A row just inserted (its row id above every indexed one) does not touch
// the term dictionary or the postings blocks at once: its postings wait in `pending`, per term,
// and are merged per term — one dictionary update, one last-block lookup, whole blocks written —
// before the commit (`willCommit`), before any read of the index, before any update or removal,
// and when `pendingBytes` passes `pendingLimit`. The row's document entry and positions are
// written at once. `pending` lives in the transaction's copy of the state, so a rollback drops it;
// it is never written to disk (`willCommit` merges it before the commit writes the state).

/// One deferred posting: the row's occurrences of the term and the row's length.
struct PendingPosting: Sendable {
    var posting: FullTextPosting
    var length: Int
}

extension FullTextState {
    /// Whether postings wait to be merged.
    var hasPending: Bool { !pending.isEmpty }

    /// The highest row id waiting (pending rows are added in ascending order).
    var pendingLastRowid: UInt64? { pendingRowid }

    mutating func addPending(_ term: String, _ posting: FullTextPosting, length: Int) {
        pending[term, default: []].append(PendingPosting(posting: posting, length: length))
        pendingBytes += 32 + posting.hits.count * 16 + (pending[term]!.count == 1 ? term.utf8.count + 64 : 0)
        pendingRowid = posting.rowid
    }

    /// Moves every pending posting into the term dictionary and the postings blocks.
    /// - Throws: `PageError`; the state is then half-changed and the transaction fails.
    mutating func mergePending() throws(PageError) {
        guard !pending.isEmpty else { return }
        let waiting = pending
        pending = [:]
        pendingBytes = 0
        pendingRowid = nil
        for term in waiting.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            try mergeTerm(term, waiting[term]!)
        }
    }

    /// Appends `list` (row ids ascending, all above the term's last) to the term's blocks: onto
    /// the last block while it has room, then into new full blocks.
    private mutating func mergeTerm(_ term: String, _ list: [PendingPosting]) throws(PageError) {
        try adjustFrequency(term, by: list.count)
        let limit = blockLimit(term)
        var current: (bytes: [UInt8], last: UInt64)?
        var replaced: [UInt8]?
        if let (key, bytes) = try lastBlock(term) {
            let last = key.withUnsafeBytes { Self.lastRowid(ofKey: $0) }
            // Not above the term's last row (a damaged key): the general path, one at a time.
            if let first = list.first, first.posting.rowid <= last {
                for item in list { try insertPosting(term, item.posting, length: item.length, newest: false) }
                return
            }
            current = (bytes, last)
            replaced = key
        }
        for item in list {
            if let open = current {
                if let appended = try FullTextPostingBlock.appending(item.posting, after: open.last, length: item.length, to: open.bytes),
                   appended.count <= limit {
                    current = (appended, item.posting.rowid)
                    continue
                }
                if let key = replaced { _ = try postings.remove(key); replaced = nil }
                _ = try postings.upsert(Self.postingsKey(term, lastRowid: open.last), open.bytes)
            }
            current = (FullTextPostingBlock(postings: [item.posting], minimumLength: item.length).encoded(), item.posting.rowid)
        }
        if let open = current {
            if let key = replaced {
                let newKey = Self.postingsKey(term, lastRowid: open.last)
                if key == newKey { return }
                _ = try postings.remove(key)
            }
            _ = try postings.upsert(Self.postingsKey(term, lastRowid: open.last), open.bytes)
        }
    }
}
