#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Appends already-encoded pages to index files (docs/format.md §9) and makes them durable.
///
/// A page gets its id when it is appended (`append` returns it), so a copy-on-write tree
/// writes children before the parent that points at them. Pages are buffered and written with
/// one `pwrite` per `bufferLimit` bytes; a page is readable by `pread` once `flush()` or
/// `sync()` returned, and durable (and may be named by a root record) once `sync()` returned.
///
/// Files roll: before a page would take the active file past `fileSizeLimit`, the writer
/// starts file `number + 1` (`createNew`: a leftover of that number is an error; the engine
/// removes index files no root names before it starts a writer). A file left behind by a roll
/// is *sealed*: it is never written again. Once `sync()` returned and a root record naming the
/// lengths is published, a page store may map any file up to that length (the active one
/// included): the writer only appends past it.
///
/// `sync()` syncs every file written since the last sync (older first), then the directory
/// when a file was created since the last sync, and returns every file this writer wrote with
/// its length: what a root record lists next.
///
/// Failure contract (as the log writer's): after any write or sync throws, the files may hold
/// bytes that never reach the disk (Linux marks pages clean after a failed writeback), so the
/// writer is failed — every later call throws `.failed` — and no root record may name what it
/// wrote after the last successful `sync()`. Reopen from the newest root record.
///
/// Threading: one thread at a time (the index checkpoint's); not `Sendable`.
package final class IndexFileWriter {
    package let files: DatabaseFiles
    package let fileSystem: any FileSystem
    package let uuid: [UInt8]
    /// The size of every page on disk, the header page included.
    package let pageSize: Int
    /// The keys of an encrypted database (docs/format.md §12): each page is sealed for its file
    /// and number with a fresh nonce, so a writer resuming after a failed checkpoint writes new
    /// nonces under page numbers it wrote before. nil: plain.
    package let cipher: DatabaseCipher?
    /// The bytes of a page `append` takes: `pageSize`, less the seal's nonce and tag when
    /// encrypted.
    package var plainPageSize: Int { cipher == nil ? pageSize : SealedPage.plainSize(pageSize: pageSize) }
    /// How the active file's pages are sealed (encrypted databases).
    private var sealing: PageSealing?
    /// The checkpoint sequence recorded in the headers of files this writer creates.
    package let sequence: UInt64
    /// A file rolls before it would pass this many bytes (at least two pages).
    package let fileSizeLimit: Int64
    /// Bytes buffered before a `pwrite`; tests lower it to make many writes.
    package var bufferLimit = 256 << 10

    /// The file being appended to (mapped by a page store only up to its published length).
    package private(set) var activeNumber: UInt32
    /// Files this writer wrote to and their lengths, buffered bytes included, ascending.
    package private(set) var extents: [IndexFileExtent] = []

    private var active: any StorageFile
    /// Bytes of the active file written or buffered (the offset of the next page).
    private var activeLength: Int64
    /// Pages not yet written, to go at file offset `bufferOffset` of the active file.
    private var buffer: [UInt8] = []
    private var bufferOffset: Int64
    /// Sealed files with writes not yet synced.
    private var unsyncedSealed: [any StorageFile] = []
    private var activeUnsynced = false
    private var directoryUnsynced = false
    private var isFailed = false

    /// Starts a writer on a new index file `number` (created with `createNew`; its header page
    /// is buffered, and the file and directory are synced by the next `sync()`).
    ///
    /// - Parameters:
    ///   - uuid: the database's UUID, written in every header.
    ///   - pageSize: a power of two in `Format.indexMinimumPageSize ... indexMaximumPageSize`
    ///     (checked with `precondition`: it comes from the engine's options, not from disk).
    ///   - fileSizeLimit: roll size; raised to two pages if smaller.
    ///   - number: the new file's number, ≥ 1.
    ///   - sequence: the checkpoint sequence that creates the files.
    /// - Throws: `.io` from creating the file (`EEXIST` when it exists).
    package convenience init(files: DatabaseFiles, fileSystem: any FileSystem, uuid: [UInt8], pageSize: Int = Format.indexDefaultPageSize,
                             fileSizeLimit: Int64 = Format.indexDefaultFileSize, newFile number: UInt32, sequence: UInt64,
                             cipher: DatabaseCipher? = nil) throws(IndexFileError) {
        precondition(IndexFileHeader.isValidPageSize(pageSize), "index page size \(pageSize) is not allowed")
        precondition(number >= 1, "index files are numbered from 1")
        let file = try Self.create(number, files: files, fileSystem: fileSystem)
        try self.init(files: files, fileSystem: fileSystem, uuid: uuid, pageSize: pageSize, fileSizeLimit: fileSizeLimit,
                      sequence: sequence, number: number, active: file, resumedLength: nil, cipher: cipher, sealing: nil)
    }

    /// Continues appending to the existing index file `number` after its first `length` bytes
    /// (what the newest root record vouches for): the header page is checked, bytes past
    /// `length` (pages of a checkpoint that never published) are truncated away (made durable
    /// by the next `sync()`).
    ///
    /// A page store may have mapped this file up to `length` (the published prefix), never
    /// further: the truncation cuts only bytes past it, which no mapping covers.
    ///
    /// - Throws: the errors of `IndexFileHeader.read`; `.corrupted` with `.fileTooShort` when
    ///   the file holds fewer than `length` bytes, `.invalidField("length")` when `length` is
    ///   not a whole number of pages; `.io`.
    package convenience init(files: DatabaseFiles, fileSystem: any FileSystem, uuid: [UInt8], pageSize: Int = Format.indexDefaultPageSize,
                             fileSizeLimit: Int64 = Format.indexDefaultFileSize, resume number: UInt32, length: Int64, sequence: UInt64,
                             cipher: DatabaseCipher? = nil) throws(IndexFileError) {
        precondition(IndexFileHeader.isValidPageSize(pageSize), "index page size \(pageSize) is not allowed")
        let path = files.indexPath(number)
        guard length >= Int64(pageSize), length % Int64(pageSize) == 0 else {
            throw .corrupted(path: path, offset: 0, reason: .invalidField("length"))
        }
        let file: any StorageFile
        do { file = try fileSystem.open(path, mode: .readWrite) } catch { throw .io(error) }
        let sealing: PageSealing?
        do throws(IndexFileError) {
            sealing = try IndexFileHeader.read(file, number: number, uuid: uuid, pageSize: pageSize, cipher: cipher)
            let size: Int64
            do { size = try file.size() } catch { throw .io(error) }
            guard size >= length else {
                throw .corrupted(path: path, offset: size, reason: .fileTooShort(number: number, expected: length, found: size))
            }
            if size > length {
                do { try file.truncate(to: length) } catch { throw .io(error) }
            }
        } catch {
            file.close()
            throw error
        }
        try self.init(files: files, fileSystem: fileSystem, uuid: uuid, pageSize: pageSize, fileSizeLimit: fileSizeLimit,
                      sequence: sequence, number: number, active: file, resumedLength: length, cipher: cipher, sealing: sealing)
    }

    /// The common part: `resumedLength` is `nil` for a new file (whose header page is
    /// buffered), else the length appending continues from.
    private init(files: DatabaseFiles, fileSystem: any FileSystem, uuid: [UInt8], pageSize: Int, fileSizeLimit: Int64,
                 sequence: UInt64, number: UInt32, active: any StorageFile, resumedLength: Int64?,
                 cipher: DatabaseCipher?, sealing: PageSealing?) throws(IndexFileError) {
        precondition(cipher == nil || pageSize >= Format.encryptedIndexMinimumPageSize,
                     "an encrypted database's index pages are at least \(Format.encryptedIndexMinimumPageSize) bytes")
        self.cipher = cipher
        self.sealing = sealing
        self.files = files
        self.fileSystem = fileSystem
        self.uuid = uuid
        self.pageSize = pageSize
        self.sequence = sequence
        self.fileSizeLimit = max(fileSizeLimit, Int64(2 * pageSize))
        self.active = active
        activeNumber = number
        activeLength = resumedLength ?? 0
        bufferOffset = activeLength
        if let resumedLength {
            // A truncation (if any) is made durable by the next sync.
            activeUnsynced = true
            extents = [IndexFileExtent(number: number, length: resumedLength)]
        } else {
            do throws(IndexFileError) { try startFile() } catch {
                active.close()
                throw error
            }
        }
    }

    /// Appends one page of exactly `pageSize` bytes and returns its id. Rolls to a new file
    /// first when the page would pass `fileSizeLimit`; writes the buffer out when it passes
    /// `bufferLimit`.
    ///
    /// - Throws: `.failed` after an earlier failure; `.io` from writing or creating a file
    ///   (the writer is then failed).
    package func append(_ page: UnsafeRawBufferPointer) throws(IndexFileError) -> IndexPageID {
        precondition(page.count == plainPageSize, "an index page is \(plainPageSize) bytes, not \(page.count)")
        guard !isFailed else { throw .failed }
        if activeLength + Int64(pageSize) > fileSizeLimit || activeLength / Int64(pageSize) >= Int64(UInt32.max) {
            try roll()
        }
        let id = IndexPageID(file: activeNumber, page: UInt32(activeLength / Int64(pageSize)))
        if let sealing {
            do throws(StorageError) { buffer.append(contentsOf: try sealing.seal(page, page: id.page)) } catch {
                isFailed = true
                throw .io(IOFailure(errno: EIO, operation: "seal page: \(error)", path: active.path))
            }
        } else {
            buffer.append(contentsOf: page)
        }
        activeLength += Int64(pageSize)
        extents[extents.count - 1].length = activeLength
        if buffer.count >= bufferLimit { try flush() }
        return id
    }

    /// The id the next `append` will give its page (rolling to a new file first when that page
    /// would pass `fileSizeLimit`), so a caller can name a page before it encodes it: a tree
    /// flush writes children first and records their ids in their parents.
    ///
    /// - Throws: `.failed` after an earlier failure; `.io` from rolling (the writer is then
    ///   failed).
    package func nextPageID() throws(IndexFileError) -> IndexPageID {
        guard !isFailed else { throw .failed }
        if activeLength + Int64(pageSize) > fileSizeLimit || activeLength / Int64(pageSize) >= Int64(UInt32.max) {
            try roll()
        }
        return IndexPageID(file: activeNumber, page: UInt32(activeLength / Int64(pageSize)))
    }

    /// Appends one page (`pageSize` bytes); see `append(_:)`.
    package func append(_ page: [UInt8]) throws(IndexFileError) -> IndexPageID {
        try page.withBytes { (raw) throws(IndexFileError) -> IndexPageID in try append(raw) }
    }

    /// Appends pages in order and returns their ids; see `append(_:)`.
    package func append(contentsOf pages: [[UInt8]]) throws(IndexFileError) -> [IndexPageID] {
        var ids: [IndexPageID] = []
        ids.reserveCapacity(pages.count)
        for page in pages { ids.append(try append(page)) }
        return ids
    }

    /// Writes the buffered pages to the active file (without syncing them).
    ///
    /// - Throws: `.failed`; `.io` (the writer is then failed).
    package func flush() throws(IndexFileError) {
        guard !isFailed else { throw .failed }
        guard !buffer.isEmpty else { return }
        do {
            try active.write(buffer, at: bufferOffset)
        } catch {
            isFailed = true
            throw .io(error)
        }
        bufferOffset += Int64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
        activeUnsynced = true
    }

    /// Flushes, `fdatasync`s every file written since the last sync (sealed files first, then
    /// the active one), then syncs the directory if a file was created since. Returns
    /// `extents`: every file this writer wrote and its durable length.
    ///
    /// - Throws: `.failed`; `.io` from a write or sync (the writer is then failed, and
    ///   nothing it wrote since the last successful sync may be published).
    @discardableResult
    package func sync() throws(IndexFileError) -> [IndexFileExtent] {
        try flush()
        do {
            while let file = unsyncedSealed.first {
                try file.sync()
                file.close()
                unsyncedSealed.removeFirst()
            }
            if activeUnsynced {
                try active.sync()
                activeUnsynced = false
            }
            if directoryUnsynced {
                try fileSystem.syncDirectory(files.directory)
                directoryUnsynced = false
            }
        } catch {
            isFailed = true
            throw .io(error)
        }
        return extents
    }

    /// Closes the files without flushing or syncing (a caller that wants its pages calls
    /// `sync()` first); later calls throw `.failed`. Harmless to call twice.
    package func close() {
        for file in unsyncedSealed { file.close() }
        unsyncedSealed.removeAll()
        active.close()
        buffer.removeAll()
        isFailed = true
    }

    // MARK: - Files

    private static func create(_ number: UInt32, files: DatabaseFiles, fileSystem: any FileSystem) throws(IndexFileError) -> any StorageFile {
        do { return try fileSystem.open(files.indexPath(number), mode: .createNew) } catch { throw .io(error) }
    }

    /// Buffers the new active file's header page and records it.
    private func startFile() throws(IndexFileError) {
        var cipherHeader: CipherHeader?
        if let cipher {
            // A fresh salt: a file created again under a number a failed checkpoint used gets a new key.
            cipher.forget(kind: .index, number: activeNumber)
            var header = FileHeader(kind: .index, uuid: uuid, fileNumber: activeNumber, baseSnapshot: sequence)
            header.encrypted = true
            do throws(StorageError) {
                let made = try cipher.newFile(header)
                cipherHeader = made.cipherHeader
                sealing = PageSealing(sealer: made.sealer, header: header, pageSize: pageSize)
            } catch {
                isFailed = true
                throw .io(IOFailure(errno: EIO, operation: "derive the file key: \(error)", path: files.indexPath(activeNumber)))
            }
        }
        buffer = IndexFileHeader.encoded(uuid: uuid, number: activeNumber, sequence: sequence, pageSize: pageSize, cipherHeader: cipherHeader)
        activeLength = Int64(pageSize)
        bufferOffset = 0
        directoryUnsynced = true
        extents.append(IndexFileExtent(number: activeNumber, length: activeLength))
    }

    /// Seals the active file (written out, synced by the next `sync()`) and starts the next.
    private func roll() throws(IndexFileError) {
        guard activeNumber < UInt32.max else {
            isFailed = true
            throw .io(IOFailure(errno: EFBIG, operation: "roll", path: files.indexPath(activeNumber)))
        }
        try flush()
        let next: any StorageFile
        do {
            next = try Self.create(activeNumber + 1, files: files, fileSystem: fileSystem)
        } catch {
            isFailed = true
            throw error
        }
        if activeUnsynced { unsyncedSealed.append(active) } else { active.close() }
        active = next
        activeUnsynced = false
        activeNumber += 1
        try startFile()
    }
}
