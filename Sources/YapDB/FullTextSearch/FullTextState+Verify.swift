import YapDBEngine

/// `YapDatabase.verify()`'s checks of a full-text index: the engine checks the trees' pages
/// (`validatePages`); the extension compares the index with a rebuild from the handler.
extension FullTextState {
    /// The most differences reported for one index (the count of the rest is added).
    static let reportedDifferences = 20

    /// The ways this index differs from `expected` (a rebuild), one line each; empty when equal.
    /// Postings are compared row by row (blocks may be cut differently after updates), and
    /// each block's skip data is checked against its rows.
    /// - Throws: `EngineError` when a page of either cannot be read.
    func differences(from expected: FullTextState) throws(EngineError) -> [String] {
        var problems: [String] = []
        if documentCount != expected.documentCount {
            problems.append("\(documentCount) documents counted, \(expected.documentCount) indexed by a rebuild")
        }
        if totalLength != expected.totalLength {
            problems.append("total length \(totalLength), a rebuild has \(expected.totalLength)")
        }
        // Term ids depend on the order terms came in: compare by term.
        let myTerms = try termCounts(checking: &problems), theirTerms = try expected.termCounts(checking: &problems)
        if myTerms != theirTerms {
            problems.append("the terms tree differs from a rebuild (\(myTerms.count) terms, expected \(theirTerms.count))")
        }
        if try documentsByTerm() != expected.documentsByTerm() {
            problems.append("the documents tree differs from a rebuild (\(documents.count) entries, expected \(expected.documents.count))")
        }
        let mine = try allPostings(checking: &problems), theirs = try expected.allPostings(checking: &problems)
        if mine != theirs {
            let differing = Set(mine.keys).union(theirs.keys).filter { mine[$0] != theirs[$0] }.sorted()
            for term in differing.prefix(5) { problems.append("the postings of \"\(term)\" differ from a rebuild") }
        }
        guard problems.count > Self.reportedDifferences else { return problems }
        return Array(problems.prefix(Self.reportedDifferences)) + ["and \(problems.count - Self.reportedDifferences) more"]
    }

    /// Every term's row count, each term's id entry checked to name it back.
    func termCounts(checking problems: inout [String]) throws(EngineError) -> [String: Int] {
        var entries: [([UInt8], [UInt8])] = []
        try terms.forEach { key, value in entries.append((Array(key), Array(value))); return true }
        var counts: [String: Int] = [:]
        var idEntries = 0
        for (key, value) in entries {
            if key.first == Self.separator {
                idEntries += 1
                continue
            }
            let entry = try value.withBytes { raw throws(EngineError) in try Self.decodeTermEntry(raw) }
            guard let term = String(validating: key, as: UTF8.self) else {
                problems.append("a term is not UTF-8")
                continue
            }
            if try termName(entry.id) != term { problems.append("the id of \"\(term)\" names another term") }
            counts[term] = entry.count
        }
        if idEntries != counts.count { problems.append("\(idEntries) term ids for \(counts.count) terms") }
        return counts
    }

    /// Every document entry with its terms by name: row id → its lengths (as text), then its
    /// terms sorted.
    func documentsByTerm() throws(EngineError) -> [UInt64: [String]] {
        var rowids: [UInt64] = []
        try documents.forEach { key, _ in
            if key.count == 9, key[8] == 0 { rowids.append(Self.lastRowid(ofKey: UnsafeRawBufferPointer(rebasing: key[0..<8]))) }
            return true
        }
        var all: [UInt64: [String]] = [:]
        for rowid in rowids {
            guard let stored = try document(rowid) else { continue }
            var names: [String] = []
            for id in stored.termIDs { names.append(try termName(id)) }
            all[rowid] = stored.lengths.map { "\($0)" } + names.sorted()
        }
        return all
    }

