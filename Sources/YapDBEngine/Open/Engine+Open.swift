#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import YapDBStorage
import YapDBIndex

extension Engine {
    /// Opens (or creates) the database whose main file is `path`: lock, newest checkpoint,
    /// replay of the log after it, torn-tail repair, removal of files an interrupted
    /// checkpoint or compaction left behind. With `options.readOnly`, only the reading:
    /// a shared lock, no creation, repair, removal or write of any file (a torn tail is left
    /// in place and not read); every write, checkpoint and compaction then throws `readOnly`.
    ///
    /// Throws `alreadyOpen` when this process has it open, `locked` when another process holds
    /// a lock that conflicts after `options.busyTimeout`, `fileNotFound` (missing, and
    /// `createIfMissing` false or read-only), `notADatabase`, `unsupportedVersion`,
    /// `corrupted` (unless `corruptAction` replaces the files; never in a read-only open),
    /// `io`.
    ///
    /// With `options.multiProcess` the lock is shared, and the load runs under the writer lock
    /// shared by the processes (Engine+MultiProcess.swift), which is then let go.
    package static func open(path: String, options: EngineOptions = EngineOptions()) throws(EngineError) -> Engine {
        try engineBoundary { () throws(StorageError) in try openOnStorage(path: path, options: options) }
    }

    /// `open`, throwing the storage layer's errors (`open` wraps them).
    static func openOnStorage(path: String, options: EngineOptions) throws(StorageError) -> Engine {
        let options = multiProcessOptions(options, path: path)
        if options.idleCheckpointDelay != nil && !options.readOnly { _ = dispatchTimersStarted }
        let key = openKey(path, options.fileSystem)
        guard OpenDatabases.insert(key) else { throw .alreadyOpen(path: path) }
        do throws(StorageError) {
            // The lock comes first: nothing of the database is created, repaired, set aside or
            // removed without it, and it is held until the engine owns it.
            let lock = try takeLock(path: path, options: options)
            var handedOver = false
            defer { if !handedOver { lock?.unlock() } }
            // Multi-process support: the load (creation, recovery, repair) holds the writer lock.
            let sharing = options.multiProcess ? try ProcessSharing.open(path: path, options: options) : nil
            try sharing?.acquire()
            defer { sharing?.release() }
            do throws(StorageError) {
                let engine = try openRegistered(path: path, options: options, key: key, handled: [], lock: lock, sharing: sharing)
                try sharing?.claimSlot()
                engine.publishOpenedState()
                handedOver = true
                return engine
            } catch {
                switch error {
                case .corrupted, .notADatabase:
                    // Other processes may be reading the files: never set aside under them.
                    guard options.corruptAction != .fail, !options.readOnly, !options.multiProcess,
                          options.fileSystem.kind(of: path) == .file else { throw error }
                    // A main file that is not ours, with none of our files beside it, is a
                    // wrong path to somebody else's file: never rename or delete it.
                    if case .notADatabase = error, !hasDatabaseFiles(beside: path, fs: options.fileSystem) { throw error }
                    let handled = try setAside(path: path, options: options)
                    // The new database starts under the same lock (the lock file is never set aside).
                    let engine = try openRegistered(path: path, options: options, key: key, handled: handled, lock: lock)
                    handedOver = true
                    return engine
                default:
                    throw error
                }
            }
        } catch {
            OpenDatabases.remove(key)
            throw error
        }
    }

    /// Takes the database's lock (`LockFile`): exclusive, or shared for a read-only open.
    /// No lock file appears beside a database that is not there: an open that may not create
    /// it fails with `fileNotFound` first, and a path to somebody else's file (no YapDB magic,
    /// none of our files beside it) with `notADatabase`.
    static func takeLock(path: String, options: EngineOptions) throws(StorageError) -> (any FileLock)? {
        let fs = options.fileSystem
        switch fs.kind(of: path) {
        case .missing:
            if options.readOnly || !options.createIfMissing { throw .fileNotFound(path: path) }
        case .directory, .other:
            throw .notADatabase(path: path)
        case .file:
            if isForeignFile(path, fs: fs) { throw .notADatabase(path: path) }
        }
        return try LockFile.acquire(mainPath: path, fileSystem: options.fileSystem, shared: options.readOnly || options.multiProcess,
                                    busyTimeout: options.busyTimeout)
    }

    static func openKey(_ path: String, _ fs: any FileSystem) -> String {
        var canonical = path
        if fs is PosixFileSystem, let resolved = realpath(Paths.directory(of: path), nil) {
            canonical = Paths.join(String(decoding: UnsafeRawBufferPointer(start: resolved, count: strlen(resolved)), as: UTF8.self), Paths.fileName(of: path))
            free(resolved)
        }
        return "\(ObjectIdentifier(fs))|\(canonical)"
    }

