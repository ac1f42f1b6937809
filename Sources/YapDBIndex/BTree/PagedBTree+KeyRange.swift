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
            // Descend by key (no rank: a rank sums the counts of every child left of the path).
            guard height > 0 else { return }
            if let tree = mapped { return try tree.forEachInKeyRange(from: lower, to: upper, body) }
            _ = try withBytes(lower.key) { target throws(PageError) -> Bool in
                try visit(root, level: height - 1, from: target, inclusive: lower.inclusive, within)
            }
        }
    }

    /// Walks the subtree of `ref` in ascending order from the first key at or above `target`
    /// (above it when not `inclusive`); returns false once `body` stops. The child holding
    /// `target` is searched by key; the children after it are walked whole.
    private func visit(
        _ ref: ChildRef<KeyedNode>, level: Int, from target: UnsafeRawBufferPointer, inclusive: Bool,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool
    ) throws(PageError) -> Bool {
        if let node = ref.node {
            if node.isLeaf {
                let (index, found) = node.search(target)
                for i in (found && !inclusive ? index + 1 : index)..<node.entries.count where !node.entries.read(i, body) {
                    return false
                }
                return true
            }
            let k = node.childIndex(target)
            guard try visit(node.children[k], level: level - 1, from: target, inclusive: inclusive, body) else { return false }
            for child in node.children[(k + 1)...] where child.count > 0 {
                guard try forEach(child, level: level - 1, body) else { return false }
            }
            return true
        }
        return try pages.read(ref.page) { bytes throws(PageError) -> Bool in
            let view = try PageView(bytes, id: ref.page, pageSize: format.pageSize, family: .keyed, level: level)
            try view.requireSubtreeCount(ref.count)
            if level == 0 {
                let (index, found) = try view.leafSearch(target)
                for i in (found && !inclusive ? index + 1 : index)..<view.count {
                    if try !view.withLeafEntry(i, { body($0, $1) }) { return false }
                }
                return true
            }
            let k = try view.branchSearch(target)
            let first = try view.keyedChild(k)
            guard try visit(.clean(first.page, count: first.count), level: level - 1, from: target, inclusive: inclusive, body) else { return false }
            var next = k + 1
            while next < view.count {
                let child = try view.keyedChild(next)
                if child.count > 0 { guard try forEach(.clean(child.page, count: child.count), level: level - 1, body) else { return false } }
                next += 1
            }
            return true
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
        // A written tree whose pages are mapped, walked forward from a lower bound (what a
        // query's range is): read through plain values. Anything else: the tree's own walk.
        guard !reversed, let lower, let tree = mappedTree(ofTree: index) else {
            return try self[index].forEachInKeyRange(from: lower, to: upper, reversed: reversed, body)
        }
        try tree.forEachInKeyRange(from: lower, to: upper, body)
    }
}

extension MappedTree {
    /// `PagedBTree.forEachInKeyRange(from:to:reversed:_:)` forward from `lower` (`MappedWalk`).
    func forEachInKeyRange(
        from lower: KeyBound, to upper: KeyBound?, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool
    ) throws(PageError) {
        try withBytes(lower.key) { target throws(PageError) in
            guard let upper else {
                let walk = MappedWalk(table: table, pageSize: pageSize, upper: nil, upperInclusive: false)
                _ = try walk.visit(root, count: entries, level: height - 1, from: target, inclusive: lower.inclusive, body)
                return
            }
            try withBytes(upper.key) { end throws(PageError) in
                let walk = MappedWalk(table: table, pageSize: pageSize, upper: end, upperInclusive: upper.inclusive)
                _ = try walk.visit(root, count: entries, level: height - 1, from: target, inclusive: lower.inclusive, body)
            }
        }
    }
}

/// The key-range walk of a `MappedTree`: the table's lookup, the page size and the upper bound
/// as bytes (a closure holding the bound would retain it around every page's search). The same
/// page checks as the tree's own walk, plus, for a subtree walked whole, that its children's
/// counts make up the page's.
struct MappedWalk {
    let table: MappedPages.Table
    let pageSize: Int
    /// The key the walk stops at (nil: the end of the tree), and whether it is included.
    let upper: UnsafeRawBufferPointer?
    let upperInclusive: Bool

    /// Passes an entry to `body` unless it lies beyond the upper bound; false once the walk
    /// ends (beyond the bound, or `body` stops).
    @inline(__always)
    func emit(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer,
              _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool) -> Bool {
        if let upper {
            let order = compareBytes(key, upper)
            if order > 0 || (order == 0 && !upperInclusive) { return false }
        }
        return body(key, value)
    }

    /// The bytes of `page`, or `.missing`.
    @inline(__always)
    func bytes(_ page: PageID) throws(PageError) -> UnsafeRawBufferPointer {
        let bytes = try table.page(page)
        return bytes
    }

    /// `PagedBTree.visit(_:level:from:inclusive:_:)` for the clean subtree at `page` (holding
    /// `count` entries): ascending from the first key at or above `target` (above it when not
    /// `inclusive`); false once `body` stops.
    func visit(
        _ page: PageID, count: Int, level: Int, from target: UnsafeRawBufferPointer, inclusive: Bool,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool
    ) throws(PageError) -> Bool {
        let view = try PageView(bytes(page), id: page, pageSize: pageSize, family: .keyed, level: level)
        try view.requireSubtreeCount(count)
        if level == 0 {
            let (index, found) = try view.leafSearch(target)
            for i in (found && !inclusive ? index + 1 : index)..<view.count {
                if try !view.withLeafEntry(i, { emit($0, $1, body) }) { return false }
            }
            return true
        }
        let k = try view.branchSearch(target)
        let first = try view.keyedChild(k)
        guard try visit(first.page, count: first.count, level: level - 1, from: target, inclusive: inclusive, body) else { return false }
        var total = 0
        return try walkChildren(of: view, after: k, level: level, total: &total, body)
    }

    /// Every entry of the clean subtree at `page` (holding `count` entries), ascending; false
    /// once `body` stops.
    func walk(
        _ page: PageID, count: Int, level: Int, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool
    ) throws(PageError) -> Bool {
        let view = try PageView(bytes(page), id: page, pageSize: pageSize, family: .keyed, level: level)
        try view.requireSubtreeCount(count)
        if level == 0 {
            for i in 0..<view.count {
                if try !view.withLeafEntry(i, { emit($0, $1, body) }) { return false }
            }
            return true
        }
        var total = 0
        guard try walkChildren(of: view, after: -1, level: level, total: &total, body) else { return false }
        // Walked whole: the children's counts must make up the page's (as the positional walk checks).
        guard total == view.subtreeCount else {
            throw .corrupt(page: page, reason: .subtreeCountMismatch(expected: view.subtreeCount, found: total))
        }
        return true
    }

    /// The children of branch `view` after child `k`, each walked whole; `total` gains their
    /// counts.
    private func walkChildren(
        of view: PageView, after k: Int, level: Int, total: inout Int, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool
    ) throws(PageError) -> Bool {
        var next = k + 1
        while next < view.count {
            let child = try view.keyedChild(next)
            total += child.count
            if child.count > 0 { guard try walk(child.page, count: child.count, level: level - 1, body) else { return false } }
            next += 1
        }
        return true
    }
}
