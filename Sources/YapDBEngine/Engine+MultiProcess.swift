#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
import YapDBStorage
import YapDBIndex

/// What a process holds to share its database with other processes
/// (`EngineOptions.multiProcess`; docs/architecture.md §2.6, docs/format.md §13): the mapped
/// shared-state file, the writer lock taken only while this process changes files, and the
/// shared sequence number it last caught up with.
///
/// Threading: `writerLock` is a `Mutex`; the rest is immutable or atomic.
package final class ProcessSharing: Sendable {
    let shared: SharedStateFile
    let mainPath: String
    let fileSystem: any FileSystem
    let busyTimeout: Duration
    /// The cross-process writer lock (`LockFile.acquireWriter`) and how many of this process's
    /// operations hold it: a read-write transaction and a checkpoint of one process may hold
    /// it at once (inside a process the engine's own locks order them), and it is released
    /// when the last lets go.
    private let writerLock = Mutex<(lock: (any FileLock)?, holders: Int)>((nil, 0))
    /// The shared sequence number the state of this process reflects.
    let seenSequence = Atomic<UInt64>(0)
    /// Told the snapshot number after a catch-up applied another process's commits.
    let externalChangeHandler = Mutex<(@Sendable (UInt64) -> Void)?>(nil)

    init(shared: SharedStateFile, mainPath: String, fileSystem: any FileSystem, busyTimeout: Duration) {
        self.shared = shared
        self.mainPath = mainPath
        self.fileSystem = fileSystem
        self.busyTimeout = busyTimeout
    }

    /// Maps `NAME-shm` (creating it when missing). Multi-process support needs the real file
    /// system: shared memory is not simulated.
    static func open(path: String, options: EngineOptions) throws(StorageError) -> ProcessSharing {
        guard options.fileSystem is PosixFileSystem else {
            throw .io(IOFailure(errno: ENOTSUP, operation: "multi-process support needs the POSIX file system", path: path))
        }
        let shared: SharedStateFile
        do { shared = try SharedStateFile.open(path: DatabaseFiles(mainPath: path).sharedStatePath) } catch { throw .io(error) }
        return ProcessSharing(shared: shared, mainPath: path, fileSystem: options.fileSystem, busyTimeout: options.busyTimeout)
    }

    /// Whether another process published since this one last caught up (one atomic load of
    /// shared memory, no system call).
    var isBehind: Bool { shared.sequence != seenSequence.load(ordering: .acquiring) }

    /// Takes the writer lock for this process (waiting up to `busyTimeout` when another
    /// process holds it), or joins this process's hold of it.
    /// - Throws: `locked` after `busyTimeout`; `io`.
    func acquire() throws(StorageError) {
        try writerLock.withLock { (held: inout (lock: (any FileLock)?, holders: Int)) throws(StorageError) in
            if held.holders == 0 {
                held.lock = try LockFile.acquireWriter(mainPath: mainPath, fileSystem: fileSystem, busyTimeout: busyTimeout)
            }
            held.holders += 1
        }
    }

    /// Lets go of one hold; the last releases the lock.
    func release() {
        writerLock.withLock { held in
            precondition(held.holders > 0, "ProcessSharing.release without acquire")
            held.holders -= 1
            if held.holders == 0 {
                held.lock?.unlock()
                held.lock = nil
            }
        }
    }

    /// Runs `body` holding the writer lock.
    func withWriterLock<T>(_ body: () throws(StorageError) -> T) throws(StorageError) -> T {
        try acquire()
        defer { release() }
        return try body()
    }
}

extension Engine {
    /// Sets what runs after this process caught up with another's commits (the public layer
    /// posts `YapDatabaseModifiedExternally`), with the snapshot number it caught up to. Runs
    /// on the thread whose transaction noticed, outside the engine's locks.
    package func setExternalChangeHandler(_ handler: (@Sendable (UInt64) -> Void)?) {
        sharing?.externalChangeHandler.withLock { $0 = handler }
    }

    /// Whether the engine was opened with multi-process support.
    package var sharesProcesses: Bool { sharing != nil }

    /// Catches up with commits another process published, when there are any; a cheap check
    /// otherwise. Readers call it at each transaction's start; it never waits for this
    /// process's writer (a transaction in progress has caught up already) and a failure is
    /// reported, leaving the state as it was (the next transaction tries again).
    package func catchUpIfBehind() {
        guard let sharing, sharing.isBehind else { return }
        let caughtUp: UInt64?? = writer.withLockIfAvailable { state -> UInt64? in
            guard !state.closed else { return nil }
            do throws(StorageError) { return try catchUp(state, sharing) } catch {
                options.reportFailure?("catching up with another process's commits failed: \(error)")
                return nil
            }
        }
        if let snapshot = caughtUp ?? nil { notifyExternalChange(snapshot, sharing) }
    }

    func notifyExternalChange(_ snapshot: UInt64, _ sharing: ProcessSharing) {
        if let handler = sharing.externalChangeHandler.withLock({ $0 }) { handler(snapshot) }
    }