    /// Whether `path` is a file that does not start with YapDB's magic and has none of our
    /// files beside it. A read that fails says nothing (the open reports it), and neither does
    /// one that stops before the end the file's size promises: a short read is the kernel's or
    /// the device's failure, not a verdict on the file (the header read reports it as I/O).
    static func isForeignFile(_ path: String, fs: any FileSystem) -> Bool {
        guard let file = try? fs.open(path, mode: .readOnly) else { return false }
        defer { file.close() }
        var magic = [UInt8](repeating: 0, count: Format.magic.count)
        let count = magic.withUnsafeMutableBytes { buffer in (try? file.read(into: buffer, at: 0)) ?? -1 }
        guard count >= 0 else { return false }
        if count == magic.count && magic == Format.magic { return false }
        if count < magic.count {
            guard let size = try? file.size(), size == Int64(count) else { return false }
        }
        return !hasDatabaseFiles(beside: path, fs: fs)
    }

    /// Whether any log segment or checkpoint of the database at `path` exists (the main file
    /// aside): the sign that a main file we cannot read is a damaged database of ours.
    static func hasDatabaseFiles(beside path: String, fs: any FileSystem) -> Bool {
        guard let listing = try? DatabaseFiles(mainPath: path).list(fs) else { return false }
        return !listing.segments.isEmpty || !listing.checkpoints.isEmpty
    }

    /// Renames (`.rename`) or deletes (`.delete`) every file of a damaged database: the main
    /// file, log and compaction segments, checkpoints, index files and the engine's
    /// temporaries (never the lock file). Call with the database's lock held.
    static func setAside(path: String, options: EngineOptions) throws(StorageError) -> [String] {
        let fs = options.fileSystem
        let files = DatabaseFiles(mainPath: path)
        var names: [String] = []
        do throws(IOFailure) {
            let listing = try files.list(fs)
            names = [path] + listing.segments.map(files.segmentPath) + listing.checkpoints.map(files.checkpointPath)
                + (try files.listIndexFiles(fs)).map(files.indexPath) + listing.temporaries
            names = names.filter { fs.kind(of: $0) == .file }
            if options.corruptAction == .rename {
                var n = 1
                while fs.kind(of: "\(path).\(n).corrupt") != .missing { n += 1 }
                for name in names { try fs.rename(name, to: "\(name).\(n).corrupt") }
            } else {
                for name in names { try fs.remove(name) }
            }
            try fs.syncDirectory(files.directory)
        } catch { throw .io(error) }
        return names
    }

    /// `options` as a database shared by processes runs: no automatic, idle or dirty-page
    /// checkpoint, no spill and no index compaction (each would write index pages the other
    /// processes do not know of); checkpoints run at `checkpoint()` and close, under the
    /// writer lock.
    ///
    /// A read-only open of a database that has a shared-state file it may map (processes with
    /// multi-process support may have it open) joins them the same way: it takes a slot in the
    /// reader table, so none of them removes a file it reads, and it follows their commits.
    static func multiProcessOptions(_ options: EngineOptions, path: String) -> EngineOptions {
        var options = options
        if options.readOnly && !options.multiProcess && options.fileSystem is PosixFileSystem {
            let shared = DatabaseFiles(mainPath: path).sharedStatePath
            options.multiProcess = options.fileSystem.kind(of: shared) == .file && access(shared, R_OK | W_OK) == 0
        }
        guard options.multiProcess else { return options }
        options.checkpointThreshold = 0
        options.dirtyPageBudget = 0
        options.idleCheckpointDelay = nil
        options.indexCompactionSlack = .max
        return options
    }

