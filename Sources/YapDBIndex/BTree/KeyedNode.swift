// KeyedNode: the in-memory (dirty) node of a PagedBTree, its page decoding and encoding, and
// its size accounting.

/// A dirty node of a `PagedBTree`: a leaf of sorted (key, value) byte strings, or a branch of
/// children separated by keys (`keys[i]` is the least key child `i + 1` may hold and is greater
/// than every key of child `i`).
///
/// `@unchecked Sendable` is safe by the copy-on-write discipline: a node is mutated only through
/// a reference proven unique by `isKnownUniquelyReferenced` from the tree's root down, so a node
/// that two tree values (and so two threads) can reach is never mutated. The flush mark is
/// atomic (`FlushMark`).
package final class KeyedNode: PagedNode, @unchecked Sendable {
    // `@exclusivity(unchecked)`: see RowTreeNode — only this module's code touches these, never
    // with overlapping accesses to one node.
    /// Branch: the separators, one fewer than the children. Leaf: empty.
    @exclusivity(unchecked) var keys: ContiguousArray<[UInt8]>
    /// Leaf: the entries. Branch: empty.
    @exclusivity(unchecked) var entries: LeafEntries
    /// Branch: the children. Leaf: empty.
    @exclusivity(unchecked) var children: ContiguousArray<ChildRef<KeyedNode>>
    /// The size of this node encoded as a page.
    @exclusivity(unchecked) var byteSize: Int
    /// Whether the last change added an entry (leaf) or a child (branch) at the end: a split then
    /// leaves the left node nearly full instead of halving it, so ascending inserts (bulk loads,
    /// the row-id tree) fill pages to about 7/8 instead of 1/2.
    @exclusivity(unchecked) var appendedLast = false
    /// 0 for a leaf; a branch is one above its children.
    let level: Int
    /// The page a published flush wrote this node to.
    let mark = FlushMark()

    /// A branch at `level` with these separators and children.
    init(level: Int, separators: ContiguousArray<[UInt8]>, children: ContiguousArray<ChildRef<KeyedNode>>) {
        self.level = level
        keys = separators
        entries = LeafEntries()
        self.children = children
        byteSize = 0
        recomputeSize()
    }

    /// A leaf holding `entries`.
    init(leaf entries: LeafEntries) {
        level = 0
        keys = []
        self.entries = entries
        children = []
        byteSize = 0
        recomputeSize()
    }

    var isLeaf: Bool { level == 0 }

    /// A copy that shares the arrays until one side changes them (and has no flush mark).
    func copy() -> KeyedNode {
        let node = isLeaf ? KeyedNode(leaf: entries) : KeyedNode(level: level, separators: keys, children: children)
        node.byteSize = byteSize
        return node
    }

    /// Page bytes of one leaf entry: its slot, lengths, key and value.
    static func entryBytes(_ key: [UInt8], _ value: [UInt8]) -> Int {
        PageLayout.slotSize + PageLayout.leafEntryHeader + key.count + value.count
    }

    /// Page bytes of one separator: its slot, length and key.
    static func separatorBytes(_ key: [UInt8]) -> Int { PageLayout.slotSize + PageLayout.separatorHeader + key.count }

    /// Sets `byteSize` from the contents.
    func recomputeSize() {
        var size = PageLayout.headerSize
        if isLeaf {
            size += entries.count * PageLayout.slotSize + entries.liveBytes
        } else {
            size += children.count * PageLayout.keyedChildSize
            for key in keys { size += Self.separatorBytes(key) }
        }
        byteSize = size
    }

    /// Entries in this subtree (the sum of the children's counts for a branch).
    var subtreeCount: Int { isLeaf ? entries.count : children.reduce(0) { $0 + $1.count } }

    /// Leaf: the first index whose key is not less than `key`, and whether it is equal.
    func search(_ key: UnsafeRawBufferPointer) -> (index: Int, found: Bool) { entries.search(key) }

    /// Branch: the child whose range holds `key`.
    func childIndex(_ key: UnsafeRawBufferPointer) -> Int {
        var low = 0, high = keys.count
        while low < high {
            let mid = (low + high) >> 1
            if keys[mid].withUnsafeBytes({ compareBytes($0, key) }) <= 0 { low = mid + 1 } else { high = mid }
        }
        return low
    }
}

