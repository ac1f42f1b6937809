import YapDBStorage
import YapDBIndex

/// What a compaction did.
package struct CompactionReport: Sendable, Equatable {
    /// Segments rewritten and removed.
    package var victims: [UInt32] = []
    /// Segments written.
    package var outputs: [UInt32] = []
    package var recordsMoved = 0
    package var bytesMoved: Int64 = 0
    /// Bytes of the victim segments (reclaimed, less what was moved).
    package var bytesReclaimed: Int64 = 0
}

extension Engine {
    /// One value record to move: where it is, and where its copy went.
    struct Move {
        var from: ValueLocation
        var to: ValueLocation?
    }

    /// Seals the active log segment when it is worth compacting (`sealActiveSegmentIfWorthIt`),
    /// then rewrites the live records of sealed segments whose dead fraction is at least
    /// `options.compactionThreshold` (any dead bytes at all with `force`) into new compaction
    /// segments, points the key directory at the copies, writes a checkpoint, and removes the
    /// old segments (docs/format.md §4, §5). The checkpoint is always an index compaction: it
    /// copies the key directory's trees into a new index file and removes the older ones
    /// (docs/format.md §9), so the index files shrink to the live pages.
    ///
    /// Readers never wait for it, and readers of older snapshots keep reading the old
    /// segments through their open handles. The writer lock is held only to pick the victims
    /// and to swap in the new locations. A crash at any step loses nothing: until the
    /// checkpoint's rename the old checkpoint and log still describe everything, and the
    /// unreferenced copies are removed at the next open.
    ///
    /// With multi-process support it holds the processes' writer lock throughout (`locked`
    /// after `busyTimeout`) and does nothing (an empty report) while another process has the
    /// database open: that process's key directory still points into the segments it would
    /// remove.
    package func compact(force: Bool = false) throws(EngineError) -> CompactionReport {
        try engineBoundary { () throws(StorageError) in try compactOnStorage(force: force) }
    }

    private func compactOnStorage(force: Bool) throws(StorageError) -> CompactionReport {
        if let sharing {
            try sharing.acquire()
            defer { sharing.release() }
            let alone = try writer.withLock { (state: inout WriterState) throws(StorageError) -> Bool in
                guard !state.closed, !state.readOnly else { return true }   // refused below
                _ = try prepareToWrite(state, sharing)
                return sharing.isAlone() && mayCheckpoint(state, sharing)
            }
            guard alone else { return CompactionReport() }
            return try compactHoldingLocks(force: force)
        }
        return try compactHoldingLocks(force: force)
    }

    private func compactHoldingLocks(force: Bool) throws(StorageError) -> CompactionReport {
        try maintenance.withLock { (_: inout Void) throws(StorageError) -> CompactionReport in
            var report = CompactionReport()
            // 1. Pick victims and the state to copy from.
            let picked = try writer.withLock { (state: inout WriterState) throws(StorageError) -> (Keydir, [UInt32: Int64], SegmentTable)? in
                if state.closed { throw .closed }
                if state.readOnly { throw .readOnly }
                if state.poisoned || state.log.isPoisoned { throw .poisoned }
                try sealActiveSegmentIfWorthIt(state, force: force)
                var victims: [UInt32: Int64] = [:]
                for (number, file) in state.segments.files where number != state.log.segmentNumber {
                    let size: Int64
                    do throws(IOFailure) { size = try file.size() } catch { throw .io(error) }
                    let payload = max(1, size - Int64(Format.headerSize))
                    // Usage was bounded at open (`Replayer.validateCounters`); clamping keeps a
                    // count that still exceeds the file (damage) from trapping here.
                    let live = min(payload, Int64(clamping: state.usage[number] ?? 0))
                    let dead = Double(payload - live) / Double(payload)
                    if live < payload && (force || dead >= options.compactionThreshold) { victims[number] = size }
                }
                guard !victims.isEmpty else { return nil }
                return (state.keydir, victims, state.segments)
            }
            if let (keydir, victims, table) = picked {
                try moveLiveRecords(keydir: keydir, victims: victims, table: table, report: &report)
            }

            // A checkpoint that no longer references the victims; installing it removes them.
            // It is also an index compaction: the key directory is copied into a new index file
            // and the older index files are removed.
            guard let source = try captureForCheckpoint(onlyIfLogGrew: false, copyIndex: true) else { return report }
            try finishCheckpoint(source)
            return report
        }
    }

