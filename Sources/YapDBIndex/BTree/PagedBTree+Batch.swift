// PagedBTree+Batch: several lookups at once, their memory waits overlapped.

/// Keys laid end to end in one buffer, for `PagedBTree.findEach`. Reused between batches
/// (`removeAll` keeps the storage), so a batch costs no allocation once warm.
package struct KeyBatch: Sendable {
    /// The keys' bytes, back to back.
    private(set) var bytes: [UInt8] = []
    /// Where each key ends in `bytes`.
    private(set) var ends: [Int] = []

    package init() {}

    /// The number of keys.
    package var count: Int { ends.count }

    /// Adds a copy of `key` at the end.
    package mutating func append(_ key: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: key)
        ends.append(bytes.count)
    }

    /// Removes every key, keeping the storage.
    package mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
    }

    /// Calls `body` with the keys' bytes: key `i` is `raw[range(i)]`.
    package func withKeys<R>(_ body: (UnsafeRawBufferPointer) throws(PageError) -> R) throws(PageError) -> R {
        let result: Result<R, PageError> = bytes.withUnsafeBytes { raw in Result { () throws(PageError) -> R in try body(raw) } }
        return try result.get()
    }

    /// The bytes of key `i` inside `raw` (the buffer `withKeys` hands out).
    @inline(__always)
    package func key(_ i: Int, in raw: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: raw[(i == 0 ? 0 : ends[i &- 1])..<ends[i]])
    }
}

/// Where one key of a batch stands. Plain data (no references), so the steps copy it for free.
private struct BatchSearch {
    enum State: UInt8 {
        /// At page `page` of level `level` (0: the leaf), whose header is not read yet.
        case header
        /// Searching `low..<high` of `view`; `mid` is the entry (leaf) or separator (branch)
        /// asked for last.
        case searching
        /// The search of branch `view` chose child `mid`, asked for.
        case child
        /// Found at entry `mid` of leaf page `view`.
        case foundInPage
        /// Found at entry `mid` of the dirty leaf `dirtyLeaves[low]`.
        case foundInNode
        case absent
    }

    var state: State
    var bytes = UnsafeRawBufferPointer(start: nil, count: 0)
    var page: PageID = .none
    var expected = 0, level = 0
    var view: PageView?
    var dataStart = 0, low = 0, high = 0, mid = 0

    init(_ state: State) { self.state = state }

    /// At page `page`, its header not read yet.
    init(bytes: UnsafeRawBufferPointer, page: PageID, expected: Int, level: Int) {
        state = .header
        (self.bytes, self.page, self.expected, self.level) = (bytes, page, expected, level)
    }

    /// Whether the search needs another step.
    var isOpen: Bool { state.rawValue <= State.child.rawValue }
}

extension PagedBTree {
    /// Looks up every key of `keys` and calls `body` with each one's index and value bytes
    /// (nil when absent), in the batch's order; the bytes are valid only during the call.
    ///
    /// The answers are those of `withValue(forKey:)`, key by key. What differs is the order of
    /// the memory reads: on mapped pages with a hint function (`MappedPages`), the keys walk
    /// down together a step at a time — a page's header, one comparison of its binary search, a
    /// branch's chosen child — each key asking for what its next step reads while the other
    /// keys take theirs. The waits for pages not in the CPU's caches then overlap instead of
    /// adding up, which is most of a lookup's time once the tree outgrows the caches. Without
    /// a hint, or for one key, each key is looked up in turn.
    /// - Throws: `PageError` if a page on a path cannot be read or is damaged (then `body` may
    ///   have been called for none of the keys).
    package func findEach(_ keys: KeyBatch, _ body: (Int, UnsafeRawBufferPointer?) throws(PageError) -> Void) throws(PageError) {
        let n = keys.count
        guard n > 0 else { return }
        try keys.withKeys { raw throws(PageError) in
            guard height > 0 else {
                for i in 0..<n { try body(i, nil) }
                return
            }
            guard n > 1, let table = pages.table, table.hint != nil else {
                for i in 0..<n {
                    var failure: PageError?
                    let found = try find(keys.key(i, in: raw)) { bytes in
                        do throws(PageError) { try body(i, bytes) } catch { failure = error }
                    }
                    if let failure { throw failure }
                    if !found { try body(i, nil) }
                }
                return
            }
            var searches: [BatchSearch] = []
            searches.reserveCapacity(n)
            var dirtyLeaves: [KeyedNode] = []
            for i in 0..<n { searches.append(try start(keys.key(i, in: raw), table: table, dirtyLeaves: &dirtyLeaves)) }
            var open = true
            while open {
                open = false
                for i in 0..<n where searches[i].isOpen {
                    try step(&searches[i], keys.key(i, in: raw), table: table)
                    open = open || searches[i].isOpen
                }
            }
            for i in 0..<n {
                let search = searches[i]
                switch search.state {
                case .foundInPage: try body(i, try search.view.unsafelyUnwrapped.leafEntry(search.mid).value)
                case .foundInNode:
                    var failure: PageError?
                    dirtyLeaves[search.low].entries.read(search.mid) { _, value in
                        do throws(PageError) { try body(i, value) } catch { failure = error }
                    }
                    if let failure { throw failure }
                default: try body(i, nil)
                }
            }
        }
    }

