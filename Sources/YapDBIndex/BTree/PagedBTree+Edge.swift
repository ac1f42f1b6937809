// PagedBTree+Edge: the first or last entry, read with one descent along the tree's edge.

extension PagedBTree {
    /// Calls `body` with the first entry in key order (the last when `last` is set) and says
    /// whether the tree had one. One descent along the edge of the tree: no key is compared and
    /// no position is counted, so it is cheaper than `withElement(at:)` at either end. The bytes
    /// are valid only during the call.
    /// - Throws: `PageError` if a page on the path cannot be read or is damaged (its subtree
    ///   count disagrees with its parent's).
    @discardableResult
    package func withEdgeEntry(
        last: Bool, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Void
    ) throws(PageError) -> Bool {
        guard height > 0, count > 0 else { return false }
        var ref = root, level = height - 1
        while let node = ref.node {
            if node.isLeaf {
                let entries = node.entries.count
                guard entries > 0 else { return false }
                node.entries.read(last ? entries - 1 : 0, body)
                return true
            }
            // In-memory branches may hold an emptied child until they are rebalanced: skip it.
            let children = node.children
            guard let k = last ? children.lastIndex(where: { $0.count > 0 }) : children.firstIndex(where: { $0.count > 0 }) else {
                return false
            }
            ref = children[k]
            level -= 1
        }
        var page = ref.page, expected = ref.count
        while true {
            let next = try pages.read(page) { bytes throws(PageError) -> (page: PageID, count: Int)? in
                let view = try PageView(bytes, id: page, pageSize: format.pageSize, family: .keyed, level: level)
                try view.requireSubtreeCount(expected)
                // A page holds at least one entry (two children): `view.count - 1` is a slot.
                let i = last ? view.count - 1 : 0
                if level == 0 {
                    let (key, value) = try view.leafEntry(i)
                    body(key, value)
                    return nil
                }
                return try view.keyedChild(i)
            }
            guard let next else { return true }
            (page, expected) = (next.page, next.count)
            level -= 1
        }
    }
}
