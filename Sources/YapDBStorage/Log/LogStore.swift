#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import YapDBCrypto

/// Opening a database's files: main file, lock, recovery scan of the log, and a writer
/// positioned after the last valid commit (docs/format.md §5).
package enum LogStore {
    /// Everything `open` found and set up.
    package struct Opened {
        package var header: FileHeader
        package var created: Bool
        /// Which main-file header copy was damaged, if one was.
        package var damagedHeaderCopy: Int?
        /// The lock on `NAME-lock`; nil only for a read-only open where none could be taken
        /// (`LockFile.acquire`).
        package var lock: (any FileLock)?
        /// Positioned after the last valid commit. In a read-only open it never writes: its
        /// file is open read-only (or stands for a log with no segment at all).
        package var writer: LogWriter
        package var report: ScanReport
        /// Segment numbers present after recovery (log and compaction), sorted.
        package var segments: [UInt32]
        package var checkpoints: [UInt32]
        /// The unlocked keys of an encrypted database; nil for a plain one.
        package var cipher: DatabaseCipher?
    }

    /// How to open.
    package struct Options: Sendable {
        package var createIfMissing = true
        package var syncMode: SyncMode = .full
        package var segmentLimit = Format.defaultSegmentSize
        /// Open without changing anything: a shared lock, no creation, no removal of
        /// temporaries, a torn tail left in place (and not read), no high-water mark write.
        package var readOnly = false
        /// How long to wait for the lock (`LockFile.acquire`).
        package var busyTimeout: Duration = .zero
        /// The key of an encrypted database (docs/format.md §12): a database created by this
        /// open is encrypted under it, an existing one must be encrypted and open with it.
        /// nil: the database must be plain (an encrypted one is `keyUnavailable`).
        package var cipherKey: CipherKeyOptions?
        package init() {}
    }

    /// Where `open` gets the database's lock.
    package enum LockSource {
        /// `open` takes it (`LockFile.acquire`) and releases it if the open fails.
        case take
        /// The caller took it (nil: a read-only open without one) and keeps it if the open fails.
        case held((any FileLock)?)
    }

    /// Opens (or creates) the database at `path`: takes the lock (unless the caller holds it),
    /// checks the main file, removes temporary files (only under the lock, and only the names
    /// the engine writes), then lets `start(listing)` pick the replay start (the engine loads
    /// its checkpoint there) and scans the log from it, calling `apply` per commit. With
    /// `options.readOnly` nothing on disk changes (`Options.readOnly`). `unlocked` is called with
    /// the database's keys (nil: plain) once the main file is unlocked, before `start`; a
    /// missing or wrong key (`keyUnavailable`, `wrongKey`) is thrown before any other file is
    /// read, removed or truncated. An encrypted database's high-water mark is verified right
    /// after the key: no authentic slot is `corrupted` (docs/format.md §2).
    package static func open(
        path: String, fileSystem fs: any FileSystem, options: Options,
        start: (DatabaseFiles.Listing, FileHeader) throws(StorageError) -> (position: LogPosition, baseSnapshot: UInt64, protected: Set<UInt32>) = { _, _ throws(StorageError) in
            (LogPosition(segment: 1, offset: UInt32(Format.headerSize)), 0, [])
        },
        lock source: LockSource = .take,
        unlocked: (DatabaseCipher?) -> Void = { _ in },
        apply: (ScannedCommit) throws(StorageError) -> Void
    ) throws(StorageError) -> Opened {
        let files = DatabaseFiles(mainPath: path)
        let lock: (any FileLock)?
        switch source {
        case .held(let held): lock = held
        case .take: lock = try LockFile.acquire(mainPath: path, fileSystem: fs, shared: options.readOnly, busyTimeout: options.busyTimeout)
        }
        var success = false
        // A lock the caller took stays the caller's to release.
        defer { if !success, case .take = source { lock?.unlock() } }
        var created = false
        var createdKey: DataKey?
        switch fs.kind(of: path) {
        case .missing:
            guard options.createIfMissing && !options.readOnly else { throw .fileNotFound(path: path) }
            // The creation's own lock (on `-creating`) guards only the creation: the lock
            // file guards the database.
            let uuid = FileHeader.randomUUID()
            var image: [UInt8]?
            if let cipherKey = options.cipherKey {
                let made = try MainFile.newEncrypted(uuid: uuid, options: cipherKey)
                image = made.image
                createdKey = made.dataKey
            }
            try MainFile.create(at: path, fileSystem: fs, uuid: uuid, image: image).lock.unlock()
            created = true
        case .file: break
        case .directory, .other: throw .notADatabase(path: path)
        }

        // Kept open for writing: the high-water mark is updated in place (docs/format.md §2).
        // A read-only open reads it and lets it go.
        let main: any StorageFile
        do { main = try fs.open(path, mode: options.readOnly ? .readOnly : .readWrite) } catch { throw .io(error) }
        defer { if !success || options.readOnly { main.close() } }
        var opened = try MainFile.open(at: path, file: main)
        let header = opened.header
        // The key is decided before any other file is read, removed or truncated: a missing or
        // wrong key changes nothing and is never damage (docs/format.md §12).
        let cipher = try unlock(header: header, main: main, path: path, key: options.cipherKey, created: createdKey)
        // An encrypted database's mark is read only now that its tags can be checked, and
        // before any of its promises is.
        if let cipher { try opened.authenticateMark(with: cipher.markAuthenticator, path: path) }
        unlocked(cipher)

        var listing: DatabaseFiles.Listing
        var missing: [String]
        do throws(IOFailure) {
            listing = try files.list(fs)
            missing = try opened.mark.missing(in: listing, files: files, fileSystem: fs)
        } catch { throw .io(error) }
        // Before anything is removed or repaired: less than the mark promises is an error.
        guard missing.isEmpty else { throw .missingFiles(missing) }
        if !options.readOnly {
            do throws(IOFailure) {
                for stale in listing.temporaries { try fs.remove(stale) }
                if !listing.temporaries.isEmpty { try fs.syncDirectory(files.directory) }
            } catch { throw .io(error) }
        }
        listing.temporaries = []

        let begin = try start(listing, header)
        var scanner = LogScanner(files: files, fileSystem: fs, uuid: header.uuid)
        scanner.cipher = cipher
        let report = try scanner.scan(segments: listing.segments, from: begin.position, baseSnapshot: begin.baseSnapshot,
                                      protected: begin.protected, repair: !options.readOnly, apply: apply)
        let removed = Set(report.removedSegments)
        let segments = listing.segments.filter { !removed.contains($0) }

        if options.readOnly {
            let writer = try readOnlyWriter(report: report, begin: begin.position, segments: segments, files: files,
                                            fileSystem: fs, uuid: header.uuid, options: options, cipher: cipher)
            success = true
            return Opened(header: header, created: false, damagedHeaderCopy: opened.damagedCopy, lock: lock, writer: writer,
                          report: report, segments: segments, checkpoints: listing.checkpoints, cipher: cipher)
        }
        var writer: LogWriter!
        do throws(IOFailure) {
            if let end = report.end {
                let file = try fs.open(files.segmentPath(end.segment), mode: .readWrite)
                var sealing: RecordSealing?
                if let cipher {
                    do throws(StorageError) { sealing = try RecordSealing.read(file, cipher: cipher, unitType: .logRecord) } catch {
                        file.close()
                        throw IOFailure(errno: EIO, operation: "read the segment's cipher header: \(error)", path: file.path)
                    }
                }
                // What recovery read may still be only in the page cache: sync it, and the
                // directory (the segment's name may never have been made durable), before new
                // commits claim it as durable.
                if options.syncMode != .off {
                    try file.sync()
                    try fs.syncDirectory(files.directory)
                }
                writer = LogWriter(files: files, fileSystem: fs, uuid: header.uuid, segmentNumber: end.segment, file: file,
                                   end: end.offset, lastSnapshot: report.lastSnapshot, syncMode: options.syncMode,
                                   segmentLimit: options.segmentLimit, cipher: cipher, sealing: sealing)
            } else {
                let number = max(begin.position.segment, (segments.last ?? 0) + 1)
                let (file, sealing) = try LogWriter.createSegment(number, files: files, fileSystem: fs, uuid: header.uuid,
                                                                  baseSnapshot: report.lastSnapshot, sync: true, cipher: cipher)
                writer = LogWriter(files: files, fileSystem: fs, uuid: header.uuid, segmentNumber: number, file: file,
                                   end: UInt32(Format.firstRecordOffset(encrypted: cipher != nil)), lastSnapshot: report.lastSnapshot,
                                   syncMode: options.syncMode, segmentLimit: options.segmentLimit, cipher: cipher, sealing: sealing)
            }
            // The log is durable up to the writer's position now (except in `.off` mode, which
            // promises nothing about the log): the mark says so before new commits go in.
            let mark = HighWaterMarkWriter(file: main, mark: opened.mark, authenticator: cipher?.markAuthenticator)
            try mark.update { mark in
                mark.segment = options.syncMode == .off ? 0 : writer.segmentNumber
                mark.offset = options.syncMode == .off ? 0 : writer.end
                mark.snapshot = options.syncMode == .off ? 0 : writer.lastSnapshot
            }
            writer.highWaterMark = mark
        } catch {
            writer?.file.close()
            throw .io(error)
        }
        writer.nextSegmentNumber = max(writer.segmentNumber, segments.last ?? 0) + 1
        var allSegments = segments
        if !allSegments.contains(writer.segmentNumber) { allSegments.append(writer.segmentNumber); allSegments.sort() }
        success = true
        return Opened(header: header, created: created, damagedHeaderCopy: opened.damagedCopy, lock: lock, writer: writer,
                      report: report, segments: allSegments, checkpoints: listing.checkpoints, cipher: cipher)
    }

    /// The keys of the database whose main file is `main`: nil for a plain database opened
    /// without a key; the data key just made (`created`) or unlocked with `key` for an
    /// encrypted one. Reads only the main file.
    ///
    /// - Throws: `keyUnavailable` for an encrypted database opened without a key; `wrongKey`
    ///   for a key that does not open it, or a key given for a plain database.
    static func unlock(header: FileHeader, main: any StorageFile, path: String, key: CipherKeyOptions?,
                       created: DataKey?) throws(StorageError) -> DatabaseCipher? {
        guard header.encrypted else {
            if key != nil { throw .wrongKey }
            return nil
        }
        if let created { return DatabaseCipher(dataKey: created, uuid: header.uuid) }
        let unlocked = try MainFile.unlock(file: main, path: path, uuid: header.uuid, key: key?.key)
        return DatabaseCipher(dataKey: unlocked.dataKey, uuid: header.uuid)
    }

}