    /// Applies the commits other processes published after this process's state (under
    /// `writer`): the log from this state's end up to the published end is replayed onto the
    /// key directory (every record checked as at open; nothing past the published end is
    /// read), the log writer follows into the segments they rolled to, and the new state is
    /// published with a changeset marked `external` (every connection's caches flush on it,
    /// YapDatabase's rule). Returns the new snapshot number, nil when there was nothing to apply.
    @discardableResult
    func catchUp(_ state: WriterState, _ sharing: ProcessSharing) throws(StorageError) -> UInt64? {
        let sequence = sharing.shared.sequence
        guard let published = sharing.shared.read(), published.uuid == uuid else {
            sharing.seenSequence.store(sequence, ordering: .releasing)
            return nil
        }
        let ours = LogPosition(segment: state.log.segmentNumber, offset: state.log.end)
        guard published.logEnd > ours else {
            sharing.seenSequence.store(sequence, ordering: .releasing)
            return nil
        }
        let listing: DatabaseFiles.Listing
        do throws(IOFailure) { listing = try files.list(fileSystem) } catch { throw .io(error) }
        var scanner = LogScanner(files: files, fileSystem: fileSystem, uuid: uuid)
        scanner.limit = published.logEnd
        var replayer = Replayer(keydir: state.keydir, usage: state.usage, nextRowid: state.nextRowid)
        var ends: [UInt32: UInt32] = [:]
        let report = try scanner.scan(segments: listing.segments, from: ours, baseSnapshot: state.snapshotNumber,
                                      repair: false) { (commit) throws(StorageError) in
            try replayer.apply(commit)
            ends[commit.end.segment] = commit.end.offset
        }
        sharing.seenSequence.store(sequence, ordering: .releasing)
        if let torn = report.tornAt {
            options.reportFailure?("another process's log is damaged at \(torn) (before its published end \(published.logEnd)): \(report.tornReason ?? "")")
        }
        guard report.commits > 0 else { return nil }
        // The log writer follows segment by segment, as if it had rolled itself.
        for (segment, end) in ends.sorted(by: { $0.key < $1.key }) {
            if segment == state.log.segmentNumber {
                state.log.follow(segment: segment, file: nil, end: end, lastSnapshot: report.lastSnapshot,
                                 durableThrough: published.durableThrough)
            } else {
                let file: any StorageFile
                do { file = try fileSystem.open(files.segmentPath(segment), mode: state.readOnly ? .readOnly : .readWrite) } catch {
                    throw .io(error)
                }
                state.log.follow(segment: segment, file: file, end: end, lastSnapshot: report.lastSnapshot,
                                 durableThrough: published.durableThrough)
            }
        }
        state.keydir = replayer.keydir
        state.usage = replayer.usage
        state.nextRowid = replayer.nextRowid
        state.snapshotNumber = report.lastSnapshot
        state.generation += 1
        state.bytesSinceCheckpoint += UInt64(max(0, report.bytesScanned))
        state.rowsSinceCheckpoint += report.records
        state.dirtyPages.note(work: report.records)
        state.remapActiveSegment(force: false)
        var changeset = Changeset(snapshot: report.lastSnapshot)
        changeset.external = true
        registry.append(changeset)
        publish(state)
        return report.lastSnapshot
    }

    /// Before a read-write transaction or a checkpoint of a process holding the writer lock
    /// (under `writer`): catch up, then cut what a writer that died left after the published
    /// end of the active segment (only the writer-lock holder repairs).
    func prepareToWrite(_ state: WriterState, _ sharing: ProcessSharing) throws(StorageError) -> UInt64? {
        let caughtUp = try catchUp(state, sharing)
        guard !state.readOnly else { return caughtUp }
        do throws(IOFailure) {
            let file = state.log.file
            if try file.size() > Int64(state.log.end) {
                try file.truncate(to: Int64(state.log.end))
                try file.sync()
            }
            // A segment another writer created and rolled back out of keeps its number taken.
            if Int(state.log.end) >= state.log.segmentLimit,
               let newest = try files.list(fileSystem).segments.last, newest >= state.log.nextSegmentNumber {
                state.log.nextSegmentNumber = newest + 1
            }
        } catch { throw .io(error) }
        return caughtUp
    }

    /// Publishes this process's state in the shared-state file (the writer-lock holder only,
    /// under `writer`, after the commit it describes is written and synced as the mode says).
    func publishShared(_ state: WriterState) {
        guard let sharing else { return }
        let previous = sharing.shared.read().flatMap { $0.uuid == uuid ? $0 : nil }
        // The newest checkpoint may be another process's (this one then never writes one).
        sharing.shared.publish(PublishedState(uuid: uuid, generation: (previous?.generation ?? 0) + 1, snapshot: state.snapshotNumber,
                                              logEnd: LogPosition(segment: state.log.segmentNumber, offset: state.log.end),
                                              durableThrough: state.log.durableThrough,
                                              checkpoint: max(previous?.checkpoint ?? 0, state.checkpointNumber)))
        sharing.seenSequence.store(sharing.shared.sequence, ordering: .releasing)
    }

    /// After open (holding the writer lock): publishes the state open found when the shared
    /// file says anything else (nothing yet, another database, or a writer that died between
    /// its sync and its publish).
    func publishOpenedState() {
        guard let sharing else { return }
        writer.withLock { state in
            let current = sharing.shared.read()
            if current?.uuid != uuid || current?.logEnd != LogPosition(segment: state.log.segmentNumber, offset: state.log.end)
                || (current?.checkpoint ?? 0) < state.checkpointNumber || current?.snapshot != state.snapshotNumber {
                guard !state.readOnly else { return }
                publishShared(state)
            } else {
                sharing.seenSequence.store(sharing.shared.sequence, ordering: .releasing)
            }
        }
    }

    /// Whether this process may write a checkpoint (holding the writer lock, under `writer`):
    /// only when no other process wrote one since this process's newest, so that the index
    /// files it appends to end where it believes they do.
    func mayCheckpoint(_ state: WriterState, _ sharing: ProcessSharing) -> Bool {
        guard let published = sharing.shared.read(), published.uuid == uuid else { return true }
        return published.checkpoint <= state.checkpointNumber
    }
}
