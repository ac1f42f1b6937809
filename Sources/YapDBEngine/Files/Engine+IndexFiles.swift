import Synchronization
import YapDBStorage
import YapDBIndex

/// The index files of an engine: the page store the snapshots read through, the writer that
/// index checkpoints append pages with, and what the newest checkpoint published.
///
/// `@unchecked Sendable` because its mutable state is used under `appending` (the writer, the
/// next file number, the synced extents: checkpoints under `Engine.maintenance` and write
/// transactions' spills under the writer lock both append pages) or under `Engine.maintenance`
/// (`copyBaseline`), or before the engine is shared (open); the page store itself is
/// thread-safe, and readers never touch this object (they hold an `IndexPageSource`).
final class IndexFiles: @unchecked Sendable {
    let files: DatabaseFiles
    let fileSystem: any FileSystem
    let uuid: [UInt8]
    let format: PageFormat
    let store: IndexPageStore
    let fileSizeLimit: Int64
    /// The files the newest published checkpoint names, with their lengths (its root record);
    /// behind its own lock, since `stats()` reads it without `maintenance`.
    private let publishedExtents: Mutex<[IndexFileExtent]>
    var published: [IndexFileExtent] { publishedExtents.withLock { $0 } }
    /// Serializes everything that appends pages or changes the extents below: a checkpoint's
    /// `writePages`/`writeCopy`/`didPublish` and a transaction's `spill`. Never held while
    /// taking the engine's writer lock (a spill takes it under that lock).
    private let appending = Mutex(())
    /// Every file pages were appended to and synced, with its synced length: `published`, and
    /// past it the pages of spills and of checkpoints not yet (or never) published. The store
    /// may map these lengths (spilled pages are read back through it), so a writer resumes
    /// after them, never cutting them off.
    private var synced: [IndexFileExtent]
    /// The writer, once a checkpoint or spill has needed one; dropped after a failure, so the
    /// next one resumes from `synced` (cutting off what failed after the last sync).
    private var writer: IndexFileWriter?
    /// The number for the next new index file.
    private var nextFileNumber: UInt32
    /// Bytes of the index files the last full copy (index compaction) wrote — about what the
    /// live trees take — or, before the first copy since open, the bytes published at open.
    private(set) var copyBaseline: Int64

    /// The keys of an encrypted database: pages are sealed on disk (`format` is then the
    /// smaller tree page inside `pageSize`) and read through the page cache; nil: plain.
    let cipher: DatabaseCipher?
    /// The size of a page on disk (the root record's page size).
    let pageSize: Int

    init(files: DatabaseFiles, fileSystem: any FileSystem, uuid: [UInt8], format: PageFormat, mode: IndexReadMode,
         fileSizeLimit: Int64, published: [IndexFileExtent], nextFileNumber: UInt32, descriptors: DescriptorCache? = nil,
         cipher: DatabaseCipher? = nil, pageSize: Int? = nil) {
        self.files = files
        self.fileSystem = fileSystem
        self.uuid = uuid
        self.format = format
        self.cipher = cipher
        self.pageSize = pageSize ?? format.pageSize
        self.store = IndexPageStore(files: files, fileSystem: fileSystem, uuid: uuid, pageSize: self.pageSize, mode: mode,
                                    descriptors: descriptors, cipher: cipher)
        self.fileSizeLimit = fileSizeLimit
        self.publishedExtents = Mutex(published)
        synced = published
        self.nextFileNumber = max(nextFileNumber, (published.map(\.number).max() ?? 0) + 1)
        copyBaseline = published.reduce(0) { $0 + $1.length }
    }

    /// Bytes of the index files the newest checkpoint names.
    var publishedBytes: Int64 { published.reduce(0) { $0 + $1.length } }

