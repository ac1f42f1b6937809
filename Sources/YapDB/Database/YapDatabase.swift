import Foundation
import Synchronization
import YapDBEngine

/// A database: the files at `databaseURL`, the serializers registered for it, and the
/// extensions. Create connections with `newConnection()` and read and write through them.
///
/// One live instance per file per process. The database closes when the last reference to it
/// (it and its connections) goes away, or explicitly with `close()`.
///
/// Threading: every member may be used from any thread.
public final class YapDatabase: Sendable {
    /// The main file's URL; the other files sit beside it with the same name as prefix.
    public let databaseURL: URL
    let storedOptions: YapDatabaseOptions
    let engine: Engine
    let registry = SerializationRegistry()
    let extensionRegistry = ExtensionRegistry()
    /// Off Apple platforms, the serial queue that stands in for the main queue: notifications
    /// are posted here and completion blocks given no queue run here (`notificationQueue`).
    let mainQueueStandIn = DispatchQueue(label: "YapDB.notifications")
    /// Registrations and unregistrations run here, one at a time, in the order they were made
    /// (`register` waits its turn; `asyncRegister` queues it).
    let registrationQueue = DispatchQueue(label: "YapDB.registrations")
    /// Marks `registrationQueue`, so a registration made from inside one runs inline.
    static let registrationQueueKey = DispatchSpecificKey<ObjectIdentifier>()
    let changeStreams = Mutex<[UInt64: AsyncStream<YapDatabaseChangeset>.Continuation]>([:])
    let nextStreamID = Atomic<UInt64>(1)
    let nextConnectionID = Atomic<UInt64>(1)
    /// Set by `close()` and `abandon()`: read by transactions without taking the writer's lock.
    let closedFlag = Atomic<Bool>(false)

    /// The connection settings new connections start with.
    public let connectionDefaults = YapDatabaseConnectionConfig()

    // MARK: Opening

    /// Opens (creating it if missing and allowed) the database at `url`, or returns nil; the
    /// error goes to the log handler. Prefer `open(url:options:)`, which says what failed.
    public convenience init?(url: URL) {
        self.init(url: url, options: nil)
    }

    /// Opens the database at `url` with `options` (nil: the defaults), or returns nil; the
    /// error goes to the log handler. Prefer `open(url:options:)`, which says what failed.
    public convenience init?(url: URL, options: YapDatabaseOptions?) {
        let options = options ?? YapDatabaseOptions()
        let engine: Engine
        do throws(YapDatabaseError) {
            engine = try Self.openEngine(url: url, options: options)
        } catch {
            YapDatabaseLogging.log(.error, "could not open \(url.path): \(error)")
            return nil
        }
        self.init(engine: engine, url: url, options: options)
    }

    /// Opens (creating it if missing and `options.createIfMissing`) the database at `url`.
    ///
    /// - Throws: `fileNotFound`, `notADatabase`, `unsupportedVersion`, `corrupted` (with
    ///   `corruptAction` `.fail`), `locked` (another process has it), `alreadyOpen` (this process
    ///   has it), `readOnly`, `io`; for encrypted databases (docs/format.md §12)
    ///   `keyUnavailable` (the database is encrypted and no key was given, or a cipher key
    ///   source gave none) and `wrongKey` (the key does not open it, or a key was given for a
    ///   plain database). Neither changes any file, whatever `corruptAction` says.
    public static func open(url: URL, options: YapDatabaseOptions = YapDatabaseOptions()) throws(YapDatabaseError) -> YapDatabase {
        YapDatabase(engine: try openEngine(url: url, options: options), url: url, options: options)
    }

    init(engine: Engine, url: URL, options: YapDatabaseOptions) {
        self.engine = engine
        self.databaseURL = url
        self.storedOptions = options.copy()
        for damaged in engine.openReport.corruptFilesHandled {
            YapDatabaseLogging.log(.warning, "damaged database file set aside (\(options.corruptAction)): \(damaged)")
        }
        if let copy = engine.openReport.damagedHeaderCopy {
            YapDatabaseLogging.log(.warning, "\(url.path): header copy \(copy) is damaged; opened with the other copy")
        }
        if engine.openReport.recoveredTruncatedBytes > 0 {
            YapDatabaseLogging.log(.info, "\(url.path): recovery cut a torn tail of \(engine.openReport.recoveredTruncatedBytes) bytes")
        }
        registrationQueue.setSpecific(key: Self.registrationQueueKey, value: ObjectIdentifier(self))
        engine.setExternalChangeHandler { [weak self] _ in self?.didCatchUpExternally() }
    }

