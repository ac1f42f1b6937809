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
}

/// Reads page `id` from `source` and returns what `body` computes from its bytes.
@inline(__always)
func readPage<R>(_ source: any PageSource, _ id: PageID, _ body: (UnsafeRawBufferPointer) throws(PageError) -> R) throws(PageError) -> R {
    var result: R? = nil
    try source.withPage(id) { bytes throws(PageError) in result = try body(bytes) }
    return result.unsafelyUnwrapped
}

/// A source with no pages, for trees that have never been written (every read is `.missing`).
package struct EmptyPageSource: PageSource {
    package init() {}

    package func withPage(_ id: PageID, _ body: (UnsafeRawBufferPointer) throws(PageError) -> Void) throws(PageError) {
        throw .corrupt(page: id, reason: .missing)
    }
}
