import YapDBEngine
import YapDBFullText

/// The direct check of phrases on positions: for a query that is one phrase or an AND of
/// phrases (no prefix, no NEAR, no OR or NOT), a candidate row — one holding every term, from
/// the postings — is checked by reading only its positions for the query's terms and walking
/// the sorted lists: a phrase `t0 t1 … tn` matches where `t0` sits at position p of a column
/// and each `ti` at p + i of the same column (p = 0 for `^`; the column one the filter allows).
/// No token sequence is rebuilt and `FTSMatcher` is not run; the buffers are reused from row
/// to row. It answers exactly what `verify(_:)` answers (the tests compare them).
struct FullTextPhrasePlan {
    /// One phrase to check: indexes into `terms` in phrase order.
    struct Phrase {
        var terms: [Int]
        var mustStartColumn: Bool
        var columns: [Int]?
    }
    /// The distinct terms whose positions are read (the query's exact terms, indexable ones).
    let terms: [String]
    /// The phrases that need positions (a single word with no `^` and no filter does not).
    let phrases: [Phrase]

    /// nil when the query has a shape this check does not cover.
    init?(_ query: FTSQuery, state: FullTextState, exactTerms: Set<String>) {
        guard let root = query.root else { return nil }
        var leaves: [(FTSPhrase, [Int]?)] = []
        switch root {
        case .phrase(let p, let columns): leaves = [(p, columns)]
        case .and(let children):
            for child in children {
                guard case .phrase(let p, let columns) = child else { return nil }
                leaves.append((p, columns))
            }
        default: return nil
        }
        let terms = exactTerms.filter(state.isIndexable).sorted()
        var phrases: [Phrase] = []
        for (p, columns) in leaves {
            guard !p.lastIsPrefix, !p.terms.isEmpty else { return nil }
            guard p.terms.count > 1 || p.mustStartColumn || columns != nil else { continue }
            var indexes: [Int] = []
            for term in p.terms {
                // A term the index cannot hold has no postings, so no row gets here; stay safe.
                guard let i = terms.firstIndex(of: term) else { return nil }
                indexes.append(i)
            }
            phrases.append(Phrase(terms: indexes, mustStartColumn: p.mustStartColumn, columns: columns))
        }
        self.terms = terms
        self.phrases = phrases
    }
}

/// Buffers reused from one candidate row to the next.
final class FullTextPhraseScratch {
    /// Per term of the plan: its positions reader.
    var readers: [FullTextPositionsReader] = []
    /// Per term of the plan: its positions in the row as `column << 32 | position`, ascending.
    var hits: [[Int]] = []
    /// Per term of a phrase: how far its list has been walked.
    var cursors: [Int] = []
}

extension FullTextSearcher {
    /// Whether row `rowid` holds every phrase of `plan` (the row holds every term already).
    /// Each term's positions come from its reader, which reads them a block at a time in step
    /// with the ascending candidates; the row's document entry is not read (positions carry
    /// their columns, and `^` is position 0).
    func phraseMatches(_ rowid: UInt64, plan: FullTextPhrasePlan, scratch: FullTextPhraseScratch) throws(EngineError) -> Bool {
        if scratch.hits.count != plan.terms.count {
            scratch.hits = Array(repeating: [], count: plan.terms.count)
            scratch.readers = plan.terms.map { FullTextPositionsReader(state, term: $0) }
        }
        let columnCount = state.columnCount
        for i in plan.terms.indices {
            scratch.hits[i].removeAll(keepingCapacity: true)
            var damaged = false
            _ = try scratch.readers[i].withPositions(of: rowid) { raw in
                damaged = !Self.decodePositions(raw, columnCount: columnCount, into: &scratch.hits[i])
            }
            if damaged { throw FullTextPostingBlock.damaged }
        }
        for phrase in plan.phrases {
            guard Self.holds(phrase, scratch) else { return false }
        }
        return true
    }

    /// Whether the lists in `scratch` hold `phrase` (a merge: each list walked once).
    private static func holds(_ phrase: FullTextPhrasePlan.Phrase, _ scratch: FullTextPhraseScratch) -> Bool {
        let count = phrase.terms.count
        if scratch.cursors.count < count { scratch.cursors = Array(repeating: 0, count: count) }
        for i in 0..<count { scratch.cursors[i] = 0 }
        let first = phrase.terms[0]
        candidates: for start in scratch.hits[first] {
            let column = start >> 32
            if phrase.mustStartColumn && start & 0xFFFF_FFFF != 0 { continue }
            if let columns = phrase.columns, !columns.contains(column) { continue }
            for i in 1..<count {
                let list = phrase.terms[i], wanted = start + i
                var at = scratch.cursors[i]
                let hits = scratch.hits[list]
                while at < hits.count, hits[at] < wanted { at += 1 }
                scratch.cursors[i] = at
                if at == hits.count { return false }
                if hits[at] != wanted { continue candidates }
            }
            return true
        }
        return false
    }

    /// One row's positions (docs/format.md §11) into `out` as `column << 32 | position`; false
    /// for hostile bytes (the same checks as `FullTextPositions.decode`, positions below 2^31).
    private static func decodePositions(_ bytes: UnsafeRawBufferPointer, columnCount: Int, into out: inout [Int]) -> Bool {
        var reader = ByteReader(bytes)
        let maximum = Int(Int32.max)
        do {
            var column = 0, first = true
            while !reader.isAtEnd {
                let step = try reader.readLength(max: columnCount)
                guard first || step > 0 else { return false }
                first = false
                column += step
                guard column < columnCount else { return false }
                let count = try reader.readLength(max: reader.remaining)
                var position = 0
                for i in 0..<count {
                    let delta = try reader.readLength(max: maximum)
                    guard i == 0 || delta > 0 else { return false }
                    position += delta
                    guard position <= maximum else { return false }
                    out.append(column << 32 | position)
                }
            }
        } catch {
            return false
        }
        return true
    }
}
