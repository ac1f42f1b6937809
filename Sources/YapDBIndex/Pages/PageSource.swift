// PageSource: how the trees get clean pages — the seam between YapDBIndex and the index files.

/// Where a tree reads its clean (written) pages.
///
/// The engine implements it over YapDBStorage's index files: a memory map of each file's
/// published bytes (hand out the mapped bytes, no copy), or `pread` into a bounded cache.
/// Tests use an in-memory dictionary.
///
/// **Contract.** `withPage` calls `body` with exactly the bytes of page `id` and returns what
/// `body` returns; the bytes stay valid and unchanged only during the call (a cache may evict
/// the page afterwards). Calls nest: a tree walk holds up to one page per level at once. A source
/// should check a page's checksum (`PageFormat.verify`) before it first hands the page out (a
/// mapped source may remember which pages it checked); the trees bounds-check every access, so
/// unchecked damaged bytes give `PageError.corrupt`, never a trap or a huge allocation. A page
/// the source cannot read gives `.unreadable` (I/O) or `.corrupt(page:reason: .missing)`.
///
/// **Threading.** Called from any thread, concurrently (readers walk snapshots in parallel).
package protocol PageSource: Sendable {
    /// Calls `body` with the bytes of page `id`.
    ///
    /// Not generic on purpose: the trees call it through `any PageSource`, and a generic
    /// requirement would instantiate the result type's metadata at run time on every page visit
    /// (measured: a quarter of a lookup's time). Results travel through the caller's variables.
    /// - Throws: `PageError` from reading the page, or whatever `body` throws.
    func withPage(_ id: PageID, _ body: (UnsafeRawBufferPointer) throws(PageError) -> Void) throws(PageError)

    /// A table the trees may read pages from directly instead of calling `withPage` (the fast
    /// path of a page visit), or nil. Only for a source whose `withPage` hands out exactly
    /// those bytes with nothing else to do per visit (no checksum, counting or I/O); a page the
    /// table does not hold is `.corrupt(page:reason: .missing)`, as from `withPage`. Read once,
    /// when a tree is given the source. Default: nil.
    var mappedPages: MappedPages? { get }

    /// The most distinct pages this source can hand out (every page of the files it reads),
    /// or nil when unknown. A tree opened over the source refuses a root that claims more
    /// entries than that many leaves could hold (`PageCorruption.countBeyondCapacity`): levels
    /// strictly decrease, so pages cannot form a cycle, but child pages shared by several
    /// parents could otherwise make a tree of a few pages claim, and a walk visit, up to
    /// 2^48 entries. Every walk visits at most the root's count of entries (each child's count
    /// is checked against its parent's), so with this bound a walk's work is bounded by the
    /// file's size. Default: nil.
    var pageCapacity: Int? { get }
}

extension PageSource {
    package var mappedPages: MappedPages? { nil }
    package var pageCapacity: Int? { nil }
}

/// How a tree reads its clean pages: from the source's `MappedPages` when it has one (inline:
/// no call through the protocol, no closure context, no reference counting), else through
/// `withPage`.
///
/// Threading: a value; any thread (as its source).
struct PageReader: Sendable {
    /// Where pages come from.
    let source: any PageSource
    /// `source.mappedPages`, read once; held so that `table` stays valid.
    let mapped: MappedPages?
    /// `mapped`'s lookup, as a value: a visit reads it with no reference counting.
    let table: MappedPages.Table?

    init(_ source: any PageSource) {
        self.source = source
        mapped = source.mappedPages
        table = mapped?.table
    }

    /// Reads page `id` and returns what `body` computes from its bytes (valid only during the
    /// call).
    /// - Throws: `.corrupt(page: id, reason: .missing)` for a page the table does not hold,
    ///   the source's errors, or what `body` throws.
    @inline(__always)
    func read<R>(_ id: PageID, _ body: (UnsafeRawBufferPointer) throws(PageError) -> R) throws(PageError) -> R {
        if let table {
            let bytes = try table.page(id)
            return try body(bytes)
        }
        var result: R? = nil
        try source.withPage(id) { bytes throws(PageError) in result = try body(bytes) }
        return result.unsafelyUnwrapped
    }
}

/// A source whose every page read fails with `error`, over `base` (kept for its capacity): what
/// a tree reads through once its root claimed more entries than `base` could hold.
struct RefusingPageSource: PageSource {
    let base: any PageSource
    let error: PageError

    var pageCapacity: Int? { base.pageCapacity }

    func withPage(_ id: PageID, _ body: (UnsafeRawBufferPointer) throws(PageError) -> Void) throws(PageError) {
        throw error
    }
}

/// A source with no pages, for trees that have never been written (every read is `.missing`).
package struct EmptyPageSource: PageSource {
    package init() {}

    package func withPage(_ id: PageID, _ body: (UnsafeRawBufferPointer) throws(PageError) -> Void) throws(PageError) {
        throw .corrupt(page: id, reason: .missing)
    }
}
