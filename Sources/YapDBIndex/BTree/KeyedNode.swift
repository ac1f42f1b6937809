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
    /// Branch: its size encoded as a page if the separators shared no prefix (leaf: unused).
    @exclusivity(unchecked) var branchBytes: Int
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
        branchBytes = 0
        recomputeSize()
    }

    /// A leaf holding `entries`.
    init(leaf entries: LeafEntries) {
        level = 0
        keys = []
        self.entries = entries
        children = []
        branchBytes = 0
        recomputeSize()
    }

    var isLeaf: Bool { level == 0 }

    /// A copy that shares the arrays until one side changes them (and has no flush mark).
    func copy() -> KeyedNode {
        let node = isLeaf ? KeyedNode(leaf: entries) : KeyedNode(level: level, separators: keys, children: children)
        node.branchBytes = branchBytes
        return node
    }

    /// Page bytes of one leaf entry, before prefixes are shared: its slot, lengths, key and value.
    static func entryBytes(_ key: [UInt8], _ value: [UInt8]) -> Int {
        PageLayout.slotSize + PageLayout.leafEntryHeader + key.count + value.count
    }

    /// Page bytes of one separator, before prefixes are shared: its slot, length and key.
    static func separatorBytes(_ key: [UInt8]) -> Int { PageLayout.slotSize + PageLayout.separatorHeader + key.count }

    /// Sets `branchBytes` from the contents.
    func recomputeSize() {
        guard !isLeaf else { return }
        var size = PageLayout.keyedBodyStart + children.count * PageLayout.keyedChildSize
        for key in keys { size += Self.separatorBytes(key) }
        branchBytes = size
    }

    /// The size of this node encoded as a page, with the shared prefixes stored once.
    var byteSize: Int {
        if isLeaf { return entries.encodedSize }
        return branchBytes - max(0, keys.count - 1) * separatorPrefix
    }

    /// Payload bytes (after the header) this node would take if no prefix were shared: what
    /// the fill bound of `validate()` counts, since sharing can only make a page smaller.
    var unsharedPayload: Int {
        isLeaf ? PageLayout.keyedBodyStart - PageLayout.headerSize + entries.count * PageLayout.slotSize + entries.liveBytes
            : branchBytes - PageLayout.headerSize
    }

    /// Branch: the number of leading bytes all separators share (the first and last ones').
    var separatorPrefix: Int {
        guard let first = keys.first, let last = keys.last else { return 0 }
        return commonPrefixLength(first, last)
    }

    /// Bytes each entry (leaf) or separator (branch) saves by the shared prefixes.
    var sharedPerPiece: Int { isLeaf ? entries.sharedPerEntry : separatorPrefix }

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

    @inline(__always)
    static func child(_ view: PageView, _ k: Int) throws(PageError) -> (page: PageID, count: Int) { try view.keyedChild(k) }

    static var childSize: Int { PageLayout.keyedChildSize }

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
        try view.checkPrefixes()
        let prefix = view.sharedKeyPrefix
        for i in 0..<(view.count - 1) {
            let suffix = try view.separatorSuffix(i)
            guard prefix.count + suffix.count <= format.maximumEntrySize else { throw .corrupt(page: view.id, reason: .overfilled) }
            var separator = [UInt8]()
            separator.reserveCapacity(prefix.count + suffix.count)
            separator.append(contentsOf: prefix)
            separator.append(contentsOf: suffix)
            if i > 0, commonOrder(keys[i - 1], separator) >= 0 { throw .corrupt(page: view.id, reason: .keysOutOfOrder(slot: i)) }
            keys.append(separator)
        }
        let node = KeyedNode(level: view.level, separators: keys, children: children)
        guard node.byteSize <= format.pageSize else { throw .corrupt(page: view.id, reason: .overfilled) }
        return node
    }

    /// The memcmp order of `a` against `b`.
    static func commonOrder(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.withUnsafeBytes { x in b.withUnsafeBytes { compareBytes(x, $0) } }
    }

    /// Encodes this node into the zeroed `page`; `childPages[i]` is the page of child `i`.
    /// The bytes all keys (separators) share, and in a leaf the bytes all values share when
    /// `storedValuePrefix` says so, are written once; each entry keeps the rest.
    func encode(into page: UnsafeMutableRawBufferPointer, childPages: [PageID]) {
        let count = isLeaf ? entries.count : children.count
        writeHeader(page, kind: isLeaf ? .keyedLeaf : .keyedBranch, level: level, count: count, subtreeCount: subtreeCount)
        let keyPrefix = isLeaf ? entries.keyPrefix : separatorPrefix
        let valuePrefix = isLeaf ? entries.storedValuePrefix : 0
        page.storeBytes(of: UInt16(keyPrefix).littleEndian, toByteOffset: PageLayout.keyPrefixOffset, as: UInt16.self)
        page.storeBytes(of: UInt16(valuePrefix).littleEndian, toByteOffset: PageLayout.valuePrefixOffset, as: UInt16.self)
        var slot = PageLayout.keyedBodyStart
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
        // The shared prefixes, taken from the first entry (separator).
        if isLeaf, entries.count > 0 {
            entries.read(0) { key, value in
                put(UnsafeRawBufferPointer(rebasing: key[..<keyPrefix]))
                put(UnsafeRawBufferPointer(rebasing: value[..<valuePrefix]))
            }
        } else if !isLeaf, let first = keys.first {
            first.withUnsafeBytes { put(UnsafeRawBufferPointer(rebasing: $0[..<keyPrefix])) }
        }
        for i in 0..<(isLeaf ? entries.count : keys.count) {
            page.storeBytes(of: UInt16(data).littleEndian, toByteOffset: slot, as: UInt16.self)
            slot += PageLayout.slotSize
            if isLeaf {
                entries.read(i) { key, value in
                    putLength(key.count - keyPrefix); putLength(value.count - valuePrefix)
                    put(UnsafeRawBufferPointer(rebasing: key[keyPrefix...])); put(UnsafeRawBufferPointer(rebasing: value[valuePrefix...]))
                }
            } else {
                putLength(keys[i].count - keyPrefix)
                keys[i].withUnsafeBytes { put(UnsafeRawBufferPointer(rebasing: $0[keyPrefix...])) }
            }
        }
    }
}
