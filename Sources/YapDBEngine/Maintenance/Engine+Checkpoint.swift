import YapDBStorage
import YapDBIndex

extension Engine {
    /// What a checkpoint is built from, captured under the writer lock.
    struct CheckpointSource {
        var number: UInt32
        var keydir: Keydir
        var snapshot: UInt64
        var nextRowid: UInt64
        var replay: LogPosition
        var usage: [UInt32: UInt64]
        var extensions: [String: any Sendable] = [:]
        /// Whether this checkpoint is an index compaction.
        var copyIndex = false
        /// Extension roots no registered extension has claimed, carried into this checkpoint's
        /// root record as they were (`UnclaimedExtensions.carry`).
        var carriedRoots: [String: [UInt8]] = [:]
        /// Unclaimed extensions' records, carried as checkpoint records of type 23.
        var carriedPending: [CheckpointPendingExtension] = []
        /// The log bytes and rows since the previous checkpoint that this one covers: taken off
        /// the writer's counters only once it is installed, so a failed checkpoint leaves them
        /// due and the next one (automatic, idle, explicit or at close) retries.
        var bytesCovered: UInt64 = 0
        var rowsCovered = 0

        /// The extension states whose trees are on index pages, by name.
        var pagedExtensions: [(name: String, state: any PagedExtensionState)] {
            extensions.keys.sorted().compactMap { name in (extensions[name] as? any PagedExtensionState).map { (name, $0) } }
        }
    }

    /// Writes a checkpoint of the current state (docs/format.md §4), then removes older
    /// checkpoints and log segments nothing references any more. Readers and writers keep
    /// going while the file is written; only the capture and the final swap take the writer
    /// lock. Throws `closed`, `readOnly`, `poisoned`, `io` (a failed log sync also poisons the
    /// engine).
    package func checkpoint() throws(EngineError) {
        try engineBoundary { () throws(StorageError) in try checkpoint(onlyIfLogGrew: false) }
    }

    /// Index compaction alone: a checkpoint that copies the key directory's trees into a new
    /// index file and removes the older index files (`compact()` does it too, after moving
    /// records). Throws as `checkpoint()`.
    package func compactIndex() throws(EngineError) {
        try engineBoundary { () throws(StorageError) in
            // Multi-process support: only while no other process has the database open, caught up.
            if let sharing { try sharing.acquire() }
            defer { sharing?.release() }
            if let sharing {
                let alone = try writer.withLock { (state: inout WriterState) throws(StorageError) -> Bool in
                    guard !state.closed, !state.readOnly else { return true }   // the capture refuses
                    _ = try prepareToWrite(state, sharing)
                    return sharing.isAlone() && mayCheckpoint(state, sharing)
                }
                guard alone else { return }
            }
            try maintenance.withLock { (_: inout Void) throws(StorageError) in
                guard let source = try captureForCheckpoint(onlyIfLogGrew: false, copyIndex: true) else { return }
                try finishCheckpoint(source)
            }
        }
    }

    /// Checkpoints when the log since the last checkpoint passes `checkpointThreshold` (and,
    /// with a threshold, when `checkpointRowLimit` rows were written since), or when the dirty
    /// index pages pass `dirtyPageBudget`; never while another checkpoint is in flight.
    func checkpointIfDue() throws(StorageError) {
        let threshold = options.checkpointThreshold
        let due = writer.withLock { state in
            guard !state.checkpointInFlight else { return false }
            if threshold > 0 && (state.bytesSinceCheckpoint >= UInt64(threshold)
                || (options.checkpointRowLimit > 0 && state.rowsSinceCheckpoint >= options.checkpointRowLimit)) { return true }
            return state.dirtyPagesReach(budget: options.dirtyPageBudget, pageSize: options.indexPageSize)
        }
        if due { try checkpoint(onlyIfLogGrew: true) }
    }

    /// With multi-process support it holds the processes' writer lock throughout, catches up
    /// first, and writes nothing when another process wrote a checkpoint since this one's
    /// newest (`mayCheckpoint`).
    func checkpoint(onlyIfLogGrew: Bool) throws(StorageError) {
        if let sharing {
            // A checkpoint no caller asked for (close) is skipped, without waiting, while
            // another process writes.
            do throws(StorageError) { try sharing.acquire(wait: onlyIfLogGrew ? .zero : nil) } catch {
                if onlyIfLogGrew, case .locked = error { return }
                throw error
            }
            // Held until the checkpoint is installed and published.
            defer { sharing.release() }
            let allowed = try writer.withLock { (state: inout WriterState) throws(StorageError) -> Bool in
                guard !state.closed, !state.readOnly else { return true }   // the capture refuses
                _ = try prepareToWrite(state, sharing)
                return mayCheckpoint(state, sharing)
            }
            guard allowed else { return }
            try checkpointHoldingLocks(onlyIfLogGrew: onlyIfLogGrew)
            return
        }
        try checkpointHoldingLocks(onlyIfLogGrew: onlyIfLogGrew)
    }