// MARK: - Decoding and encoding

extension KeyedNode {
    static var family: TreeFamily { .keyed }

    static func firstRowid(_ view: PageView) throws(PageError) -> UInt64 { 0 }

    /// The node held by a checked page header.
    static func decode(_ view: PageView, format: PageFormat) throws(PageError) -> KeyedNode {
        if view.level == 0 {
            let node = KeyedNode(leaf: try LeafEntries(page: view, maximumEntrySize: format.maximumEntrySize))
            // Slots may overlap in a damaged page: the decoded node must still fit one page.
            guard node.byteSize <= format.pageSize else { throw .corrupt(page: view.id, reason: .overfilled) }
            return node
        }
        var keys = ContiguousArray<[UInt8]>()
        var children = ContiguousArray<ChildRef<KeyedNode>>()
        keys.reserveCapacity(view.count)
        children.reserveCapacity(view.count)
        var total = 0
        for i in 0..<view.count {
            let (page, count) = try view.keyedChild(i)
            let (sum, overflow) = total.addingReportingOverflow(count)
            guard !overflow else { throw .corrupt(page: view.id, reason: .subtreeCountMismatch(expected: view.subtreeCount, found: Int.max)) }
            total = sum
            children.append(.clean(page, count: count))
        }
        guard total == view.subtreeCount else {
            throw .corrupt(page: view.id, reason: .subtreeCountMismatch(expected: view.subtreeCount, found: total))
        }
        for i in 0..<(view.count - 1) {
            let separator = try view.separator(i)
            if i > 0 { try requireAscending(keys[i - 1], separator, slot: i, page: view.id) }
            guard separator.count <= format.maximumEntrySize else { throw .corrupt(page: view.id, reason: .overfilled) }
            keys.append(Array(separator))
        }
        let node = KeyedNode(level: view.level, separators: keys, children: children)
        guard node.byteSize <= format.pageSize else { throw .corrupt(page: view.id, reason: .overfilled) }
        return node
    }

    /// Throws `.keysOutOfOrder(slot)` unless `previous < key`.
    static func requireAscending(_ previous: [UInt8], _ key: UnsafeRawBufferPointer, slot: Int, page: PageID) throws(PageError) {
        guard previous.withUnsafeBytes({ compareBytes($0, key) }) < 0 else { throw .corrupt(page: page, reason: .keysOutOfOrder(slot: slot)) }
    }

    /// Encodes this node into the zeroed `page`; `childPages[i]` is the page of child `i`.
    func encode(into page: UnsafeMutableRawBufferPointer, childPages: [PageID]) {
        let count = isLeaf ? entries.count : children.count
        writeHeader(page, kind: isLeaf ? .keyedLeaf : .keyedBranch, level: level, count: count, subtreeCount: subtreeCount)
        var slot = PageLayout.headerSize
        if !isLeaf {
            for (i, child) in children.enumerated() {
                page.storeBytes(of: childPages[i].littleEndian, toByteOffset: slot, as: UInt64.self)
                page.storeBytes(of: UInt64(child.count).littleEndian, toByteOffset: slot + 8, as: UInt64.self)
                slot += PageLayout.keyedChildSize
            }
        }
        var data = slot + count * PageLayout.slotSize - (isLeaf ? 0 : PageLayout.slotSize)
        func put(_ bytes: UnsafeRawBufferPointer) {
            UnsafeMutableRawBufferPointer(rebasing: page[data..<(data + bytes.count)]).copyMemory(from: bytes)
            data += bytes.count
        }
        func putLength(_ length: Int) {
            page.storeBytes(of: UInt16(length).littleEndian, toByteOffset: data, as: UInt16.self)
            data += 2
        }
        for i in 0..<(isLeaf ? entries.count : keys.count) {
            page.storeBytes(of: UInt16(data).littleEndian, toByteOffset: slot, as: UInt16.self)
            slot += PageLayout.slotSize
            if isLeaf {
                entries.read(i) { key, value in
                    putLength(key.count); putLength(value.count)
                    put(key); put(value)
                }
            } else {
                putLength(keys[i].count)
                keys[i].withUnsafeBytes { put($0) }
            }
        }
    }
}