    /// Starts `key`'s search: through the dirty nodes at the top of the tree (a dirty leaf is
    /// searched at once, and kept in `dirtyLeaves` when it holds the key) and the few pages
    /// above the stepped levels, to a page whose header is asked for.
    private func start(_ key: UnsafeRawBufferPointer, table: MappedPages.Table, dirtyLeaves: inout [KeyedNode]) throws(PageError) -> BatchSearch {
        var ref = root
        var level = height - 1
        while let node = ref.node {
            if node.isLeaf {
                let (index, found) = node.search(key)
                guard found else { return BatchSearch(.absent) }
                var search = BatchSearch(.foundInNode)
                (search.low, search.mid) = (dirtyLeaves.count, index)
                dirtyLeaves.append(node)
                return search
            }
            ref = node.children[node.childIndex(key)]
            level -= 1
        }
        var page = ref.page, expected = ref.count
        while level > Self.steppedLevels {
            guard let bytes = table.bytes(page) else { throw .corrupt(page: page, reason: .missing) }
            let view = try PageView(bytes, id: page, pageSize: format.pageSize, family: .keyed, level: level)
            try view.requireSubtreeCount(expected)
            (page, expected) = try view.keyedChild(view.branchSearch(key))
            level -= 1
        }
        return try Self.visit(page, expected: expected, level: level, table: table)
    }

    /// The levels searched a step at a time: the leaves. The branches above them are far fewer
    /// pages, mostly in the CPU's caches; stepping through them too measured slower.
    private static var steppedLevels: Int { 0 }

    /// A search arriving at page `page`: its bytes located and its start (the header, and a
    /// leaf's first slots) asked for.
    @inline(__always)
    private static func visit(_ page: PageID, expected: Int, level: Int, table: MappedPages.Table) throws(PageError) -> BatchSearch {
        guard let bytes = table.bytes(page) else { throw .corrupt(page: page, reason: .missing) }
        table.prefetch(bytes.baseAddress.unsafelyUnwrapped, level == 0 ? startPrefetch : 64)
        return BatchSearch(bytes: bytes, page: page, expected: expected, level: level)
    }

    /// The bytes of a leaf's start asked for with its location: the header and the first slots.
    private static var startPrefetch: Int { 4 * 64 }

    /// One step of a key's search: a page's header checked (and the rest of its slots asked
    /// for), one comparison, or a branch's chosen child read; then what the next step reads is
    /// asked for. Compares as `leafSearch` and `branchSearch` do, so the answer is `find`'s.
    @inline(__always)
    private func step(_ search: inout BatchSearch, _ key: UnsafeRawBufferPointer, table: MappedPages.Table) throws(PageError) {
        switch search.state {
        case .header:
            let view = try PageView(search.bytes, id: search.page, pageSize: format.pageSize, family: .keyed, level: search.level)
            try view.requireSubtreeCount(search.expected)
            search.view = view
            search.dataStart = view.keyedDataStart
            (search.low, search.high) = (0, search.level == 0 ? view.count : view.count &- 1)
            let from = max(view.slotsStart, search.level == 0 ? Self.startPrefetch : 64)
            if search.dataStart > from { table.prefetch(view.address(from), search.dataStart &- from) }
        case .searching:
            let view = search.view.unsafelyUnwrapped
            if search.level == 0 {
                let order = try view.leafOrder(search.mid, dataStart: search.dataStart, key)
                if order == 0 {
                    search.state = .foundInPage
                    return
                }
                if order < 0 { search.low = search.mid &+ 1 } else { search.high = search.mid }
            } else if try view.separatorOrder(search.mid, dataStart: search.dataStart, key) <= 0 {
                search.low = search.mid &+ 1
            } else {
                search.high = search.mid
            }
        case .child:
            let (page, count) = try search.view.unsafelyUnwrapped.keyedChild(search.mid)
            search = try Self.visit(page, expected: count, level: search.level &- 1, table: table)
            return
        default:
            return
        }
        let view = search.view.unsafelyUnwrapped
        if search.low < search.high {
            search.mid = (search.low &+ search.high) &>> 1
            if let key = view.keyStart(search.mid) { table.prefetch(key, 64) }
            search.state = .searching
        } else if search.level == 0 {
            search.state = .absent
        } else {
            search.mid = search.low
            table.prefetch(view.address(PageLayout.headerSize &+ search.low &* PageLayout.keyedChildSize), PageLayout.keyedChildSize)
            search.state = .child
        }
    }
}
