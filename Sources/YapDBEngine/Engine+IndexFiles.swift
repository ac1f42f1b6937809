import Synchronization
import YapDBStorage
import YapDBIndex

/// The index files of an engine: the page store the snapshots read through, the writer that
/// index checkpoints append pages with, and what the newest checkpoint published.
///
/// `@unchecked Sendable` because it is used only under `Engine.maintenance` (checkpoints and
/// compactions) or before the engine is shared (open); the page store itself is thread-safe,
/// and readers never touch this object (they hold an `IndexPageSource`).
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
    /// The writer, once a checkpoint has needed one; dropped after a failure, so the next
    /// checkpoint resumes from `published` (cutting off what the failed one wrote).
    private var writer: IndexFileWriter?
    /// The number for the next new index file.
    private var nextFileNumber: UInt32

    init(files: DatabaseFiles, fileSystem: any FileSystem, uuid: [UInt8], format: PageFormat, mode: IndexReadMode,
         fileSizeLimit: Int64, published: [IndexFileExtent], nextFileNumber: UInt32) {
        self.files = files
        self.fileSystem = fileSystem
        self.uuid = uuid
        self.format = format
        self.store = IndexPageStore(files: files, fileSystem: fileSystem, uuid: uuid, pageSize: format.pageSize, mode: mode)
        self.fileSizeLimit = fileSizeLimit
        self.publishedExtents = Mutex(published)
        self.nextFileNumber = max(nextFileNumber, (published.map(\.number).max() ?? 0) + 1)
    }

    /// A page source over the files readable now.
    func source() -> IndexPageSource { IndexPageSource(view: store.view(), format: format) }

    /// The file a writer appends to (read with `pread`, never mapped), if any.
    var activeFile: UInt32? { writer?.activeNumber ?? published.last?.number }

    /// Writes the dirty nodes of `keydir` as pages and syncs them (children before parents);
    /// returns the flushes (to publish once the checkpoint naming them is durable) and the
    /// extents of every index file, which that checkpoint's root record lists.
    /// - Throws: `StorageError` from writing or syncing (the writer is dropped: the next
    ///   checkpoint resumes after the published pages, overwriting these).
    func writePages(of keydir: Keydir, sequence: UInt64) throws(StorageError) -> (flush: (rows: PageFlush, rowids: PageFlush), extents: [IndexFileExtent]) {
        do throws(IndexFileError) {
            let writer = try writerForAppending(sequence: sequence)
            let flush = try keydir.flush(allocate: { () throws(IndexFileError) -> PageID in
                try writer.nextPageID().rawValue
            }, write: { (id: PageID, page: UnsafeRawBufferPointer) throws(IndexFileError) in
                let written = try writer.append(page)
                precondition(written.rawValue == id, "index page written at \(written), allocated \(IndexPageID(rawValue: id))")
            })
            let written = try writer.sync()
            // The writer knows the files it wrote to; sealed files written before it (by an
            // earlier writer, before a reopen) stay in the root with their lengths.
            let writtenNumbers = Set(written.map(\.number))
            let extents = (published.filter { !writtenNumbers.contains($0.number) } + written).sorted { $0.number < $1.number }
            return (flush, extents)
        } catch {
            writer?.close()
            writer = nil
            throw error.storageError
        }
    }

    /// Records that the checkpoint naming `extents` is durable: the store reads the new pages
    /// (mapping files that are sealed now).
    func didPublish(_ extents: [IndexFileExtent]) throws(StorageError) {
        publishedExtents.withLock { $0 = extents }
        do throws(IndexFileError) { try store.adopt(extents, activeFile: activeFile) } catch { throw error.storageError }
    }

    /// The writer, resumed after the published pages or started on a new file.
    private func writerForAppending(sequence: UInt64) throws(IndexFileError) -> IndexFileWriter {
        if let writer { return writer }
        let made: IndexFileWriter
        if let last = published.last {
            made = try IndexFileWriter(files: files, fileSystem: fileSystem, uuid: uuid, pageSize: format.pageSize,
                                       fileSizeLimit: fileSizeLimit, resume: last.number, length: last.length, sequence: sequence)
        } else {
            // A file left by a checkpoint that never published is in the way: replace it.
            let path = files.indexPath(nextFileNumber)
            if fileSystem.kind(of: path) != .missing {
                do { try fileSystem.remove(path) } catch { throw .io(error) }
            }
            made = try IndexFileWriter(files: files, fileSystem: fileSystem, uuid: uuid, pageSize: format.pageSize,
                                       fileSizeLimit: fileSizeLimit, newFile: nextFileNumber, sequence: sequence)
            nextFileNumber += 1
        }
        writer = made
        return made
    }

    /// Closes the writer (without syncing: a checkpoint syncs what it publishes) and forgets
    /// the files (snapshots still holding a view keep theirs).
    func close() {
        writer?.close()
        writer = nil
        store.close()
    }
}
