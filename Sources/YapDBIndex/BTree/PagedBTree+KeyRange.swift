// PagedBTree+KeyRange: a key range walked with one search, for short ranges and early stops.

extension PagedBTree {
    /// Calls `body` with each entry whose key lies between `lower` and `upper` (nil: unbounded),
    /// in ascending key order or `reversed`, until `body` returns false — as `forEach(from:to:
    /// reversed:_:)`, but only the end the walk starts from is searched (one rank); the other
    /// end is found by comparing keys as the walk reaches it. A walk that stops early (a
    /// `LIMIT`, a few equal keys) thus costs one search plus the entries visited, instead of two
    /// searches plus them. The bytes are valid only during each call.
    /// - Throws: `PageError` if a page cannot be read or is damaged (entries before it were
    ///   already passed to `body`).
    package func forEachInKeyRange(
        from lower: KeyBound?, to upper: KeyBound?, reversed: Bool = false,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool
    ) throws(PageError) {
        if reversed {
            var end = count
            if let upper {
                let (index, found) = try rank(of: upper.key)
                end = found && upper.inclusive ? index + 1 : index
            }
            try forEach(in: 0..<end, reversed: true) { key, value in
                if let lower, !Self.isAbove(key, lower) { return false }
                return body(key, value)
            }
        } else {
            var start = 0
            if let lower {
                let (index, found) = try rank(of: lower.key)
                start = found && !lower.inclusive ? index + 1 : index
            }
            try forEach(in: start..<count) { key, value in
                if let upper, !Self.isBelow(key, upper) { return false }
                return body(key, value)
            }
        }
    }

    /// Whether `key` is on the inner side of upper bound `bound`.
    static func isBelow(_ key: UnsafeRawBufferPointer, _ bound: KeyBound) -> Bool {
        let order = compareKeys(key, bound.key)
        return order < 0 || (order == 0 && bound.inclusive)
    }

    /// Whether `key` is on the inner side of lower bound `bound`.
    static func isAbove(_ key: UnsafeRawBufferPointer, _ bound: KeyBound) -> Bool {
        let order = compareKeys(key, bound.key)
        return order > 0 || (order == 0 && bound.inclusive)
    }

    /// memcmp order of two byte strings (negative, zero, positive).
    static func compareKeys(_ a: UnsafeRawBufferPointer, _ b: [UInt8]) -> Int {
        b.withUnsafeBytes { b in
            let n = min(a.count, b.count)
            for i in 0..<n where a[i] != b[i] { return a[i] < b[i] ? -1 : 1 }
            return a.count - b.count
        }
    }
}
