// ChildRef and FlushMark: how a tree refers to a child — a clean page or a dirty in-memory node —
// and how an in-memory node remembers the page a checkpoint wrote it to.
import Synchronization

/// A reference from a parent (or a tree's root) to a subtree: a clean page, or a dirty node held
/// in memory, with the subtree's entry count.
///
/// Exactly one of `page` and `node` is meaningful: `node != nil` means dirty (then `page` is
/// `PageID.none`); otherwise `page` is the written page (`PageID.none` only for an empty root).
struct ChildRef<Node: AnyObject & Sendable>: Sendable {
    var page: PageID
    var node: Node?
    /// Entries in the subtree.
    var count: Int
    /// Row trees: the subtree's first row id (what comparator searches look at). Keyed trees: 0.
    var first: UInt64 = 0

    static func clean(_ page: PageID, count: Int, first: UInt64 = 0) -> ChildRef {
        ChildRef(page: page, node: nil, count: count, first: first)
    }

    static func dirty(_ node: Node, count: Int, first: UInt64 = 0) -> ChildRef {
        ChildRef(page: .none, node: node, count: count, first: first)
    }
}

/// The page a dirty node was written to by a published checkpoint (`PageFlush.publish()`), or
/// `PageID.none`. A later flush of a tree that still shares the node writes nothing for it and
/// reuses the page; `releasingFlushedNodes()` swaps it for a clean reference.
///
/// Atomic because a checkpoint's flush reads marks on its own thread while the writer may
/// publish (under the writer lock) or read them; the writer clears a mark (`reset`) only on a
/// node it owns exclusively, just before changing it in place.
final class FlushMark: Sendable {
    private let page = Atomic<UInt64>(0)

    init() {}

    /// The page this node was published as, or `PageID.none`.
    var flushedPage: PageID { page.load(ordering: .acquiring) }

    /// Records that the node's current contents are page `id`.
    func publish(_ id: PageID) { page.store(id, ordering: .releasing) }

    /// Forgets the page: the node is about to change.
    func reset() { if page.load(ordering: .relaxed) != .none { page.store(.none, ordering: .relaxed) } }
}

/// The outcome of writing a tree's dirty nodes (`flush`): the new root page, and the
/// assignments of pages to in-memory nodes, which `publish()` records in the nodes once the
/// checkpoint that wrote them is durable.
///
/// A `PageFlush` keeps the written nodes alive, so until it is published or dropped the writer
/// cannot change them in place (they are shared, so it copies them): a node is never marked with
/// a page that holds older contents than the node.
///
/// Threading: create it on any thread (the checkpoint's); call `publish()` while holding the
/// writer lock (no thread mutating a tree value may run at the same time: the lock orders the
/// marks before the writer's next in-place change).
package struct PageFlush: Sendable {
    /// The clean root page of the flushed tree (`PageID.none` for an empty tree).
    package let root: PageID
    /// Pages written by this flush.
    package var pagesWritten: Int { marks.count }
    /// The nodes written and their pages.
    let marks: [(FlushMark, PageID)]
    /// The written nodes, kept alive until this value is dropped (see the type's comment).
    let nodes: [any AnyObject & Sendable]

    /// Records in each written node the page it was written to, so later flushes of trees that
    /// still share those nodes reuse the pages, and `releasingFlushedNodes()` can drop them from
    /// memory. Call only after the pages and the root record that reaches them are durable, and
    /// under the writer lock; if the checkpoint failed, drop the `PageFlush` instead (the next
    /// flush writes the nodes again).
    package func publish() {
        for (mark, page) in marks { mark.publish(page) }
    }
}

/// The scratch page and the record of one flush. The allocator and sink are passed to `emit`
/// (they are the caller's non-escaping closures).
struct PageWriter: ~Copyable {
    let format: PageFormat
    let buffer: UnsafeMutableRawBufferPointer
    var marks: [(FlushMark, PageID)] = []
    var nodes: [any AnyObject & Sendable] = []

    init(format: PageFormat) {
        self.format = format
        buffer = .allocate(byteCount: format.pageSize, alignment: 16)
    }

    deinit { buffer.deallocate() }

    /// Zeroes the scratch page, lets `fill` encode a node into it, seals it with its checksum,
    /// allocates a page id and hands the page to the sink. Returns the page id.
    mutating func emit<E: Error>(
        _ node: any AnyObject & Sendable, _ mark: FlushMark, allocate: () throws(E) -> PageID, write: (PageID, UnsafeRawBufferPointer) throws(E) -> Void,
        _ fill: (UnsafeMutableRawBufferPointer) -> Void
    ) throws(E) -> PageID {
        let id = try emitCopy(allocate: allocate, write: write, fill)
        marks.append((mark, id))
        nodes.append(node)
        return id
    }

    /// As `emit`, for a node decoded from a clean page by a full copy: nothing is recorded, so
    /// the node is released as soon as the caller drops it.
    mutating func emitCopy<E: Error>(
        allocate: () throws(E) -> PageID, write: (PageID, UnsafeRawBufferPointer) throws(E) -> Void,
        _ fill: (UnsafeMutableRawBufferPointer) -> Void
    ) throws(E) -> PageID {
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        fill(buffer)
        format.seal(buffer)
        let id = try allocate()
        try write(id, UnsafeRawBufferPointer(buffer))
        return id
    }
}

/// Writes the common page header.
func writeHeader(_ page: UnsafeMutableRawBufferPointer, kind: PageKind, level: Int, count: Int, subtreeCount: Int) {
    page[PageLayout.kindOffset] = kind.rawValue
    page[PageLayout.levelOffset] = UInt8(level)
    page.storeBytes(of: UInt16(count).littleEndian, toByteOffset: PageLayout.countOffset, as: UInt16.self)
    page.storeBytes(of: UInt64(subtreeCount).littleEndian, toByteOffset: PageLayout.subtreeCountOffset, as: UInt64.self)
}

/// Runs `body` over the bytes of `array`, passing on a typed error.
@inline(__always)
func withBytes<R>(_ array: [UInt8], _ body: (UnsafeRawBufferPointer) throws(PageError) -> R) throws(PageError) -> R {
    let result: Result<R, PageError> = array.withUnsafeBytes { bytes in Result { () throws(PageError) -> R in try body(bytes) } }
    return try result.get()
}
