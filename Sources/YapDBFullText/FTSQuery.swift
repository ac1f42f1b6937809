/// One phrase of a query: consecutive tokens that must appear in this order.
package struct FTSPhrase: Sendable, Hashable {
    /// Normalized terms in order (the tokenizer's output for the query strings); never empty.
    package var terms: [String]
    /// `x*` or `"x y"*`: the last term matches every term that starts with it.
    package var lastIsPrefix: Bool
    /// `^x`: the phrase must start at the column's first token.
    package var mustStartColumn: Bool

    package init(terms: [String], lastIsPrefix: Bool = false, mustStartColumn: Bool = false) {
        self.terms = terms
        self.lastIsPrefix = lastIsPrefix
        self.mustStartColumn = mustStartColumn
    }
}

/// A parsed query expression. Column filters are pushed down to the leaves when parsing, so
/// `x:(a OR b)` becomes `.or([.phrase(a, [x]), .phrase(b, [x])])`.
package indirect enum FTSQueryNode: Sendable, Hashable {
    /// The phrase appears in one of `columns` (indexes into the column names; nil = any column).
    case phrase(FTSPhrase, columns: [Int]?)
    /// Every phrase appears in the same column, all within a clump where at most `distance` tokens
    /// lie between the end of the first phrase and the start of the last (FTS5's NEAR; default 10).
    case near([FTSPhrase], distance: Int, columns: [Int]?)
    /// Every child matches (explicit `AND` and the implicit AND of adjacent terms).
    case and([FTSQueryNode])
    /// Some child matches.
    case or([FTSQueryNode])
    /// `a NOT b`: the first matches and the second does not.
    case not(FTSQueryNode, excluding: FTSQueryNode)
}

/// A parsed full-text query, ready for the index or for `FTSMatcher`.
package struct FTSQuery: Sendable, Hashable {
    /// nil when the text holds no term at all (an empty query, `""`, only punctuation inside quotes): matches nothing.
    package var root: FTSQueryNode?
    /// Every leaf phrase in query order: FTS5's phrase numbering, the order of bm25's and the
    /// matcher's per-phrase arrays. A phrase in an FTS4 chain `a NEAR/2 b NEAR/3 c` is listed once per group it is in.
    package var phrases: [FTSPhrase]

    /// Query texts longer than this many UTF-8 bytes are refused (`FTSError.Kind.tooLong`).
    package static let maximumLength = 65_536
    /// Queries with more leaf phrases than this are refused (`FTSError.Kind.tooLong`).
    package static let maximumPhrases = 1_024
    /// Parentheses nested deeper than this, or a chain of more NOTs (each nests the tree one level,
    /// counted with the parentheses around it), are refused (`FTSError.Kind.tooDeep`), so walking a
    /// parsed tree never recurses deeply.
    package static let maximumDepth = 64
    /// The largest NEAR distance accepted (`FTSError.Kind.badNear` beyond it).
    package static let maximumNearDistance = 1_000_000

    package init(root: FTSQueryNode?, phrases: [FTSPhrase]) {
        self.root = root
        self.phrases = phrases
    }

    /// Parses `text` in FTS5's query syntax (with FTS4's `a NEAR/n b`; see docs/architecture.md,
    /// "Full-text search"), tokenizing every string with `tokenizer`.
    ///
    /// - Parameters:
    ///   - columnNames: the index's columns, for `col:` filters (compared ignoring ASCII case).
    /// - Throws: `FTSError` with the UTF-8 offset of the first problem. Never traps, whatever the text.
    package static func parse(_ text: String, columnNames: [String], tokenizer: FTSTokenizer) throws(FTSError) -> FTSQuery {
        var parser = try FTSQueryParser(text: text, columnNames: columnNames, tokenizer: tokenizer)
        return try parser.parseQuery()
    }

    /// Per leaf phrase (`phrases` order), the column filter it carries (nil: any column). bm25's idf
    /// counts the rows where the phrase occurs in these columns, ignoring any NEAR group around it (as FTS5 does).
    package var phraseColumnFilters: [[Int]?] {
        var result: [[Int]?] = []
        func walk(_ node: FTSQueryNode) {
            switch node {
            case .phrase(_, let columns): result.append(columns)
            case .near(let group, _, let columns): result.append(contentsOf: Array(repeating: columns, count: group.count))
            case .and(let children), .or(let children): children.forEach(walk)
            case .not(let left, let right): walk(left); walk(right)
            }
        }
        if let root { walk(root) }
        return result
    }

    /// Leaf phrases in the order they appear in `node` (the order `phrases` lists them).
    package static func leafPhrases(of node: FTSQueryNode?) -> [FTSPhrase] {
        var result: [FTSPhrase] = []
        func walk(_ node: FTSQueryNode) {
            switch node {
            case .phrase(let phrase, _): result.append(phrase)
            case .near(let group, _, _): result.append(contentsOf: group)
            case .and(let children), .or(let children): children.forEach(walk)
            case .not(let left, let right): walk(left); walk(right)
            }
        }
        if let node { walk(node) }
        return result
    }
}
