// PagedRowTree+Read: positional reads, ordered walks and the comparator searches.

extension PagedRowTree {
    /// The row id at `index`. O(log n).
    /// - Precondition: `0 <= index < count`.
    /// - Throws: `PageError` if a page on the path cannot be read or is damaged.
    package func element(at index: Int) throws(PageError) -> UInt64 {
        precondition(index >= 0 && index < count, "PagedRowTree: index \(index) out of range 0..<\(count)")
        var ref = root, level = height - 1, i = index
        while let node = ref.node {
            if node.isLeaf { return node.rowids[i] }
            var k = 0
            while i >= node.children[k].count { i -= node.children[k].count; k += 1 }
            ref = node.children[k]
            level -= 1
        }
        while true {
            let step = try withPage(ref.page, level: level, count: ref.count) { view throws(PageError) -> (rowid: UInt64, next: ChildRef<RowNode>?) in
                guard i < view.subtreeCount else { throw .corrupt(page: view.id, reason: .positionOutOfRange) }
                if level == 0 { return (view.rowid(i), nil) }
                for k in 0..<view.count {
                    let child = try view.rowChild(k)
                    if i < child.count { return (0, .clean(child.page, count: child.count, first: child.first)) }
                    i -= child.count
                }
                throw .corrupt(page: view.id, reason: .positionOutOfRange)
            }
            guard let next = step.next else { return step.rowid }
            ref = next
            level -= 1
        }
    }

    /// The first row id, or nil if empty. O(1): the root knows it.
    package var first: UInt64? { isEmpty ? nil : root.node?.first ?? root.first }

    /// The last row id, or nil if empty. O(log n).
    package func last() throws(PageError) -> UInt64? { isEmpty ? nil : try element(at: count - 1) }

    /// Calls `body` with each position and row id in `range` (clamped to `0..<count`), in order
    /// or `reversed`, until it returns false. O(log n + k) page visits.
    /// - Throws: `PageError` if a page cannot be read or is damaged.
    package func forEach(in range: Range<Int>, reversed: Bool = false, _ body: (_ index: Int, _ rowid: UInt64) -> Bool) throws(PageError) {
        let range = range.clamped(to: 0..<count)
        guard !range.isEmpty else { return }
        _ = try visit(root, level: height - 1, base: 0, range, reversed: reversed, body)
    }

    /// All row ids in order. O(n).
    package func rowids() throws(PageError) -> [UInt64] {
        var all: [UInt64] = []
        all.reserveCapacity(count)
        try forEach(in: 0..<count) { _, rowid in all.append(rowid); return true }
        return all
    }

    /// Walks `range` (positions within the subtree of `ref`, which starts at `base`).
    private func visit(
        _ ref: ChildRef<RowNode>, level: Int, base: Int, _ range: Range<Int>, reversed: Bool,
        _ body: (Int, UInt64) -> Bool
    ) throws(PageError) -> Bool {
        if let node = ref.node {
            if node.isLeaf {
                for j in 0..<range.count {
                    let i = reversed ? range.upperBound - 1 - j : range.lowerBound + j
                    if !body(base + i, node.rowids[i]) { return false }
                }
                return true
            }
            return try visitChildren(node.children.count, total: ref.count, range, reversed: reversed) { k throws(PageError) in
                (node.children[k], node.children[k].count)
            } recurse: { child, sub, start throws(PageError) in
                try visit(child, level: level - 1, base: base + start, sub, reversed: reversed, body)
            }
        }
        return try withPage(ref.page, level: level, count: ref.count) { view throws(PageError) -> Bool in
            if level == 0 {
                for j in 0..<range.count {
                    let i = reversed ? range.upperBound - 1 - j : range.lowerBound + j
                    if !body(base + i, view.rowid(i)) { return false }
                }
                return true
            }
            return try visitChildren(view.count, total: view.subtreeCount, range, reversed: reversed) { k throws(PageError) in
                let child = try view.rowChild(k)
                return (.clean(child.page, count: child.count, first: child.first), child.count)
            } recurse: { child, sub, start throws(PageError) in
                try visit(child, level: level - 1, base: base + start, sub, reversed: reversed, body)
            }
        }
    }
}
