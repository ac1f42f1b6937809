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
            func within(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool {
                if let upper, !Self.isBelow(key, upper) { return false }
                return body(key, value)
            }
            guard let lower else {
                try forEach(in: 0..<count, within)
                return
            }
            // Descend by key (no rank: a rank sums the counts of every child left of the path),
            // then walk on across the leaves.
            guard height > 0 else { return }
            if let tree = mapped { return try tree.forEachInKeyRange(from: lower, to: upper, body) }
            try withBytes(lower.key) { target throws(PageError) in
                try withPathRoom(height: height) { path throws(PageError) in
                    var cursor = cursor(path: path)
                    try cursor.walk(from: target, inclusive: lower.inclusive, upper: nil, upperInclusive: false, pages, within)
                }
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
        b.withUnsafeBytes { compareBytes(a, $0) }
    }
}

extension Array where Element == PagedBTree {
    /// `self[index].forEachInKeyRange(from:to:reversed:_:)`, on the tree in place: a call on
    /// `self[index]` copies the tree out of the array first, retaining and releasing each
    /// reference it holds.
    /// - Precondition: `index` is a valid index.
    package func forEachInKeyRange(
        ofTree index: Int, from lower: KeyBound?, to upper: KeyBound?, reversed: Bool = false,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool
    ) throws(PageError) {
        precondition(index >= 0 && index < count, "forEachInKeyRange: tree \(index) of \(count)")
        try withUnsafeBufferPointer { trees throws(PageError) in
            try PagedBTree.forEachInKeyRange(at: trees.baseAddress! + index, from: lower, to: upper, reversed: reversed, body)
        }
    }
}

extension PagedBTree {
    /// `tree.pointee.forEachInKeyRange(from:to:reversed:_:)`, on the tree in place (see
    /// `withEdgeEntry(at:last:_:)`).
    package static func forEachInKeyRange(
        at tree: UnsafePointer<PagedBTree>, from lower: KeyBound?, to upper: KeyBound?, reversed: Bool = false,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool
    ) throws(PageError) {
        // A written tree whose pages are mapped, walked forward from a lower bound (what a
        // query's range is): read through plain values. Anything else: the tree's own walk.
        guard !reversed, let lower, let mapped = mappedTree(at: tree) else {
            return try tree.pointee.forEachInKeyRange(from: lower, to: upper, reversed: reversed, body)
        }
        try mapped.forEachInKeyRange(from: lower, to: upper, body)
    }
}

extension MappedTree {
    /// `PagedBTree.forEachInKeyRange(from:to:reversed:_:)` forward from `lower`, on a cursor
    /// over the mapped table, the upper bound passed as bytes (a closure holding the bound would
    /// retain it around every page's search).
    func forEachInKeyRange(
        from lower: KeyBound, to upper: KeyBound?, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool
    ) throws(PageError) {
        try withBytes(lower.key) { target throws(PageError) in
            try withPathRoom(height: height) { path throws(PageError) in
                var cursor = cursor(path: path)
                guard let upper else {
                    return try cursor.walk(from: target, inclusive: lower.inclusive, upper: nil, upperInclusive: false, table, body)
                }
                try withBytes(upper.key) { end throws(PageError) in
                    try cursor.walk(from: target, inclusive: lower.inclusive, upper: end, upperInclusive: upper.inclusive, table, body)
                }
            }
        }
    }
}
