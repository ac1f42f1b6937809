#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import YapDBCrypto

/// Appends commits to the active log segment (docs/format.md §3, §7).
///
/// A transaction's records are staged in a buffer that is streamed to the file every
/// `flushThreshold` bytes (so a bulk load does not hold the whole transaction in memory), then
/// closed by a commit record and synced as the mode says. `rollback()` truncates what was
/// streamed, so nothing of a rolled-back or failed transaction remains.
///
/// Threading: owned by the engine's single writer; not for concurrent use. Reads of committed
/// records go through `SegmentReader` on their own handles.
package final class LogWriter {
    package let files: DatabaseFiles
    package let fileSystem: any FileSystem
    package let uuid: [UInt8]
    package var syncMode: SyncMode
    package var segmentLimit: Int
    /// Bytes staged before they are written to the file.
    package var flushThreshold = 1 << 20

    /// The active segment.
    package private(set) var segmentNumber: UInt32
    package private(set) var file: any StorageFile
    /// End of the last commit in the active segment.
    package private(set) var end: UInt32
    /// Snapshot of the last commit written.
    package private(set) var lastSnapshot: UInt64
    /// The log is known to be synced up to here.
    package private(set) var durableThrough: LogPosition
    /// The keys of an encrypted database (nil: plain): every record is sealed for its place
    /// (docs/format.md §12) with the active segment's `sealing`.
    package let cipher: DatabaseCipher?
    /// How the active segment's records are sealed; nil in a plain database.
    package private(set) var sealing: RecordSealing?
    /// Where a segment's first record starts.
    package var firstRecordOffset: Int { Format.firstRecordOffset(encrypted: cipher != nil) }
    /// Set after a failure that may have left unknown bytes on disk; every later call throws.
    package private(set) var isPoisoned = false
    /// Called after a new segment file is created, with its number and handle (the engine
    /// shares the handle with its read table) and the segment just sealed: its number and
    /// final length (no byte of it is ever written or truncated again).
    package var onNewSegment: ((_ number: UInt32, _ file: any StorageFile, _ sealed: LogPosition) -> Void)?

    /// Segments rolled away from in `.off` mode, not yet synced (kept open until they are).
    private var unsyncedSegments: [any StorageFile] = []
    /// A segment was created without syncing its directory.
    private var directoryDirty = false

    // The open transaction. `@exclusivity(unchecked)` on what every append touches: no
    // dynamic exclusivity check per access (the writer is single-threaded by contract and no
    // method holds two overlapping accesses to one of these).
    @exclusivity(unchecked) private var buffer: [UInt8] = []
    /// A record's plain bytes before they are sealed into `buffer` (encrypted databases).
    private var plainRecord: [UInt8] = []
    @exclusivity(unchecked) private var flushedTo: UInt32 = 0
    private var transactionStart: UInt32 = 0
    @exclusivity(unchecked) private var recordCount: UInt32 = 0
    private var runningChecksum: UInt32 = 0
    package private(set) var inTransaction = false
    /// The next number a new segment (log or compaction) gets.
    package var nextSegmentNumber: UInt32
    /// The main file's high-water mark: each roll records its new segment there (except in
    /// `.off` mode) before any commit goes into it.
    package var highWaterMark: HighWaterMarkWriter?

    /// Resumes appending to segment `segmentNumber` (already open as `file`) at `end`.
    /// Everything before `end` must already be synced (recovery syncs it). In an encrypted
    /// database, `cipher` is its keys and `sealing` the segment's (both or neither).
    package init(files: DatabaseFiles, fileSystem: any FileSystem, uuid: [UInt8], segmentNumber: UInt32,
                 file: any StorageFile, end: UInt32, lastSnapshot: UInt64, syncMode: SyncMode,
                 segmentLimit: Int = Format.defaultSegmentSize, cipher: DatabaseCipher? = nil, sealing: RecordSealing? = nil) {
        precondition((cipher == nil) == (sealing == nil), "LogWriter: an encrypted database's writer needs its segment's sealing")
        self.cipher = cipher
        self.sealing = sealing
        self.files = files
        self.fileSystem = fileSystem
        self.uuid = uuid
        self.segmentNumber = segmentNumber
        self.file = file
        self.end = end
        self.lastSnapshot = lastSnapshot
        self.syncMode = syncMode
        self.segmentLimit = segmentLimit
        self.durableThrough = LogPosition(segment: segmentNumber, offset: end)
        self.nextSegmentNumber = segmentNumber + 1
    }

    /// Creates log segment `number` (header with `baseSnapshot`), syncing file and directory
    /// unless `sync` is false. Returns the open file. When the header cannot be written or
    /// synced, the file is removed again: a header-less segment left in the directory would
    /// read, once later segments exist, as damage before synced commits (corruption).
    package static func createSegment(
        _ number: UInt32, kind: FileKindByte = .logSegment, files: DatabaseFiles, fileSystem fs: any FileSystem,
        uuid: [UInt8], baseSnapshot: UInt64, sync: Bool
    ) throws(IOFailure) -> any StorageFile {
        try createSegment(number, kind: kind, files: files, fileSystem: fs, uuid: uuid, baseSnapshot: baseSnapshot, sync: sync,
                          cipher: nil).file
    }

    /// `createSegment` for a database that may be encrypted: with `cipher`, the segment starts
    /// with its cipher header (a fresh salt, so a new file key even under a reused number) and
    /// its sealing is returned.
    package static func createSegment(
        _ number: UInt32, kind: FileKindByte = .logSegment, files: DatabaseFiles, fileSystem fs: any FileSystem,
        uuid: [UInt8], baseSnapshot: UInt64, sync: Bool, cipher: DatabaseCipher?
    ) throws(IOFailure) -> (file: any StorageFile, sealing: RecordSealing?) {
        let path = files.segmentPath(number)
        let header = FileHeader(kind: kind, uuid: uuid, fileNumber: number, baseSnapshot: baseSnapshot)
        var start = header.encoded()
        var sealing: RecordSealing?
        if let cipher {
            cipher.forget(kind: kind, number: number)
            let made: (cipherHeader: CipherHeader, sealer: UnitSealer)
            do throws(StorageError) { made = try cipher.newFile(header) } catch {
                throw IOFailure(errno: EINVAL, operation: "derive the file key: \(error)", path: path)
            }
            start = RecordSealing.fileStart(header, cipherHeader: made.cipherHeader)
            var sealed = header
            sealed.encrypted = true
            sealing = RecordSealing(sealer: made.sealer, header: sealed, unitType: .logRecord)
        }
        let file = try fs.open(path, mode: .createNew)
        do throws(IOFailure) {
            try file.write(start, at: 0)
            if sync {
                try file.sync()
                try fs.syncDirectory(files.directory)
            }
        } catch {
            file.close()
            try? fs.remove(path)
            throw error
        }
        return (file, sealing)
    }

    // MARK: Transactions

    /// Starts staging a transaction; rolls to a new segment first when the active one is full.
    package func begin() throws(StorageError) {
        precondition(!inTransaction, "LogWriter.begin inside a transaction")
        try checkUsable()
        if Int(end) >= segmentLimit { try roll() }
        inTransaction = true
        transactionStart = end
        flushedTo = end
        recordCount = 0
        runningChecksum = 0
        buffer.removeAll(keepingCapacity: true)
    }

    /// Appends an object or metadata record and returns where it will live.
    package func appendValue(
        _ type: RecordType, rowid: UInt64, collection: String, key: String,
        value: UnsafeRawBufferPointer?, noMetadata: Bool, compress: Bool
    ) throws(StorageError) -> RecordLocation {
        precondition(inTransaction, "LogWriter.appendValue outside a transaction")
        let start: Int, length: Int
        if let sealing {
            plainRecord.removeAll(keepingCapacity: true)
            RecordCodec.appendValue(type, rowid: rowid, collection: collection, key: key,
                                    value: value, noMetadata: noMetadata, compress: compress, into: &plainRecord)
            start = buffer.count
            length = try sealing.seal(plainRecord, at: Int64(flushedTo) + Int64(start), into: &buffer)
        } else {
            (start, length) = RecordCodec.appendValue(type, rowid: rowid, collection: collection, key: key,
                                                      value: value, noMetadata: noMetadata, compress: compress, into: &buffer)
        }
        let offset = UInt64(flushedTo) + UInt64(start)
        guard offset + UInt64(length) < UInt64(UInt32.max) - UInt64(RecordCodec.commitRecordSize) else {
            throw .tooLarge("transaction passes the 4 GiB segment limit")
        }
        recordCount += 1
        try flushIfNeeded()
        return RecordLocation(segment: segmentNumber, offset: UInt32(offset), length: UInt32(length))
    }

    /// Appends a remove record.
    package func appendRemove(collection: String, key: String) throws(StorageError) {
        precondition(inTransaction, "LogWriter.appendRemove outside a transaction")
        try appendRecord { RecordCodec.appendRemove(collection: collection, key: key, into: &$0) }
        recordCount += 1
        try flushIfNeeded()
    }

    /// Appends a remove-collection record.
    package func appendRemoveCollection(_ collection: String) throws(StorageError) {
        precondition(inTransaction, "LogWriter.appendRemoveCollection outside a transaction")
        try appendRecord { RecordCodec.appendRemoveCollection(collection, into: &$0) }
        recordCount += 1
        try flushIfNeeded()
    }

    /// Appends a remove-all record.
    package func appendRemoveAll() throws(StorageError) {
        precondition(inTransaction, "LogWriter.appendRemoveAll outside a transaction")
        try appendRecord { RecordCodec.appendRemoveAll(into: &$0) }
        recordCount += 1
        try flushIfNeeded()
    }

    /// Appends an extension data record (docs/format.md §3): `payload` under extension `name`,
    /// replayed with the commit. The caller checks `name` (non-empty, ≤ `Format.maxKeyLength`
    /// bytes) and the payload's size (≤ `Format.maxExtensionDataPayload`).
    package func appendExtensionData(name: String, payload: [UInt8]) throws(StorageError) {
        precondition(inTransaction, "LogWriter.appendExtensionData outside a transaction")
        try appendRecord { RecordCodec.appendExtensionData(name: name, payload: payload, into: &$0) }
        recordCount += 1
        try flushIfNeeded()
    }

    /// Adds the record `encode` writes to the staged bytes, sealed for its place in an
    /// encrypted database.
    private func appendRecord(_ encode: (inout [UInt8]) -> Void) throws(StorageError) {
        guard let sealing else { return encode(&buffer) }
        plainRecord.removeAll(keepingCapacity: true)
        encode(&plainRecord)
        try sealing.seal(plainRecord, at: Int64(flushedTo) + Int64(buffer.count), into: &buffer)
    }

    /// The (plain) bytes of a record of this transaction that is still staged, or nil if it
    /// was already written to the file (read it from there).
    package func stagedRecord(at location: RecordLocation) -> [UInt8]? {
        guard inTransaction, location.segment == segmentNumber, location.offset >= flushedTo else { return nil }
        let start = Int(location.offset - flushedTo)
        let bytes = Array(buffer[start..<(start + Int(location.length))])
        guard let sealing else { return bytes }
        // Sealed a moment ago by this writer: it opens unless memory itself is damaged.
        return try? sealing.open(bytes, at: Int64(location.offset), path: file.path)
    }

    /// Closes the transaction with a commit record for `snapshot`, writes it, and syncs as the
    /// mode says. On failure nothing of the transaction counts: ENOSPC and EFBIG leave the
    /// writer usable once the staged bytes are truncated away; any other failure poisons it.
    package func commit(snapshot: UInt64) throws(StorageError) -> LogPosition {
        precondition(inTransaction, "LogWriter.commit outside a transaction")
        defer { inTransaction = false }
        let recordsLength = UInt64(flushedTo - transactionStart) + UInt64(buffer.count)
        let checksum = buffer.withUnsafeBytes { CRC32C.update(runningChecksum, $0) }
        let info = CommitInfo(snapshot: snapshot, recordCount: recordCount, recordsChecksum: checksum,
                              recordsLength: recordsLength, durableThrough: durableThrough)
        do throws(StorageError) { try appendRecord { RecordCodec.appendCommit(info, into: &$0) } } catch {
            discardTransaction()
            throw error
        }
        let newEnd = UInt64(flushedTo) + UInt64(buffer.count)
        guard newEnd < UInt64(UInt32.max) else {
            discardTransaction()
            throw .tooLarge("transaction passes the 4 GiB segment limit")
        }
        do throws(IOFailure) {
            try file.write(buffer, at: Int64(flushedTo))
        } catch {
            failWrite(error)
            throw .io(error)
        }
        if syncMode == .full {
            do throws(IOFailure) { try file.sync() } catch {
                isPoisoned = true
                dropUnsynced()
                throw .io(error)
            }
        }
        end = UInt32(newEnd)
        lastSnapshot = snapshot
        if syncMode == .full { durableThrough = LogPosition(segment: segmentNumber, offset: end) }
        buffer.removeAll(keepingCapacity: true)
        return LogPosition(segment: segmentNumber, offset: end)
    }

    /// Abandons the transaction: staged bytes dropped, streamed bytes truncated.
    package func rollback() {
        guard inTransaction else { return }
        inTransaction = false
        discardTransaction()
    }

    /// Makes everything committed durable (checkpoints, close, explicit syncs): segments
    /// rolled away from without a sync, their directory entries, then the active segment.
    package func syncCommitted() throws(StorageError) {
        try checkUsable()
        do throws(IOFailure) {
            for old in unsyncedSegments { try old.sync() }
            if directoryDirty { try fileSystem.syncDirectory(files.directory) }
            try file.sync()
        } catch {
            isPoisoned = true
            dropUnsynced()
            throw .io(error)
        }
        unsyncedSegments.removeAll()
        directoryDirty = false
        durableThrough = LogPosition(segment: segmentNumber, offset: end)
    }

    /// Marks the writer unusable (the engine calls this after a failure elsewhere).
    package func poison() { isPoisoned = true }

    // MARK: Internals

    private func checkUsable() throws(StorageError) {
        if isPoisoned { throw .io(IOFailure(errno: EIO, operation: "write after a failed commit", path: file.path)) }
    }

    private func flushIfNeeded() throws(StorageError) {
        guard buffer.count >= flushThreshold else { return }
        do throws(IOFailure) {
            try file.write(buffer, at: Int64(flushedTo))
        } catch {
            inTransaction = false
            failWrite(error)
            throw .io(error)
        }
        runningChecksum = buffer.withUnsafeBytes { CRC32C.update(runningChecksum, $0) }
        flushedTo += UInt32(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    /// After a failed sync: cuts the active segment back to the last successful sync. The bytes
    /// after it may never reach the disk — Linux marks their pages clean after a writeback
    /// error, and no later sync writes them — yet they stay readable: a reopen would replay
    /// them and append commits whose syncs succeed, and a power cut would then leave a hole
    /// before synced commits (corruption). Commits cut here were never acknowledged in `.full`
    /// (their sync is what failed); in `.normal` they are the ones a power cut may lose.
    private func dropUnsynced() {
        guard durableThrough.segment == segmentNumber else { return }
        try? file.truncate(to: Int64(durableThrough.offset))
    }

    /// After a failed write: truncate the transaction away; poison unless the disk was full
    /// (`ENOSPC`, or the user's quota: `EDQUOT`), the file at its size limit, and the truncate
    /// worked.
    private func failWrite(_ error: IOFailure) {
        let clean = discardTransaction()
        if !(clean && Self.isOutOfSpace(error.errno)) { isPoisoned = true }
    }

    /// Errors that say "no room": nothing is wrong with the bytes already written.
    static func isOutOfSpace(_ code: Int32) -> Bool {
        code == ENOSPC || code == EDQUOT || code == EFBIG
    }

    /// Errors after which a failed segment creation left nothing behind that a later roll or
    /// open could trip on: no room, or no descriptor (`EMFILE`, `ENFILE`: `open` itself failed,
    /// so no file exists; `createSegment` removes one it could not fill).
    static func leavesNoSegment(_ code: Int32) -> Bool {
        isOutOfSpace(code) || code == EMFILE || code == ENFILE
    }

    @discardableResult
    private func discardTransaction() -> Bool {
        buffer.removeAll(keepingCapacity: true)
        var clean = true
        do throws(IOFailure) {
            if try file.size() > Int64(transactionStart) { try file.truncate(to: Int64(transactionStart)) }
        } catch {
            clean = false
            isPoisoned = true
        }
        flushedTo = transactionStart
        return clean
    }

    private func roll() throws(StorageError) {
        if syncMode == .normal { try syncCommitted() }
        let next = allocateSegmentNumber()
        let newFile: any StorageFile
        let newSealing: RecordSealing?
        do throws(IOFailure) {
            (newFile, newSealing) = try Self.createSegment(next, files: files, fileSystem: fileSystem, uuid: uuid,
                                                           baseSnapshot: lastSnapshot, sync: syncMode != .off, cipher: cipher)
        } catch {
            failRoll(next, error)
            throw .io(error)
        }
        if syncMode != .off, let highWaterMark {
            do throws(IOFailure) {
                try highWaterMark.update { mark in
                    mark.segment = next
                    mark.offset = UInt32(firstRecordOffset)
                    mark.snapshot = lastSnapshot
                }
            } catch {
                // The mark's slot may have reached the disk even though its sync failed (a
                // failed sync can leave the written bytes to be persisted later), so the new,
                // empty segment stays: a mark must never name a file that is gone. The writer is
                // poisoned (the file exists), and a reopen finds the empty segment.
                newFile.close()
                failRoll(next, error)
                throw .io(error)
            }
        }
        // The old handle is not closed here: the engine's read table may share it, and the
        // handle closes itself when the last reference goes.
        if syncMode == .off {
            unsyncedSegments.append(file)
            directoryDirty = true
        }
        let sealed = LogPosition(segment: segmentNumber, offset: end)
        segmentNumber = next
        file = newFile
        sealing = newSealing
        end = UInt32(firstRecordOffset)
        if syncMode != .off { durableThrough = LogPosition(segment: next, offset: end) }
        onNewSegment?(next, newFile, sealed)
    }

    /// After a roll failed to create segment `next`: the number is free again when nothing was
    /// left under it and the failure was no room or no descriptor (nothing is wrong with the
    /// log: later commits go on in the old segment); anything else poisons.
    private func failRoll(_ next: UInt32, _ error: IOFailure) {
        if Self.leavesNoSegment(error.errno), fileSystem.kind(of: files.segmentPath(next)) == .missing {
            nextSegmentNumber = next
        } else {
            isPoisoned = true
        }
    }

    /// Starts the next segment even if the active one is not full: `compact()` seals the
    /// active segment this way when it is worth compacting. Throws as a roll at `begin` does
    /// (a failure other than a full disk poisons the writer).
    package func rollNow() throws(StorageError) {
        precondition(!inTransaction, "LogWriter.rollNow inside a transaction")
        try checkUsable()
        try roll()
    }

    /// Moves the writer past commits another process appended (multi-process support): to
    /// `end` of segment `number` with `lastSnapshot`, the log synced up to `durableThrough`.
    /// When `number` is a later segment, `file` is it, opened by the caller; the active
    /// segment is sealed at its current `end` (call once per segment, in order, with the end
    /// of its last commit first) and `onNewSegment` runs as after a roll. Never writes.
    package func follow(segment number: UInt32, file newFile: (any StorageFile)?, sealing newSealing: RecordSealing? = nil,
                        end newEnd: UInt32, lastSnapshot snapshot: UInt64, durableThrough durable: LogPosition) {
        precondition(!inTransaction, "LogWriter.follow inside a transaction")
        if number != segmentNumber, let newFile {
            precondition((cipher == nil) == (newSealing == nil), "LogWriter.follow: an encrypted database's segment needs its sealing")
            let sealed = LogPosition(segment: segmentNumber, offset: end)
            segmentNumber = number
            file = newFile
            sealing = newSealing
            end = newEnd
            nextSegmentNumber = max(nextSegmentNumber, number + 1)
            durableThrough = min(durable, LogPosition(segment: number, offset: newEnd))
            lastSnapshot = snapshot
            onNewSegment?(number, newFile, sealed)
        } else {
            end = newEnd
            durableThrough = max(durableThrough, min(durable, LogPosition(segment: segmentNumber, offset: newEnd)))
            lastSnapshot = snapshot
        }
    }

    /// Hands out the next unused segment number (compaction writes its segments under numbers
    /// from the same sequence as log segments). Call only while no transaction is open.
    package func allocateSegmentNumber() -> UInt32 {
        defer { nextSegmentNumber += 1 }
        return nextSegmentNumber
    }
}
