// PagedBTree+Batch: several lookups at once, their memory waits overlapped.

/// Keys laid end to end in one buffer, each found again by its index: the batches of
/// `PagedBTree.findEach`, and the row keys the secondary index's executor copies out of pages
/// while it orders rows. Reused between batches (`removeAll` keeps the storage), so a batch
/// costs no allocation once warm.
package struct KeyBatch: Sendable {
    /// The keys' bytes, back to back.
    private(set) var bytes: [UInt8] = []
    /// Where each key ends in `bytes`.
    private(set) var ends: [Int] = []

    package init() {}

    /// The number of keys.
    package var count: Int { ends.count }

    /// Adds a copy of `key` at the end and returns its index.
    @discardableResult
    package mutating func append(_ key: UnsafeRawBufferPointer) -> Int {
        bytes.append(contentsOf: key)
        ends.append(bytes.count)
        return ends.count &- 1
    }

    /// Removes every key, keeping the storage.
    package mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
    }

    /// Calls `body` with the keys' bytes, `raw`: key `i` is `key(i, in: raw)`.
    package func withKeys<R>(_ body: (UnsafeRawBufferPointer) throws(PageError) -> R) throws(PageError) -> R {
        let result: Result<R, PageError> = bytes.withUnsafeBytes { raw in Result { () throws(PageError) -> R in try body(raw) } }
        return try result.get()
    }

    /// Calls `body` with the bytes of key `i` (valid only during the call). Not generic: it
    /// is called per row from another module, where a generic call would run unspecialized.
    package func withKey(_ i: Int, _ body: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        bytes.withUnsafeBytes { body(key(i, in: $0)) }
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
        /// At leaf page `page`, whose header is not read yet.
        case header
        /// Searching entries `low..<high` of leaf `view`; entry `mid`, compared next, asked for.
        case searching
        /// Found at entry `mid` of leaf page `view`.
        case foundInPage
        /// Found at entry `mid` of the dirty leaf `dirtyLeaves[low]`.
        case foundInNode
        case absent
    }

    var state: State
    /// The key looked up (in the batch's buffer).
    var key = UnsafeRawBufferPointer(start: nil, count: 0)
    var bytes = UnsafeRawBufferPointer(start: nil, count: 0)
    var page: PageID = .none
    var expected = 0
    var view: PageView?
    var dataStart = 0, low = 0, high = 0, mid = 0

    init(_ state: State) { self.state = state }

    /// At leaf page `page`, its header not read yet.
    init(key: UnsafeRawBufferPointer, bytes: UnsafeRawBufferPointer, page: PageID, expected: Int) {
        state = .header
        (self.key, self.bytes, self.page, self.expected) = (key, bytes, page, expected)
    }

    /// Whether the search needs another step.
    var isOpen: Bool { state.rawValue <= State.searching.rawValue }
}

extension PagedBTree {
    /// Looks up every key of `keys` and calls `body` with each one's index and value bytes
    /// (nil when absent), in the batch's order; the bytes are valid only during the call.
    ///
    /// The answers are those of `withValue(forKey:)`, key by key. What differs is the order of
    /// the memory reads: on mapped pages with a hint function (`MappedPages`), each key is
    /// walked down to its leaf page first, and then the leaves are searched together a step at a
    /// time — the header, then one comparison of the binary search — each key asking for the
    /// entry its next step reads while the other keys take theirs. The waits for leaf lines not
    /// in the CPU's caches then overlap instead of adding up, which is most of a lookup's time
    /// once the tree outgrows the caches. Without a hint, or for one key, each key is looked up
    /// in turn.
    /// - Throws: `PageError` if a page on a path cannot be read or is damaged (then `body` may
    ///   have been called for some of the keys, in order, and not for the rest).
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
            // Stepped in place through the buffer: an array element passed `inout` costs a
            // uniqueness check and a bounds check per step.
            try searches.withUnsafeMutableBufferPointer { (searches) throws(PageError) in
                var open = true
                while open {
                    open = false
                    for i in 0..<n where searches[i].isOpen {
                        try step(&searches[i], table: table)
                        open = open || searches[i].isOpen
                    }
                }
            }
            for i in 0..<n {
                let search = searches[i]
                switch search.state {
                case .foundInPage: try search.view.unsafelyUnwrapped.withLeafValue(search.mid) { (value) throws(PageError) in try body(i, value) }
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
    /// searched at once, and kept in `dirtyLeaves` when it holds the key) and the branch pages,
    /// to the leaf page, whose header and first slots are asked for. The branch pages are far
    /// fewer than the leaves and mostly in the CPU's caches: stepping through them as well
    /// measured no faster.
    private func start(_ key: UnsafeRawBufferPointer, table: MappedPages.Table, dirtyLeaves: inout [KeyedNode]) throws(PageError) -> BatchSearch {
        var cursor = cursor()
        var target = KeyedSeek.key(key)
        try cursor.seek(&target, table)
        let leaf = cursor.leaf
        if let unmanaged = leaf.node {
            let node = unmanaged.takeUnretainedValue()
            let (index, found) = node.search(key)
            guard found else { return BatchSearch(.absent) }
            var search = BatchSearch(.foundInNode)
            (search.low, search.mid) = (dirtyLeaves.count, index)
            dirtyLeaves.append(node)
            return search
        }
        // The leaf page is not read yet: its header and first slots are asked for, and `step`
        // checks it as the cursor would.
        let bytes = try table.page(leaf.page)
        table.prefetch(bytes.baseAddress.unsafelyUnwrapped, Self.startPrefetch)
        return BatchSearch(key: key, bytes: bytes, page: leaf.page, expected: leaf.count)
    }

    /// The bytes of a leaf's start asked for with its location: the header and the first slots.
    private static var startPrefetch: Int { 4 * 64 }

    /// One step of a key's leaf search: the header checked (and the rest of the slots asked
    /// for), or one comparison of the binary search; then the entry the next comparison reads
    /// is asked for. Compares as `leafSearch` does, so the answer is `find`'s. (Asking for the
    /// entries of the next three comparisons at once, to make three per step, measured slower.)
    private func step(_ search: inout BatchSearch, table: MappedPages.Table) throws(PageError) {
        let view: PageView
        if search.state == .header {
            view = try PageView(search.bytes, id: search.page, pageSize: format.pageSize, family: .keyed, level: 0)
            try view.requireSubtreeCount(search.expected)
            search.view = view
            search.dataStart = view.keyedDataStart
            (search.low, search.high) = (0, view.count)
            // Compared from here on without the page's shared key prefix.
            switch try view.placeAgainstPrefix(search.key) {
            case .before, .after: search.high = 0
            case .within(let rest): search.key = rest
            }
            if search.dataStart > Self.startPrefetch {
                table.prefetch(view.address(Self.startPrefetch), search.dataStart &- Self.startPrefetch)
            }
            search.state = .searching
        } else {
            view = search.view.unsafelyUnwrapped
            let order = try view.leafOrder(search.mid, dataStart: search.dataStart, search.key)
            if order == 0 {
                search.state = .foundInPage
                return
            }
            if order < 0 { search.low = search.mid &+ 1 } else { search.high = search.mid }
        }
        guard search.low < search.high else {
            search.state = .absent
            return
        }
        search.mid = (search.low &+ search.high) &>> 1
        if let entry = view.leafEntryStart(search.mid) { table.prefetch(entry, 64) }
    }
}