    private func checkpointHoldingLocks(onlyIfLogGrew: Bool) throws(StorageError) {
        try maintenance.withLock { (_: inout Void) throws(StorageError) in
            let copyIndex = index.isCompactionDue(slack: options.indexCompactionSlack)
            guard let source = try captureForCheckpoint(onlyIfLogGrew: onlyIfLogGrew, copyIndex: copyIndex) else { return }
            try finishCheckpoint(source)
        }
    }

    /// Writes and installs a captured checkpoint. Until it is installed or has failed, no
    /// automatic checkpoint is due (`WriterState.checkpointInFlight`) and, for an index
    /// compaction, transactions do not spill (`WriterState.indexCopyPending`).
    func finishCheckpoint(_ source: CheckpointSource) throws(StorageError) {
        defer {
            writer.withLock { state in
                state.checkpointInFlight = false
                if source.copyIndex { state.indexCopyPending = false }
            }
        }
        try writeAndInstallCheckpoint(source)
    }

    /// The steps of an index checkpoint after the capture (under `maintenance`, without the
    /// writer lock): 1. the key directory's dirty nodes become pages in the index files,
    /// synced; 2. the checkpoint file names their roots (with the segment usage and the carried
    /// extension records) and is published by rename; 3. the trees' written nodes are released and the
    /// files nothing references any more are removed.
    ///
    /// With `copyIndex` it is an index compaction: step 1 writes a repacked copy of both trees
    /// (full pages, key order) into new index files (`IndexFiles.writeCopy`), the checkpoint
    /// names only those, and step 3 moves the writer's key directory onto the copy, carrying
    /// over what it changed since the capture (`Keydir.rebasing(from:onto:)`), and removes the
    /// older index files. Until the rename the previous checkpoint names the old files,
    /// which are untouched; after it they are garbage (the next open removes any left).
    ///
    /// Extension states on index pages (`PagedExtensionState`) take part in every step: their
    /// pages go with the directory's in step 1, their root bytes into the root record in step
    /// 2, and step 3 has them adopt what was written.
    func writeAndInstallCheckpoint(_ source: CheckpointSource) throws(StorageError) {
        let copyIndex = source.copyIndex
        let roots: (rows: PageID, rowids: PageID)
        // A repacked copy can be lower than the trees it copies (fuller pages).
        var heights = (rows: source.keydir.rows.height, rowids: source.keydir.rowids.height)
        let extents: [IndexFileExtent]
        let extensionPages: [String: ExtensionPagesWritten]
        let publishKeydir: () -> Void
        let rebind: (Keydir, IndexPageSource) throws(PageError) -> Keydir
        if copyIndex {
            let pages = try index.writeCopy(of: source.keydir, extensions: source.pagedExtensions, sequence: UInt64(source.number))
            (roots, extents, extensionPages) = ((pages.copy.rows.page, pages.copy.rowids.page), pages.extents, pages.extensions)
            heights = (pages.copy.rows.height, pages.copy.rowids.height)
            publishKeydir = {}
            // The repacked copy holds the captured directory's entries on new pages; the
            // writer's directory may have changed since the capture: its changes are carried
            // onto the copy.
            let base = source.keydir, format = index.format, copied = pages.copy
            rebind = { (current, newPages) throws(PageError) in
                let copy = Keydir(rowsRoot: copied.rows, rowidsRoot: copied.rowids, format: format, source: newPages)
                return try current.rebasing(from: base, onto: copy)
            }
        } else {
            let pages = try index.writePages(of: source.keydir, extensions: source.pagedExtensions, sequence: UInt64(source.number))
            (roots, extents, extensionPages) = ((pages.flush.rows.root, pages.flush.rowids.root), pages.extents, pages.extensions)
            publishKeydir = { pages.flush.rows.publish(); pages.flush.rowids.publish() }
            rebind = { (current, _) throws(PageError) in current.releasingFlushedNodes() }
        }
        let publishPages = {
            publishKeydir()
            for written in extensionPages.values { for flush in written.flushes { flush.publish() } }
        }
        // Roots written now, and the unclaimed ones carried as they were (never the same name:
        // a live state supersedes an unclaimed one at the capture).
        let recorded = extensionPages.mapValues(\.rootBytes).merging(source.carriedRoots) { written, _ in written }
        let root = IndexRoot(uuid: uuid, pageSize: index.pageSize, sequence: UInt64(source.number), snapshot: source.snapshot,
                             replay: source.replay, nextRowID: source.nextRowid,
                             trees: [IndexRoot.Tree(name: Self.rowsTreeName, root: IndexPageID(rawValue: roots.rows),
                                                    count: UInt64(source.keydir.rows.count), height: UInt32(heights.rows)),
                                     IndexRoot.Tree(name: Self.rowidsTreeName, root: IndexPageID(rawValue: roots.rowids),
                                                    count: UInt64(source.keydir.rowids.count), height: UInt32(heights.rowids))],
                             files: extents.map { IndexRoot.File(number: $0.number, length: $0.length) },
                             extensions: recorded.keys.sorted().map { IndexRoot.Extension(name: $0, bytes: recorded[$0]!) })
        let path = try writeCheckpointReplacingUnpublished(source, root: root)
        publishPages()
        let replaced: [UInt32]
        do throws(StorageError) { replaced = try index.didPublish(extents, copied: copyIndex) } catch {
            // The file is durable under its final name but not installed: the next checkpoint
            // takes its number and removes it first.
            unpublishedCheckpoint.withLock { $0 = source.number }
            // A durable checkpoint names only the copy, which the store could not take in: the
            // writer's directory still reaches the old files, which no later root would name.
            // Refuse writes until a reopen, which reads the copy.
            if copyIndex { writer.withLock { $0.poisoned = true } }
            throw error
        }
        try installCheckpoint(source, path: path, pages: index.source(), rebind: rebind, extensionPages: extensionPages,
                              removingIndexFiles: replaced)
    }

