// Test support: an in-memory page source for the paged trees, with an allocator and sink for
// their flushes, and ways to damage its pages.
import Synchronization
@testable import YapDBIndex

/// One stored page (immutable once stored; damage replaces it).
final class StoredPage: Sendable {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
}

/// A `PageSource` over a dictionary. Verifies each page's checksum on every read when
/// `verifiesChecksums` (as a real source does on first read); pages are handed out outside the
/// lock, so nested reads do not deadlock.
final class MemoryPageSource: PageSource {
    let format: PageFormat
    let verifiesChecksums: Bool
    private let state = Mutex<(pages: [PageID: StoredPage], next: PageID, reads: Int)>(([:], 1, 0))

    init(format: PageFormat, verifiesChecksums: Bool = true) {
        self.format = format
        self.verifiesChecksums = verifiesChecksums
    }

    func withPage(_ id: PageID, _ body: (UnsafeRawBufferPointer) throws(PageError) -> Void) throws(PageError) {
        let page = state.withLock { state -> StoredPage? in
            state.reads += 1
            return state.pages[id]
        }
        guard let page else { throw .corrupt(page: id, reason: .missing) }
        let result: Result<Void, PageError> = page.bytes.withUnsafeBytes { bytes in
            Result { () throws(PageError) -> Void in
                if verifiesChecksums { try format.verify(bytes, id: id) }
                return try body(bytes)
            }
        }
        return try result.get()
    }

    /// A fresh page id.
    func allocate() -> PageID {
        state.withLock { state in
            defer { state.next += 1 }
            return state.next
        }
    }

    /// Stores a page.
    func write(_ id: PageID, _ bytes: UnsafeRawBufferPointer) {
        let page = StoredPage(Array(bytes))
        state.withLock { $0.pages[id] = page }
    }

    /// Replaces page `id`'s bytes (to damage it), optionally resealing the checksum so that the
    /// structural checks, not the checksum, must catch the damage.
    func replace(_ id: PageID, with bytes: [UInt8], reseal: Bool) {
        var bytes = bytes
        if reseal && bytes.count == format.pageSize {
            bytes.withUnsafeMutableBytes { format.seal($0) }
        }
        let page = StoredPage(bytes)
        state.withLock { $0.pages[id] = page }
    }

    /// The bytes of page `id`.
    func bytes(_ id: PageID) -> [UInt8]? { state.withLock { $0.pages[id]?.bytes } }

    /// Pages stored.
    var pageCount: Int { state.withLock { $0.pages.count } }

    /// Every page stored bounds what a tree over them can hold (`PageSource.pageCapacity`).
    var pageCapacity: Int? { pageCount }

    /// Reads so far.
    var reads: Int { state.withLock { $0.reads } }
}

extension MemoryPageSource: PageSink {}

/// A test source that allocates and stores pages, so that trees can be flushed into it.
protocol PageSink: AnyObject {
    /// A fresh page id.
    func allocate() -> PageID
    /// Stores a page.
    func write(_ id: PageID, _ bytes: UnsafeRawBufferPointer)
}

extension PageSink {
    /// Flushes `tree`'s dirty nodes here, publishes them, and returns the flush.
    func flush(_ tree: PagedBTree) -> PageFlush {
        let flush = tree.flush(allocate: { () throws(Never) in allocate() }, write: { (id, bytes) throws(Never) in write(id, bytes) })
        flush.publish()
        return flush
    }

    /// Flushes `tree`'s dirty nodes here, publishes them, and returns the flush.
    func flush(_ tree: PagedRowTree) -> PageFlush {
        let flush = tree.flush(allocate: { () throws(Never) in allocate() }, write: { (id, bytes) throws(Never) in write(id, bytes) })
        flush.publish()
        return flush
    }
}
