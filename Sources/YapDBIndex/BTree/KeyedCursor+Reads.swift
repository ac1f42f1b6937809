// KeyedCursor+Reads: what the trees' reads do with a cursor — a lookup, a rank, an entry by
// position or at an edge, and the ordered walks across leaves.

extension KeyedCursor {
    /// Calls `body` with the value stored for `key`, if present; says whether it was.
    @inline(__always)
    mutating func find<Pages: TreePages>(_ key: UnsafeRawBufferPointer, _ pages: Pages, _ body: (UnsafeRawBufferPointer) -> Void) throws(PageError) -> Bool {
        var target = KeyedSeek.key(key)
        try seek(&target, pages)
        return try Self.withLeaf(pages, leaf, pageSize: pageSize) { leaf throws(PageError) -> Bool in
            let (index, found) = try leaf.slot(target)
            if found { try leaf.value(index, body) }
            return found
        }
    }

    /// The number of keys less than `key`, and whether `key` is present (a cursor made with
    /// `counting`).
    @inline(__always)
    mutating func rank<Pages: TreePages>(_ key: UnsafeRawBufferPointer, _ pages: Pages) throws(PageError) -> (index: Int, found: Bool) {
        var target = KeyedSeek.key(key)
        try seek(&target, pages)
        let (index, found) = try Self.withLeaf(pages, leaf, pageSize: pageSize) { leaf throws(PageError) in try leaf.slot(target) }
        return (before &+ index, found)
    }

    /// Calls `body` with the entry at position `index` (which the caller checked against the
    /// tree's count).
    @inline(__always)
    mutating func element<Pages: TreePages>(at index: Int, _ pages: Pages, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) throws(PageError) {
        var target = KeyedSeek.position(index)
        try seek(&target, pages)
        try Self.withLeaf(pages, leaf, pageSize: pageSize) { leaf throws(PageError) in
            let (i, _) = try leaf.slot(target)
            try leaf.entry(i, body)
        }
    }

    /// Calls `body` with the first entry (the last when `last` is set) and says whether there
    /// was one; the cursor then stands on the leaf that holds it.
    @inline(__always)
    mutating func edge<Pages: TreePages>(last: Bool, _ pages: Pages, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) throws(PageError) -> Bool {
        var target: KeyedSeek = last ? .last : .first
        try seek(&target, pages)
        return try Self.withLeaf(pages, leaf, pageSize: pageSize) { leaf throws(PageError) -> Bool in
            let (i, found) = try leaf.slot(target)
            if found { try leaf.entry(i, body) }
            return found
        }
    }

    /// Calls `body` with the entries at `range` (within `0..<root.count`), ascending or
    /// `reversed`, until it returns false; false if it did. Needs a path.
    /// - Throws: `.positionOutOfRange` when the tree's pages hold fewer entries than their
    ///   counts claim; `PageError` from a page.
    mutating func walk<Pages: TreePages>(
        positions range: Range<Int>, reversed: Bool, _ pages: Pages, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool
    ) throws(PageError) -> Bool {
        var target = KeyedSeek.position(reversed ? range.upperBound &- 1 : range.lowerBound)
        try seek(&target, pages)
        let (stopped, left) = try walk(from: target, skippingEqual: false, reversed: reversed, limit: range.count,
                                       upper: nil, upperInclusive: false, pages, body)
        if stopped { return false }
        guard left == 0 else { throw .corrupt(page: root.page, reason: .positionOutOfRange) }
        return true
    }

    /// Calls `body` with each entry from the first key at or above `key` (above it when not
    /// `inclusive`) in ascending order, up to `upper` (nil: the end of the tree; included when
    /// `upperInclusive`), until `body` returns false. Needs a path.
    mutating func walk<Pages: TreePages>(
        from key: UnsafeRawBufferPointer, inclusive: Bool, upper: UnsafeRawBufferPointer?, upperInclusive: Bool,
        _ pages: Pages, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool
    ) throws(PageError) {
        var target = KeyedSeek.key(key)
        try seek(&target, pages)
        _ = try walk(from: target, skippingEqual: !inclusive, reversed: false, limit: Int.max,
                     upper: upper, upperInclusive: upperInclusive, pages, body)
    }

