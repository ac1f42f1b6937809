/// One token of a column's text, as the tokenizer produced it.
package struct FTSToken: Sendable, Hashable {
    /// The normalized term (case folded, diacritics removed, stemmed as the configuration says): what
    /// the term dictionary stores and what query terms are compared with.
    package var term: String
    /// The token's number within the column text, from 0. Phrases are consecutive positions.
    package var position: Int
    /// The source bytes of the token in the column text's UTF-8, for snippets and highlights.
    package var utf8Range: Range<Int>

    package init(term: String, position: Int, utf8Range: Range<Int>) {
        self.term = term
        self.position = position
        self.utf8Range = utf8Range
    }
}

/// One row's tokenized columns: what the matcher, the ranking and the snippets read.
package struct FTSDocument: Sendable {
    /// `columns[c]` holds column `c`'s tokens in position order (empty for a nil or token-less text).
    package var columns: [[FTSToken]]

    /// Tokenizes each column's text (nil text = empty column).
    package init(texts: [String?], tokenizer: FTSTokenizer) {
        columns = texts.map { text in text.map { tokenizer.tokens(in: $0) } ?? [] }
    }

    package init(columns: [[FTSToken]]) {
        self.columns = columns
    }

    /// Tokens in all columns: bm25's document length.
    package var tokenCount: Int { columns.reduce(0) { $0 + $1.count } }
}