    /// - Parameters:
    ///   - fileSystem: the files the engine uses; the real one except in the fuzz harness
    ///     (see `YapDatabase+Harness.swift`).
    ///   - segmentLimit: the size at which log segments roll; nil keeps the engine's default.
    ///   - indexPageSize: the index page size of a new database; nil keeps the engine's default.
    ///   - countsExtensionPageReads: count the pages views' trees read (tests).
    ///   - descriptorCacheLimit: the most idle descriptors of sealed files (tests); nil keeps
    ///     the engine's default.
    static func openEngine(url: URL, options: YapDatabaseOptions, fileSystem: any FileSystem = PosixFileSystem.shared,
                           segmentLimit: Int? = nil, indexPageSize: Int? = nil,
                           countsExtensionPageReads: Bool = false, idleCheckpoints: Bool = true,
                           mappedFileCheckInterval: Duration? = nil,
                           descriptorCacheLimit: Int? = nil) throws(YapDatabaseError) -> Engine {
        guard url.isFileURL else { throw .io(errno: EINVAL, operation: "open: not a file URL") }
        let cipherKey = try engineCipherKey(options)
        PosixFileSystem.reportIgnoredErrors { failure in
            YapDatabaseLogging.log(.warning, "directory sync not possible here, ignored: \(failure)")
        }
        var engineOptions = EngineOptions()
        engineOptions.createIfMissing = options.createIfMissing
        engineOptions.corruptAction = switch options.corruptAction {
        case .fail: .fail
        case .rename: .rename
        case .delete: .delete
        }
        engineOptions.syncMode = switch options.durability {
        case .full: .full
        case .normal: .normal
        case .off: .off
        }
        engineOptions.compression = options.compression == .lz4
        engineOptions.maxValueSize = min(max(0, options.maxValueSize), EngineOptions.largestValueSize)
        engineOptions.checkpointThreshold = max(0, options.checkpointThreshold)
        engineOptions.compactionThreshold = options.compactionThreshold
        engineOptions.dirtyPageBudget = max(0, options.dirtyPageBudget)
        engineOptions.writeBufferLimit = max(4 << 10, options.writeBufferLimit)
        engineOptions.reportFailure = { message in YapDatabaseLogging.log(.error, message) }
        engineOptions.indexReadMode = switch options.indexReadMode {
        case .memoryMapped: .mapped
        case .cached(let pages): .cached(pages: max(1, pages))
        }
        if idleCheckpoints, options.idleCheckpointDelay > 0, options.idleCheckpointDelay.isFinite {
            engineOptions.idleCheckpointDelay = .milliseconds(Int64(min(options.idleCheckpointDelay, 86_400) * 1000))
        }
        engineOptions.fileSystem = fileSystem
        if let segmentLimit { engineOptions.segmentLimit = segmentLimit }
        if let indexPageSize { engineOptions.indexPageSize = indexPageSize }
        engineOptions.countsExtensionPageReads = countsExtensionPageReads
        if let mappedFileCheckInterval { engineOptions.mappedFileCheckInterval = mappedFileCheckInterval }
        if let descriptorCacheLimit { engineOptions.descriptorCacheLimit = descriptorCacheLimit }
        engineOptions.readOnly = options.readOnly
        engineOptions.busyTimeout = YapDatabaseOptions.busyTimeoutDuration(options.busyTimeout)
        engineOptions.multiProcess = options.enableMultiProcessSupport
        engineOptions.cipherKey = cipherKey
        do throws(EngineError) {
            return try Engine.open(path: url.path, options: engineOptions)
        } catch {
            throw YapDatabaseError(error)
        }
    }

    // MARK: State

    /// A copy of the options the database was opened with.
    public var options: YapDatabaseOptions { storedOptions.copy() }

    /// The newest committed snapshot: 0 for a new database, +1 per read-write transaction that
    /// changed anything (touches included). Persisted.
    public var snapshot: UInt64 { engine.snapshot().number }

