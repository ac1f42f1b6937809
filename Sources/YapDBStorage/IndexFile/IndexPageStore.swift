#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// How index pages are read (docs/format.md §9).
package enum IndexReadMode: Sendable, Equatable {
    /// Every file through a memory map of the part a root record vouches for (no system call
    /// and no checksum per read). For the file still being appended that is its published,
    /// synced prefix, which never changes; its tail beyond is never read.
    case mapped
    /// Every file with `pread`, through an LRU cache of at most `pages` pages: for file
    /// systems where a memory map is unsafe (network file systems, files others may truncate).
    case cached(pages: Int)
}

/// One page's bytes. They stay valid while this value (or a copy) lives: it holds the mapping
/// or buffer they sit in.
///
/// Sendable (`@unchecked`): `bytes` points into memory that is never written after the page
/// was read, owned by `owner` (a `FileMapping`, itself safe to share); both are `let`s.
package struct IndexPage: @unchecked Sendable {
    package let id: IndexPageID
    /// Exactly the view's `plainPageSize` bytes (`pageSize`, less the seal in an encrypted
    /// database).
    package let bytes: UnsafeRawBufferPointer
    private let owner: FileMapping
    /// Whether the bytes passed the check given to `IndexPageView.page(_:check:)` — now, or
    /// when they were read into the cache.
    package let isChecked: Bool

    init(id: IndexPageID, bytes: UnsafeRawBufferPointer, owner: FileMapping, isChecked: Bool = false) {
        self.id = id
        self.bytes = bytes
        self.owner = owner
        self.isChecked = isChecked
    }

    /// A copy of the bytes.
    package var array: [UInt8] { Array(bytes) }

    /// Whether the bytes are in a memory map of a file's published prefix (else they were read
    /// with `pread`, now or earlier into the cache).
    package var isMapped: Bool { owner.backing == .memoryMap }
}

