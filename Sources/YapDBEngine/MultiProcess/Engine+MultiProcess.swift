#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
import YapDBStorage
import YapDBIndex

/// What a process holds to share its database with other processes
/// (`EngineOptions.multiProcess`; docs/format.md §14): the mapped
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
    /// This process's slot in the reader table, once claimed.
    private let slot = Mutex<(index: Int, slot: SharedStateFile.Slot)?>(nil)

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

    /// Takes the writer lock for this process (waiting up to `busyTimeout`, or `wait` when
    /// given, while another process holds it), or joins this process's hold of it.
    /// - Throws: `locked` after the wait; `io`.
    func acquire(wait: Duration? = nil) throws(StorageError) {
        try writerLock.withLock { (held: inout (lock: (any FileLock)?, holders: Int)) throws(StorageError) in
            if held.holders == 0 {
                held.lock = try LockFile.acquireWriter(mainPath: mainPath, fileSystem: fileSystem, busyTimeout: wait ?? busyTimeout)
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

    /// Takes a slot of the reader table for this process (with the writer lock held, at open),
    /// freeing those of processes that are gone.
    /// - Throws: `locked` when every slot holds a live process.
    func claimSlot() throws(StorageError) {
        let me = ProcessIdentity.current()
        guard let index = shared.claimSlot(me, isLive: ProcessIdentity.isLive) else { throw .locked(path: mainPath) }
        slot.withLock { $0 = (index, me) }
    }

    /// Frees this process's slot (at close; harmless twice).
    func releaseSlot() {
        guard let held = slot.withLock({ current in defer { current = nil }; return current }) else { return }
        shared.releaseSlot(held.index, holding: held.slot)
    }

    /// Whether no other live process has the database open (with the writer lock held, so
    /// none can open meanwhile): the slots of processes that are gone are freed first. Then
    /// this process may remove files and compact as a process that has the database to itself.
    func isAlone() -> Bool {
        let mine = slot.withLock { $0?.index }
        return shared.reclaimStaleSlots(isLive: ProcessIdentity.isLive).keys.allSatisfy { $0 == mine }
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
    /// YapDatabase's rule). When another process wrote a newer checkpoint, the key directory is
    /// reloaded from it instead (`reloadFromCheckpoint`), which lets go of the changes held in
    /// memory and lets this process write checkpoints again. Returns the new snapshot number,
    /// nil when there was no commit to apply.
    @discardableResult
    func catchUp(_ state: WriterState, _ sharing: ProcessSharing) throws(StorageError) -> UInt64? {
        let sequence = sharing.shared.sequence
        guard let published = sharing.shared.read(), published.uuid == uuid else {
            sharing.seenSequence.store(sequence, ordering: .releasing)
            return nil
        }
        let ours = LogPosition(segment: state.log.segmentNumber, offset: state.log.end)
        if published.checkpoint > state.checkpointNumber {
            do throws(StorageError) {
                let caughtUp = try reloadFromCheckpoint(state, published)
                sharing.seenSequence.store(sequence, ordering: .releasing)
                return caughtUp
            } catch {
                // The checkpoint went (a newer one replaced it): the log still has every commit.
                options.reportFailure?("reloading another process's checkpoint \(published.checkpoint) failed, replaying the log instead: \(error)")
            }
        }
        guard published.logEnd > ours else {
            sharing.seenSequence.store(sequence, ordering: .releasing)
            return nil
        }
        var replayer = Replayer(keydir: state.keydir, usage: state.usage, nextRowid: state.nextRowid)
        let report = try replay(&replayer, after: ours, baseSnapshot: state.snapshotNumber, to: published, state: state)
        sharing.seenSequence.store(sequence, ordering: .releasing)
        guard report.commits > 0 else { return nil }
        state.bytesSinceCheckpoint += UInt64(max(0, report.bytesScanned))
        state.rowsSinceCheckpoint += report.records
        state.dirtyPages.note(work: report.records)
        return adopt(replayer, report: report, state: state)
    }

    /// Replays onto `replayer` the commits after `start` (a commit boundary whose snapshot is
    /// `baseSnapshot`) up to the published end, and moves the log writer along every segment
    /// with a commit past its own end (as if it had rolled itself). When the writer's end is
    /// before `start`, the scan starts there: the commits in between move the writer but are
    /// not replayed.
    private func replay(_ replayer: inout Replayer, after start: LogPosition, baseSnapshot: UInt64, to published: PublishedState,
                        state: WriterState) throws(StorageError) -> ScanReport {
        let listing: DatabaseFiles.Listing
        do throws(IOFailure) { listing = try files.list(fileSystem) } catch { throw .io(error) }
        var scanner = LogScanner(files: files, fileSystem: fileSystem, uuid: uuid)
        scanner.cipher = state.log.cipher
        scanner.limit = published.logEnd
        let ours = LogPosition(segment: state.log.segmentNumber, offset: state.log.end)
        var ends: [UInt32: UInt32] = [:]
        let from = min(ours, start)
        let report = try scanner.scan(segments: listing.segments, from: from, baseSnapshot: from == start ? baseSnapshot : state.snapshotNumber,
                                      repair: false) { (commit) throws(StorageError) in
            if commit.end > start { try replayer.apply(commit) }
            if commit.end > ours { ends[commit.end.segment] = commit.end.offset }
        }
        if let torn = report.tornAt {
            options.reportFailure?("another process's log is damaged at \(torn) (before its published end \(published.logEnd)): \(report.tornReason ?? "")")
        }
        for (segment, end) in ends.sorted(by: { $0.key < $1.key }) {
            var file: (any StorageFile)?
            var sealing: RecordSealing?
            if segment != state.log.segmentNumber {
                do { file = try fileSystem.open(files.segmentPath(segment), mode: state.readOnly ? .readOnly : .readWrite) } catch {
                    throw .io(error)
                }
                if let cipher = state.log.cipher, let file {
                    do throws(StorageError) { sealing = try RecordSealing.read(file, cipher: cipher, unitType: .logRecord) } catch {
                        file.close()
                        throw error
                    }
                }
            }
            state.log.follow(segment: segment, file: file, sealing: sealing, end: end, lastSnapshot: report.lastSnapshot,
                             durableThrough: published.durableThrough)
        }
        return report
    }

    /// Makes a replay the writer's state and publishes it (with an `external` changeset when
    /// the snapshot moved). Returns the new snapshot number, nil when it did not move.
    private func adopt(_ replayer: Replayer, report: ScanReport, state: WriterState) -> UInt64? {
        let moved = report.lastSnapshot > state.snapshotNumber
        state.keydir = replayer.keydir
        state.usage = replayer.usage
        state.nextRowid = replayer.nextRowid
        state.snapshotNumber = max(state.snapshotNumber, report.lastSnapshot)
        state.generation += 1
        state.remapActiveSegment(force: false)
        if moved {
            var changeset = Changeset(snapshot: report.lastSnapshot)
            changeset.external = true
            registry.append(changeset)
        }
        publish(state)
        return moved ? report.lastSnapshot : nil
    }

    /// Loads the key directory from another process's checkpoint `published.checkpoint` (its
    /// root record; the index files it names are taken in, `IndexFiles.adoptForeign`) and
    /// replays the log from its replay position to the published end.
    private func reloadFromCheckpoint(_ state: WriterState, _ published: PublishedState) throws(StorageError) -> UInt64? {
        let loaded = try Engine.loadCheckpoint(published.checkpoint, files: files, fs: fileSystem, uuid: uuid, cipher: cipher)
        guard loaded.root.pageSize == index.pageSize else {
            throw .corrupted(offset: 0, reason: "checkpoint \(published.checkpoint): page size \(loaded.root.pageSize)")
        }
        try index.adoptForeign(loaded.root.files.map(\.extent))
        let keydir = try Engine.keydir(of: loaded.root, format: index.format, source: index.source())
        var replayer = Replayer(keydir: keydir, usage: loaded.usage, nextRowid: max(loaded.info.nextRowid, 1))
        let report = try replay(&replayer, after: loaded.info.replay, baseSnapshot: loaded.info.snapshot, to: published, state: state)
        // A log damaged before this process's own end: keep the state it has.
        guard report.lastSnapshot >= state.snapshotNumber else {
            throw .corrupted(offset: Int64(report.tornAt?.offset ?? 0), reason: report.tornReason ?? "the log ends before this process's state")
        }
        state.checkpointNumber = published.checkpoint
        state.checkpointReplay = loaded.info.replay
        state.bytesSinceCheckpoint = UInt64(max(0, report.bytesScanned))
        state.rowsSinceCheckpoint = report.records
        let caughtUp = adopt(replayer, report: report, state: state)
        state.dirtyPages.record(WriterState.dirtyPageCount(keydir: state.keydir, extensions: state.extensions))
        return caughtUp
    }

    /// Before a read-write transaction or a checkpoint of a process holding the writer lock
    /// (under `writer`): catch up, then cut what a writer that died left after the published
    /// end of the active segment (only the writer-lock holder repairs).
    func prepareToWrite(_ state: WriterState, _ sharing: ProcessSharing) throws(StorageError) -> UInt64? {
        let caughtUp = try catchUp(state, sharing)
        guard !state.readOnly else { return caughtUp }
        // Never cut anything before the published end: a process that could not catch up
        // (its log reads as damaged before that end) writes nothing.
        let ours = LogPosition(segment: state.log.segmentNumber, offset: state.log.end)
        if let published = sharing.shared.read(), published.uuid == uuid, published.logEnd != ours {
            throw .corrupted(offset: Int64(ours.offset),
                             reason: "this process's log ends at \(ours), the published end is \(published.logEnd)")
        }
        do throws(IOFailure) {
            let file = state.log.file
            if try file.size() > Int64(state.log.end) {
                try file.truncate(to: Int64(state.log.end))
                try file.sync()
            }
            // The main file's mark as the last writer left it: this writer's updates follow it.
            try state.log.highWaterMark?.reload()
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