    private static func openRegistered(path: String, options: EngineOptions, key: String, handled: [String],
                                       lock: (any FileLock)?, sharing: ProcessSharing? = nil) throws(StorageError) -> Engine {
        let fs = options.fileSystem
        let files = DatabaseFiles(mainPath: path)
        var storeOptions = LogStore.Options()
        storeOptions.createIfMissing = options.createIfMissing || !handled.isEmpty
        storeOptions.syncMode = options.syncMode
        storeOptions.segmentLimit = options.segmentLimit
        storeOptions.readOnly = options.readOnly
        storeOptions.cipherKey = options.cipherKey

        var replayer = Replayer(keydir: Keydir())
        replayer.extensionRecords = [:]
        var checkpointNumber: UInt32 = 0
        var replay = LogPosition(segment: 1, offset: UInt32(Format.headerSize))
        var protected: Set<UInt32> = []
        var roots: [String: [UInt8]] = [:]
        var carried: [String: CheckpointPendingExtension] = [:]
        var index: IndexFiles?
        var orphanIndexFiles: [UInt32] = []
        let descriptors = DescriptorCache(fileSystem: fs, limit: options.descriptorCacheLimit)
        // The database's keys, set by `LogStore.open` once it has unlocked the main file (before
        // `start` runs); nil for a plain database.
        var unlocked: DatabaseCipher?
        let opened = try LogStore.open(path: path, fileSystem: fs, options: storeOptions, start: { (listing, header) throws(StorageError) in
            replay = LogPosition(segment: listing.segments.first ?? 1, offset: UInt32(Format.headerSize))
            let indexFileNumbers: [UInt32]
            do throws(IOFailure) { indexFileNumbers = try files.listIndexFiles(fs) } catch { throw .io(error) }
            guard let newest = listing.checkpoints.last else {
                // No checkpoint: an empty directory; index files are left from a first
                // checkpoint that never published.
                let files = IndexFiles(files: files, fileSystem: fs, uuid: header.uuid,
                                       format: Engine.pageFormat(options.indexPageSize, encrypted: unlocked != nil),
                                       mode: options.indexReadMode, fileSizeLimit: options.indexFileSizeLimit, published: [],
                                       nextFileNumber: (indexFileNumbers.max() ?? 0) + 1, descriptors: descriptors,
                                       cipher: unlocked, pageSize: options.indexPageSize)
                replayer = Replayer(keydir: Keydir(format: files.format, source: files.source()))
                replayer.extensionRecords = [:]
                orphanIndexFiles = indexFileNumbers
                index = files
                return (replay, 0, [])
            }
            let loaded = try loadCheckpoint(newest, files: files, fs: fs, uuid: header.uuid, cipher: unlocked)
            let format = Engine.pageFormat(loaded.root.pageSize, encrypted: unlocked != nil)
            let extents = loaded.root.files.map(\.extent)
            let opened = IndexFiles(files: files, fileSystem: fs, uuid: header.uuid, format: format, mode: options.indexReadMode,
                                    fileSizeLimit: options.indexFileSizeLimit, published: extents,
                                    nextFileNumber: (indexFileNumbers.max() ?? 0) + 1, descriptors: descriptors,
                                    cipher: unlocked, pageSize: loaded.root.pageSize)
            do throws(IndexFileError) { try opened.store.open(root: loaded.root) } catch { throw error.storageError }
            let keydir = try Engine.keydir(of: loaded.root, format: format, source: opened.source())
            replayer = Replayer(keydir: keydir, usage: loaded.usage, nextRowid: max(loaded.info.nextRowid, 1))
            replayer.extensionRecords = [:]
            index = opened
            let named = Set(extents.map(\.number))
            orphanIndexFiles = indexFileNumbers.filter { !named.contains($0) }
            carried = loaded.pending
            roots = Dictionary(loaded.root.extensions.map { ($0.name, $0.bytes) }, uniquingKeysWith: { a, _ in a })
            if !roots.isEmpty || !loaded.pending.isEmpty { replayer.catchUp = ExtensionCatchUp() }
            checkpointNumber = newest
            replay = loaded.info.replay
            protected = Set(loaded.usage.keys)
            let missing = protected.filter { !listing.segments.contains($0) }.sorted()
            if !missing.isEmpty { throw .missingFiles(missing.map { Paths.fileName(of: files.segmentPath($0)) }) }
            return (replay, loaded.info.snapshot, protected)
        }, lock: .held(lock), unlocked: { unlocked = $0 }, apply: { (commit) throws(StorageError) in
            try replayer.apply(commit)
        })
        var success = false
        defer {
            if !success { opened.writer.file.close() }
        }

        var report = OpenReport()
        report.created = opened.created
        report.checkpointLoaded = checkpointNumber == 0 ? nil : checkpointNumber
        report.commitsReplayed = opened.report.commits
        report.recoveredTruncatedBytes = opened.report.truncatedBytes
        report.damagedHeaderCopy = opened.damagedHeaderCopy
        report.corruptFilesHandled = handled

        // Files an interrupted checkpoint or compaction left behind: removed, or in a
        // read-only open only left out.
        var segments: [UInt32] = []
        var compactionSegments: Set<UInt32> = []
        do throws(IOFailure) {
            func removeOrphan(_ path: String) throws(IOFailure) {
                guard !options.readOnly else { return }
                try fs.remove(path)
                report.orphansRemoved.append(path)
            }
            for number in opened.segments {
                let referenced = protected.contains(number) || number == opened.writer.segmentNumber
                if referenced && number >= replay.segment && number != opened.writer.segmentNumber,
                   try segmentKind(files.segmentPath(number), fs: fs) == .compactionSegment {
                    compactionSegments.insert(number)
                }
                if !referenced {
                    // Another process's older snapshot may still read it (multi-process support).
                    if number < replay.segment && !options.multiProcess {
                        try removeOrphan(files.segmentPath(number))
                        continue
                    }
                    if try segmentKind(files.segmentPath(number), fs: fs) == .compactionSegment {
                        try removeOrphan(files.segmentPath(number))
                        continue
                    }
                }
                segments.append(number)
            }
            for old in opened.checkpoints where old != checkpointNumber {
                try removeOrphan(files.checkpointPath(old))
            }
            for number in orphanIndexFiles {
                try removeOrphan(files.indexPath(number))
            }
            if !report.orphansRemoved.isEmpty { try fs.syncDirectory(files.directory) }
        } catch { throw .io(error) }

        var handles: [UInt32: any StorageFile] = [opened.writer.segmentNumber: opened.writer.file]
        do throws(IOFailure) {
            for number in segments where handles[number] == nil {
                handles[number] = try descriptors.open(files.segmentPath(number))
            }
        } catch { throw .io(error) }
        // An encrypted database's segments are read through their sealing, never mapped.
        var table = SegmentTable(files: handles)
        if let cipher = opened.cipher {
            var sealed: [UInt32: SegmentTable.Segment] = [:]
            for (number, file) in handles {
                let sealing = number == opened.writer.segmentNumber ? opened.writer.sealing
                    : try RecordSealing.read(file, cipher: cipher, unitType: .logRecord)
                sealed[number] = SegmentTable.Segment(file: file, sealing: sealing)
            }
            table = SegmentTable(segments: sealed)
        }

        let state = WriterState(log: opened.writer, keydir: replayer.keydir, snapshotNumber: opened.report.lastSnapshot,
                                nextRowid: replayer.nextRowid, usage: replayer.usage, segments: table,
                                lock: opened.lock, compression: options.compression, maxValueSize: options.maxValueSize,
                                checkpointNumber: checkpointNumber, checkpointReplay: replay)
        state.readOnly = options.readOnly
        state.bytesSinceCheckpoint = UInt64(opened.report.bytesScanned)
        state.rowsSinceCheckpoint = opened.report.records
        state.compactionSegments = compactionSegments
        state.mapsSegments = options.mapsSegments && opened.cipher == nil
        state.writeBufferLimit = options.writeBufferLimit
        state.dirtyPages.minimumWork = max(1, options.dirtyPageCountWork)
        state.dirtyPages.note(work: opened.report.records)   // the replayed rows dirtied pages
        state.mapSegmentsAtOpen()
        // Records the checkpoint carried come before those of the commits replayed after it. A
        // name with a replayed record catches up with the rows after its last one only (rows
        // the checkpoint lost for it came before that record).
        var pending = carried.mapValues { UnclaimedExtensions.Pending(records: $0.records, rowChangesLost: $0.rowChangesLost) }
        for (name, records) in replayer.extensionRecords ?? [:] {
            pending[name, default: .init()].records += records
            pending[name]!.rowChangesLost = false
            pending[name]!.uncovered = replayer.uncovered[name] ?? ExtensionCatchUp()
        }
        let previous = Set(roots.keys).union(pending.keys).sorted()
        let engine = Engine(path: path, files: files, options: options, uuid: opened.header.uuid, state: state, index: index!,
                            report: report, openKey: key, previousExtensionStates: previous, sharing: sharing,
                            cipher: opened.cipher)
        engine.unclaimed.load(roots: roots, pending: pending, catchUp: replayer.catchUp ?? ExtensionCatchUp())
        // Runs inside a roll, under the writer lock: the new segment joins the read table, and
        // the one rolled away from is sealed: read through the descriptor cache from now on,
        // mapped whole.
        opened.writer.onNewSegment = { [unowned state] (number: UInt32, file: any StorageFile, sealed: LogPosition) in
            state.segments = state.segments.adding(number, file, sealing: state.log.sealing)
            state.readThroughCache(sealed.segment, descriptors)
            state.mapSealedSegment(sealed)
        }
        success = true
        return engine
    }

    /// The kind byte of a segment's header (nil when the header is unreadable).
    static func segmentKind(_ path: String, fs: any FileSystem) throws(IOFailure) -> FileKindByte? {
        let file = try fs.open(path, mode: .readOnly)
        defer { file.close() }
        guard try file.size() >= Int64(Format.headerSize) else { return nil }
        let bytes = try file.readExactly(Format.headerSize, at: 0)
        return try? FileHeader.decode(bytes, path: path).kind
    }
}
