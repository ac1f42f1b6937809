/// SQLite's `LIKE` matching: `%` matches any run of characters (including none), `_` exactly
/// one, an escape character makes the next pattern character literal, and ASCII letters match
/// regardless of case (other letters match only themselves).
package enum LikePattern {
    /// The longest pattern a query may bind, in UTF-8 bytes: SQLite's
    /// `SQLITE_MAX_LIKE_PATTERN_LENGTH`. Matching costs up to text × pattern steps per row, so a
    /// longer pattern (a search box fed a megabyte) is refused when the query is bound
    /// (``QueryError/Reason/likePatternTooLong(bytes:)``); a pattern taken from a column at run
    /// time that is longer matches nothing (NULL), without the work.
    package static let maximumPatternBytes = 50_000

    /// Whether `text` matches `pattern`.
    package static func matches(_ text: String, pattern: String, escape: Unicode.Scalar? = nil) -> Bool {
        matches(Array(text.unicodeScalars)[...], Array(pattern.unicodeScalars)[...], escape: escape)
    }

    /// ASCII lower-casing, the only folding SQLite's `LIKE` does.
    static func folded(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        scalar >= "A" && scalar <= "Z" ? Unicode.Scalar(scalar.value + 32)! : scalar
    }

    /// The match, without recursion: on a mismatch it returns to the last `%` and lets it take
    /// one more character (the classic wildcard walk: O(text × pattern) at worst, constant
    /// stack, whatever the pattern).
    private static func matches(_ text: ArraySlice<Unicode.Scalar>, _ pattern: ArraySlice<Unicode.Scalar>, escape: Unicode.Scalar?) -> Bool {
        let text = Array(text)
        let pattern = Array(pattern)
        var t = 0
        var p = 0
        var lastPercent: Int?
        var resumeAt = 0
        while t < text.count {
            if p < pattern.count {
                let head = pattern[p]
                if head == escape {
                    // The next pattern character stands for itself; a trailing escape matches nothing.
                    if p + 1 < pattern.count, folded(pattern[p + 1]) == folded(text[t]) {
                        p += 2
                        t += 1
                        continue
                    }
                } else if head == "%" {
                    lastPercent = p
                    resumeAt = t
                    p += 1
                    continue
                } else if head == "_" || folded(head) == folded(text[t]) {
                    p += 1
                    t += 1
                    continue
                }
            }
            guard let percent = lastPercent else { return false }
            resumeAt += 1
            t = resumeAt
            p = percent + 1
        }
        while p < pattern.count, pattern[p] == "%", pattern[p] != escape { p += 1 }
        return p == pattern.count
    }

    /// The literal prefix of a pattern before its first wildcard (or escape), for a planner that
    /// turns `LIKE 'abc%'` into a range; with `isWholePattern` true when the pattern is only
    /// that prefix followed by one trailing `%` (or nothing).
    package static func literalPrefix(of pattern: String, escape: Unicode.Scalar? = nil) -> (prefix: String, isWholePattern: Bool) {
        var prefix = String.UnicodeScalarView()
        let scalars = Array(pattern.unicodeScalars)
        var index = 0
        while index < scalars.count, scalars[index] != "%", scalars[index] != "_", scalars[index] != escape {
            prefix.append(scalars[index])
            index += 1
        }
        let rest = scalars[index...]
        let whole = rest.isEmpty || (rest.count == 1 && rest.first == "%")
        return (String(prefix), whole)
    }
}

extension QueryExpression {
    /// The UTF-8 length of the longest literal `LIKE` pattern in the expression (nil: none).
    /// Bound queries have literals where their parameters were, so this covers both.
    var longestLiteralLikePattern: Int? {
        var longest: Int?
        forEachLike { pattern in
            if case let .literal(value) = pattern, let text = value.textForPattern {
                longest = max(longest ?? 0, text.utf8.count)
            }
        }
        return longest
    }

    /// Calls `body` with the pattern operand of every `LIKE` in the expression.
    func forEachLike(_ body: (QueryOperand) -> Void) {
        if let chain {
            for operand in chain.operands { operand.forEachLike(body) }
            return
        }
        switch self {
        case let .like(_, pattern, _, _): body(pattern)
        case let .and(lhs, rhs), let .or(lhs, rhs): lhs.forEachLike(body); rhs.forEachLike(body)
        case let .not(inner): inner.forEachLike(body)
        default: break
        }
    }
}
