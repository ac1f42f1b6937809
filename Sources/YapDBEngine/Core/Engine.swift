import Synchronization
import YapDBStorage
import YapDBIndex

/// The writer's state: everything a commit reads and changes.
///
/// `@unchecked Sendable` because it is reached only through `Engine.writer`, the `Mutex` that is
/// the single-writer lock: every access happens inside `writer.withLock`, including the
/// `WriteTransaction` that borrows it for the duration of one `Engine.write` body.
final class WriterState: @unchecked Sendable {
    var log: LogWriter
    var keydir: Keydir
    var snapshotNumber: UInt64
    var generation: UInt64
    var nextRowid: UInt64
    /// Live bytes per segment.
    var usage: [UInt32: UInt64]
    var segments: SegmentTable
    var extensions: [String: any Sendable]
    var poisoned = false
    var closed = false
    /// Opened read-only (`EngineOptions.readOnly`): every write and checkpoint is refused.
    var readOnly = false
    /// The lock on `NAME-lock`; nil only for a read-only open where none could be taken.
    let lock: (any FileLock)?
    let compression: Bool
    let maxValueSize: Int
    /// Log bytes appended since the last checkpoint.
    var bytesSinceCheckpoint: UInt64 = 0
    /// Rows written since the last checkpoint (an upper bound on the dirty leaves).
    var rowsSinceCheckpoint = 0
    /// What dirty index pages the committed state holds, as last counted
    /// (`Engine+DirtyPages.swift`).
    var dirtyPages = DirtyPageGauge()
    /// Whether an index compaction has captured the state and not yet installed its copy:
    /// transactions do not spill meanwhile (a spilled page would be in none of the copied files).
    var indexCopyPending = false
    /// Whether a checkpoint has captured the state and not yet been installed or failed: no
    /// automatic checkpoint is due meanwhile (commits would only queue behind it).
    var checkpointInFlight = false
    /// Bytes a transaction's write buffer may hold before it is applied early
    /// (`EngineOptions.writeBufferLimit`).
    var writeBufferLimit = EngineOptions().writeBufferLimit
    /// Segments written by compaction (never replayed; removable once nothing points into them).
    var compactionSegments: Set<UInt32> = []
    /// Whether `segments` reads values through memory maps (`EngineOptions.mapsSegments`;
    /// Engine+SegmentMaps.swift).
    var mapsSegments = false
    /// The newest checkpoint on disk and its replay position.
    var checkpointNumber: UInt32
    var checkpointReplay: LogPosition

    init(log: LogWriter, keydir: Keydir, snapshotNumber: UInt64, nextRowid: UInt64, usage: [UInt32: UInt64], segments: SegmentTable,
         lock: (any FileLock)?, compression: Bool, maxValueSize: Int, checkpointNumber: UInt32, checkpointReplay: LogPosition) {
        self.log = log
        self.keydir = keydir
        self.snapshotNumber = snapshotNumber
        self.generation = 1
        self.nextRowid = nextRowid
        self.usage = usage
        self.segments = segments
        self.extensions = [:]
        self.lock = lock
        self.compression = compression
        self.maxValueSize = maxValueSize
        self.checkpointNumber = checkpointNumber
        self.checkpointReplay = checkpointReplay
    }
}

/// How `Engine.write` failed: the body's own error, or the engine's.
///
/// Threading: a value; safe to send anywhere.
package enum WriteFailure<BodyError: Error>: Error {
    /// The body threw `BodyError`; the transaction was rolled back and nothing was committed.
    case body(BodyError)
    /// The engine refused the transaction (`closed`, `poisoned`, `readOnly`) or failed to
    /// commit it (`io`, `corrupted`, …); nothing was committed.
    case engine(EngineError)
}

extension WriteFailure: Equatable where BodyError: Equatable {}

/// How the body of `Engine.runWriteTransaction` ended: it returned (the transaction goes on to
/// its commit), or it threw (its error kept by the caller; the transaction is rolled back).
package enum WriteBodyEnd: Sendable {
    case returned
    case threw
}