    /// The names of the key directory's trees in the root record.
    static let rowsTreeName = "rows"
    static let rowidsTreeName = "rowids"

    /// Syncs the log and captures the state to checkpoint (under the writer lock). Extension
    /// roots and records not claimed by now are carried into the checkpoint
    /// (`UnclaimedExtensions.carry`), so a late registration finds them — except by an index
    /// compaction, which cannot copy trees only their extension can read and must not retire
    /// the files holding their pages: it drops them (`UnclaimedExtensions.dropAll`).
    func captureForCheckpoint(onlyIfLogGrew: Bool, copyIndex: Bool) throws(StorageError) -> CheckpointSource? {
        try writer.withLock { (state: inout WriterState) throws(StorageError) -> CheckpointSource? in
            if state.closed { throw .closed }
            if state.readOnly { throw .readOnly }
            if state.poisoned || state.log.isPoisoned { throw .poisoned }
            if onlyIfLogGrew && state.bytesSinceCheckpoint == 0 { return nil }
            do throws(StorageError) { try state.log.syncCommitted() } catch {
                state.poisoned = true
                throw error
            }
            state.indexCopyPending = copyIndex
            state.checkpointInFlight = true
            var carried = unclaimed.carry(live: Set(state.extensions.keys))
            if copyIndex && !carried.roots.isEmpty {
                // An index compaction copies only trees a registered extension can read, and
                // retires the files holding the rest: state still unclaimed by now is dropped
                // (YapDatabase drops such orphaned extensions sooner, at the first write). Its
                // extension, registered later, starts afresh (a relationship without its
                // manual edges). Never carried past this point, so the index cannot grow
                // without bound under an extension the app no longer registers.
                unclaimed.dropAll()
                carried = ([:], [])
            }
            return CheckpointSource(number: state.checkpointNumber + 1, keydir: state.keydir, snapshot: state.snapshotNumber,
                                    nextRowid: state.nextRowid,
                                    replay: LogPosition(segment: state.log.segmentNumber, offset: state.log.end),
                                    usage: state.usage.filter { $0.value > 0 }, extensions: state.extensions,
                                    copyIndex: copyIndex,
                                    carriedRoots: carried.roots, carriedPending: carried.pending,
                                    bytesCovered: state.bytesSinceCheckpoint, rowsCovered: state.rowsSinceCheckpoint)
        }
    }

