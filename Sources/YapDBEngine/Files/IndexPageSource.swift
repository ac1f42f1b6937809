import YapDBStorage
import YapDBIndex

/// The key directory's pages, read from the index files: the `PageSource` the engine hands
/// the trees (DESIGN.md §1), over one `IndexPageView` of the page store.
///
/// A source is fixed to the view it was made with, so a snapshot's trees read without taking
/// any lock and keep every mapping and file handle they can reach alive; an index checkpoint
/// makes a new source over the store's newer view for the trees that come after it
/// (`Keydir.replacingSource`).
///
/// Checksums: a page read with `pread` (`.cached` mode) is checked before it is handed out,
/// once: it enters the page cache only when its checksum holds, marked checked, so a cache hit
/// is not checked again (a damaged page is never cached and fails on every visit); a mapped page
/// (`.mapped` mode: every published page, the active file's included) is checked the first
/// time the trees visit it through this source's table (`MappedPages` remembers it in a
/// bitmap; the new source of the next checkpoint checks again), and `verify()` checks every
/// page's checksum. A file that shrank under its map (`Engine.confirmMappedFiles`) gives
/// `.unreadable` for its pages instead of `SIGBUS`.
///
/// Mapped pages reach the trees through `mappedPages`, a flat table from page id to mapped
/// bytes made once per source (per view): a tree visits a mapped page without calling
/// `withPage`, with the same bytes and the same errors (a page outside the view's files is
/// `.corrupt(page:reason: .missing)`).
///
/// Threading: immutable; any thread.
struct IndexPageSource: PageSource {
    let view: IndexPageView
    let format: PageFormat
    /// Whether a page read with `pread` has the size and checksum of `format` (made once: a
    /// closure value passed on, not formed per page visit).
    let check: @Sendable (UnsafeRawBufferPointer) -> Bool

    /// The view's mapped pages as a flat table (`.mapped` mode): the trees read them without
    /// calling `withPage`. Nil in `.cached` mode, so every visit there goes through `withPage`
    /// and its checksum rule.
    let mappedPages: MappedPages?

    /// Every page of the view's files (`PageSource.pageCapacity`).
    let pageCapacity: Int?

    init(view: IndexPageView, format: PageFormat) {
        self.view = view
        pageCapacity = view.pageCount
        self.format = format
        check = { bytes in (try? format.verify(bytes, id: .none)) != nil }
        mappedPages = view.mappedFiles.flatMap {
            MappedPages(pageSize: view.pageSize, files: $0, owner: view, hint: memoryPrefetchHint, checksum: pageChecksumFunction,
                        revocations: view.mappedFileRevocations)
        }
    }

    func withPage(_ id: PageID, _ body: (UnsafeRawBufferPointer) throws(PageError) -> Void) throws(PageError) {
        let pageID = IndexPageID(rawValue: id)
        let page: IndexPage
        do throws(IndexFileError) { page = try view.page(pageID, check: check) } catch {
            switch error {
            case .badPageID: throw .corrupt(page: id, reason: .missing)
            default: throw .unreadable(page: id, underlying: error)
            }
        }
        try withExtendedLifetime(page) { () throws(PageError) in
            if !page.isMapped && !page.isChecked { try format.verify(page.bytes, id: id) }
            try body(page.bytes)
        }
    }
}

extension StorageError {
    /// A page error as the engine's internals report it (the same mapping as `EngineError`'s).
    init(_ error: PageError) { self.init(EngineError(error)) }
}

/// Runs `body`, reporting a page error as `StorageError`: for the engine's internals, which run
/// on storage errors (the `package` entries use `mappingPageErrors`).
func mappingPageErrorsInternally<T>(_ body: () throws(PageError) -> T) throws(StorageError) -> T {
    do { return try body() } catch { throw StorageError(error) }
}

extension Engine {
    /// Runs `body`, which walks the key directory with a body of its own, reporting a page
    /// error as `EngineError` (any other error is `body`'s own engine error, passed on unchanged).
    static func mappingIndexErrors<T>(_ body: () throws -> T) throws(EngineError) -> T {
        do { return try body() } catch let error as PageError {
            throw EngineError(error)
        } catch let error as EngineError {
            throw error
        } catch let error as StorageError {
            throw EngineError(error)
        } catch {
            preconditionFailure("unexpected error walking the key directory: \(error)")
        }
    }
}

extension Engine {
    /// The page format of the key directory's trees: `pageSize` bytes, checksummed with the
    /// storage layer's CRC32C (the CPU's instruction where there is one).
    static func pageFormat(_ pageSize: Int) -> PageFormat {
        PageFormat(pageSize: pageSize, checksum: PageChecksum { CRC32C.checksum($0) })
    }

    /// The trees' page format for index files of `pageSize`-byte pages: in an encrypted
    /// database each page on disk seals a smaller tree page (docs/format.md §12).
    static func pageFormat(_ pageSize: Int, encrypted: Bool) -> PageFormat {
        guard encrypted else { return pageFormat(pageSize) }
        return PageFormat(sealedIn: pageSize, overhead: pageSize - SealedPage.plainSize(pageSize: pageSize),
                          checksum: PageChecksum { CRC32C.checksum($0) })
    }
}
