// PagedBTree+SortedChanges: a batch of upserts and removals applied in key order, merged into
// a tree rebuilt bottom-up when the batch is large next to the tree.

/// One change of a batch: store `value` for `key`, or remove `key` (`value` nil).
package struct PagedBTreeChange: Sendable {
    package var key: [UInt8]
    package var value: [UInt8]?

    package init(key: [UInt8], value: [UInt8]?) {
        self.key = key
        self.value = value
    }
}

extension PagedBTree {
    /// Applies `changes` as if each were applied in turn (`upsert`, or `removeFound` for a nil
    /// value), in any order given: when a key appears more than once, its last change wins.
    /// Removing an absent key changes nothing.
    ///
    /// The changes are sorted once. Then either
    /// - **a merge rebuild**, when they are at least an eighth as many as the tree's entries:
    ///   the tree is read once in order, merged with the changes and built anew bottom-up
    ///   (`PagedBTreeBuilder`), with no descent, split or merge; the new nodes are in memory
    ///   until a checkpoint writes them;
    /// - or **one change per key in key order**, so consecutive changes walk the same (by then
    ///   dirty) path.
    /// - Throws: `.entryTooLarge` when a change's key and value exceed `format.maximumEntrySize`
    ///   (checked before anything changes); `PageError` from a page. Then the tree may hold part
    ///   of the batch: discard it, as for `upsert`.
    package mutating func apply(_ changes: [PagedBTreeChange]) throws(PageError) {
        guard !changes.isEmpty else { return }
        for change in changes {
            guard let value = change.value else { continue }
            let size = change.key.count + value.count
            guard size <= format.maximumEntrySize else { throw .entryTooLarge(size: size, limit: format.maximumEntrySize) }
        }
        let order = Self.lastChangePerKey(changes)
        if order.count >= count / 8 {
            try rebuild(merging: changes, order: order)
            return
        }
        for i in order {
            if let value = changes[i].value {
                try upsert(changes[i].key, value)
            } else {
                try removeFound(changes[i].key)
            }
        }
    }

    /// The positions of `changes` in key order, one per key (its last change).
    static func lastChangePerKey(_ changes: [PagedBTreeChange]) -> [Int] {
        var order = Array(changes.indices)
        order.sort { a, b in
            let order = changes[a].key.withUnsafeBytes { x in changes[b].key.withUnsafeBytes { y in compareBytes(x, y) } }
            return order != 0 ? order < 0 : a < b
        }
        var kept: [Int] = []
        kept.reserveCapacity(order.count)
        for i in order {
            if let last = kept.last, changes[last].key == changes[i].key {
                kept[kept.count - 1] = i
            } else {
                kept.append(i)
            }
        }
        return kept
    }

    /// The merge rebuild of `apply`: `order` is one change per key, in key order.
    private mutating func rebuild(merging changes: [PagedBTreeChange], order: [Int]) throws(PageError) {
        var builder = PagedBTreeBuilder(format: format, source: source)
        var next = 0
        var failure: PageError?
        func take(_ i: Int) throws(PageError) {
            guard let value = changes[i].value else { return }
            try changes[i].key.withUnsafeBytes { key in
                value.withUnsafeBytes { value in Result { () throws(PageError) in try builder.append(key, value) } }
            }.get()
        }
        try forEach { key, value in
            do throws(PageError) {
                // Changes before this key add entries; one equal to it replaces or removes it.
                while next < order.count {
                    let i = order[next]
                    let comparison = changes[i].key.withUnsafeBytes { compareBytes($0, key) }
                    if comparison > 0 { break }
                    try take(i)
                    next += 1
                    if comparison == 0 { return true }
                }
                try builder.append(key, value)
                return true
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        while next < order.count {
            try take(order[next])
            next += 1
        }
        self = builder.finish()
    }
}
