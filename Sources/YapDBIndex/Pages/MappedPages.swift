// MappedPages: a flat table from page id to bytes in memory that stay put — the fast path of a
// page visit, taken by the trees without calling their source.

import Synchronization

/// The pages of a set of files held in memory for as long as the table lives (memory maps of
/// the index files' published bytes): page id → bytes by a table indexed by file number, with
/// no lock, no call through a protocol and no reference counting per visit.
///
/// Page ids name pages as the index files do (docs/format.md §9): the high 32 bits are a file
/// number, the low 32 bits the page number inside it (≥ 1; page 0 is the file's header), at
/// byte `page × pageSize` of the file. A file's bytes are its first `length` bytes; a page
/// that does not lie wholly inside them, of a file the table does not hold, or page 0, is not
/// in the table (`bytes(_:)` returns nil and the trees report `.corrupt(page:reason: .missing)`,
/// as a source does).
///
/// A source offers a table through `PageSource.mappedPages` only when it would hand out the
/// very same bytes, unchecked, from `withPage` (a source that checks a page before handing it
/// out, counts visits or reads with `pread` offers none). The trees bounds-check every access
/// to the bytes, so a damaged page gives `PageError.corrupt`, never a trap.
///
/// Sendable (`@unchecked`): every stored property is a `let`; the table is written only in
/// `init` and the bytes it points to are never written while `owner` lives.
package final class MappedPages: @unchecked Sendable {
    /// One file's bytes: where they start and how many whole pages they hold (header included).
    struct File {
        var base: UnsafeRawPointer?
        var pages: UInt32
    }

    /// The page size of every file.
    package let pageSize: Int
    /// The file number of `files[0]`.
    private let firstFile: UInt32
    /// Indexed by file number − `firstFile`; a number without a file has a nil base.
    private let files: UnsafeMutableBufferPointer<File>
    /// What keeps every file's bytes in place (the mappings).
    private let owner: (any Sendable)?
    /// Asks the CPU to start loading bytes of the pages (`MemoryHint`), or nil.
    private let hint: MemoryHint?
    /// The storage of `EdgeLeaves` (MappedPages+EdgeLeaves.swift).
    private let edgeWords: UnsafeMutablePointer<Atomic<UInt64>>

    /// The widest range of file numbers a table spans (more than this gives no table: a source
    /// then serves every visit itself).
    package static let maximumFileSpan = 1 << 16

    /// A table of `files` (number, bytes), whose bytes stay valid and unchanged while `owner`
    /// lives; nil when the file numbers span more than `maximumFileSpan` or a file number is 0.
    /// `hint`, when given, lets a batch of lookups start loading the parts of pages it will
    /// read (`PagedBTree.findEach`).
    ///
    /// - Precondition: `pageSize` > 0; each file number appears once.
    package init?(pageSize: Int, files list: [(number: UInt32, bytes: UnsafeRawBufferPointer)], owner: (any Sendable)?,
                  hint: MemoryHint? = nil) {
        precondition(pageSize > 0, "MappedPages: page size \(pageSize)")
        let numbers = list.map(\.number)
        guard let low = numbers.min(), let high = numbers.max(), low >= 1, Int(high - low) < Self.maximumFileSpan else { return nil }
        let files = UnsafeMutableBufferPointer<File>.allocate(capacity: Int(high - low) + 1)
        files.initialize(repeating: File(base: nil, pages: 0))
        for file in list {
            let index = Int(file.number - low)
            precondition(files[index].base == nil, "MappedPages: file \(file.number) listed twice")
            let pages = UInt32(clamping: file.bytes.count / pageSize)
            files[index] = File(base: pages > 0 ? file.bytes.baseAddress : nil, pages: pages)
        }
        self.pageSize = pageSize
        self.firstFile = low
        self.files = files
        self.owner = owner
        self.hint = hint
        edgeWords = EdgeLeaves.allocate()
    }

    deinit {
        files.deallocate()
        EdgeLeaves.deallocate(edgeWords)
    }

    /// The table as a plain value, for a reader that holds this object (and so keeps the
    /// table alive) to look pages up without touching the object's reference count.
    package var table: Table {
        Table(files: UnsafeBufferPointer(files), firstFile: firstFile, pageSize: pageSize, hint: hint, edges: EdgeLeaves(words: edgeWords))
    }

    /// The lookup of `MappedPages`: valid while the `MappedPages` it came from lives.
    package struct Table: @unchecked Sendable {
        let files: UnsafeBufferPointer<File>
        let firstFile: UInt32
        let pageSize: Int
        let hint: MemoryHint?
        /// The edge leaves remembered for the trees read through this table.
        package let edges: EdgeLeaves

        /// Asks the CPU to start loading the `length` bytes at `address` (nothing without a
        /// hint function). A hint: it changes no result.
        @inline(__always)
        func prefetch(_ address: UnsafeRawPointer, _ length: Int) { hint?(address, length) }

        /// The bytes of page `id` (exactly `pageSize` of them), or nil when the table does not
        /// hold it.
        @inline(__always)
        package func bytes(_ id: PageID) -> UnsafeRawBufferPointer? {
            // A file number below `firstFile` wraps to a large index and fails the bound.
            let index = Int(UInt32(truncatingIfNeeded: id >> 32) &- firstFile)
            let page = UInt32(truncatingIfNeeded: id)
            guard index < files.count else { return nil }
            let file = files[index]
            guard page >= 1, page < file.pages, let base = file.base else { return nil }
            return UnsafeRawBufferPointer(start: base + Int(page) &* pageSize, count: pageSize)
        }
    }

    /// The bytes of page `id` (exactly `pageSize` of them, valid while this table lives), or
    /// nil when the table does not hold it.
    package func bytes(_ id: PageID) -> UnsafeRawBufferPointer? { table.bytes(id) }
}

/// A function that asks the CPU to start loading the `length` bytes at an address into its
/// caches — a hint that never faults and changes no result. The index layer has no such
/// instruction of its own; the engine hands one in with the mapped pages.
package typealias MemoryHint = @convention(c) (UnsafeRawPointer?, Int) -> Void
