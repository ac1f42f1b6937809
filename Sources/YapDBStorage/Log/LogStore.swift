#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Opening a database's files: main file, lock, recovery scan of the log, and a writer
/// positioned after the last valid commit (docs/format.md §5).
package enum LogStore {
    /// Everything `open` found and set up.
    package struct Opened {
        package var header: FileHeader
        package var created: Bool
        /// Which main-file header copy was damaged, if one was.
        package var damagedHeaderCopy: Int?
        package var lock: any FileLock
        package var writer: LogWriter
        package var report: ScanReport
        /// Segment numbers present after recovery (log and compaction), sorted.
        package var segments: [UInt32]
        package var checkpoints: [UInt32]
    }

    /// How to open.
    package struct Options: Sendable {
        package var createIfMissing = true
        package var syncMode: SyncMode = .full
        package var segmentLimit = Format.defaultSegmentSize
        package init() {}
    }

    /// Opens (or creates) the database at `path`: takes the lock, checks the main file,
    /// removes temporary files (only under the lock, and only the names the engine writes), then lets `start(listing)` pick the replay start (the engine
    /// loads its checkpoint there) and scans the log from it, calling `apply` per commit.
    /// `heldLock`, when given, is the main file's lock the caller already holds: it is used,
    /// and left held if the open fails.
    package static func open(
        path: String, fileSystem fs: any FileSystem, options: Options,
        start: (DatabaseFiles.Listing, FileHeader) throws(StorageError) -> (position: LogPosition, baseSnapshot: UInt64, protected: Set<UInt32>) = { _, _ throws(StorageError) in
            (LogPosition(segment: 1, offset: UInt32(Format.headerSize)), 0, [])
        },
        heldLock: (any FileLock)? = nil,
        apply: (ScannedCommit) throws(StorageError) -> Void
    ) throws(StorageError) -> Opened {
        let files = DatabaseFiles(mainPath: path)
        var created = false
        var lock: any FileLock
        switch fs.kind(of: path) {
        case .file where heldLock != nil:
            lock = heldLock!
        case .missing:
            guard options.createIfMissing else { throw .fileNotFound(path: path) }
            lock = try MainFile.create(at: path, fileSystem: fs).lock
            created = true
        case .file:
            lock = try lockMainFile(path, fs)
        case .directory, .other: throw .notADatabase(path: path)
        }
        var success = false
        // A lock the caller took stays the caller's to release.
        defer { if !success && heldLock == nil { lock.unlock() } }

        // Kept open for writing: the high-water mark is updated in place (docs/format.md §2).
        let main: any StorageFile
        do { main = try fs.open(path, mode: .readWrite) } catch { throw .io(error) }
        defer { if !success { main.close() } }
        let opened = try MainFile.open(at: path, file: main)
        let header = opened.header

        var listing: DatabaseFiles.Listing
        var missing: [String]
        do throws(IOFailure) {
            listing = try files.list(fs)
            missing = try opened.mark.missing(in: listing, files: files, fileSystem: fs)
        } catch { throw .io(error) }
        // Before anything is removed or repaired: less than the mark promises is an error.
        guard missing.isEmpty else { throw .missingFiles(missing) }
        do throws(IOFailure) {
            for stale in listing.temporaries { try fs.remove(stale) }
            if !listing.temporaries.isEmpty { try fs.syncDirectory(files.directory) }
        } catch { throw .io(error) }
        listing.temporaries = []

        let begin = try start(listing, header)
        let scanner = LogScanner(files: files, fileSystem: fs, uuid: header.uuid)
        let report = try scanner.scan(segments: listing.segments, from: begin.position, baseSnapshot: begin.baseSnapshot,
                                      protected: begin.protected, repair: true, apply: apply)
        let removed = Set(report.removedSegments)
        let segments = listing.segments.filter { !removed.contains($0) }

        var writer: LogWriter!
        do throws(IOFailure) {
            if let end = report.end {
                let file = try fs.open(files.segmentPath(end.segment), mode: .readWrite)
                // What recovery read may still be only in the page cache: sync it, and the
                // directory (the segment's name may never have been made durable), before new
                // commits claim it as durable.
                if options.syncMode != .off {
                    try file.sync()
                    try fs.syncDirectory(files.directory)
                }
                writer = LogWriter(files: files, fileSystem: fs, uuid: header.uuid, segmentNumber: end.segment, file: file,
                                   end: end.offset, lastSnapshot: report.lastSnapshot, syncMode: options.syncMode,
                                   segmentLimit: options.segmentLimit)
            } else {
                let number = max(begin.position.segment, (segments.last ?? 0) + 1)
                let file = try LogWriter.createSegment(number, files: files, fileSystem: fs, uuid: header.uuid,
                                                       baseSnapshot: report.lastSnapshot, sync: true)
                writer = LogWriter(files: files, fileSystem: fs, uuid: header.uuid, segmentNumber: number, file: file,
                                   end: UInt32(Format.headerSize), lastSnapshot: report.lastSnapshot, syncMode: options.syncMode,
                                   segmentLimit: options.segmentLimit)
            }
            // The log is durable up to the writer's position now (except in `.off` mode, which
            // promises nothing about the log): the mark says so before new commits go in.
            let mark = HighWaterMarkWriter(file: main, mark: opened.mark)
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
                      report: report, segments: allSegments, checkpoints: listing.checkpoints)
    }

    /// Takes the lock of an existing main file (`locked` when another holder has it).
    package static func lockMainFile(_ path: String, _ fs: any FileSystem) throws(StorageError) -> any FileLock {
        do { return try fs.lock(path) } catch {
            if error.errno == EWOULDBLOCK || error.errno == EAGAIN { throw .locked(path: path) }
            throw .io(error)
        }
    }
}
