import YapDBEngine

/// The postings of rows inserted in a transaction and not yet merged into the trees, in a few
/// flat arrays instead of one small array per (term, row): each distinct term is named once
/// (`termNames`, found through `termIndex`), each (row, term) is one fixed-size `Entry`, and the
/// bytes that go into the postings block (the row's counts) and into the positions entry are
/// appended to two byte arrays. Rows arrive in ascending row id order, so the merge groups the
/// entries by term with one counting sort and finds each term's rows already in order
/// (FullTextState+Pending.swift). Never written to disk.
///
/// `byteSize` is what the arrays hold; the state merges when it passes the index's
/// `pendingLimit` (`YapDatabaseFullTextSearch.pendingBytesLimit`), so a transaction of any size
/// keeps at most about that much here.
struct FullTextPendingPostings: Sendable {
    /// One row's occurrences of one term.
    struct Entry: Sendable {
        var rowid: UInt64
        /// The term's place in `termNames`.
        var term: Int32
        /// The row's tokens over every column (the block's length bound).
        var length: Int
        /// The term's occurrences in the row over every column (the block's largest count).
        var total: Int
        /// Where the row's counts bytes start in `counts` (they end where the next entry's start).
        var countsStart: Int
        /// Where the row's positions bytes start in `positions`.
        var positionsStart: Int
    }

    /// A pending row's document entry, written by the merge once its terms have ids.
    struct Document: Sendable {
        var rowid: UInt64
        /// Where its lengths (one per column) start in `documentLengths`.
        var lengthsStart: Int
        /// Where its terms (places in `termNames`) start in `documentTerms`.
        var termsStart: Int
    }

    var termIndex: [String: Int32] = [:]
    var termNames: [String] = []
    var entries: [Entry] = []
    /// Each entry's counts as the postings block stores them: the number of columns holding
    /// the term, then (column step, occurrences) per column (docs/format.md §11).
    var counts: [UInt8] = []
    /// Each entry's positions (`FullTextPositions` bytes).
    var positions: [UInt8] = []
    var documents: [Document] = []
    var documentLengths: [Int] = []
    var documentTerms: [Int32] = []
    /// UTF-8 bytes of `termNames`.
    private var termBytes = 0

    var isEmpty: Bool { entries.isEmpty && documents.isEmpty }

    /// The highest row id waiting (rows are added in ascending order).
    var lastRowid: UInt64? { documents.last?.rowid }

    /// About the memory the buffer holds: the arrays' elements, and each distinct term's name
    /// and dictionary slot.
    var byteSize: Int {
        entries.count * MemoryLayout<Entry>.stride + counts.count + positions.count
            + documents.count * MemoryLayout<Document>.stride + documentLengths.count * 8 + documentTerms.count * 4
            + termBytes + termNames.count * 64
    }

    /// Adds row `rowid` (above every row waiting) with the terms of `analysis`.
    mutating func add(_ rowid: UInt64, _ analysis: FullTextAnalysis) {
        precondition(lastRowid.map { $0 < rowid } ?? true, "FullTextPendingPostings: row \(rowid) is not above the rows waiting")
        let length = analysis.totalLength
        documents.append(Document(rowid: rowid, lengthsStart: documentLengths.count, termsStart: documentTerms.count))
        documentLengths.append(contentsOf: analysis.lengths)
        for t in analysis.termNames.indices {
            let place = self.place(of: analysis.termNames[t])
            documentTerms.append(place)
            let countsStart = counts.count, positionsStart = positions.count
            let total = analysis.appendEncoded(t, counts: &counts, positions: &positions)
            entries.append(Entry(rowid: rowid, term: place, length: length, total: total,
                                 countsStart: countsStart, positionsStart: positionsStart))
        }
    }

    /// The place of `term` in `termNames`, adding it if new.
    private mutating func place(of term: String) -> Int32 {
        if let place = termIndex[term] { return place }
        let place = Int32(termNames.count)
        termIndex[term] = place
        termNames.append(term)
        termBytes += term.utf8.count
        return place
    }

    /// The counts bytes of entry `i`.
    func countsRange(_ i: Int) -> Range<Int> {
        entries[i].countsStart..<(i + 1 < entries.count ? entries[i + 1].countsStart : counts.count)
    }

    /// The positions bytes of entry `i`.
    func positionsRange(_ i: Int) -> Range<Int> {
        entries[i].positionsStart..<(i + 1 < entries.count ? entries[i + 1].positionsStart : positions.count)
    }

    /// The terms (places in `termNames`) of document `d`.
    func documentTermsRange(_ d: Int) -> Range<Int> {
        documents[d].termsStart..<(d + 1 < documents.count ? documents[d + 1].termsStart : documentTerms.count)
    }

    /// Entry `i` as a posting (for the general insert path).
    func posting(_ i: Int) -> FullTextPosting {
        var hits: [(column: Int, count: Int)] = []
        var column = 0
        var bytes = counts[countsRange(i)].makeIterator()
        // The bytes were written by `add`: well-formed varints.
        func next() -> Int {
            var value = 0, shift = 0
            while let byte = bytes.next() {
                value |= Int(byte & 0x7F) << shift
                if byte < 0x80 { break }
                shift += 7
            }
            return value
        }
        let columns = next()
        for _ in 0..<columns {
            column += next()
            hits.append((column, next()))
        }
        return FullTextPosting(rowid: entries[i].rowid, hits: hits)
    }

    /// The entries' places grouped by term, each term's in row id order (a stable counting
    /// sort): `order[starts[t]..<starts[t + 1]]` are term `t`'s.
    func groupedByTerm() -> (order: [Int32], starts: [Int]) {
        var starts = [Int](repeating: 0, count: termNames.count + 1)
        for entry in entries { starts[Int(entry.term) + 1] += 1 }
        for t in 0..<termNames.count { starts[t + 1] += starts[t] }
        var cursor = starts
        var order = [Int32](repeating: 0, count: entries.count)
        for (i, entry) in entries.enumerated() {
            order[cursor[Int(entry.term)]] = Int32(i)
            cursor[Int(entry.term)] += 1
        }
        return (order, starts)
    }

    /// Empties the buffer; `keepingCapacity` keeps the arrays' memory for the next rows of the
    /// same transaction.
    mutating func removeAll(keepingCapacity: Bool) {
        termIndex.removeAll(keepingCapacity: keepingCapacity)
        termNames.removeAll(keepingCapacity: keepingCapacity)
        entries.removeAll(keepingCapacity: keepingCapacity)
        counts.removeAll(keepingCapacity: keepingCapacity)
        positions.removeAll(keepingCapacity: keepingCapacity)
        documents.removeAll(keepingCapacity: keepingCapacity)
        documentLengths.removeAll(keepingCapacity: keepingCapacity)
        documentTerms.removeAll(keepingCapacity: keepingCapacity)
        termBytes = 0
    }
}