    /// Whether two trees hold the same entries.
    static func sameEntries(_ a: ExtensionTree, _ b: ExtensionTree) throws(EngineError) -> Bool {
        guard a.count == b.count else { return false }
        var left: [([UInt8], [UInt8])] = []
        try a.forEach { key, value in left.append((Array(key), Array(value))); return true }
        var i = 0, same = true
        try b.forEach { key, value in
            guard i < left.count, left[i].0.elementsEqual(key), left[i].1.elementsEqual(value) else { same = false; return false }
            i += 1
            return true
        }
        return same && i == left.count
    }

    /// One row of a term's postings with its positions bytes, as `allPostings` compares them.
    struct StoredRow: Equatable {
        var posting: FullTextPosting
        var positions: [UInt8]
    }

    /// Every term's postings with their positions, decoded, with each block checked: its key's
    /// row id is its last, blocks of a term ascend, its header's largest count is right, its
    /// length bound holds, and its positions entry has one row per posting; and no positions
    /// entry is left without its block.
    func allPostings(checking problems: inout [String]) throws(EngineError) -> [String: [StoredRow]] {
        var all: [String: [StoredRow]] = [:]
        var failure: EngineError?
        var blocks: [([UInt8], [UInt8])] = []
        try postings.forEach { key, value in blocks.append((Array(key), Array(value))); return true }
        var names: [UInt32: String] = [:]
        for (key, value) in blocks {
            guard key.count == Self.postingsKeySize else {
                problems.append("a postings key is malformed")
                continue
            }
            let id = key.withUnsafeBytes { Self.termID(ofKey: $0) }
            if names[id] == nil { names[id] = try? termName(id) }
            guard let term = names[id] else {
                problems.append("a postings block is filed under term id \(id), which names no term")
                continue
            }
            do throws(EngineError) {
                let block = try value.withBytes { raw throws(EngineError) in try FullTextPostingBlock(decoding: raw, columnCount: columnCount) }
                let header = try value.withBytes { raw throws(EngineError) in try FullTextPostingBlock.header(of: raw) }
                let last = key.withUnsafeBytes { Self.lastRowid(ofKey: $0) }
                if block.lastRowid != last { problems.append("a block of \"\(term)\" is filed under row \(last), ends at \(block.lastRowid)") }
                if header.maximumCount != block.maximumCount { problems.append("a block of \"\(term)\" has a wrong largest count") }
                for posting in block.postings {
                    if let stored = try document(posting.rowid), stored.totalLength < block.minimumLength {
                        problems.append("a block of \"\(term)\" bounds lengths above row \(posting.rowid)'s")
                    }
                }
                let rowPositions = try blockRowPositions(key, count: block.postings.count)
                var list = all[term] ?? []
                if let previous = list.last, let first = block.postings.first, previous.posting.rowid >= first.rowid {
                    problems.append("the blocks of \"\(term)\" are out of order")
                }
                for (posting, positions) in zip(block.postings, rowPositions) { list.append(StoredRow(posting: posting, positions: positions)) }
                all[term] = list
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        var firstChunks = 0
        try positions.forEach { key, _ in
            if key.last == 0 { firstChunks += 1 }
            return true
        }
        if firstChunks != blocks.count {
            problems.append("\(firstChunks) positions entries for \(blocks.count) postings blocks")
        }
        return all
    }

    /// Figures for `stats()`: terms, postings blocks, each tree's entry bytes, indexed rows and
    /// the pages the trees occupy.
    func figures() throws(EngineError) -> YapDatabaseFullTextSearchStats {
        func bytes(_ tree: ExtensionTree) throws(EngineError) -> Int {
            var total = 0
            try tree.forEach { key, value in total += key.count + value.count; return true }
            return total
        }
        let ids = try terms.positions(from: KeyBound([Self.separator]), to: KeyBound([1], inclusive: false)).count
        let pages = try occupiedPageCount()
        return YapDatabaseFullTextSearchStats(terms: terms.count - ids, postingsBlocks: postings.count, postingsBytes: try bytes(postings),
                                              positionsBytes: try bytes(positions), documents: documentCount,
                                              termsBytes: try bytes(terms), documentsBytes: try bytes(documents),
                                              pageBytes: pages * terms.pageSize)
    }
}
