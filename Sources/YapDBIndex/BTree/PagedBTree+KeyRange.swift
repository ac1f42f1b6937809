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
                    let (key, value) = try view.leafEntry(i)
                    if !body(key, value) { return false }
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
