/// A malformed full-text query or tokenizer option.
///
/// Thrown by `FTSQuery.parse` and `FTSTokenizerConfig.init(tokenizeOption:)`. Never a trap:
/// every input text either parses or gives one of these, with the UTF-8 offset of the place the
/// parser stopped, so the caller can point at it.
package struct FTSError: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Kind: Sendable, Hashable {
        /// A token that the grammar does not allow where it stands (a stray `)`, `:`, `*`, `AND` at the start…).
        case unexpectedToken
        /// A `"` without its closing `"`.
        case unterminatedString
        /// A `(` or `{` without its closing partner, or a closing one without its opener.
        case unbalancedParenthesis
        /// A column filter names a column the index does not have.
        case unknownColumn
        /// Nothing to search where an expression is required (an empty query, `()`, `a AND`).
        case emptyExpression
        /// A malformed NEAR group: `NEAR(` without phrases, a bad distance, `^` inside it.
        case badNear
        /// A tokenizer option the tokenizers do not understand.
        case badOption
        /// The query is longer than `FTSQuery.maximumLength` UTF-8 bytes or has more than `FTSQuery.maximumPhrases` phrases.
        case tooLong
        /// Parentheses (or a chain of NOTs) nested deeper than `FTSQuery.maximumDepth`.
        case tooDeep
    }

    package var kind: Kind
    /// UTF-8 offset into the query (or option) text where the problem was found.
    package var offset: Int
    /// A sentence for people: what is wrong and where.
    package var message: String

    package init(_ kind: Kind, offset: Int, _ message: String) {
        self.kind = kind
        self.offset = offset
        self.message = message
    }

    package var description: String { "\(message) (at UTF-8 offset \(offset))" }
}