    /// `writeCheckpoint`, after removing the file of an earlier attempt at the same number that
    /// this engine wrote but could not install (`unpublishedCheckpoint`), by its exact name.
    /// Safe: that file was never installed, so the high-water mark does not promise it, and
    /// the checkpoint before it, with every file it names, is untouched. A failure that leaves
    /// this attempt's file under its final name (its removal failed too) is remembered the
    /// same way. Called under `maintenance`.
    func writeCheckpointReplacingUnpublished(_ source: CheckpointSource, root: IndexRoot) throws(StorageError) -> String {
        let path = files.checkpointPath(source.number)
        if let number = unpublishedCheckpoint.withLock({ $0 }) {
            if number == source.number {
                do throws(IOFailure) {
                    if fileSystem.kind(of: path) != .missing { try fileSystem.remove(path) }
                    try fileSystem.syncDirectory(files.directory)
                } catch { throw .io(error) }
            }
            unpublishedCheckpoint.withLock { $0 = nil }
        }
        do throws(StorageError) {
            return try Self.writeCheckpoint(source, root: root, files: files, fs: fileSystem, uuid: uuid, cipher: cipher)
        } catch {
            if fileSystem.kind(of: path) != .missing { unpublishedCheckpoint.withLock { $0 = source.number } }
            throw error
        }
    }

    /// Writes checkpoint file `source.number` (docs/format.md §4): the info record, the segment
    /// usage, the carried extension records and the index root `root` (the rows themselves are in the
    /// index files' pages); returns its path once it is durable under its final name.
    static func writeCheckpoint(_ source: CheckpointSource, root: IndexRoot, files: DatabaseFiles, fs: any FileSystem, uuid: [UInt8],
                                cipher: DatabaseCipher? = nil) throws(StorageError) -> String {
        let info = CheckpointInfo(snapshot: source.snapshot, nextRowid: source.nextRowid, replay: source.replay)
        let writer = try CheckpointWriter(files: files, fileSystem: fs, uuid: uuid, number: source.number, info: info, cipher: cipher)
        do throws(StorageError) {
            try writer.setSegmentUsage(source.usage)
            for pending in source.carriedPending { try writer.addPendingExtension(pending) }
            try writer.setIndexRoot(root.encoded())
            return try writer.finish()
        } catch {
            writer.abandon()
            throw error
        }
    }

    /// Records a finished checkpoint and removes what it made unnecessary: older checkpoints
    /// and log segments before its replay position that its image does not reference.
    /// Readers holding older snapshots keep their open handles (an unlinked file stays
    /// readable through them).
    func installCheckpoint(_ source: CheckpointSource, path: String, pages: IndexPageSource,
                           rebind: (Keydir, IndexPageSource) throws(PageError) -> Keydir,
                           extensionPages: [String: ExtensionPagesWritten], removingIndexFiles replaced: [UInt32]) throws(StorageError) {
        let extensionSource = self.extensionSource(pages)
        var rebindFailure: PageError?
        // With multi-process support, files go only while no other process has the database
        // open (the writer lock is held: none can open meanwhile).
        let mayRemoveFiles = sharing?.isAlone() ?? true
        let (oldCheckpoint, retired, mark) = writer.withLock { state -> (UInt32, [UInt32], HighWaterMarkWriter?) in
            let old = state.checkpointNumber
            state.checkpointNumber = source.number
            state.checkpointReplay = source.replay
            // What this checkpoint covers is done; commits since the capture stay counted.
            state.bytesSinceCheckpoint -= min(state.bytesSinceCheckpoint, source.bytesCovered)
            state.rowsSinceCheckpoint -= min(state.rowsSinceCheckpoint, source.rowsCovered)
            // The nodes this checkpoint wrote become page references (read through a source
            // that knows the new pages): the memory they held goes with the last snapshot
            // that still shares them. After an index compaction the directory moves onto the
            // copy. If a page cannot be read for that, the writer's directory stays on the old
            // files (its source holds them open) and writes are refused until a reopen, which
            // reads the published copy.
            do throws(PageError) {
                state.keydir = try rebind(state.keydir, pages).replacingSource(pages)
            } catch {
                rebindFailure = error
                state.poisoned = true
            }
            // The same for extension trees: each state adopts what was written of it (a state
            // replaced since by one not derived from it holds no node the checkpoint wrote and
            // no page it retired), and every one reads through the new source.
            for (name, value) in state.extensions {
                guard var paged = value as? any PagedExtensionState else { continue }
                if let written = extensionPages[name] { paged = paged.adopting(written) }
                state.extensions[name] = paged.reading(from: extensionSource)
            }
            // Log segments at or after the replay position hold commits to replay: never retired.
            // With another process open nothing is retired: its older snapshots may still
            // read it.
            let retired = state.segments.numbers.filter { number in
                mayRemoveFiles && number != state.log.segmentNumber
                    && (number < source.replay.segment || state.compactionSegments.contains(number))
                    && (source.usage[number] ?? 0) == 0 && (state.usage[number] ?? 0) == 0
            }
            // The log is synced (`captureForCheckpoint`): map the active segment's new synced length.
            state.remapActiveSegment(force: true)
            if !retired.isEmpty {
                state.segments = state.segments.removing(retired)
                for number in retired {
                    state.usage[number] = nil
                    state.compactionSegments.remove(number)
                }
            }
            state.dirtyPages.record(WriterState.dirtyPageCount(keydir: state.keydir, extensions: state.extensions))
            state.generation += 1
            publish(state)
            publishShared(state)
            return (old, retired.sorted(), state.log.highWaterMark)
        }
        do throws(IOFailure) {
            // The main file promises this checkpoint (or a newer one) from now on; the files it
            // replaces go only after that (docs/format.md §2, "High-water mark").
            try mark?.update { $0.checkpoint = max($0.checkpoint, source.number) }
            if oldCheckpoint > 0 && fileSystem.kind(of: files.checkpointPath(oldCheckpoint)) == .file {
                try fileSystem.remove(files.checkpointPath(oldCheckpoint))
            }
            for number in retired {
                // Snapshots that still reach the segment read it through a pinned descriptor.
                descriptors?.keepOpen(path: files.segmentPath(number))
                try fileSystem.remove(files.segmentPath(number))
            }
            // Unlinked index files stay readable by the snapshots still holding their handles
            // (the writer's directory too, after a failed move onto the copy).
            for number in replaced { try fileSystem.remove(files.indexPath(number)) }
            try fileSystem.syncDirectory(files.directory)
        } catch { throw .io(error) }
        if let rebindFailure { throw StorageError(rebindFailure) }
    }