    /// Step 0 of `compact` (under the writer lock): rolls the log to a new segment when the
    /// active one is worth compacting — it holds commits and its dead fraction is at least
    /// `options.compactionThreshold` (with `force`, at least `forcedActiveDeadFraction`; its
    /// commit records alone are always dead). The segment rolled away from is then sealed like
    /// any other: a victim of this compaction, and retired by its checkpoint once nothing in it
    /// is live, so a database whose rows all sit in one segment shrinks too, and a segment of
    /// remove records alone goes away.
    ///
    /// Crash safety is the roll's: the new segment is created (and, unless durability is
    /// `.off`, synced with its directory entry) before anything points at it; until the
    /// compaction's checkpoint is published the old checkpoint replays the sealed segment as
    /// before, and an empty newest segment replays as nothing.
    /// - Throws: the roll's `StorageError` (a failure other than a full disk poisons the log).
    private func sealActiveSegmentIfWorthIt(_ state: WriterState, force: Bool) throws(StorageError) {
        let number = state.log.segmentNumber
        let payload = Int64(state.log.end) - Int64(Format.headerSize)
        guard payload > 0 else { return }
        let live = Int64(min(state.usage[number] ?? 0, UInt64(payload)))
        let dead = Double(payload - live) / Double(payload)
        guard dead >= (force ? Self.forcedActiveDeadFraction : options.compactionThreshold) else { return }
        try state.log.rollNow()
    }

    /// The dead fraction past which `compact(force: true)` seals the active segment: a little
    /// more than its commit records take, so a forced compaction right after a load (nothing
    /// dead but commit records) does not start a new segment for nothing.
    static let forcedActiveDeadFraction = 0.02

    /// Steps 2 and 3 of `compact`: copies the live records of `victims` into new segments and
    /// points the writer's key directory at the copies.
    private func moveLiveRecords(keydir: Keydir, victims: [UInt32: Int64], table: SegmentTable,
                                 report: inout CompactionReport) throws(StorageError) {
            report.victims = victims.keys.sorted()
            report.bytesReclaimed = victims.values.reduce(0, +)

            // 2. Copy the live records out of the victims (no lock held).
            let victimNumbers = report.victims
            var moves: [Move] = []
            do throws(EngineError) {
                try Self.mappingIndexErrors { () throws in
                    try keydir.forEachRow { _, _, entry in
                        if victimNumbers.contains(entry.object.segment) { moves.append(Move(from: entry.object)) }
                        if let m = entry.metadata, victimNumbers.contains(m.segment) { moves.append(Move(from: m)) }
                        return true
                    }
                }
            } catch { throw StorageError(error) }
            moves.sort { ($0.from.segment, $0.from.offset) < ($1.from.segment, $1.from.offset) }
            var outputs: [(UInt32, any StorageFile)] = []
            if !moves.isEmpty {
                outputs = try copy(&moves, from: table)
            }
            report.outputs = outputs.map(\.0)
            report.recordsMoved = moves.count
            report.bytesMoved = moves.reduce(0) { $0 + Int64($1.from.length) }
            report.bytesReclaimed -= report.bytesMoved

            // 3. Point the key directory at the copies where it still points at the originals.
            try writer.withLock { (state: inout WriterState) throws(StorageError) in
                for (number, file) in outputs {
                    // Finished and synced: sealed, mapped whole.
                    let size = try? file.size()
                    let sealing = try state.log.cipher.map { (cipher) throws(StorageError) in
                        try RecordSealing.read(file, cipher: cipher, unitType: .logRecord)
                    }
                    state.segments = state.segments.adding(number, file, mapping: size.flatMap { state.segmentMapping(file, length: $0) },
                                                           sealing: sealing)
                    if let descriptors { state.readThroughCache(number, descriptors) }
                    state.compactionSegments.insert(number)
                }
                var keydir = state.keydir
                var usage = state.usage
                // One pass over the directory: a location in a victim that was copied moves to
                // its copy (found by binary search in the sorted moves). Entries changed since
                // the pick point elsewhere and are left alone.
                _ = try mappingPageErrorsInternally { () throws(PageError) in try keydir.relocate { location -> ValueLocation? in
                    guard victimNumbers.contains(location.segment) else { return nil }
                    var low = 0, high = moves.count
                    while low < high {
                        let mid = (low + high) / 2
                        let from = moves[mid].from
                        if (from.segment, from.offset) < (location.segment, location.offset) { low = mid + 1 } else { high = mid }
                    }
                    guard low < moves.count, moves[low].from == location, let to = moves[low].to else { return nil }
                    usage[location.segment, default: 0] -= min(usage[location.segment, default: 0], UInt64(location.length))
                    usage[to.segment, default: 0] += UInt64(to.length)
                    return to
                } }
                state.keydir = keydir
                state.usage = usage
                state.generation += 1
                state.bytesSinceCheckpoint += 1
                publish(state)
            }
    }