/// The index files a reader can reach, frozen at one moment: what a snapshot holds.
///
/// Reading through a view takes no lock and makes no system call in `.mapped` mode (an array
/// lookup by file number and a pointer into a mapping, or, for the trees, a flat table made
/// once from `mappedFiles`); in `.cached` mode it takes the cache's
/// lock for the lookup and `pread`s a miss. A view keeps every mapping and file handle it names alive, so a file
/// retired by the store stays readable by the snapshots that still reach it, and is unmapped
/// (and closed) when the last of them is released.
///
/// Threading: a value; `page(_:)` from any thread.
package struct IndexPageView: Sendable {
    /// One readable file: its handle, the length the root record or the last writer sync
    /// vouches for, and its mapping of exactly that length (`.mapped` mode).
    struct Source: Sendable {
        let file: any StorageFile
        let length: Int64
        let mapping: FileMapping?
        /// How its pages are sealed (an encrypted database; never mapped); nil: plain.
        var sealing: PageSealing? = nil
    }

    let sources: [UInt32: Source]
    let cache: IndexPageCache?
    /// The page size of every file (on disk).
    package let pageSize: Int
    /// The bytes of a page as readers get it: `pageSize`, less the seal's nonce and tag in an
    /// encrypted database.
    package let plainPageSize: Int
    /// `sources` by file number − `firstFile` (nil where there is no file), for the lookup of
    /// each page read; empty when there are no files or their numbers span more than
    /// `Self.maximumFileSpan` (then `sources` is searched).
    private let byNumber: [Source?]
    private let firstFile: UInt32

    /// The widest range of file numbers `byNumber` covers.
    static let maximumFileSpan = 1 << 16

    init(sources: [UInt32: Source], cache: IndexPageCache?, pageSize: Int, encrypted: Bool = false) {
        self.sources = sources
        self.cache = cache
        self.pageSize = pageSize
        plainPageSize = encrypted ? SealedPage.plainSize(pageSize: pageSize) : pageSize
        if let low = sources.keys.min(), let high = sources.keys.max(), Int(high - low) < Self.maximumFileSpan {
            var table = [Source?](repeating: nil, count: Int(high - low) + 1)
            for (number, source) in sources { table[Int(number - low)] = source }
            byNumber = table
            firstFile = low
        } else {
            byNumber = []
            firstFile = 0
        }
    }

    /// The readable file `number`, if this view knows it.
    @inline(__always)
    private func source(_ number: UInt32) -> Source? {
        if byNumber.isEmpty { return sources[number] }
        // A number below `firstFile` wraps to a large index and fails the bound.
        let index = Int(number &- firstFile)
        return index < byNumber.count ? byNumber[index] : nil
    }

    /// The pages of every file this view reads (each file's vouched length over the page
    /// size): the most distinct pages a tree read through it can have.
    package var pageCount: Int {
        sources.values.reduce(0) { $0 &+ Int(clamping: $1.length / Int64(pageSize)) }
    }

    /// The file numbers this view can read, ascending.
    package var fileNumbers: [UInt32] { sources.keys.sorted() }

    /// Whether file `number` is read through a memory map in this view.
    package func isMapped(_ number: UInt32) -> Bool { sources[number]?.mapping != nil }

    /// The bytes of file `number` this view has mapped (its vouched length), or `nil` when it
    /// reads the file with `pread` or does not know it.
    package func mappedLength(_ number: UInt32) -> Int? { sources[number]?.mapping?.count }

    /// Every file of this view with its mapped bytes (exactly its vouched length), when the
    /// view reads every file through a memory map; nil when it reads any with `pread`
    /// (`.cached` mode). The bytes stay valid and unchanged while this view (or a copy) lives.
    package var mappedFiles: [(number: UInt32, bytes: UnsafeRawBufferPointer)]? {
        var files: [(number: UInt32, bytes: UnsafeRawBufferPointer)] = []
        files.reserveCapacity(sources.count)
        for (number, source) in sources {
            guard let mapping = source.mapping else { return nil }
            files.append((number, UnsafeRawBufferPointer(rebasing: mapping.bytes.prefix(Int(clamping: source.length)))))
        }
        return files
    }

    /// The revocation flag of each mapped file (`FileMapping.revocationFlag`), for the trees'
    /// flat table of mapped pages: valid while this view (or a copy) lives.
    package var mappedFileRevocations: [UInt32: UnsafePointer<Atomic<Bool>>] {
        sources.compactMapValues { $0.mapping?.revocationFlag }
    }

    /// Checks every mapped file of this view against its size (one `fstat` each) and revokes
    /// the map of any file now shorter than it (`FileMapping.confirm`), so no reader touches
    /// its bytes again.
    /// - Throws: `.corrupted(path:offset:reason: .truncated)` naming the first such file, or
    ///   `.io` when a size cannot be read.
    package func confirmMappings() throws(IndexFileError) {
        var shrunk: IndexFileError?
        for source in sources.values {
            guard let mapping = source.mapping else { continue }
            do throws(IOFailure) {
                if let size = try mapping.confirm(source.file), shrunk == nil {
                    shrunk = .corrupted(path: source.file.path, offset: size, reason: .truncated)
                }
            } catch {
                throw .io(error)
            }
        }
        if let shrunk { throw shrunk }
    }

    /// The page `id`: from the file's mapping (`.mapped` mode), else from the cache, else by
    /// `pread` (then cached).
    ///
    /// - Parameter check: run on the bytes of a page read with `pread`; a page that fails it
    ///   is not cached (the caller reports it), one that passes is cached as checked, so a
    ///   later hit needs no check (`IndexPage.isChecked`). `nil`: cache unchecked.
    ///
    /// - Throws: `.badPageID` with `.invalidPageID` (file or page 0), `.unknownFile` (a file
    ///   this view does not know), `.pastEnd` (past the file's vouched length); `.io` from
    ///   `pread` (a short read is `EIO` "short read").
    package func page(_ id: IndexPageID, check: ((UnsafeRawBufferPointer) -> Bool)? = nil) throws(IndexFileError) -> IndexPage {
        guard id.isValid else { throw .badPageID(id, reason: .invalidPageID) }
        guard let source = source(id.file) else { throw .badPageID(id, reason: .unknownFile(id.file)) }
        let offset = id.offset(pageSize: pageSize)
        guard offset + Int64(pageSize) <= source.length else {
            throw .badPageID(id, reason: .pastEnd(fileLength: source.length))
        }
        if let mapping = source.mapping {
            // Revoked: another program shrank the file under the map (`confirmMappings`).
            guard !mapping.isRevoked else { throw .corrupted(path: source.file.path, offset: offset, reason: .truncated) }
            let start = Int(offset)
            return IndexPage(id: id, bytes: UnsafeRawBufferPointer(rebasing: mapping.bytes[start..<(start + pageSize)]), owner: mapping)
        }
        if let cache, let cached = cache.lookup(id) {
            return IndexPage(id: id, bytes: cached.page.bytes, owner: cached.page, isChecked: cached.checked)
        }
        let memory = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 16)
        let buffer = UnsafeMutableRawBufferPointer(start: memory, count: pageSize)
        do throws(IOFailure) {
            let count = try source.file.read(into: buffer, at: offset)
            if count != pageSize { throw IOFailure.shortRead(path: source.file.path) }
        } catch {
            memory.deallocate()
            throw .io(error)
        }
        var owner = FileMapping(bytes: UnsafeRawBufferPointer(buffer), backing: .copy, path: source.file.path)
        if let sealing = source.sealing {
            // Opened once, as it enters the cache: the cache holds plain pages.
            let plain: [UInt8]
            do throws(StorageError) { plain = try sealing.open(owner.bytes, page: id.page, path: source.file.path) } catch {
                throw .corrupted(path: source.file.path, offset: offset, reason: .checksumMismatch)
            }
            owner = plain.withUnsafeBytes { FileMapping.copy(of: $0, path: source.file.path) }
        }
        let checked = check?(owner.bytes) ?? false
        if check == nil || checked { cache?.insert(id, owner, checked: checked) }
        return IndexPage(id: id, bytes: owner.bytes, owner: owner, isChecked: checked)
    }

    /// Runs `body` on the bytes of page `id` (valid only inside `body`).
    ///
    /// - Throws: the errors of `page(_:)`.
    package func withPage<R>(_ id: IndexPageID, _ body: (UnsafeRawBufferPointer) -> R) throws(IndexFileError) -> R {
        let page = try page(id)
        return withExtendedLifetime(page) { body(page.bytes) }
    }
}