/// What opening found.
package struct OpenReport: Sendable, Equatable {
    package var created = false
    package var checkpointLoaded: UInt32?
    package var commitsReplayed = 0
    package var recoveredTruncatedBytes: Int64 = 0
    package var damagedHeaderCopy: Int?
    package var orphansRemoved: [String] = []
    /// Files renamed or deleted by the corrupt action, if it ran.
    package var corruptFilesHandled: [String] = []
}

/// The MVCC key-value engine over raw bytes (DESIGN.md §3).
///
/// - Readers call `snapshot()` and read an immutable `EngineSnapshot` without further locking.
/// - One writer at a time runs `write(_:)`, under `writer` (a `Mutex`, the single-writer lock
///   that readers never touch). A commit is appended, synced as the durability mode says,
///   and only then published by swapping `published` (a second, tiny `Mutex`).
/// - `registry` tracks read leases and changeset consumers.
///
/// Threading: every method may be called from any thread.
package final class Engine: Sendable {
    package let path: String
    package let files: DatabaseFiles
    package let fileSystem: any FileSystem
    package let options: EngineOptions
    package let uuid: [UInt8]
    /// The keys of an encrypted database (docs/format.md §12); nil for a plain one.
    package let cipher: DatabaseCipher?
    package let registry = SnapshotRegistry()
    package let openReport: OpenReport
    let published: Mutex<EngineSnapshot>
    let writer: Mutex<WriterState>
    /// Serializes checkpoints and compactions with each other (never with readers).
    let maintenance = Mutex(())
    /// The number of a checkpoint file this engine wrote under its final name but could not
    /// install (its index files could not be taken in, or a failed finish could not remove
    /// it): the next checkpoint, which takes the same number, removes it first by that exact
    /// name (Engine+Checkpoint.swift). Used under `maintenance`.
    let unpublishedCheckpoint = Mutex<UInt32?>(nil)
    /// Extension roots and records from the checkpoint, until their extensions register.
    let unclaimed = UnclaimedExtensions()
    /// When the last commit happened and whether an idle check is scheduled
    /// (`Engine+IdleCheckpoint.swift`).
    let idle = Mutex(IdleCheckpointState())
    /// Counts the pages extension trees read (`EngineOptions.countsExtensionPageReads`).
    let extensionPageReads: PageReadCounter?
    /// The index files (used under `maintenance`).
    let index: IndexFiles
    /// The bounded set of descriptors sealed segments and index files are read through
    /// (`EngineOptions.descriptorCacheLimit`).
    package var descriptors: DescriptorCache? { index.store.descriptors }
    /// When the mapped files' sizes are next compared with their maps (Engine+MappedFiles.swift).
    let mappedFileChecks: MappedFileCheckSchedule
    let openKey: String
    /// The extension states the database held at open (roots and records of the newest
    /// checkpoint and the log after it), by state name, sorted.
    package let previousExtensionStates: [String]
    /// Multi-process support (`EngineOptions.multiProcess`, Engine+MultiProcess.swift): nil
    /// for a database this process has to itself.
    let sharing: ProcessSharing?

    init(path: String, files: DatabaseFiles, options: EngineOptions, uuid: [UInt8], state: WriterState, index: IndexFiles,
         report: OpenReport, openKey: String, previousExtensionStates: [String] = [], sharing: ProcessSharing? = nil,
         cipher: DatabaseCipher? = nil) {
        self.cipher = cipher
        self.previousExtensionStates = previousExtensionStates
        self.sharing = sharing
        self.path = path
        self.files = files
        self.fileSystem = options.fileSystem
        self.options = options
        self.uuid = uuid
        self.openReport = report
        self.openKey = openKey
        self.index = index
        self.mappedFileChecks = MappedFileCheckSchedule(interval: options.mappedFileCheckInterval)
        self.extensionPageReads = options.countsExtensionPageReads ? PageReadCounter() : nil
        self.published = Mutex(EngineSnapshot(number: state.snapshotNumber, generation: state.generation, keydir: state.keydir,
                                              segments: state.segments, extensions: state.extensions))
        self.writer = Mutex(state)
    }

    deinit {
        writer.withLock { state in
            if !state.closed { Self.shutDown(state) }
        }
        index.close()
        sharing?.releaseSlot()
        OpenDatabases.remove(openKey)
    }

    // MARK: Reading

    /// The newest published snapshot. Never blocks on the writer. With multi-process support,
    /// commits another process published are caught up with first (`catchUpIfBehind`).
    package func snapshot() -> EngineSnapshot {
        if sharing != nil { catchUpIfBehind() }
        return published.withLock { $0 }
    }

    /// The newest snapshot, registered as in use for as long as the returned lease lives.
    /// With multi-process support, commits another process published are caught up with first.
    package func acquireSnapshot() -> SnapshotLease {
        if sharing != nil { catchUpIfBehind() }
        return published.withLock { snapshot in
            registry.acquire(generation: snapshot.generation)
            return SnapshotLease(snapshot: snapshot, registry: registry)
        }
    }

    // MARK: Writing

    /// Runs `body` as the one read-write transaction, then commits it.
    ///
    /// - The body's own error rolls the transaction back and is thrown as `.body(error)`;
    ///   everything the engine refuses or fails is `.engine(EngineError)`, so the caller tells
    ///   the two apart by case, with no cast (an engine error the body met and threw on, such as
    ///   a write refused inside it, is the body's: `.body`).
    /// - `tx.rollback()` or a body that changed nothing commits nothing (no snapshot bump,
    ///   no changeset).
    /// - A commit failure throws `.engine`: `io` with `ENOSPC` leaves the engine usable;
    ///   any other write or sync failure also poisons it (later writes throw `poisoned`).
    /// - `didCommit` runs after the commit is durable and published, still under the writer
    ///   lock, so successive calls see commits in order.
    /// - A closed or poisoned engine refuses the transaction with `closed` or `poisoned`: before
    ///   running the body, or, with `runsBodyWhenRefused`, after it — the body then reads the
    ///   newest state as usual, every write it makes throws the refusal, and nothing is written
    ///   (for callers that must produce the body's value whatever happens).
    /// - A read-only engine always runs the body that way (every write throws `readOnly`, and
    ///   nothing is spilled), then refuses with `readOnly` a transaction that would commit
    ///   something (`markChanged` included). One that commits nothing ends as usual: extension
    ///   state published without a commit (`publishExtensionsWithoutCommit`: an extension
    ///   registering over its stored trees) is published.
    /// - With multi-process support the transaction first takes the writer lock shared by the
    ///   processes (waiting up to `busyTimeout`; `locked` after it, a refusal like the others)
    ///   and catches up with their commits; it holds the lock until its commit is published.
    /// - Returns: the body's value and the changeset, nil when nothing was committed.
    package func write<T, E: Error>(_ body: (WriteTransaction) throws(E) -> T, runsBodyWhenRefused: Bool = false,
                                    didCommit: (Changeset) -> Void = { _ in }) throws(WriteFailure<E>) -> (value: T, changeset: Changeset?) {
        var value: T?
        var failure: E?
        let changeset: Changeset?
        do throws(EngineError) {
            changeset = try runWriteTransaction(runsBodyWhenRefused: runsBodyWhenRefused, didCommit: didCommit) { tx in
                do throws(E) {
                    value = try body(tx)
                    return .returned
                } catch {
                    failure = error
                    return .threw
                }
            }
        } catch {
            throw .engine(error)
        }
        if let failure { throw .body(failure) }
        return (value.unsafelyUnwrapped, changeset)
    }

    /// `write(_:runsBodyWhenRefused:didCommit:)` without generics, for a caller in another
    /// module on a hot path (the public layer's `readWrite`): generic code is not specialized
    /// across the module boundary, so the generic form would look up the metadata of
    /// `WriteFailure<E>` at run time on every transaction. The body keeps its own value and
    /// error in the caller's variables and says how it ended; the rules are `write`'s.
    /// - Returns: the changeset, or nil when nothing was committed (also after a body that
    ///   `.threw`, which was rolled back, whatever the engine would have refused).
    /// - Throws: the engine's refusal or commit failure (never for a body that `.threw`).
    package func runWriteTransaction(runsBodyWhenRefused: Bool = false, didCommit: (Changeset) -> Void = { _ in },
                                     _ body: (WriteTransaction) -> WriteBodyEnd) throws(EngineError) -> Changeset? {
        var caughtUp: UInt64?
        let changeset: Changeset? = try writer.withLock { (state) throws(EngineError) -> Changeset? in
            var refusal: EngineError? = state.closed ? .closed : state.readOnly ? .readOnly
                : (state.poisoned || state.log.isPoisoned) ? .poisoned : nil
            // Multi-process support: the shared writer lock, then the other processes' commits.
            var holdsSharedLock = false
            defer { if holdsSharedLock { sharing?.release() } }
            if let sharing, refusal == nil || refusal == .readOnly {
                do throws(StorageError) {
                    if refusal == nil {
                        try sharing.acquire()
                        holdsSharedLock = true
                        caughtUp = try prepareToWrite(state, sharing)
                    } else {
                        caughtUp = try catchUp(state, sharing)
                    }
                } catch {
                    refusal = EngineError(error)
                }
            }
            if let refusal, !runsBodyWhenRefused, refusal != .readOnly { throw refusal }
            let tx = WriteTransaction(state: state, refusal: refusal, spillTarget: state.readOnly ? nil : spillTarget)
            guard body(tx) == .returned else {
                if tx.began { state.log.rollback() }
                unclaimed.undoClaims()
                return nil
            }
            // A read-only engine refuses only a transaction that would commit something.
            if let refusal, refusal != .readOnly || tx.hasChanges {
                unclaimed.undoClaims()
                throw refusal
            }
            guard !tx.isRolledBack, tx.hasChanges else {
                if tx.began { state.log.rollback() }
                if !tx.isRolledBack && tx.extensionsOnly {
                    publishExtensionsOnly(tx, state: state)
                } else {
                    // Extension state claimed by a transaction that publishes nothing (a
                    // registration that failed) is unclaimed again.
                    unclaimed.undoClaims()
                }
                return nil
            }
            let changeset: Changeset
            do throws(EngineError) {
                changeset = try commit(tx, state: state)
            } catch {
                unclaimed.undoClaims()
                throw error
            }
            didCommit(changeset)
            return changeset
        }
        if let caughtUp, let sharing { notifyExternalChange(caughtUp, sharing) }
        // The commit is durable and published: a failed automatic checkpoint must not report
        // it as failed. The log is intact, a failed log sync has poisoned the engine (later
        // writes throw `poisoned`), and the next checkpoint — due, explicit or at close —
        // tries again.
        if changeset != nil {
            do throws(StorageError) { try checkpointIfDue() } catch { reportCheckpointFailure(error, during: "an automatic checkpoint") }
            noteCommitForIdleCheckpoint()
        }
        return changeset
    }

    /// Publishes a transaction's extension state without a commit (under the writer lock).
    private func publishExtensionsOnly(_ tx: WriteTransaction, state: WriterState) {
        state.extensions = tx.extensions
        state.generation += 1
        publish(state)
        unclaimed.keepClaims()
    }

    /// Where write transactions spill their dirty index pages; nil when the budget is 0.
    private var spillTarget: SpillTarget? {
        guard options.dirtyPageBudget > 0 else { return nil }
        return SpillTarget(index: index, budget: options.dirtyPageBudget, pageSize: options.indexPageSize,
                           extensionSource: { [self] source in extensionSource(source) })
    }

    /// Appends, syncs and publishes a transaction (under the writer lock).
    private func commit(_ tx: WriteTransaction, state: WriterState) throws(EngineError) -> Changeset {
        let number = state.snapshotNumber + 1
        let startEnd = state.log.end
        let startSegment = state.log.segmentNumber
        do throws(EngineError) {
            // The buffered rows join the trees first: a damaged page fails the commit here,
            // before the commit record is written.
            try tx.applyBuffer(spilling: false)
            try engineBoundary { () throws(StorageError) in
                if !tx.began { try state.log.begin() }
                _ = try state.log.commit(snapshot: number)
            }
        } catch {
            if state.log.inTransaction { state.log.rollback() }
            if state.log.isPoisoned { state.poisoned = true }
            throw error
        }
        if state.log.segmentNumber == startSegment {
            state.bytesSinceCheckpoint += UInt64(state.log.end - startEnd)
        } else {
            state.bytesSinceCheckpoint += UInt64(state.log.end)
        }
        state.keydir = tx.keydir
        state.rowsSinceCheckpoint += tx.changeset.changeCount
        state.dirtyPages.committed(tx.dirtyPages)
        state.snapshotNumber = number
        state.generation += 1
        state.nextRowid = tx.nextRowid
        state.usage = tx.usage
        state.extensions = tx.extensions
        state.remapActiveSegment(force: false)
        var changeset = tx.changeset
        changeset.snapshot = number
        // The changeset first: a reader that sees the new snapshot must find its changeset,
        // or it would sync its caches past a commit it never applied.
        registry.append(changeset)
        unclaimed.recordChanges(changeset, records: tx.extensionRecords)
        publish(state)
        publishShared(state)
        return changeset
    }

    /// Makes the writer's state the published snapshot.
    func publish(_ state: WriterState) {
        let snapshot = EngineSnapshot(number: state.snapshotNumber, generation: state.generation, keydir: state.keydir,
                                      segments: state.segments, extensions: state.extensions)
        published.withLock { $0 = snapshot }
    }

    /// Sets extension state outside a user transaction (registration), publishing it.
    package func updateExtensions(_ update: (inout [String: any Sendable]) -> Void) {
        writer.withLock { state in
            update(&state.extensions)
            state.generation += 1
            publish(state)
        }
    }

    // MARK: Lifecycle

    /// Whether `close()` ran.
    package var isClosed: Bool { writer.withLock { $0.closed } }

    /// Whether a failed commit poisoned the engine.
    package var isPoisoned: Bool { writer.withLock { $0.poisoned || $0.log.isPoisoned } }

    /// Closes the engine: writes a checkpoint when the log grew since the last one, syncs,
    /// releases the lock. Later calls throw `closed`. Closing twice is harmless. A read-only
    /// engine writes nothing: it only lets its files and its lock go.
    package func close() throws(EngineError) {
        var failure: EngineError?
        do throws(StorageError) { try checkpoint(onlyIfLogGrew: true) } catch {
            if error != .closed && error != .poisoned && error != .readOnly { failure = EngineError(error) }
        }
        writer.withLock { state in
            guard !state.closed else { return }
            Self.shutDown(state)
        }
        maintenance.withLock { _ in index.close() }
        sharing?.releaseSlot()
        OpenDatabases.remove(openKey)
        if let failure { throw failure }
    }

    /// Stops using the files without writing or syncing anything, as if the process had died
    /// (crash tests call this after a simulated power cut). Later calls throw `closed`.
    package func abandon() {
        writer.withLock { state in
            guard !state.closed else { return }
            state.lock?.unlock()
            state.closed = true
        }
        maintenance.withLock { _ in index.close() }
        OpenDatabases.remove(openKey)
    }

    static func shutDown(_ state: WriterState) {
        if !state.readOnly && !state.poisoned && !state.log.isPoisoned && state.log.syncMode != .full {
            try? state.log.syncCommitted()
        }
        // Handles are not closed here: snapshots still held by readers share them, and each
        // handle closes itself when its last holder lets go. The main file's writable handle
        // (the high-water mark's) is the engine's alone: it closes now, so a closed database
        // holds nothing open for writing (a read-only remount, an unmount) whoever still
        // holds the engine.
        state.log.highWaterMark?.file.close()
        state.lock?.unlock()
        state.closed = true
    }
}

/// The databases this process has open, so a second open of the same files fails with
/// `alreadyOpen` instead of fighting over them.
enum OpenDatabases {
    static let open = Mutex(Set<String>())

    static func insert(_ key: String) -> Bool { open.withLock { $0.insert(key).inserted } }
    static func remove(_ key: String) { _ = open.withLock { $0.remove(key) } }
}