    /// Whether the next checkpoint should be an index compaction: the index files hold more
    /// than twice what the last full copy wrote plus `slack` bytes. Every page a checkpoint
    /// appends replaces one that is then dead, so past this rule at least half of the bytes
    /// (less the slack) are dead versions of pages; a copy costs about the live bytes, so the
    /// writing it adds is at most the bytes appended since the last copy (amortised O(1)).
    func isCompactionDue(slack: Int64) -> Bool {
        let (doubled, overflow) = copyBaseline.multipliedReportingOverflow(by: 2)
        let (limit, overflow2) = doubled.addingReportingOverflow(slack)
        return !overflow && !overflow2 && publishedBytes > limit
    }

    /// A page source over the files readable now.
    func source() -> IndexPageSource { IndexPageSource(view: store.view(), format: format) }

    /// Writes the dirty nodes of `keydir`, then of each extension state
    /// (`PagedExtensionState.writePages`), as pages and syncs them (children before parents);
    /// returns the flushes (to publish once the checkpoint naming them is durable), what each
    /// extension wrote, and the extents of every index file, which that checkpoint's root
    /// record lists.
    /// - Throws: `StorageError` from writing or syncing (the writer is dropped: the next
    ///   checkpoint resumes after the published pages, overwriting these).
    func writePages(of keydir: Keydir, extensions: [(name: String, state: any PagedExtensionState)], sequence: UInt64)
        throws(StorageError) -> (flush: (rows: PageFlush, rowids: PageFlush), extensions: [String: ExtensionPagesWritten], extents: [IndexFileExtent]) {
        try appending.withLock { (_: inout Void) throws(StorageError) in
            try writePagesLocked(of: keydir, extensions: extensions, sequence: sequence)
        }
    }

    private func writePagesLocked(of keydir: Keydir, extensions: [(name: String, state: any PagedExtensionState)], sequence: UInt64)
        throws(StorageError) -> (flush: (rows: PageFlush, rowids: PageFlush), extensions: [String: ExtensionPagesWritten], extents: [IndexFileExtent]) {
        do throws(StorageError) {
            let writer: IndexFileWriter
            do throws(IndexFileError) { writer = try writerForAppending(sequence: sequence) } catch { throw error.storageError }
            let pages = Self.pageWriter(writer)
            let flush = try keydir.flush(allocate: pages.allocate, write: pages.write)
            var written: [String: ExtensionPagesWritten] = [:]
            for (name, state) in extensions {
                do throws(EngineError) { written[name] = try state.writePages(pages) } catch { throw StorageError(error) }
            }
            let synced: [IndexFileExtent]
            do throws(IndexFileError) { synced = try writer.sync() } catch { throw error.storageError }
            // The writer knows the files it wrote to; sealed files written before it (by an
            // earlier writer, before a reopen) stay in the root with their lengths.
            let extents = merging(synced)
            self.synced = extents
            return (flush, written, extents)
        } catch {
            dropWriter()
            throw error
        }
    }

    /// `writer`'s page allocation and appending, as the trees' flushes and copies call them.
    private static func pageWriter(_ writer: IndexFileWriter) -> ExtensionPageWriter {
        ExtensionPageWriter(allocate: { () throws(StorageError) -> PageID in
            do throws(IndexFileError) { return try writer.nextPageID().rawValue } catch { throw error.storageError }
        }, write: { (id: PageID, page: UnsafeRawBufferPointer) throws(StorageError) in
            let written: IndexPageID
            do throws(IndexFileError) { written = try writer.append(page) } catch { throw error.storageError }
            precondition(written.rawValue == id, "index page written at \(written), allocated \(IndexPageID(rawValue: id))")
        })
    }

