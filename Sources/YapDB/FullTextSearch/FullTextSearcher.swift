import YapDBEngine
import YapDBFullText

/// Runs one parsed query against one snapshot's index.
///
/// **Plan.** Each node of the query becomes a cursor over row ids (`FullTextCursor`): a word is
/// its postings, a prefix the union of the postings of the terms in its key range of the term
/// dictionary, `AND` a leapfrog that seeks each side past the other (skipping whole blocks),
/// `OR` a union, `NOT` the left side minus the right. A cursor is *exact* when every row it
/// gives matches its node (words, prefixes and the boolean operators over them); phrases,
/// `NEAR`, `^` and column filters give the rows holding all their terms — a superset — and
/// each such row is checked against the query on its terms' positions (`document(_:)`, which
/// rebuilds the row's token sequence for the query's terms only, and `FTSMatcher`). `NOT` whose
/// right side is not exact is checked the same way. So a plain query never reads positions.
///
/// **Ranking.** bm25 as SQLite FTS5 computes it (`FTSRanking`). A query of one word ranks by
/// walking its blocks with their skip data: once `limit` rows are held, a block whose best
/// possible score (its largest count, its shortest row) cannot beat the worst held is not
/// decoded, and a row whose bound cannot is not looked up. Other queries score every match.
struct FullTextSearcher {
    let state: FullTextState
    let query: FTSQuery
    /// The query's leaf phrases, in order, with the columns each is restricted to.
    let leaves: [(phrase: FTSPhrase, columns: [Int]?)]
    /// Terms the query names exactly, and prefixes it names.
    let exactTerms: Set<String>
    let prefixes: [String]
    /// Each term's positions, read a block at a time as candidate rows ascend.
    let positionsReaders = FullTextPositionsReaders()

    init(state: FullTextState, query: FTSQuery) {
        self.state = state
        self.query = query
        var leaves: [(phrase: FTSPhrase, columns: [Int]?)] = []
        func walk(_ node: FTSQueryNode) {
            switch node {
            case .phrase(let p, let columns): leaves.append((p, columns))
            case .near(let phrases, _, let columns): for p in phrases { leaves.append((p, columns)) }
            case .and(let children), .or(let children): children.forEach(walk)
            case .not(let a, let b): walk(a); walk(b)
            }
        }
        if let root = query.root { walk(root) }
        self.leaves = leaves
        var exact = Set<String>(), prefixes: [String] = []
        for phrase in query.phrases {
            for (i, term) in phrase.terms.enumerated() {
                if i == phrase.terms.count - 1 && phrase.lastIsPrefix { prefixes.append(term) } else { exact.insert(term) }
            }
        }
        exactTerms = exact
        self.prefixes = prefixes
    }

    // MARK: Plan

    /// The rows of one term, or of every term starting with it.
    func cursor(term: String, prefix: Bool) throws(EngineError) -> FullTextCursor {
        guard prefix else {
            return state.isIndexable(term) ? FullTextTermCursor(state, term: term) : FullTextCursor()
        }
        let expanded = try expand(prefix: term)
        switch expanded.count {
        case 0: return FullTextCursor()
        case 1: return FullTextTermCursor(state, term: expanded[0])
        case ...8: return FullTextOrCursor(expanded.map { FullTextTermCursor(state, term: $0) })
        default:
            // Many terms: gather their row ids once (row ids only), rather than merging many cursors.
            var all: [UInt64] = []
            for term in expanded {
                guard let id = try state.termID(term) else { continue }
                let prefix = FullTextState.termPrefix(id)
                var blocks: [[UInt8]] = []
                try state.postings.forEachInKeyRange(from: KeyBound(prefix), to: nil) { key, value in
                    guard FullTextState.key(key, hasPrefix: prefix, tail: 8) else { return false }
                    blocks.append(Array(value))
                    return true
                }
                for block in blocks {
                    try block.withBytes { raw throws(EngineError) in try FullTextPostingBlock.rowids(of: raw, into: &all) }
                }
            }
            all.sort()
            var unique: [UInt64] = []
            unique.reserveCapacity(all.count)
            for rowid in all where unique.last != rowid { unique.append(rowid) }
            return FullTextListCursor(unique)
        }
    }

