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
/// very same bytes from `withPage` (a source that counts visits or reads with `pread` offers
/// none). The trees bounds-check every access to the bytes, so a damaged page gives
/// `PageError.corrupt`, never a trap.
///
/// Checksums: with a `checksum` function, each page's checksum is checked the first time the
/// table hands it out, and remembered in a bitmap (one bit per page, set with an atomic OR),
/// so later visits cost one load and a bit test; a page whose checksum fails is
/// `.corrupt(page:reason: .checksumMismatch)` on every visit. Sound because published pages
/// are never rewritten while the table lives.
///
/// Revocation: a file may come with a flag (`revocations`) its owner sets when the file
/// shrinks under its map (another program truncated it); a page of a flagged file is
/// `.unreadable` from then on, and its bytes are never touched.
///
/// Sendable (`@unchecked`): every stored property is a `let`; the table is written only in
/// `init` and the bytes it points to are never written while `owner` lives. The checked bits
/// and the revocation flags are atomics.
package final class MappedPages: @unchecked Sendable {
    /// One file's bytes: where they start and how many whole pages they hold (header included).
    struct File {
        var base: UnsafeRawPointer?
        var pages: UInt32
        /// The index of this file's first word in the checked bitmap.
        var firstCheckedWord: Int
        /// Set when the file shrank under its map (nil: never revoked).
        var revoked: UnsafePointer<Atomic<Bool>>?
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
    /// One bit per page of every file: its checksum was checked (empty without `checksum`).
    private let checkedWords: UnsafeMutableBufferPointer<Atomic<UInt64>>
    /// The checksum of a page's bytes after its checksum field, or nil (pages unchecked).
    private let checksum: PageChecksumFunction?

    /// The widest range of file numbers a table spans (more than this gives no table: a source
    /// then serves every visit itself).
    package static let maximumFileSpan = 1 << 16

    /// A table of `files` (number, bytes), whose bytes stay valid and unchanged while `owner`
    /// lives; nil when the file numbers span more than `maximumFileSpan` or a file number is 0.
    /// `hint`, when given, lets a batch of lookups start loading the parts of pages it will
    /// read (`PagedBTree.findEach`). `checksum`, when given, checks each page once, on its
    /// first visit; `revocations` are the files' revocation flags (valid while `owner` lives).
    ///
    /// - Precondition: `pageSize` > 0; each file number appears once.
    package init?(pageSize: Int, files list: [(number: UInt32, bytes: UnsafeRawBufferPointer)], owner: (any Sendable)?,
                  hint: MemoryHint? = nil, checksum: PageChecksumFunction? = nil,
                  revocations: [UInt32: UnsafePointer<Atomic<Bool>>] = [:]) {
        precondition(pageSize > 0, "MappedPages: page size \(pageSize)")
        let numbers = list.map(\.number)
        guard let low = numbers.min(), let high = numbers.max(), low >= 1, Int(high - low) < Self.maximumFileSpan else { return nil }
        let files = UnsafeMutableBufferPointer<File>.allocate(capacity: Int(high - low) + 1)
        files.initialize(repeating: File(base: nil, pages: 0, firstCheckedWord: 0, revoked: nil))
        var words = 0
        for file in list {
            let index = Int(file.number - low)
            precondition(files[index].base == nil, "MappedPages: file \(file.number) listed twice")
            let pages = UInt32(clamping: file.bytes.count / pageSize)
            files[index] = File(base: pages > 0 ? file.bytes.baseAddress : nil, pages: pages, firstCheckedWord: words,
                                revoked: revocations[file.number])
            if checksum != nil { words += (Int(pages) + 63) / 64 }
        }
        self.pageSize = pageSize
        self.firstFile = low
        self.files = files
        self.owner = owner
        self.hint = hint
        self.checksum = checksum
        edgeWords = EdgeLeaves.allocate()
        checkedWords = .allocate(capacity: words)
        for i in 0..<words { (checkedWords.baseAddress! + i).initialize(to: Atomic<UInt64>(0)) }
    }

    deinit {
        files.deallocate()
        EdgeLeaves.deallocate(edgeWords)
        if let base = checkedWords.baseAddress { base.deinitialize(count: checkedWords.count) }
        checkedWords.deallocate()
    }

    /// The table as a plain value, for a reader that holds this object (and so keeps the
    /// table alive) to look pages up without touching the object's reference count.
    package var table: Table {
        Table(files: UnsafeBufferPointer(files), firstFile: firstFile, pageSize: pageSize, hint: hint, edges: EdgeLeaves(words: edgeWords),
              checked: checkedWords.baseAddress, checksum: checksum)
    }

    /// The lookup of `MappedPages`: valid while the `MappedPages` it came from lives.
    package struct Table: @unchecked Sendable {
        let files: UnsafeBufferPointer<File>
        let firstFile: UInt32
        let pageSize: Int
        let hint: MemoryHint?
        /// The edge leaves remembered for the trees read through this table.
        package let edges: EdgeLeaves
        /// The checked bitmap (nil when pages are not checked).
        let checked: UnsafeMutablePointer<Atomic<UInt64>>?
        /// The page checksum function, when pages are checked.
        let checksum: PageChecksumFunction?

        /// Asks the CPU to start loading the `length` bytes at `address` (nothing without a
        /// hint function). A hint: it changes no result.
        @inline(__always)
        func prefetch(_ address: UnsafeRawPointer, _ length: Int) { hint?(address, length) }

        /// The bytes of page `id` (exactly `pageSize` of them), or nil when the table does not
        /// hold it. Neither the revocation flag nor the checksum is looked at: for a hint only
        /// (`page(_:)` is the read).
        @inline(__always)
        package func bytes(_ id: PageID) -> UnsafeRawBufferPointer? {
            guard let found = locate(id), let base = found.0.base else { return nil }
            let page = found.1
            return UnsafeRawBufferPointer(start: base + Int(page) &* pageSize, count: pageSize)
        }

        /// The file holding page `id` and the page's number in it, or nil when the table does
        /// not hold it.
        @inline(__always)
        private func locate(_ id: PageID) -> (File, UInt32)? {
            // A file number below `firstFile` wraps to a large index and fails the bound.
            let index = Int(UInt32(truncatingIfNeeded: id >> 32) &- firstFile)
            let page = UInt32(truncatingIfNeeded: id)
            guard index < files.count else { return nil }
            let file = files[index]
            guard page >= 1, page < file.pages, file.base != nil else { return nil }
            return (file, page)
        }

        /// The bytes of page `id` (exactly `pageSize` of them), checked: the file not revoked,
        /// and the page's checksum on its first visit through this table.
        /// - Throws: `.corrupt(page: id, reason: .missing)` for a page the table does not hold,
        ///   `.corrupt(page: id, reason: .checksumMismatch)`, `.unreadable` for a page of a
        ///   file that shrank under its map.
        @inline(__always)
        package func page(_ id: PageID) throws(PageError) -> UnsafeRawBufferPointer {
            guard let found = locate(id), let base = found.0.base else { throw .corrupt(page: id, reason: .missing) }
            let file = found.0, page = found.1
            if let revoked = file.revoked, revoked[0].load(ordering: .relaxed) {
                throw .unreadable(page: id, underlying: MappedFileShrank())
            }
            let bytes = UnsafeRawBufferPointer(start: base + Int(page) &* pageSize, count: pageSize)
            if let checked {
                let word = checked + (file.firstCheckedWord &+ Int(page &>> 6))
                let bit = UInt64(1) &<< UInt64(page & 63)
                if word[0].load(ordering: .relaxed) & bit == 0 {
                    try verify(bytes, id)
                    word[0].bitwiseOr(bit, ordering: .relaxed)
                }
            }
            return bytes
        }

        /// Checks the checksum of a page visited for the first time (kept out of line).
        @inline(never)
        private func verify(_ bytes: UnsafeRawBufferPointer, _ id: PageID) throws(PageError) {
            guard let checksum else { return }
            let stored = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: PageLayout.checksumOffset, as: UInt32.self))
            let from = PageLayout.checksummedFrom
            guard stored == checksum(bytes.baseAddress! + from, bytes.count - from) else {
                throw .corrupt(page: id, reason: .checksumMismatch)
            }
        }
    }

    /// The bytes of page `id` (exactly `pageSize` of them, valid while this table lives), or
    /// nil when the table does not hold it.
    package func bytes(_ id: PageID) -> UnsafeRawBufferPointer? { table.bytes(id) }
}

/// The error behind `.unreadable` for a page of a file that shrank under its memory map
/// (another program truncated it).
package struct MappedFileShrank: Error, Sendable, CustomStringConvertible {
    package init() {}
    package var description: String { "the file shrank under its memory map (truncated by another program)" }
}

/// The checksum a page format stores (CRC32C), as a C function pointer over `length` bytes at
/// an address: the engine hands in the hardware function of its storage layer. A C function
/// pointer so that a table, copied into every tree reader, holds no closure context.
package typealias PageChecksumFunction = @convention(c) (UnsafeRawPointer?, Int) -> UInt32

/// A function that asks the CPU to start loading the `length` bytes at an address into its
/// caches — a hint that never faults and changes no result. The index layer has no such
/// instruction of its own; the engine hands one in with the mapped pages.
package typealias MemoryHint = @convention(c) (UnsafeRawPointer?, Int) -> Void