    /// Writes a full copy of `keydir` — repacked into full pages (`Keydir.repackAll`) — and of
    /// each extension state's trees (index compaction; `PagedExtensionState.copyPages`, node
    /// for node) into new index files, started after every existing one, and syncs them;
    /// returns the key directory's new roots, the extensions' copies (to publish once the
    /// checkpoint naming them is durable) and the new files' extents — all that checkpoint's root record
    /// lists: the older files are garbage once it is published.
    /// - Throws: `StorageError` from reading a page (a damaged page is never copied), writing or
    ///   syncing. The writer is dropped either way of failing: the next checkpoint resumes
    ///   after the published pages of the old files, and the partial copy is an orphan that the
    ///   next open removes.
    func writeCopy(of keydir: Keydir, extensions: [(name: String, state: any PagedExtensionState)], sequence: UInt64)
        throws(StorageError) -> (copy: (rows: PagedTreeRoot, rowids: PagedTreeRoot), extensions: [String: ExtensionPagesWritten], extents: [IndexFileExtent]) {
        try appending.withLock { (_: inout Void) throws(StorageError) in
            try writeCopyLocked(of: keydir, extensions: extensions, sequence: sequence)
        }
    }

    private func writeCopyLocked(of keydir: Keydir, extensions: [(name: String, state: any PagedExtensionState)], sequence: UInt64)
        throws(StorageError) -> (copy: (rows: PagedTreeRoot, rowids: PagedTreeRoot), extensions: [String: ExtensionPagesWritten], extents: [IndexFileExtent]) {
        // The old writer's unsynced bytes belong to no checkpoint: closing loses nothing.
        dropWriter()
        do throws(StorageError) {
            let writer: IndexFileWriter
            do throws(IndexFileError) { writer = try startNewFile(sequence: sequence) } catch { throw error.storageError }
            let pages = Self.pageWriter(writer)
            let copy = try keydir.repackAll(allocate: pages.allocate, write: pages.write, readFailed: { StorageError($0) })
            var written: [String: ExtensionPagesWritten] = [:]
            for (name, state) in extensions {
                do throws(EngineError) { written[name] = try state.copyPages(pages) } catch { throw StorageError(error) }
            }
            let extents: [IndexFileExtent]
            do throws(IndexFileError) { extents = try writer.sync() } catch { throw error.storageError }
            return (copy, written, extents)
        } catch {
            dropWriter()
            throw error
        }
    }

    /// Records that the checkpoint naming `extents` is durable: the store reads the new pages
    /// (mapping each file up to its published length, the active one's included). After an index compaction (`copied`), `extents`
    /// are the copy's files only: the store forgets the others (snapshots holding older views
    /// still read them) and they are returned, for the caller to remove.
    @discardableResult
    func didPublish(_ extents: [IndexFileExtent], copied: Bool = false) throws(StorageError) -> [UInt32] {
        try appending.withLock { (_: inout Void) throws(StorageError) -> [UInt32] in
            let kept = Set(extents.map(\.number))
            nextFileNumber = max(nextFileNumber, (kept.max() ?? 0) + 1)
            let replaced = copied ? store.view().fileNumbers.filter { !kept.contains($0) } : []
            publishedExtents.withLock { $0 = extents }
            // Spills may have synced pages past these lengths since: the store keeps mapping
            // them (never a shorter map of a file than before). A copy is published while
            // spills wait (`WriterState.indexCopyPending`): its files are all there is.
            if copied { synced = extents } else { synced = merging(extents) }
            do throws(IndexFileError) { try store.adopt(synced) } catch { throw error.storageError }
            if copied {
                store.retire(replaced)
                copyBaseline = extents.reduce(0) { $0 + $1.length }
            }
            return replaced
        }
    }

    /// Takes in the files of a checkpoint another process published (multi-process support):
    /// they become the published extents, this process's writer (if any) is dropped, since
    /// the files no longer end where it believed, and new files are opened by the store.
    /// Files this process knew stay readable.
    func adoptForeign(_ extents: [IndexFileExtent]) throws(StorageError) {
        try appending.withLock { (_: inout Void) throws(StorageError) in
            writer?.close()
            writer = nil
            nextFileNumber = max(nextFileNumber, (extents.map(\.number).max() ?? 0) + 1)
            publishedExtents.withLock { $0 = extents }
            synced = extents
            do throws(IndexFileError) { try store.adopt(extents) } catch { throw error.storageError }
        }
    }