    /// The indexed terms that start with `prefix` (a key range of the term dictionary).
    func expand(prefix: String) throws(EngineError) -> [String] {
        let bytes = Array(prefix.utf8)
        var found: [String] = []
        try state.terms.forEachInKeyRange(from: KeyBound(bytes), to: nil) { key, _ in
            // Term id entries (0x00 …) are not terms.
            if FullTextState.isTermIDKey(key) { return true }
            guard key.starts(with: bytes) else { return false }
            if let term = String(validating: key, as: UTF8.self) { found.append(term) }
            return true
        }
        return found
    }

    /// A cursor for `node` and whether every row it gives matches the node.
    func plan(_ node: FTSQueryNode) throws(EngineError) -> (cursor: FullTextCursor, exact: Bool) {
        switch node {
        case .phrase(let p, let columns):
            if p.terms.isEmpty { return (FullTextCursor(), false) }
            let exact = p.terms.count == 1 && !p.mustStartColumn && columns == nil
            return (try termsCursor([p]), exact)
        case .near(let phrases, _, _):
            return (try termsCursor(phrases), false)
        case .and(let children):
            var cursors: [FullTextCursor] = [], exact = true
            for child in children {
                let planned = try plan(child)
                cursors.append(planned.cursor)
                exact = exact && planned.exact
            }
            if cursors.isEmpty { return (FullTextAllCursor(state), true) }
            return (cursors.count == 1 ? cursors[0] : FullTextAndCursor(cursors), exact)
        case .or(let children):
            var cursors: [FullTextCursor] = [], exact = true
            for child in children {
                let planned = try plan(child)
                cursors.append(planned.cursor)
                exact = exact && planned.exact
            }
            return (cursors.count == 1 ? cursors[0] : FullTextOrCursor(cursors), exact)
        case .not(let base, let excluded):
            let left = try plan(base), right = try plan(excluded)
            guard right.exact else { return (left.cursor, false) }
            return (FullTextNotCursor(left.cursor, excluding: right.cursor), left.exact)
        }
    }

    /// Rows holding every term of `phrases` (the last of each a prefix when it says so).
    private func termsCursor(_ phrases: [FTSPhrase]) throws(EngineError) -> FullTextCursor {
        var cursors: [FullTextCursor] = []
        for phrase in phrases {
            for (i, term) in phrase.terms.enumerated() {
                cursors.append(try cursor(term: term, prefix: i == phrase.terms.count - 1 && phrase.lastIsPrefix))
            }
        }
        if cursors.isEmpty { return FullTextAllCursor(state) }
        return cursors.count == 1 ? cursors[0] : FullTextAndCursor(cursors)
    }

    // MARK: Matching

    /// Calls `body` with each matching row id, ascending, until it returns false.
    func forEachMatch(_ body: (UInt64) throws(EngineError) -> Bool) throws(EngineError) {
        guard let root = query.root else { return }
        let (cursor, exact) = try plan(root)
        // Phrases (and `^`, column filters) are checked on the positions directly when the
        // query's shape allows; otherwise each candidate goes through `FTSMatcher`.
        let direct = exact || !prefixes.isEmpty ? nil : FullTextPhrasePlan(query, state: state, exactTerms: exactTerms)
        let scratch = FullTextPhraseScratch()
        var target: UInt64 = 0
        while let rowid = try cursor.seek(target) {
            let keep: Bool
            if exact {
                keep = true
            } else if let direct {
                keep = try phraseMatches(rowid, plan: direct, scratch: scratch)
            } else {
                keep = try verify(rowid)
            }
            if keep {
                guard try body(rowid) else { return }
            }
            guard rowid < .max else { return }
            target = rowid + 1
        }
    }

