/// Why a query cannot be used: its text is malformed, names a column the index does not have,
/// or its parameters do not fit. Never a trap; the public layer turns it into
/// `YapDatabaseError.invalidQuery(offset:reason:)`.
///
/// Threading: a plain value; safe to pass between threads.
package struct QueryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    package enum Reason: Sendable, Hashable {
        /// A token that cannot stand here; `expected` says what could.
        case unexpectedToken(String, expected: String)
        /// The text ended where `expected` was needed.
        case unexpectedEnd(expected: String)
        /// A `'` string literal with no closing quote.
        case unterminatedString
        /// A `"…"`, `[…]` or `` `…` `` identifier with no closing delimiter.
        case unterminatedIdentifier
        /// A character that starts no token.
        case unexpectedCharacter(Character)
        /// A number that does not read (`1e`, `0x`, a blob literal with an odd digit count).
        case malformedNumber(String)
        /// A column the index does not have.
        case unknownColumn(String)
        /// The text has `expected` `?`s but `given` parameters came.
        case wrongParameterCount(expected: Int, given: Int)
        /// The parameter at `index` (from 0) has a type a query cannot bind (`typeName`).
        case unsupportedParameter(index: Int, typeName: String)
        /// The parameter at `index` is an array but its `?` is not an element of an `IN` list.
        case listParameterOutsideIn(index: Int)
        /// `LIMIT` or `OFFSET` is not an integer.
        case limitNotInteger
        /// A construct of SQL the query language does not support (`?NNN`, a function call).
        case unsupported(String)
        /// An aggregate function that is not `COUNT`, `SUM`, `TOTAL`, `AVG`, `MIN` or `MAX` of
        /// a column (or `COUNT(*)`).
        case invalidAggregate(String)
        /// A `LIKE` pattern of `bytes` UTF-8 bytes, over ``LikePattern/maximumPatternBytes``
        /// (SQLite's `SQLITE_MAX_LIKE_PATTERN_LENGTH`): matching costs text × pattern per row.
        case likePatternTooLong(bytes: Int)
    }

    /// Where the problem is, in characters from the start of the text (its length when the
    /// problem is at the end or has no single place, such as a parameter count).
    package var offset: Int
    /// What is wrong.
    package var reason: Reason

    /// An error at `offset` for `reason`.
    package init(offset: Int, reason: Reason) {
        self.offset = offset
        self.reason = reason
    }

    /// A sentence naming the problem and its position.
    package var description: String {
        "\(problem) at character \(offset)"
    }

    /// The problem without its position.
    package var problem: String {
        switch reason {
        case let .unexpectedToken(token, expected): return "unexpected \"\(token)\", expected \(expected)"
        case let .unexpectedEnd(expected): return "the query ends where \(expected) was expected"
        case .unterminatedString: return "unterminated string literal"
        case .unterminatedIdentifier: return "unterminated quoted identifier"
        case let .unexpectedCharacter(character): return "unexpected character \"\(character)\""
        case let .malformedNumber(text): return "malformed number \"\(text)\""
        case let .unknownColumn(name): return "no column named \"\(name)\""
        case let .wrongParameterCount(expected, given):
            return "the query has \(expected) parameter placeholder(s) but \(given) parameter(s) were given"
        case let .unsupportedParameter(index, typeName):
            return "parameter \(index) has unsupported type \(typeName)"
        case let .listParameterOutsideIn(index):
            return "parameter \(index) is an array, which is allowed only as an element of an IN list"
        case .limitNotInteger: return "LIMIT and OFFSET take an integer"
        case let .unsupported(what): return "\(what) is not supported"
        case let .invalidAggregate(text): return "invalid aggregate function \"\(text)\""
        case let .likePatternTooLong(bytes):
            return "a LIKE pattern of \(bytes) bytes is over the limit of \(LikePattern.maximumPatternBytes)"
        }
    }
}
