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

    /// The search of `withValue`, over a key already in raw form.
    func find(_ key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) throws(PageError) -> Bool {
        guard height > 0 else { return false }
        var ref = root
        var level = height - 1
        while let node = ref.node {
            if node.isLeaf {
                let (index, found) = node.search(key)
                if found { node.entries.read(index) { _, value in body(value) } }
                return found
            }
            ref = node.children[node.childIndex(key)]
            level -= 1
        }
        var page = ref.page, expected = ref.count
        var found = false
        while true {
            let next = try pages.read(page) { bytes throws(PageError) -> (page: PageID, count: Int)? in
                let view = try PageView(bytes, id: page, pageSize: format.pageSize, family: .keyed, level: level)
                try view.requireSubtreeCount(expected)
                if level == 0 {
                    let (index, hit) = try view.leafSearch(key)
                    if hit { try view.withLeafValue(index) { body($0) } }
                    found = hit
                    return nil
                }
                return try view.keyedChild(view.branchSearch(key))
            }
            guard let next else { return found }
            (page, expected) = (next.page, next.count)
            level -= 1
        }
    }

    /// The position `key` has or would have: the number of keys less than it, and whether it is
    /// present. O(log n).
    /// - Throws: `PageError` if a page on the path cannot be read or is damaged.
    package func rank(of key: [UInt8]) throws(PageError) -> (index: Int, found: Bool) {
        guard height > 0 else { return (0, false) }
        return try withBytes(key) { target throws(PageError) -> (index: Int, found: Bool) in
            var ref = root, level = height - 1, before = 0
            while let node = ref.node {
                if node.isLeaf {
                    let (index, found) = node.search(target)
                    return (before + index, found)
                }
                let k = node.childIndex(target)
                for i in 0..<k { before += node.children[i].count }
                ref = node.children[k]
                level -= 1
            }
            var page = ref.page, expected = ref.count
            while true {
                var leafResult: (index: Int, found: Bool)? = nil
                let next = try pages.read(page) { bytes throws(PageError) -> (page: PageID, count: Int)? in
                    let view = try PageView(bytes, id: page, pageSize: format.pageSize, family: .keyed, level: level)
                    try view.requireSubtreeCount(expected)
                    if level == 0 {
                        leafResult = try view.leafSearch(target)
                        return nil
                    }
                    let k = try view.branchSearch(target)
                    before += try view.countsBefore(k, childSize: PageLayout.keyedChildSize)
                    return try view.keyedChild(k)
                }
                guard let next else {
                    let (index, found) = leafResult.unsafelyUnwrapped
                    return (before + index, found)
                }
                (page, expected) = (next.page, next.count)
                level -= 1
            }
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
        var ref = root, level = height - 1, i = index
        while let node = ref.node {
            if node.isLeaf {
                node.entries.read(i, body)
                return
            }
            var k = 0
            while i >= node.children[k].count { i -= node.children[k].count; k += 1 }
            ref = node.children[k]
            level -= 1
        }
        var page = ref.page, expected = ref.count
        while true {
            let next = try pages.read(page) { bytes throws(PageError) -> (page: PageID, count: Int)? in
                let view = try PageView(bytes, id: page, pageSize: format.pageSize, family: .keyed, level: level)
                try view.requireSubtreeCount(expected)
                guard i < view.subtreeCount else { throw .corrupt(page: page, reason: .positionOutOfRange) }
                if level == 0 {
                    try view.withLeafEntry(i) { body($0, $1) }
                    return nil
                }
                for k in 0..<view.count {
                    let child = try view.keyedChild(k)
                    if i < child.count { return child }
                    i -= child.count
                }
                throw .corrupt(page: page, reason: .positionOutOfRange)
            }
            guard let next else { return }
            (page, expected) = (next.page, next.count)
            level -= 1
        }
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
        _ = try visit(root, level: height - 1, range, reversed: reversed, body)
    }

    /// Walks the whole subtree of `ref` in ascending order; returns false once `body` stops.
    func forEach(
        _ ref: ChildRef<KeyedNode>, level: Int, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool
    ) throws(PageError) -> Bool {
        try visit(ref, level: level, 0..<ref.count, reversed: false, body)
    }

    /// Walks `range` (positions within the subtree of `ref`); returns false once `body` stops.
    private func visit(
        _ ref: ChildRef<KeyedNode>, level: Int, _ range: Range<Int>, reversed: Bool,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool
    ) throws(PageError) -> Bool {
        if let node = ref.node {
            if node.isLeaf {
                for j in 0..<range.count {
                    let i = reversed ? range.upperBound - 1 - j : range.lowerBound + j
                    let go = node.entries.read(i, body)
                    if !go { return false }
                }
                return true
            }
            return try visitChildren(node.children.count, total: ref.count, range, reversed: reversed) { k throws(PageError) in
                (node.children[k], node.children[k].count)
            } recurse: { child, sub, _ throws(PageError) in
                try visit(child, level: level - 1, sub, reversed: reversed, body)
            }
        }
        return try pages.read(ref.page) { bytes throws(PageError) -> Bool in
            let view = try PageView(bytes, id: ref.page, pageSize: format.pageSize, family: .keyed, level: level)
            try view.requireSubtreeCount(ref.count)
            if level == 0 {
                for j in 0..<range.count {
                    if try !view.withLeafEntry(reversed ? range.upperBound - 1 - j : range.lowerBound + j, { body($0, $1) }) { return false }
                }
                return true
            }
            return try visitChildren(view.count, total: view.subtreeCount, range, reversed: reversed) { k throws(PageError) in
                let child = try view.keyedChild(k)
                return (.clean(child.page, count: child.count), child.count)
            } recurse: { child, sub, _ throws(PageError) in
                try visit(child, level: level - 1, sub, reversed: reversed, body)
            }
        }
    }
}

/// Visits the children of a branch whose positions overlap `range`, in order or reversed;
/// `child(k)` gives child `k` and its count, `recurse` walks it over a sub-range (relative to
/// the child, whose first position is the third argument). Returns false
/// once `recurse` does. Counts that do not add up to `total` are corruption.
func visitChildren<Ref>(
    _ childCount: Int, total: Int, _ range: Range<Int>, reversed: Bool,
    child: (Int) throws(PageError) -> (Ref, Int), recurse: (Ref, Range<Int>, Int) throws(PageError) -> Bool
) throws(PageError) -> Bool {
    if reversed {
        var end = total
        for k in stride(from: childCount - 1, through: 0, by: -1) {
            let (ref, count) = try child(k)
            let start = end - count
            if start < range.upperBound && end > range.lowerBound {
                let sub = (max(range.lowerBound, start) - start)..<(min(range.upperBound, end) - start)
                if try !recurse(ref, sub, start) { return false }
            }
            if start <= range.lowerBound { return true }
            end = start
        }
    } else {
        var start = 0
        for k in 0..<childCount {
            let (ref, count) = try child(k)
            let end = start + count
            if start < range.upperBound && end > range.lowerBound {
                let sub = (max(range.lowerBound, start) - start)..<(min(range.upperBound, end) - start)
                if try !recurse(ref, sub, start) { return false }
            }
            if end >= range.upperBound { return true }
            start = end
        }
    }
    throw .corrupt(page: .none, reason: .positionOutOfRange)
}
