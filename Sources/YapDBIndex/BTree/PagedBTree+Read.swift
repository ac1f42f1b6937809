// PagedBTree+Read: lookups by key and by position, ranks, and ordered iteration.

/// One end of a key range: a key and whether the range includes it.
package struct KeyBound: Sendable {
    /// The key bytes.
    package var key: [UInt8]
    /// Whether the range includes `key` itself.
    package var inclusive: Bool

    /// A bound at `key`, inclusive unless told otherwise.
    package init(_ key: [UInt8], inclusive: Bool = true) {
        self.key = key
        self.inclusive = inclusive
    }
}

extension PagedBTree {
    /// Calls `body` with the value stored for `key`, if present, and says whether it was. The
    /// bytes are valid only during the call. O(log n) page visits, no allocation for clean pages.
    /// (Not generic, so callers in other modules pay no run-time generic dispatch.)
    /// - Throws: `PageError` if a page on the path cannot be read or is damaged.
    @discardableResult
    package func withValue(forKey key: [UInt8], _ body: (UnsafeRawBufferPointer) -> Void) throws(PageError) -> Bool {
        try withBytes(key) { target throws(PageError) -> Bool in try find(target, body) }
    }

    /// The value stored for `key`, or nil. O(log n).
    /// - Throws: `PageError` if a page on the path cannot be read or is damaged.
    package func value(forKey key: [UInt8]) throws(PageError) -> [UInt8]? {
        var value: [UInt8]? = nil
        try withValue(forKey: key) { value = Array($0) }
        return value
    }

    /// Whether `key` is present. O(log n).
    package func contains(_ key: [UInt8]) throws(PageError) -> Bool {
        try withValue(forKey: key) { _ in }
    }

    /// The search of `withValue`, over a key already in raw form: one cursor descent.
    func find(_ key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) throws(PageError) -> Bool {
        guard height > 0 else { return false }
        var cursor = cursor()
        if let table = pages.table { return try cursor.find(key, table, body) }
        return try cursor.find(key, pages, body)
    }

    /// The position `key` has or would have: the number of keys less than it, and whether it is
    /// present. O(log n).
    /// - Throws: `PageError` if a page on the path cannot be read or is damaged.
    package func rank(of key: [UInt8]) throws(PageError) -> (index: Int, found: Bool) {
        guard height > 0 else { return (0, false) }
        return try withBytes(key) { target throws(PageError) -> (index: Int, found: Bool) in
            var cursor = cursor(counting: true)
            if let table = pages.table { return try cursor.rank(target, table) }
            return try cursor.rank(target, pages)
        }
    }

    /// The position of `key`, or nil if absent. O(log n).
    package func index(of key: [UInt8]) throws(PageError) -> Int? {
        let (index, found) = try rank(of: key)
        return found ? index : nil
    }

    /// Calls `body` with the key and value at position `index` (in key order). O(log n).
    /// - Precondition: `0 <= index < count`.
    /// - Throws: `PageError` if a page on the path cannot be read, is damaged, or its counts
    ///   disagree (`.positionOutOfRange`).
    package func withElement(at index: Int, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Void) throws(PageError) {
        precondition(index >= 0 && index < count, "PagedBTree: index \(index) out of range 0..<\(count)")
        var cursor = cursor()
        if let table = pages.table { return try cursor.element(at: index, table, body) }
        try cursor.element(at: index, pages, body)
    }

    /// The key and value at position `index`. O(log n).
    /// - Precondition: `0 <= index < count`.
    package func element(at index: Int) throws(PageError) -> (key: [UInt8], value: [UInt8]) {
        var element: (key: [UInt8], value: [UInt8]) = ([], [])
        try withElement(at: index) { element = (Array($0), Array($1)) }
        return element
    }

    /// The first entry in key order, or nil if empty (`withEdgeEntry(last:_:)`).
    package func firstEntry() throws(PageError) -> (key: [UInt8], value: [UInt8])? { try edgeEntry(last: false) }

    /// The last entry in key order, or nil if empty (`withEdgeEntry(last:_:)`).
    package func lastEntry() throws(PageError) -> (key: [UInt8], value: [UInt8])? { try edgeEntry(last: true) }

    private func edgeEntry(last: Bool) throws(PageError) -> (key: [UInt8], value: [UInt8])? {
        var entry: (key: [UInt8], value: [UInt8])?
        try withEdgeEntry(last: last) { entry = (Array($0), Array($1)) }
        return entry
    }

    /// The positions of the keys between `lower` and `upper` (nil: unbounded). O(log n).
    package func positions(from lower: KeyBound?, to upper: KeyBound?) throws(PageError) -> Range<Int> {
        var start = 0, end = count
        if let lower {
            let (index, found) = try rank(of: lower.key)
            start = found && !lower.inclusive ? index + 1 : index
        }
        if let upper {
            let (index, found) = try rank(of: upper.key)
            end = found && upper.inclusive ? index + 1 : index
        }
        return start..<max(start, end)
    }

    /// Calls `body` with each entry whose key lies between `lower` and `upper` (nil: unbounded),
    /// in ascending key order or `reversed`, until `body` returns false. The bytes are valid only
    /// during each call. O(log n + k) page visits.
    /// - Throws: `PageError` if a page cannot be read or is damaged (entries before it were
    ///   already passed to `body`).
    package func forEach(
        from lower: KeyBound? = nil, to upper: KeyBound? = nil, reversed: Bool = false,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool
    ) throws(PageError) {
        try forEach(in: positions(from: lower, to: upper), reversed: reversed, body)
    }

    /// Calls `body` with the entries at `positions` (clamped to `0..<count`), in order or
    /// `reversed`, until `body` returns false. O(log n + k) page visits.
    package func forEach(
        in positions: Range<Int>, reversed: Bool = false,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool
    ) throws(PageError) {
        let range = positions.clamped(to: 0..<count)
        guard !range.isEmpty else { return }
        try withPathRoom(height: height) { path throws(PageError) in
            var cursor = cursor(path: path)
            if let table = pages.table {
                _ = try cursor.walk(positions: range, reversed: reversed, table, body)
            } else {
                _ = try cursor.walk(positions: range, reversed: reversed, pages, body)
            }
        }
    }
}
