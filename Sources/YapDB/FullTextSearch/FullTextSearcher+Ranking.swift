import YapDBEngine
import YapDBFullText

extension FullTextSearcher {
    /// A ranked match: the row and its bm25 score (higher is better).
    struct Ranked {
        var rowid: UInt64
        var score: Double
    }

    /// Whether `a` ranks before `b`: the higher score, then the lower row id.
    static func before(_ a: Ranked, _ b: Ranked) -> Bool {
        a.score != b.score ? a.score > b.score : a.rowid < b.rowid
    }

    /// The matches in bm25 order (best first; equal scores by row id), at most `limit` of them.
    /// - Parameter weights: one per column (missing ones are 1; extra ones ignored).
    func ranked(weights: [Double], limit: Int?) throws(EngineError) -> (matches: [Ranked], blocksSkipped: Int) {
        guard let root = query.root, limit != 0 else { return ([], 0) }
        let weights = (0..<state.columnCount).map { $0 < weights.count ? weights[$0] : 1 }
        if case .phrase(let p, nil) = root, p.terms.count == 1, !p.lastIsPrefix, !p.mustStartColumn {
            return try rankTerm(p.terms[0], weights: weights, limit: limit)
        }
        let idfs = try leaves.indices.map { i throws(EngineError) in
            FTSRanking.idf(documentCount: state.documentCount, documentsMatching: try documentsMatching(leaf: i))
        }
        var all: [Ranked] = []
        try forEachMatch { rowid throws(EngineError) in
            guard let document = try document(rowid), let length = try documentLength(rowid) else { return true }
            let hits = FTSMatcher.phraseHitCounts(query, document)
            all.append(Ranked(rowid: rowid, score: FTSRanking.bm25(hitCounts: hits, idfs: idfs, weights: weights,
                                                                   documentLength: length, averageLength: averageLength)))
            return true
        }
        all.sort(by: Self.before)
        if let limit, all.count > limit { all.removeSubrange(limit...) }
        return (all, 0)
    }

    /// Tokens per indexed row, on average (bm25's `avgdl`).
    var averageLength: Double {
        state.documentCount > 0 ? Double(state.totalLength) / Double(state.documentCount) : 0
    }

    /// The rows holding leaf phrase `i` (with its column filter) anywhere: bm25's `n` for its idf.
    func documentsMatching(leaf i: Int) throws(EngineError) -> Int {
        let (phrase, columns) = leaves[i]
        if phrase.terms.count == 1, !phrase.mustStartColumn, columns == nil {
            if !phrase.lastIsPrefix { return state.isIndexable(phrase.terms[0]) ? try state.frequency(phrase.terms[0]) : 0 }
            let cursor = try cursor(term: phrase.terms[0], prefix: true)
            var n = 0, target: UInt64 = 0
            while let rowid = try cursor.seek(target) {
                n += 1
                guard rowid < .max else { break }
                target = rowid + 1
            }
            return n
        }
        // Rows holding the phrase's terms, checked on positions against the phrase alone (as
        // FTS5 counts a phrase of a NEAR group: its rows, not its clumps).
        let alone = FTSQuery(root: .phrase(phrase, columns: columns), phrases: [phrase])
        let (cursor, _) = try plan(.phrase(phrase, columns: columns))
        var n = 0, target: UInt64 = 0
        while let rowid = try cursor.seek(target) {
            if let document = try document(rowid), FTSMatcher.matches(alone, document) { n += 1 }
            guard rowid < .max else { break }
            target = rowid + 1
        }
        return n
    }

    /// Row `rowid`'s length over every column, from its document entry's first chunk only.
    func documentLength(_ rowid: UInt64) throws(EngineError) -> Int? {
        try documentLengths(rowid)?.reduce(0, +)
    }

    /// Row `rowid`'s length per column, from its document entry's first chunk only (nil: the
    /// row is not indexed).
    func documentLengths(_ rowid: UInt64) throws(EngineError) -> [Int]? {
        guard let bytes = try state.documents.value(forKey: FullTextState.documentKey(rowid, chunk: 0)) else { return nil }
        return try bytes.withBytes { raw throws(EngineError) in
            var reader = ByteReader(raw)
            do {
                let columns = try reader.readLength(max: state.columnCount)
                guard columns == state.columnCount else { throw FullTextPostingBlock.bad }
                var lengths: [Int] = []
                lengths.reserveCapacity(columns)
                for _ in 0..<columns { lengths.append(try reader.readLength(max: Int(Int32.max))) }
                return lengths
            } catch {
                throw FullTextPostingBlock.damaged
            }
        }
    }

    /// Top-`limit` rows of a one-word query, walking its blocks with their skip data.
    private func rankTerm(_ term: String, weights: [Double], limit: Int?) throws(EngineError) -> (matches: [Ranked], blocksSkipped: Int) {
        guard let entry = state.isIndexable(term) ? try state.termEntry(Array(term.utf8)) : nil else { return ([], 0) }
        let id = entry.id
        let idf = FTSRanking.idf(documentCount: state.documentCount, documentsMatching: entry.count)
        let average = averageLength
        // Bounds hold only when no weight is negative (a count then never lowers a score).
        let bounded = limit != nil && weights.allSatisfy { $0 >= 0 }
        let best = weights.indices.max { weights[$0] < weights[$1] } ?? 0
        func score(_ hits: [Int], _ length: Int) -> Double {
            FTSRanking.bm25(hitCounts: [hits], idfs: [idf], weights: weights, documentLength: length, averageLength: average)
        }
        func bound(_ count: Int, _ length: Int) -> Double {
            var hits = [Int](repeating: 0, count: weights.count)
            hits[best] = count
            return score(hits, length)
        }
        var held: [Ranked] = []   // sorted, best first; at most `limit`
        var skipped = 0
        var target: UInt64 = 0
        while let (key, bytes) = try state.block(id, atOrAfter: target) {
            let last = key.withUnsafeBytes { FullTextState.lastRowid(ofKey: $0) }
            let header = try bytes.withBytes { raw throws(EngineError) in try FullTextPostingBlock.header(of: raw) }
            let full = limit.map { held.count >= $0 } ?? false
            // Every row of this block comes after the held ones: a tie loses too.
            if bounded, full, let worst = held.last, bound(header.maximumCount, header.minimumLength) <= worst.score {
                skipped += 1
            } else {
                let block = try bytes.withBytes { raw throws(EngineError) in
                    try FullTextPostingBlock(decoding: raw, columnCount: state.columnCount)
                }
                for posting in block.postings {
                    var hits = [Int](repeating: 0, count: weights.count)
                    for hit in posting.hits { hits[hit.column] = hit.count }
                    let isFull = limit.map { held.count >= $0 } ?? false
                    if bounded, isFull, let worst = held.last, score(hits, block.minimumLength) <= worst.score {
                        continue
                    }
                    guard let length = try documentLength(posting.rowid) else { throw FullTextPostingBlock.damaged }
                    let ranked = Ranked(rowid: posting.rowid, score: score(hits, length))
                    guard limit != nil else {
                        held.append(ranked)
                        continue
                    }
                    if let limit, held.count >= limit {
                        guard let worst = held.last, Self.before(ranked, worst) else { continue }
                        held.removeLast()
                    }
                    let at = held.firstIndex { Self.before(ranked, $0) } ?? held.count
                    held.insert(ranked, at: at)
                }
            }
            guard last < .max else { break }
            target = last + 1
        }
        if limit == nil { held.sort(by: Self.before) }
        return (held, skipped)
    }
}