    /// What a checkpoint file holds: its info, the live bytes per segment, the index root and
    /// the records of extensions it carries unclaimed.
    struct LoadedCheckpoint {
        var info: CheckpointInfo
        var usage: [UInt32: UInt64]
        var root: IndexRoot
        /// Unclaimed extensions' records carried by the checkpoint (record 23), by name.
        var pending: [String: CheckpointPendingExtension] = [:]
    }

    /// Reads checkpoint `number` and checks its index root against its info record.
    static func loadCheckpoint(_ number: UInt32, files: DatabaseFiles, fs: any FileSystem, uuid: [UInt8],
                               cipher: DatabaseCipher? = nil) throws(StorageError) -> LoadedCheckpoint {
        var rootBytes: [UInt8]?
        var pending: [String: CheckpointPendingExtension] = [:]
        let path = files.checkpointPath(number)
        let name = Paths.fileName(of: path)
        let (info, usage) = try CheckpointReader.read(files: files, fileSystem: fs, uuid: uuid, number: number, cipher: cipher, indexRoot: { (bytes) throws(StorageError) in
            rootBytes = bytes
        }, pendingExtension: { (carried) throws(StorageError) in
            pending[carried.name] = carried
        })
        guard let rootBytes else { throw .corrupted(offset: 0, reason: "\(name): no index root record") }
        let root: IndexRoot
        do throws(IndexFileError) { root = try IndexRoot.decode(rootBytes, path: path, uuid: uuid) } catch { throw error.storageError }
        guard root.snapshot == info.snapshot, root.replay == info.replay, root.nextRowID == info.nextRowid,
              root.sequence == UInt64(number) else {
            throw .corrupted(offset: 0, reason: "\(name): the index root disagrees with the info record")
        }
        guard PageFormat.isValid(pageSize: root.pageSize), root.tree(named: rowsTreeName) != nil, root.tree(named: rowidsTreeName) != nil else {
            throw .corrupted(offset: 0, reason: "\(name): the index root lacks the key directory's trees or has page size \(root.pageSize)")
        }
        return LoadedCheckpoint(info: info, usage: usage, root: root, pending: pending)
    }

    /// The key directory a checkpoint's root names, read through `source` (its root pages'
    /// headers only), checked against the counts the root records.
    static func keydir(of root: IndexRoot, format: PageFormat, source: any PageSource) throws(StorageError) -> Keydir {
        let rows = root.tree(named: rowsTreeName)!, rowids = root.tree(named: rowidsTreeName)!
        let keydir = try mappingPageErrorsInternally { () throws(PageError) in
            try Keydir(rowsRoot: rows.root.rawValue, rowidsRoot: rowids.root.rawValue, format: format, source: source)
        }
        guard UInt64(keydir.rows.count) == rows.count, UInt64(keydir.rowids.count) == rowids.count,
              keydir.rows.height == Int(rows.height), keydir.rowids.height == Int(rowids.height) else {
            throw .corrupted(offset: 0, reason: "the index root's counts or heights disagree with its root pages")
        }
        return keydir
    }
}
