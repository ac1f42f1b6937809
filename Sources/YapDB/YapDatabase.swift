import Foundation
import Synchronization
import YapDBStorage
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
    /// Commits' notifications are posted here, one at a time, in commit order.
    let notificationQueue = DispatchQueue(label: "YapDB.notifications")
    /// The thread posting notifications right now (0: none); a commit made by an observer on
    /// that thread only queues its notification, and the running post loop posts it.
    let postingThread = Atomic<UInt>(0)
    /// Notifications of committed transactions not posted yet, in commit order.
    let pendingNotifications = Mutex<[NotificationBox]>([])
    /// Completion blocks run here when no queue is given (off Apple platforms).
    let defaultCompletionQueue = DispatchQueue(label: "YapDB.completions")
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
    ///   has it), `readOnly`, `io`.
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
    }

    /// - Parameters:
    ///   - fileSystem: the files the engine uses; the real one except in the fuzz harness
    ///     (see `YapDatabase+Harness.swift`).
    ///   - segmentLimit: the size at which log segments roll; nil keeps the engine's default.
    static func openEngine(url: URL, options: YapDatabaseOptions, fileSystem: any FileSystem = PosixFileSystem.shared,
                           segmentLimit: Int? = nil, harness: HarnessTuning = HarnessTuning()) throws(YapDatabaseError) -> Engine {
        guard url.isFileURL else { throw .io(errno: EINVAL, operation: "open: not a file URL") }
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
        engineOptions.maxValueSize = min(max(0, options.maxValueSize), Format.maxValueSize)
        engineOptions.checkpointThreshold = max(0, options.checkpointThreshold)
        engineOptions.compactionThreshold = options.compactionThreshold
        engineOptions.fileSystem = fileSystem
        if let segmentLimit { engineOptions.segmentLimit = segmentLimit }
        if let pageSize = harness.indexPageSize { engineOptions.indexPageSize = pageSize }
        engineOptions.countsExtensionPageReads = harness.countsExtensionPageReads
        do throws(StorageError) {
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
    public func checkpoint() throws(YapDatabaseError) {
        do throws(StorageError) { try engine.checkpoint() } catch { throw YapDatabaseError(error) }
    }

    /// Rewrites segments whose dead fraction passes `options.compactionThreshold` and
    /// removes the old ones, then compacts the index: the key directory is copied into a new
    /// index file and the older index files, which hold the replaced versions of its pages,
    /// are removed (checkpoints also do this on their own once the index files pass about
    /// twice the size of the last copy). Readers never wait for it; a crash at any step loses
    /// nothing.
    /// - Throws: `YapDatabaseError` on an I/O failure or a damaged index page, or when the
    ///   database is closed.
    /// - Threading: any thread; runs one maintenance operation at a time.
    public func compact() throws(YapDatabaseError) {
        do throws(StorageError) { _ = try engine.compact() } catch { throw YapDatabaseError(error) }
    }

    /// Checks every checksum, the commit sequence, and that the index equals a rebuild from
    /// the log, and that each registered extension (a secondary index) equals a rebuild from its
    /// blocks. Problems are in the report; it throws only when it cannot read at all.
    public func verify() throws(YapDatabaseError) -> YapDatabaseIntegrityReport {
        do throws(StorageError) {
            let report = try engine.verify()
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
        do throws(StorageError) {
            let stats = try engine.stats()
            return YapDatabaseStats(fileBytes: stats.fileBytes, liveBytes: stats.liveBytes, deadBytes: stats.deadBytes,
                                    rowCount: stats.rowCount, snapshot: stats.snapshot,
                                    recoveredTruncatedBytes: stats.recoveredTruncatedBytes, indexBytes: stats.indexFileBytes,
                                    hasUnwrittenIndexChanges: stats.hasUnwrittenIndexChanges)
        } catch { throw YapDatabaseError(error) }
    }

    /// Closes the database: writes a checkpoint if the log grew, syncs, and releases the
    /// files. Later use of the database or its connections throws (or reports) `closed`.
    public func close() throws(YapDatabaseError) {
        closedFlag.store(true, ordering: .releasing)
        defer { finishChangeStreams() }
        do throws(StorageError) { try engine.close() } catch { throw YapDatabaseError(error) }
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

/// Sizes and counts of a database.
public struct YapDatabaseStats: Sendable, Equatable {
    /// Bytes of every file of the database.
    public var fileBytes: Int64
    /// Bytes of the current values.
    public var liveBytes: Int64
    /// Bytes compaction could reclaim (old versions, removals, framing).
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
}