/// The index files in use and how to read them: opens the files a root record lists, adopts
/// what an index checkpoint wrote, retires files index compaction replaced, and hands out
/// `IndexPageView`s (docs/format.md §9).
///
/// Mapping rule: in `.mapped` mode a file is mapped only up to the length a published root
/// record (or the writer's successful sync, adopted once the root naming it is durable)
/// vouches for: bytes that are synced and are never written again. A sealed file is mapped
/// whole; the file a writer still appends to is mapped up to its published length, and mapped
/// again (a longer mapping, in a new view) when a checkpoint publishes more of it. Nothing
/// past that length is ever read, and the writer never shrinks a file below it: resuming
/// after a crash truncates to the published length, and the cut-back after a failed sync is
/// that same truncation by the next writer — so truncations never touch a mapped byte
/// (a read of a truncated page of a map is `SIGBUS`). Each file's size is checked against the
/// vouched length before it is mapped. Views made earlier keep their shorter mappings.
///
/// Threading: any thread. One `Mutex` guards the current view, held only to read or replace
/// it; files are opened and mapped outside it. `open`, `adopt` and `retire` come from one
/// thread at a time (the engine's checkpoint or open).
package final class IndexPageStore: Sendable {
    package let files: DatabaseFiles
    package let fileSystem: any FileSystem
    package let uuid: [UInt8]
    package let pageSize: Int
    package let mode: IndexReadMode
    /// The keys of an encrypted database (its files' pages are sealed, read through the cache
    /// and opened as they enter it); nil: plain.
    package let cipher: DatabaseCipher?
    /// The page cache (`.cached` mode only).
    package let cache: IndexPageCache?
    /// Where files are opened (read on demand through a bounded set of descriptors), or nil:
    /// opened directly, each holding a descriptor while a view reaches it.
    package let descriptors: DescriptorCache?
    private let current: Mutex<IndexPageView>

    /// A store that knows no file yet.
    ///
    /// - Parameters:
    ///   - uuid: the database's UUID, checked in every file header.
    ///   - pageSize: the page size of every index file (the root record's).
    ///   - mode: mapped, or `pread` with a bounded cache.
    ///   - descriptors: the engine's descriptor cache, through which files are opened; nil:
    ///     directly.
    ///   - cipher: an encrypted database's keys: `.mapped` is read as
    ///     `.cached(pages: encryptedCachePages)` (ciphertext is never mapped).
    package init(files: DatabaseFiles, fileSystem: any FileSystem, uuid: [UInt8], pageSize: Int, mode: IndexReadMode,
                 descriptors: DescriptorCache? = nil, cipher: DatabaseCipher? = nil) {
        self.descriptors = descriptors
        self.files = files
        self.fileSystem = fileSystem
        self.uuid = uuid
        self.pageSize = pageSize
        self.cipher = cipher
        let mode = cipher != nil && mode == .mapped ? .cached(pages: Self.encryptedCachePages) : mode
        self.mode = mode
        if case .cached(let pages) = mode { cache = IndexPageCache(capacity: pages) } else { cache = nil }
        current = Mutex(IndexPageView(sources: [:], cache: cache, pageSize: pageSize, encrypted: cipher != nil))
    }

    /// Pages an encrypted database's cache holds when the options asked for maps.
    package static let encryptedCachePages = 4096

    /// A view of `sources` in this store's page size and encryption.
    private func makeView(_ sources: [UInt32: IndexPageView.Source]) -> IndexPageView {
        IndexPageView(sources: sources, cache: cache, pageSize: pageSize, encrypted: cipher != nil)
    }

    /// The files readable now. A snapshot keeps the view it was made with.
    package func view() -> IndexPageView { current.withLock { $0 } }

    /// The page `id` in the current view; see `IndexPageView.page(_:)`.
    package func page(_ id: IndexPageID) throws(IndexFileError) -> IndexPage { try view().page(id) }

    /// Opens every file `root` lists, replacing what the store knew: each must exist, carry a
    /// valid header of this database with this page size, and hold at least the length the
    /// root vouches for; each is then mapped up to that length (`.mapped` mode).
    ///
    /// - Parameter root: the newest valid root record (the index root record of the newest
    ///   checkpoint, docs/format.md §4).
    /// - Throws: `.corrupted` with `.badPageSize` (the root's page size is not the store's),
    ///   `.fileMissing`, `.fileTooShort`, the header errors of `IndexFileHeader.read`; `.io`
    ///   (`mmap` included). On error the store is unchanged.
    package func open(root: IndexRoot) throws(IndexFileError) {
        guard root.pageSize == pageSize else {
            throw .corrupted(path: files.checkpointPath(UInt32(truncatingIfNeeded: root.sequence)), offset: Int64(Format.rootBodyOffset), reason: .badPageSize(UInt32(truncatingIfNeeded: root.pageSize)))
        }
        var sources: [UInt32: IndexPageView.Source] = [:]
        for file in root.files {
            sources[file.number] = try source(file.extent, existing: nil)
        }
        let view = makeView(sources)
        current.withLock { $0 = view }
    }

    /// Takes in what a writer's `sync()` returned, once a root record naming it is durable:
    /// new files are opened (header and length checked), known files get their new length
    /// (and, in `.mapped` mode, a mapping of that length). Files not in `extents` are kept.
    ///
    /// - Parameter extents: `IndexFileWriter.sync()`'s result (durable, published lengths).
    /// - Throws: as `open`. On error the store is unchanged.
    package func adopt(_ extents: [IndexFileExtent]) throws(IndexFileError) {
        var sources = view().sources
        for extent in extents {
            sources[extent.number] = try source(extent, existing: sources[extent.number])
        }
        let view = makeView(sources)
        current.withLock { $0 = view }
    }

    /// Forgets files (index compaction replaced them and a root without them is published).
    /// Views made earlier still read them; the mapping and handle go with the last such view
    /// (with `keepingOpen`, pinned open in the descriptor cache first, so that they outlive
    /// the files' removal).
    package func retire(_ numbers: [UInt32], keepingOpen: Bool = true) {
        if keepingOpen { for number in numbers { descriptors?.keepOpen(path: files.indexPath(number)) } }
        current.withLock { view in
            var sources = view.sources
            for number in numbers { sources[number] = nil }
            view = makeView(sources)
        }
        for number in numbers { cache?.evict(file: number) }
    }

    /// Forgets every file (views made earlier keep theirs).
    package func close() {
        retire(view().fileNumbers, keepingOpen: false)
    }

    /// A readable source for `extent`: the existing handle when there is one, else a newly
    /// opened and checked file; mapped up to `extent.length` in `.mapped` mode.
    private func source(_ extent: IndexFileExtent, existing: IndexPageView.Source?) throws(IndexFileError) -> IndexPageView.Source {
        let path = files.indexPath(extent.number)
        guard extent.length >= Int64(pageSize), extent.length % Int64(pageSize) == 0 else {
            throw .corrupted(path: path, offset: 0, reason: .invalidField("length"))
        }
        let file: any StorageFile
        var sealing: PageSealing?
        if let existing {
            if existing.length == extent.length { return existing }
            file = existing.file
            sealing = existing.sealing
        } else {
            do {
                if let descriptors { file = try descriptors.open(path) } else { file = try fileSystem.open(path, mode: .readOnly) }
            } catch {
                if error.errno == ENOENT { throw .corrupted(path: path, offset: 0, reason: .fileMissing(extent.number)) }
                throw .io(error)
            }
            sealing = try IndexFileHeader.read(file, number: extent.number, uuid: uuid, pageSize: pageSize, cipher: cipher)
        }
        let size: Int64
        do { size = try file.size() } catch { throw .io(error) }
        guard size >= extent.length else {
            throw .corrupted(path: path, offset: size, reason: .fileTooShort(number: extent.number, expected: extent.length, found: size))
        }
        guard mode == .mapped else { return IndexPageView.Source(file: file, length: extent.length, mapping: nil, sealing: sealing) }
        guard let length = Int(exactly: extent.length) else { throw .corrupted(path: path, offset: 0, reason: .overLimit) }
        let mapping: FileMapping
        do { mapping = try file.map(length: length) } catch { throw .io(error) }
        return IndexPageView.Source(file: file, length: extent.length, mapping: mapping)
    }
}