    /// Copies the records of `moves` (sorted by location) into new compaction segments,
    /// filling in each move's new location; syncs them and their directory. Each victim is
    /// read through a `SequentialRecordReader` (a few large reads, every record verified) and
    /// the output is written 4 MiB at a time.
    private func copy(_ moves: inout [Move], from table: SegmentTable) throws(StorageError) -> [(UInt32, any StorageFile)] {
        var outputs: [(UInt32, any StorageFile)] = []
        var file: (any StorageFile)?
        var number: UInt32 = 0
        var buffer: [UInt8] = []
        var written: Int64 = 0
        // Moves are sorted by location: each victim is read sequentially, a window at a time.
        var reader: SequentialRecordReader?
        var readerSegment: UInt32?
        // An encrypted database's records are opened from their old place and sealed again at
        // the new one (new file key, address and nonce): sealed bytes are never copied.
        let cipher = writer.withLock { $0.log.cipher }
        var sealing: RecordSealing?
        func io<T>(_ body: () throws(IOFailure) -> T) throws(StorageError) -> T {
            do { return try body() } catch { throw .io(error) }
        }
        func flush() throws(StorageError) {
            guard let file, !buffer.isEmpty else { return }
            try io { () throws(IOFailure) in try file.write(buffer, at: written) }
            written += Int64(buffer.count)
            buffer.removeAll(keepingCapacity: true)
        }
        do throws(StorageError) {
            for index in moves.indices {
                if file == nil || written + Int64(buffer.count) >= Int64(options.segmentLimit) {
                    try flush()
                    if let file { try io { () throws(IOFailure) in try file.sync() } }
                    let next = writer.withLock { $0.log.allocateSegmentNumber() }
                    number = next
                    let created = try io { () throws(IOFailure) in
                        try LogWriter.createSegment(next, kind: .compactionSegment, files: files, fileSystem: fileSystem,
                                                    uuid: uuid, baseSnapshot: 0, sync: false, cipher: cipher)
                    }
                    file = created.file
                    sealing = created.sealing
                    outputs.append((number, created.file))
                    written = Int64(Format.firstRecordOffset(encrypted: cipher != nil))
                }
                let from = moves[index].from
                if readerSegment != from.segment {
                    guard let source = table.segments[from.segment]?.file else {
                        throw .corrupted(offset: Int64(from.offset), reason: "segment \(from.segment) is referenced but missing")
                    }
                    reader = SequentialRecordReader(file: source, sealing: table.segments[from.segment]?.sealing)
                    readerSegment = from.segment
                }
                try reader!.withRecord(at: RecordLocation(from)) { (bytes, _) throws(StorageError) in
                    if let sealing {
                        try sealing.seal([UInt8](bytes), at: written + Int64(buffer.count), into: &buffer)
                    } else {
                        buffer.append(contentsOf: bytes)
                    }
                }
                moves[index].to = ValueLocation(segment: number, offset: UInt32(written + Int64(buffer.count)) - from.length, length: from.length)
                if buffer.count >= 4 << 20 { try flush() }
            }
            try flush()
            if let file { try io { () throws(IOFailure) in try file.sync() } }
            try io { () throws(IOFailure) in try fileSystem.syncDirectory(files.directory) }
        } catch {
            for (n, _) in outputs { try? fileSystem.remove(files.segmentPath(n)) }
            throw error
        }
        return outputs
    }
}