    /// Writes pages for a write transaction's spill (docs/architecture.md, "Dirty pages and
    /// spills"): `body` flushes the transaction's dirty nodes through the page writer it is
    /// given; the pages are appended after everything synced so far, synced, and mapped (or
    /// cached) by the store, so the transaction reads them back through the returned source.
    /// No root record names them: until a checkpoint publishes a root that reaches them they
    /// are garbage to a reopen (which cuts them off) and to index compaction.
    /// `published` runs once the pages are synced and readable, still under the lock: it
    /// records the pages in the written nodes (`PageFlush.publish()`), so a checkpoint's flush
    /// sees either no mark or one whose page is durable and in the extents it lists.
    /// - Throws: `StorageError` from writing or syncing, or what `body` throws (the writer is
    ///   dropped: the next append resumes after the last synced pages).
    func spill<R>(sequence: UInt64, _ body: (ExtensionPageWriter) throws(StorageError) -> R,
                  published: (R) -> Void) throws(StorageError) -> (R, IndexPageSource) {
        try appending.withLock { (_: inout Void) throws(StorageError) -> (R, IndexPageSource) in
            do throws(StorageError) {
                let writer: IndexFileWriter
                do throws(IndexFileError) { writer = try writerForAppending(sequence: sequence) } catch { throw error.storageError }
                let result = try body(Self.pageWriter(writer))
                let written: [IndexFileExtent]
                do throws(IndexFileError) { written = try writer.sync() } catch { throw error.storageError }
                synced = merging(written)
                do throws(IndexFileError) { try store.adopt(synced) } catch { throw error.storageError }
                published(result)
                return (result, source())
            } catch {
                dropWriter()
                throw error
            }
        }
    }

    /// `synced` with `written` (a writer's extents) taking the place of the files it names.
    private func merging(_ written: [IndexFileExtent]) -> [IndexFileExtent] {
        var byNumber = Dictionary(synced.map { ($0.number, $0) }, uniquingKeysWith: { $1 })
        for extent in written { byNumber[extent.number] = IndexFileExtent(number: extent.number, length: max(extent.length, byNumber[extent.number]?.length ?? 0)) }
        return byNumber.values.sorted { $0.number < $1.number }
    }

    /// The writer, resumed after the published pages or started on a new file.
    private func writerForAppending(sequence: UInt64) throws(IndexFileError) -> IndexFileWriter {
        if let writer { return writer }
        let made: IndexFileWriter
        if let last = synced.last {
            made = try IndexFileWriter(files: files, fileSystem: fileSystem, uuid: uuid, pageSize: pageSize,
                                       fileSizeLimit: fileSizeLimit, resume: last.number, length: last.length, sequence: sequence,
                                       cipher: cipher)
        } else {
            return try startNewFile(sequence: sequence)
        }
        writer = made
        return made
    }

    /// A writer on a new file numbered after every file seen so far (a file left there by a
    /// checkpoint that never published is in the way: it is replaced), installed as `writer`.
    private func startNewFile(sequence: UInt64) throws(IndexFileError) -> IndexFileWriter {
        let path = files.indexPath(nextFileNumber)
        if fileSystem.kind(of: path) != .missing {
            do { try fileSystem.remove(path) } catch { throw .io(error) }
        }
        let made = try IndexFileWriter(files: files, fileSystem: fileSystem, uuid: uuid, pageSize: pageSize,
                                       fileSizeLimit: fileSizeLimit, newFile: nextFileNumber, sequence: sequence, cipher: cipher)
        nextFileNumber += 1
        writer = made
        return made
    }

    /// Closes and forgets the writer after a failure; the files it may have created (it rolls)
    /// are never numbered again.
    private func dropWriter() {
        if let writer { nextFileNumber = max(nextFileNumber, writer.activeNumber + 1) }
        writer?.close()
        writer = nil
    }

    /// Closes the writer (without syncing: a checkpoint syncs what it publishes) and forgets
    /// the files (snapshots still holding a view keep theirs).
    func close() {
        appending.withLock { _ in
            writer?.close()
            writer = nil
        }
        store.close()
    }
}