    /// The number of matching rows (no row is loaded; positions only for inexact plans). A
    /// query of one plain word is answered from the term dictionary's row count alone.
    func count() throws(EngineError) -> Int {
        if case .phrase(let p, nil)? = query.root, p.terms.count == 1, !p.lastIsPrefix, !p.mustStartColumn {
            return state.isIndexable(p.terms[0]) ? try state.frequency(p.terms[0]) : 0
        }
        var n = 0
        try forEachMatch { _ in n += 1; return true }
        return n
    }

    /// Whether row `rowid` matches.
    func matches(_ rowid: UInt64) throws(EngineError) -> Bool {
        guard let root = query.root else { return false }
        let (cursor, exact) = try plan(root)
        guard try cursor.seek(rowid) == rowid else { return false }
        if exact { return true }
        if prefixes.isEmpty, let direct = FullTextPhrasePlan(query, state: state, exactTerms: exactTerms) {
            return try phraseMatches(rowid, plan: direct, scratch: FullTextPhraseScratch())
        }
        return try verify(rowid)
    }

    /// Checks a candidate row against the whole query on its terms' positions, by rebuilding
    /// its token sequence and running `FTSMatcher` (the general path; the reference
    /// `phraseMatches(_:plan:scratch:)` is tested against).
    func verify(_ rowid: UInt64) throws(EngineError) -> Bool {
        guard let document = try document(rowid) else { return false }
        return FTSMatcher.matches(query, document)
    }

    /// Row `rowid`'s token sequence as far as the query can see it: per column, the query's
    /// terms (and the terms under its prefixes) at their positions, and a placeholder that
    /// matches nothing for each run of other tokens. Built from the positions tree and the
    /// row's stored lengths; nil when the row is not indexed.
    func document(_ rowid: UInt64) throws(EngineError) -> FTSDocument? {
        // The query's terms and the indexed terms under its prefixes (expanded once per
        // searcher); a row without one has no positions for it.
        guard let lengths = try documentLengths(rowid) else { return nil }
        let terms = try positionsReaders.terms {
            () throws(EngineError) -> [String] in
            var all = Set(exactTerms.filter(state.isIndexable))
            for prefix in prefixes { all.formUnion(try expand(prefix: prefix)) }
            return all.sorted()
        }
        // The query's terms where the row has them, by column and position.
        var placed = [[Int: String]](repeating: [:], count: lengths.count)
        for term in terms {
            var bytes: [UInt8] = []
            guard try positionsReaders.reader(term, state).withPositions(of: rowid, { bytes = Array($0) }) else { continue }
            let maximum = lengths.max() ?? 0
            let decoded = try bytes.withBytes { raw throws(EngineError) in
                try FullTextPositions.decode(raw, columnCount: state.columnCount, maximumPosition: maximum)
            }
            for (column, positions) in decoded {
                for position in positions where position < lengths[column] { placed[column][position] = term }
            }
        }
        // Each run of other tokens becomes one placeholder: phrases still cannot span it, `^`
        // still sees whether the column starts with a query term, and NEAR reads the tokens'
        // true positions. So the sequence's size is the query's hits, not the row's length
        // (whatever a damaged entry claims).
        var columns: [[FTSToken]] = []
        columns.reserveCapacity(placed.count)
        for hits in placed {
            var tokens: [FTSToken] = []
            var next = 0
            for position in hits.keys.sorted() {
                if position > next { tokens.append(FTSToken(term: Self.placeholder, position: next, utf8Range: 0..<0)) }
                tokens.append(FTSToken(term: hits[position]!, position: position, utf8Range: 0..<0))
                next = position + 1
            }
            columns.append(tokens)
        }
        return FTSDocument(columns: columns)
    }

    /// A token no query term equals or starts with.
    static let placeholder = "\u{0}"
}
