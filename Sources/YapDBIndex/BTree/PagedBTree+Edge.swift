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
            let next = try pages.read(page) { bytes throws(PageError) in
                try Self.edgeStep(bytes, page: page, expected: expected, level: level, pageSize: format.pageSize, last: last, body)
            }
            guard let next else { return true }
            (page, expected) = (next.page, next.count)
            level -= 1
        }
    }

    /// One page of an edge descent: checks page `page` (at `level`, holding `expected` entries)
    /// and returns its edge child, or passes its edge entry to `body` and returns nil (a leaf).
    @inline(__always)
    static func edgeStep(
        _ bytes: UnsafeRawBufferPointer, page: PageID, expected: Int, level: Int, pageSize: Int, last: Bool,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void
    ) throws(PageError) -> (page: PageID, count: Int)? {
        let view = try PageView(bytes, id: page, pageSize: pageSize, family: .keyed, level: level)
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
}

extension Array where Element == PagedBTree {
    /// `self[index].withEdgeEntry(last:_:)`. A tree whose root is written and whose pages are
    /// mapped (the usual case for a reader) is read through a few of its fields, in place: a
    /// call on the tree copies it out of the array first, retaining and releasing each
    /// reference it holds, which costs more than the descent itself.
    /// - Precondition: `index` is a valid index.
    package func withEdgeEntry(
        ofTree index: Int, last: Bool, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Void
    ) throws(PageError) -> Bool {
        precondition(index >= 0 && index < count, "withEdgeEntry: tree \(index) of \(count)")
        let (root, entries, height, pageSize, table) = withUnsafeBufferPointer { trees in
            let tree = UnsafePointer(trees.baseAddress! + index)
            return (tree.pointee.root.page, tree.pointee.root.count, tree.pointee.height,
                    tree.pointee.format.pageSize, tree.pointee.pages.table)
        }
        // A dirty or empty root (page `none`), or pages read through the source: the tree's
        // own descent.
        guard let table, root != .none, height > 0 else { return try self[index].withEdgeEntry(last: last, body) }
        var next: (page: PageID, count: Int)? = (root, entries)
        var level = height - 1
        while let (page, expected) = next {
            guard let bytes = table.bytes(page) else { throw .corrupt(page: page, reason: .missing) }
            if let step = PagedBTree.quickEdgeStep(bytes, expected: expected, level: level, pageSize: pageSize, last: last) {
                switch step {
                case let .child(page, count): next = (page, count)
                case let .entry(key, value):
                    body(key, value)
                    next = nil
                }
            } else {
                // Something is off: the full checks say what (or find the page sound after all).
                next = try PagedBTree.edgeStep(bytes, page: page, expected: expected, level: level, pageSize: pageSize, last: last, body)
            }
            level -= 1
        }
        return true
    }
}

extension PagedBTree {
    /// One step of an edge descent.
    enum EdgeStep {
        case child(PageID, count: Int)
        case entry(UnsafeRawBufferPointer, UnsafeRawBufferPointer)
    }

    /// `edgeStep`'s checks, made together from the header's words, for a sound page: its edge
    /// child or entry; nil when any check fails (the caller then runs `edgeStep`, whose
    /// checks one by one name the problem). Checks what `PageView` and `edgeStep` check: the
    /// size, the kind and level, the count against the page size, the subtree count against
    /// the parent's (and, in a leaf, the count), the child's id and count, and the entry's
    /// slot and lengths.
    @inline(__always)
    static func quickEdgeStep(_ bytes: UnsafeRawBufferPointer, expected: Int, level: Int, pageSize: Int, last: Bool) -> EdgeStep? {
        guard bytes.count == pageSize, let base = bytes.baseAddress, level <= PageLayout.maximumLevel else { return nil }
        // Kind, level and count are adjacent: one load.
        let word = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: PageLayout.kindOffset, as: UInt32.self))
        let kind = level == 0 ? PageKind.keyedLeaf : PageKind.keyedBranch
        guard word & 0xFFFF == UInt32(kind.rawValue) | UInt32(truncatingIfNeeded: level) << 8 else { return nil }
        let count = Int(word >> 16)
        let subtree = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: PageLayout.subtreeCountOffset, as: UInt64.self))
        guard subtree == UInt64(bitPattern: Int64(expected)), subtree <= UInt64(PageLayout.maximumSubtreeCount) else { return nil }
        let i = last ? count &- 1 : 0
        if level == 0 {
            let entryBytes = PageLayout.slotSize + PageLayout.leafEntryHeader
            guard count >= 1, count == expected, PageLayout.headerSize + count * entryBytes <= pageSize else { return nil }
            let dataStart = PageLayout.headerSize + count * PageLayout.slotSize
            let offset = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: PageLayout.headerSize + i * PageLayout.slotSize, as: UInt16.self)))
            guard offset >= dataStart, offset + PageLayout.leafEntryHeader <= pageSize else { return nil }
            let keyLength = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
            let valueLength = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: offset + 2, as: UInt16.self)))
            let keyStart = offset + PageLayout.leafEntryHeader
            guard keyStart + keyLength + valueLength <= pageSize else { return nil }
            return .entry(UnsafeRawBufferPointer(start: base + keyStart, count: keyLength),
                          UnsafeRawBufferPointer(start: base + keyStart + keyLength, count: valueLength))
        }
        let childBytes = PageLayout.keyedChildSize + PageLayout.slotSize + PageLayout.separatorHeader
        guard count >= 2, expected >= count, PageLayout.headerSize + count * childBytes <= pageSize else { return nil }
        let childOffset = PageLayout.headerSize + i * PageLayout.keyedChildSize
        let child = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: childOffset, as: UInt64.self))
        let childCount = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: childOffset + 8, as: UInt64.self))
        guard child != .none, childCount >= 1, childCount <= UInt64(PageLayout.maximumSubtreeCount) else { return nil }
        return .child(child, count: Int(childCount))
    }
}
