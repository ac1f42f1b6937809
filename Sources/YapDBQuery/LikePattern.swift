/// SQLite's `LIKE` matching: `%` matches any run of characters (including none), `_` exactly
/// one, an escape character makes the next pattern character literal, and ASCII letters match
/// regardless of case (other letters match only themselves).
package enum LikePattern {
    /// Whether `text` matches `pattern`.
    package static func matches(_ text: String, pattern: String, escape: Unicode.Scalar? = nil) -> Bool {
        matches(Array(text.unicodeScalars)[...], Array(pattern.unicodeScalars)[...], escape: escape)
    }

    /// ASCII lower-casing, the only folding SQLite's `LIKE` does.
    static func folded(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        scalar >= "A" && scalar <= "Z" ? Unicode.Scalar(scalar.value + 32)! : scalar
    }

    private static func matches(_ text: ArraySlice<Unicode.Scalar>, _ pattern: ArraySlice<Unicode.Scalar>, escape: Unicode.Scalar?) -> Bool {
        var text = text
        var pattern = pattern
        while let head = pattern.first {
            if head == escape {
                pattern.removeFirst()
                // A trailing escape character matches nothing (SQLite reports no match).
                guard let literal = pattern.first, let character = text.first,
                      folded(literal) == folded(character) else { return false }
                pattern.removeFirst()
                text.removeFirst()
            } else if head == "%" {
                while let next = pattern.first, next == "%" || next == "_" {
                    pattern.removeFirst()
                    if next == "_" {
                        guard !text.isEmpty else { return false }
                        text.removeFirst()
                    }
                }
                if pattern.isEmpty { return true }
                while true {
                    if matches(text, pattern, escape: escape) { return true }
                    if text.isEmpty { return false }
                    text.removeFirst()
                }
            } else if head == "_" {
                guard !text.isEmpty else { return false }
                pattern.removeFirst()
                text.removeFirst()
            } else {
                guard let character = text.first, folded(head) == folded(character) else { return false }
                pattern.removeFirst()
                text.removeFirst()
            }
        }
        return text.isEmpty
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