    // MARK: Connections

    /// A new connection with `connectionDefaults`.
    public func newConnection() -> YapDatabaseConnection {
        newConnection(nil)
    }

    /// A new connection with `config` (or `connectionDefaults` when nil).
    public func newConnection(_ config: YapDatabaseConnectionConfig?) -> YapDatabaseConnection {
        YapDatabaseConnection(database: self, config: (config ?? connectionDefaults).copy())
    }

    // MARK: Logging

    /// Replaces the process-wide log handler. The default prints errors and warnings to
    /// standard error. Handlers run on the thread that logs.
    public static func setLogHandler(_ handler: @escaping @Sendable (YapDatabaseLogMessage) -> Void) {
        YapDatabaseLogging.setHandler(handler)
    }

    // MARK: Maintenance (native)

    /// Writes a checkpoint now, so the next open reads it instead of scanning the log.
    /// Throws `readOnly` when the database was opened read-only.
    public func checkpoint() throws(YapDatabaseError) {
        do throws(EngineError) { try engine.checkpoint() } catch { throw YapDatabaseError(error) }
    }

    /// Rewrites segments whose dead fraction passes `options.compactionThreshold` and
    /// removes the old ones, then compacts the index: the key directory is copied into a new
    /// index file and the older index files, which hold the replaced versions of its pages,
    /// are removed (checkpoints also do this on their own once the index files pass about
    /// twice the size of the last copy). Readers never wait for it; a crash at any step loses
    /// nothing.
    /// - Throws: `YapDatabaseError` on an I/O failure or a damaged index page, when the
    ///   database is closed, or `readOnly` when it was opened read-only.
    /// - Threading: any thread; runs one maintenance operation at a time.
    public func compact() throws(YapDatabaseError) {
        do throws(EngineError) { _ = try engine.compact() } catch { throw YapDatabaseError(error) }
    }

    /// Checks every checksum, the commit sequence, and that the index equals a rebuild from
    /// the log, and that each registered extension (a secondary index) equals a rebuild from its
    /// blocks. Problems are in the report; it throws only when it cannot read at all.
    ///
    /// - Parameter progress: called during the check with how far it got (see
    ///   ``YapDatabaseVerifyProgress``), at most every 1,024 pages, commits or records and once
    ///   at the end; `nil` (the default) for none.
    /// - Throws: `closed`; `io` when the files cannot be listed.
    /// - Threading: any thread; `progress` runs on the calling thread while writes wait, so it
    ///   must not use the database.
    public func verify(progress: ((YapDatabaseVerifyProgress) -> Void)? = nil) throws(YapDatabaseError) -> YapDatabaseIntegrityReport {
        do throws(EngineError) {
            let report = try engine.verify(progress: progress.map { report in
                { (step: VerifyProgress) in
                    report(YapDatabaseVerifyProgress(pagesWalked: step.pagesWalked, commitsReplayed: step.commitsReplayed,
                                                     recordsRead: step.recordsRead, recordsTotal: step.recordsTotal))
                }
            })
            let extensionProblems = verifyExtensions()
            return YapDatabaseIntegrityReport(isValid: report.isValid && extensionProblems.isEmpty,
                                              problems: report.problems + extensionProblems, commitsChecked: report.commitsChecked,
                                              recordsChecked: report.recordsChecked, bytesChecked: report.bytesChecked)
        } catch { throw YapDatabaseError(error) }
    }

    /// The problems each registered extension finds when it checks its stored state against a
    /// rebuild (one read transaction at the newest snapshot).
    private func verifyExtensions() -> [String] {
        let registered = extensionRegistry.all
        guard !registered.isEmpty else { return [] }
        return newConnection().read { transaction in
            registered.flatMap { $0.ext.verifyState(name: $0.name, transaction: transaction) }
        }
    }

