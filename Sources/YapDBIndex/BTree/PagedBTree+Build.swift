// PagedBTree+Build: a tree built bottom-up from entries given in ascending key order — a
// transaction's sorted write buffer applied to an empty tree — instead of one copy-on-write
// descent per entry.

/// Builds a `PagedBTree` from entries appended in strictly ascending key order: leaves are
/// filled to about 15/16 of a page one after another, then each level of branches over the
/// one below, so no node is ever split or searched. The last two nodes of a level are evened
/// out so that every node but the root meets the tree's fill bound (an eighth of a page).
///
/// The result is the tree `upsert` of the same entries would hold (same entries, same
/// invariants: `validate()` passes), with fuller pages. Nodes are dirty (in memory) until a
/// checkpoint writes them, like any other change.
package struct PagedBTreeBuilder {
    private let format: PageFormat
    private let source: any PageSource
    /// Payload bytes a node is filled to before the next one is started.
    private let fill: Int
    /// The finished leaves, each with the separator before it (`shortestSeparator`; the first
    /// leaf's first key).
    private var level: [(ref: ChildRef<KeyedNode>, first: [UInt8])] = []
    /// The leaf being filled.
    private var current = LeafEntries()
    /// The last key of the last finished leaf.
    private var lastKey: [UInt8] = []
    /// Where finished leaves are written before the build ends (nil: they stay in memory).
    private let sink: LeafSink?
    /// The first leaf of `level` still in memory (the ones before it were written to `sink`).
    private var firstHeld = 0

    /// A builder for a tree of pages in `format`, whose later reads of clean pages (none at
    /// first) go to `source`; with a `sink`, finished leaves past its `heldLeaves` are written
    /// as pages while the build goes on (the finished tree then refers to them as clean pages:
    /// read it through a source that holds them).
    package init(format: PageFormat, source: any PageSource, sink: LeafSink? = nil) {
        self.format = format
        self.source = source
        self.sink = sink
        fill = format.payloadSize - format.payloadSize / 16
    }

    /// Adds an entry after the ones added so far.
    /// - Throws: `.entryTooLarge` when `key.count + value.count > format.maximumEntrySize`
    ///   (nothing added).
    /// - Precondition: `key` is greater than every key added before (a caller's bug otherwise).
    package mutating func append(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws(PageError) {
        let size = key.count + value.count
        guard size <= format.maximumEntrySize else { throw .entryTooLarge(size: size, limit: format.maximumEntrySize) }
        let bytes = PageLayout.slotSize + PageLayout.leafEntryHeader + size
        if current.count > 0 {
            let order = current.read(current.count - 1) { last, _ in compareBytes(last, key) }
            precondition(order < 0, "PagedBTreeBuilder.append: keys must ascend")
            if current.encodedSize(appending: key, value) - PageLayout.headerSize > fill {
                closeLeaf()
                if let sink, level.count - firstHeld > sink.heldLeaves + 2 { try writeHeldLeaves(to: sink) }
            }
        } else if let previous = level.last?.ref.node {
            let order = previous.entries.read(previous.entries.count - 1) { last, _ in compareBytes(last, key) }
            precondition(order < 0, "PagedBTreeBuilder.append: keys must ascend")
        }
        if current.count == 0 { current.reserve(bytes: fill, count: fill / max(bytes, 1) + 1) }
        current.append(key, value)
    }

    /// Ends the leaf being filled.
    private mutating func closeLeaf() {
        let node = KeyedNode(leaf: current)
        let separator = level.isEmpty ? current.key(0)
            : lastKey.withUnsafeBytes { last in current.read(0) { first, _ in shortestSeparator(after: last, upTo: first) } }
        level.append((.dirty(node, count: current.count), separator))
        lastKey = current.key(current.count - 1)
        current = LeafEntries()
    }

    /// Writes the leaves held in memory but the last two (which `evenOutLastLeaves` may still
    /// change, and whose keys `append` compares with) and refers to them by their pages.
    private mutating func writeHeldLeaves(to sink: LeafSink) throws(PageError) {
        let end = level.count - 2
        let page = UnsafeMutableRawBufferPointer.allocate(byteCount: format.pageSize, alignment: 16)
        defer { page.deallocate() }
        for i in firstHeld..<end {
            guard let node = level[i].ref.node else { continue }
            page.initializeMemory(as: UInt8.self, repeating: 0)
            node.encode(into: page, childPages: [])
            format.seal(page)
            let id = try sink.write(UnsafeRawBufferPointer(page))
            level[i].ref = .clean(id, count: level[i].ref.count)
        }
        firstHeld = end
    }

    /// The tree of the entries added (empty when none were).
    package consuming func finish() -> PagedBTree {
        var tree = PagedBTree(format: format, source: source)
        if current.count > 0 { closeLeaf() }
        guard !level.isEmpty else { return tree }
        evenOutLastLeaves()
        var height = 1
        while level.count > 1 {
            level = keyedBranches(over: level, at: height, format: format, fill: fill)
            height += 1
        }
        tree.root = level[0].ref
        tree.height = height
        return tree
    }

    /// Shares the entries of the last two leaves evenly when the last one is under the fill
    /// bound (the one before it is nearly full, so both halves then meet it).
    private mutating func evenOutLastLeaves() {
        guard level.count >= 2, let last = level[level.count - 1].ref.node,
              last.byteSize - PageLayout.headerSize < format.minimumKeyedPayload,
              let before = level[level.count - 2].ref.node else { return }
        var all = before.entries
        all.append(contentsOf: last.entries)
        let shared = all.sharedPerEntry
        let m = balancedSplit(pieces: all.count) { all.pageBytes($0) - shared }
        let left = all.slice(0..<m), right = all.slice(m..<all.count)
        let separator = left.read(m - 1) { last, _ in right.read(0) { first, _ in shortestSeparator(after: last, upTo: first) } }
        level[level.count - 2] = (.dirty(KeyedNode(leaf: left), count: left.count), level[level.count - 2].first)
        level[level.count - 1] = (.dirty(KeyedNode(leaf: right), count: right.count), separator)
    }
}

/// The level of branches (at `height`, one above `children`) over `children` (each with the
/// separator before it, its subtree's first key for the first): groups of consecutive children
/// filled greedily to `fill` payload bytes (counted as the page will hold them, with the
/// separators' shared prefix once), at least two each, the last two evened out when the last is
/// under the fill bound. The branches are dirty nodes (the children are kept as given); shared
/// by the bottom-up builder and index compaction's repack.
func keyedBranches(over children: [(ref: ChildRef<KeyedNode>, first: [UInt8])], at height: Int, format: PageFormat, fill: Int)
    -> [(ref: ChildRef<KeyedNode>, first: [UInt8])] {
    /// Payload bytes of a branch over `group`: its children, and its separators (the separators
    /// of all children but the first) with their shared prefix stored once.
    func payload(_ group: Range<Int>) -> Int {
        var bytes = PageLayout.keyedBodyStart - PageLayout.headerSize + group.count * PageLayout.keyedChildSize
        guard group.count > 1 else { return bytes }
        let separators = (group.lowerBound + 1)..<group.upperBound
        for i in separators { bytes += KeyedNode.separatorBytes(children[i].first) }
        let shared = commonPrefixLength(children[separators.lowerBound].first, children[separators.upperBound - 1].first)
        return bytes - (separators.count - 1) * shared
    }
    // Groups of consecutive children, each a branch: filled greedily, at least two each. The
    // raw sum bounds the size from above; only a group past `fill` by that measure is counted
    // exactly.
    var groups: [Range<Int>] = []
    var start = 0, raw = PageLayout.keyedChildSize
    for i in 1..<children.count {
        let add = PageLayout.keyedChildSize + KeyedNode.separatorBytes(children[i].first)
        if raw + add > fill && i - start >= 2 && payload(start..<(i + 1)) > fill {
            groups.append(start..<i)
            start = i
            raw = PageLayout.keyedChildSize
        } else {
            raw += add
        }
    }
    groups.append(start..<children.count)
    // Even out the last two groups when the last is under the fill bound (or has one child).
    if groups.count >= 2 {
        let last = groups[groups.count - 1]
        if payload(last) < format.minimumKeyedPayload || last.count < 2 {
            let both = groups[groups.count - 2].lowerBound..<last.upperBound
            let shared = commonPrefixLength(children[both.lowerBound + 1].first, children[both.upperBound - 1].first)
            let m = balancedSplit(pieces: both.count) { i in
                PageLayout.keyedChildSize + (i > 0 ? KeyedNode.separatorBytes(children[both.lowerBound + i].first) - shared : 0)
            }
            groups[groups.count - 2] = both.lowerBound..<(both.lowerBound + m)
            groups[groups.count - 1] = (both.lowerBound + m)..<both.upperBound
        }
    }
    return groups.map { group in
        var separators = ContiguousArray<[UInt8]>()
        var refs = ContiguousArray<ChildRef<KeyedNode>>()
        separators.reserveCapacity(group.count - 1)
        refs.reserveCapacity(group.count)
        var count = 0
        for i in group {
            if i > group.lowerBound { separators.append(children[i].first) }
            refs.append(children[i].ref)
            count += children[i].ref.count
        }
        let node = KeyedNode(level: height, separators: separators, children: refs)
        return (.dirty(node, count: count), children[group.lowerBound].first)
    }
}

/// Where a bottom-up build (`PagedBTreeBuilder`) writes finished leaves before it ends — a
/// write transaction's spill of a large merge rebuild — so the build holds at most about
/// `heldLeaves` leaves in memory whatever the size of the tree.
package struct LeafSink {
    /// Leaves kept in memory before the finished ones are written.
    package let heldLeaves: Int
    /// Appends one sealed page and returns its id (throws what the caller's writer throws,
    /// as `PageError.unreadable` wrapping it).
    package let write: (UnsafeRawBufferPointer) throws(PageError) -> PageID

    package init(heldLeaves: Int, write: @escaping (UnsafeRawBufferPointer) throws(PageError) -> PageID) {
        self.heldLeaves = max(1, heldLeaves)
        self.write = write
    }
}