    /// Passes entries to `body` from where `start` (what is left of the seek at the cursor's
    /// leaf; past an equal key when `skippingEqual`) lands in the leaf onward, across leaves,
    /// until `body` returns false or an entry lies past `upper` (`stopped`), `limit` entries
    /// have passed, or the tree ends. Returns whether it stopped, and how many of `limit` were
    /// left. The leaf the seek ended on is read once: searched and walked in the same read.
    private mutating func walk<Pages: TreePages>(
        from start: KeyedSeek, skippingEqual: Bool, reversed: Bool, limit: Int, upper: UnsafeRawBufferPointer?, upperInclusive: Bool,
        _ pages: Pages, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool
    ) throws(PageError) -> (stopped: Bool, left: Int) {
        var first: KeyedSeek? = start
        var left = limit
        let step = reversed ? -1 : 1
        while left > 0 {
            let go = try Self.withLeaf(pages, leaf, pageSize: pageSize) { leaf throws(PageError) -> Bool in
                let count = leaf.count
                var i: Int
                if let first {
                    let (index, found) = try leaf.slot(first)
                    i = found && skippingEqual ? index &+ 1 : index
                } else {
                    i = reversed ? count &- 1 : 0
                }
                switch leaf {
                case .node(let node):
                    let entries = node.takeUnretainedValue().entries
                    while left > 0 && i >= 0 && i < count {
                        guard entries.read(i, { Self.emit($0, $1, upper, upperInclusive, body) }) else { return false }
                        left &-= 1
                        i &+= step
                    }
                case .page(let view):
                    while left > 0 && i >= 0 && i < count {
                        guard try view.withLeafEntry(i, { Self.emit($0, $1, upper, upperInclusive, body) }) else { return false }
                        left &-= 1
                        i &+= step
                    }
                }
                return true
            }
            guard go else { return (true, left) }
            guard left > 0 else { break }
            first = nil
            guard try moveToNextLeaf(reversed: reversed, pages) else { break }
        }
        return (false, left)
    }

    /// Passes an entry to `body` unless it lies past `upper` (nil: no bound; included when
    /// `upperInclusive`); false once the walk ends (past the bound, or `body` stops).
    @inline(__always)
    private static func emit(
        _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, _ upper: UnsafeRawBufferPointer?, _ upperInclusive: Bool,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool
    ) -> Bool {
        if let upper {
            let order = compareBytes(key, upper)
            if order > 0 || (order == 0 && !upperInclusive) { return false }
        }
        return body(key, value)
    }
}

extension PagedBTree {
    /// The root as a cursor frame.
    @inline(__always)
    var rootFrame: KeyedFrame { KeyedFrame(root, level: height &- 1) }

    /// A cursor on this tree, with `path` as room for its path (empty: it only descends); its
    /// calls read pages from `pages.table` when there is one, else from `pages`.
    @inline(__always)
    func cursor(path: UnsafeMutableBufferPointer<KeyedFrame> = .init(start: nil, count: 0), counting: Bool = false) -> KeyedCursor {
        KeyedCursor(pageSize: format.pageSize, root: rootFrame, path: path, counting: counting)
    }
}

extension MappedTree {
    /// A cursor on this tree, with `path` as room for its path (empty: it only descends); its
    /// calls read pages from `table`.
    @inline(__always)
    func cursor(path: UnsafeMutableBufferPointer<KeyedFrame> = .init(start: nil, count: 0)) -> KeyedCursor {
        KeyedCursor(pageSize: pageSize, root: KeyedFrame(page: root, count: entries, level: height &- 1), path: path)
    }
}