    /// Sizes and counts of the database.
    public func stats() throws(YapDatabaseError) -> YapDatabaseStats {
        do throws(EngineError) {
            let stats = try engine.stats()
            return YapDatabaseStats(fileBytes: stats.fileBytes, liveBytes: stats.liveBytes, deadBytes: stats.deadBytes,
                                    rowCount: stats.rowCount, snapshot: stats.snapshot,
                                    recoveredTruncatedBytes: stats.recoveredTruncatedBytes, indexBytes: stats.indexFileBytes,
                                    hasUnwrittenIndexChanges: stats.hasUnwrittenIndexChanges,
                                    segmentBytes: stats.segmentBytes, indexPageSize: stats.indexPageSize, indexPages: stats.indexPages,
                                    indexLiveBytes: stats.indexLiveBytes, indexDeadBytes: stats.indexDeadBytes,
                                    unwrittenIndexPages: stats.unwrittenIndexPages, checkpointBytes: stats.checkpointBytes,
                                    deadCheckpointBytes: stats.deadCheckpointBytes)
        } catch { throw YapDatabaseError(error) }
    }

    /// Closes the database: writes a checkpoint if the log grew, syncs, and releases the
    /// files. Later use of the database or its connections throws (or reports) `closed`.
    public func close() throws(YapDatabaseError) {
        closedFlag.store(true, ordering: .releasing)
        defer { finishChangeStreams() }
        do throws(EngineError) { try engine.close() } catch { throw YapDatabaseError(error) }
    }

    /// Whether `close()` was called (one atomic load; never waits for the writer).
    var isClosed: Bool { closedFlag.load(ordering: .acquiring) }

    deinit { finishChangeStreams() }
}

/// What `verify()` found.
public struct YapDatabaseIntegrityReport: Sendable, Equatable {
    /// True when no problem was found.
    public var isValid: Bool
    /// One line per problem.
    public var problems: [String]
    /// Commits whose records were checked.
    public var commitsChecked: Int
    /// Records whose checksums were checked.
    public var recordsChecked: Int
    /// Bytes read and checked.
    public var bytesChecked: Int64
}

/// How far ``YapDatabase/verify(progress:)`` has got. Every figure only grows from one report
/// to the next; the last report has `recordsRead == recordsTotal`.
public struct YapDatabaseVerifyProgress: Sendable, Equatable {
    /// Index pages read so far (checking the index page by page, rebuilding it from the log,
    /// comparing the two, listing the records; a page read twice counts twice).
    public var pagesWalked: Int
    /// Commits of the log replayed so far.
    public var commitsReplayed: Int
    /// Value records read and checked so far.
    public var recordsRead: Int
    /// Value records to read in all; 0 until the index has been listed.
    public var recordsTotal: Int
}

/// Sizes and counts of a database, per kind of file: log segments (the values), index files
/// (the index's pages) and the checkpoint.
public struct YapDatabaseStats: Sendable, Equatable {
    /// Bytes of every file of the database.
    public var fileBytes: Int64
    /// Log segments: bytes of the current values.
    public var liveBytes: Int64
    /// Log segments: bytes compaction could reclaim (old versions, removals, framing).
    public var deadBytes: Int64
    /// Rows in all collections.
    public var rowCount: Int
    /// The newest committed snapshot.
    public var snapshot: UInt64
    /// Bytes of torn tail the last open cut off.
    public var recoveredTruncatedBytes: Int64
    /// Bytes of the index files (the key directory's pages), part of `fileBytes`.
    public var indexBytes: Int64 = 0
    /// Whether changes to the key directory are held in memory, waiting for the next index
    /// checkpoint (`checkpoint()`, automatic, or at close).
    public var hasUnwrittenIndexChanges = false
    /// Log segments: bytes of every segment (``liveBytes`` + ``deadBytes``).
    public var segmentBytes: Int64 = 0
    /// The index files' page size in bytes.
    public var indexPageSize = 0
    /// Pages in the index files, each file's header page included (``indexBytes`` / ``indexPageSize``).
    public var indexPages = 0
    /// Index files: bytes of the pages the current index references (plus each file's header).
    public var indexLiveBytes: Int64 = 0
    /// Index files: bytes of older versions of pages, reclaimed by index compaction.
    public var indexDeadBytes: Int64 = 0
    /// Index pages changed since the last index checkpoint and held only in memory (dirty).
    public var unwrittenIndexPages = 0
    /// Checkpoint: bytes of the newest checkpoint file (all live).
    public var checkpointBytes: Int64 = 0
    /// Checkpoint: bytes of older checkpoint files not yet removed (dead).
    public var deadCheckpointBytes: Int64 = 0
}
