#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import YapDBCrypto

/// Writes one checkpoint file (docs/format.md §4): the caller calls `setSegmentUsage` once,
/// then `addPendingExtension` for each carried extension, then `setIndexRoot`, then `finish`.
///
/// The file is `NAME-checkpoint-NNNNNNNNNN.tmp` until `finish` has written the end record and
/// synced it; only then is it renamed to its final name and the directory synced, so a crash
/// at any point leaves either no checkpoint under the final name or a complete one.
///
/// Memory: the records not yet written, flushed once they reach `blockLimit` bytes.
///
/// Order is the caller's contract, checked with `precondition` (it comes from the engine, not
/// from disk): `setSegmentUsage` once, before the other records.
///
/// After any call throws, the writer is failed: later calls rethrow that error; call
/// `abandon()` to remove what it wrote.
///
/// Threading: single-threaded use; not `Sendable`.
package final class CheckpointWriter {
    package let files: DatabaseFiles
    package let fileSystem: any FileSystem
    package let number: UInt32
    package let info: CheckpointInfo
    /// The final path, valid once `finish` returns.
    package let path: String
    /// Where the file is written before the rename.
    package let temporaryPath: String
    /// Buffered bytes written at once; ≤ `Format.checkpointBlockSize`. Tests lower it so that
    /// small checkpoints span many writes.
    package var blockLimit = Format.checkpointBlockSize {
        didSet { blockLimit = min(max(blockLimit, 1), Format.checkpointBlockSize) }
    }

    private var file: (any StorageFile)?
    /// Encoded records not yet written, starting at file offset `written`.
    private var output: [UInt8] = []
    private var written: Int64 = 0
    /// CRC32C (unmasked) of the record bytes already written.
    private var checksum: UInt32 = 0
    private var recordCount: UInt32 = 0
    private var usageWritten = false
    private var renamed = false
    private var finished = false
    private var failure: StorageError?
    /// How records are sealed (an encrypted database, docs/format.md §12); nil: plain.
    private var sealing: RecordSealing?
    /// A record's plain bytes before they are sealed into `output`.
    private var plainRecord: [UInt8] = []
    /// Where the first record starts.
    private let firstRecordOffset: Int

    /// Creates the `.tmp` file for checkpoint `number` and writes its header and info record
    /// (to its buffer; the first write may come later).
    ///
    /// A leftover `.tmp` of the same number (from an interrupted attempt) is replaced.
    /// - Throws: `.io` when the file cannot be created, or with `EEXIST` when a checkpoint of
    ///   that number already exists under its final name (never overwritten).
    ///
    /// With `cipher` (an encrypted database), the file starts with its cipher header and every
    /// record is sealed for its offset (docs/format.md §12).
    package init(files: DatabaseFiles, fileSystem: any FileSystem, uuid: [UInt8], number: UInt32,
                 info: CheckpointInfo, cipher: DatabaseCipher? = nil) throws(StorageError) {
        precondition(uuid.count == 16, "a database UUID is 16 bytes")
        self.files = files
        self.fileSystem = fileSystem
        self.number = number
        self.info = info
        path = files.checkpointPath(number)
        temporaryPath = path + Format.temporarySuffix
        firstRecordOffset = Format.firstRecordOffset(encrypted: cipher != nil)
        var header = FileHeader(kind: .checkpoint, uuid: uuid, fileNumber: number, baseSnapshot: info.snapshot)
        var start = header.encoded()
        if let cipher {
            cipher.forget(kind: .checkpoint, number: number)
            let made = try cipher.newFile(header)
            start = RecordSealing.fileStart(header, cipherHeader: made.cipherHeader)
            header.encrypted = true
            sealing = RecordSealing(sealer: made.sealer, header: header, unitType: .checkpointRecord)
        }
        do throws(IOFailure) {
            if fileSystem.kind(of: path) != .missing { throw IOFailure(errno: EEXIST, operation: "create checkpoint", path: path) }
            if fileSystem.kind(of: temporaryPath) != .missing { try fileSystem.remove(temporaryPath) }
            file = try fileSystem.open(temporaryPath, mode: .createNew)
        } catch {
            throw .io(error)
        }
        output = start
        try appendRecord { CheckpointCodec.appendInfo(info, into: &$0) }
    }

    deinit { file?.close() }

    /// Records the live bytes of each segment (the segment-usage record). Call once, first.
    /// - Throws: `.io` when writing buffered records fails.
    package func setSegmentUsage(_ usage: [UInt32: UInt64]) throws(StorageError) {
        try checkUsable()
        precondition(!usageWritten, "CheckpointWriter.setSegmentUsage called twice")
        try appendRecord { CheckpointCodec.appendSegmentUsage(usage, into: &$0) }
        usageWritten = true
        try flushIfNeeded()
    }

    /// Adds the record of an extension state carried while unclaimed (docs/format.md §4, record
    /// 23). Call after `setSegmentUsage` and before `setIndexRoot`, at most once per name; the
    /// caller keeps the payload under `Format.maxRecordPayload` (`encodedSize`).
    /// - Throws: `.io` when writing buffered records fails.
    package func addPendingExtension(_ pending: CheckpointPendingExtension) throws(StorageError) {
        try checkUsable()
        precondition(usageWritten, "CheckpointWriter.addPendingExtension before setSegmentUsage")
        precondition(!pending.name.isEmpty && pending.name.utf8.count <= Format.maxKeyLength
                     && pending.encodedSize <= Format.maxRecordPayload, "pending extension over the format's limits")
        try appendRecord { CheckpointCodec.appendPendingExtension(pending, into: &$0) }
        try flushIfNeeded()
    }

    /// Adds the index root record: `root` is `IndexRoot.encoded()` (where the paged trees of
    /// this checkpoint are). Call after `setSegmentUsage` and before `finish`, at most once.
    /// - Throws: `.io` when writing buffered records fails.
    package func setIndexRoot(_ root: [UInt8]) throws(StorageError) {
        try checkUsable()
        precondition(usageWritten, "CheckpointWriter.setIndexRoot before setSegmentUsage")
        precondition(root.count <= Format.rootBodyOffset + Format.rootMaximumSize + 4, "index root over the format's limit")
        try appendRecord { buffer in
            let start = RecordCodec.begin(.checkpointIndexRoot, in: &buffer)
            buffer.append(contentsOf: root)
            _ = RecordCodec.finish(&buffer, start: start)
        }
        try flushIfNeeded()
    }

    /// Writes the end record, syncs the file, renames it to its final name and syncs the
    /// directory. Returns the final path. The checkpoint counts only once this returns.
    /// - Throws: `.io` from the write, sync, rename or directory sync. After a failed
    ///   directory sync the file may be under its final name, complete; `abandon()` removes it.
    package func finish() throws(StorageError) -> String {
        try checkUsable()
        precondition(usageWritten, "CheckpointWriter.finish before setSegmentUsage")
        let recordsChecksum = output.withUnsafeBytes { CRC32C.update(checksum, UnsafeRawBufferPointer(rebasing: $0[recordBytesStart...])) }
        do throws(StorageError) { try encodeRecord { CheckpointCodec.appendEnd(recordCount: recordCount, checksum: recordsChecksum, into: &$0) } } catch {
            failure = error
            throw error
        }
        do throws(IOFailure) {
            guard let file else { throw IOFailure(errno: EBADF, operation: "checkpoint closed", path: temporaryPath) }
            try file.write(output, at: written)
            written += Int64(output.count)
            output.removeAll()
            try file.sync()
            file.close()
            self.file = nil
            try fileSystem.rename(temporaryPath, to: path)
            renamed = true
            try fileSystem.syncDirectory(files.directory)
        } catch {
            failure = .io(error)
            throw .io(error)
        }
        finished = true
        return path
    }

    /// Closes the file and removes it, `.tmp` or (after a failed `finish` that renamed it)
    /// final, so that no file of this checkpoint is left. Best effort: errors are ignored.
    /// Does nothing after a successful `finish`.
    package func abandon() {
        guard !finished else { return }
        file?.close()
        file = nil
        failure = failure ?? .io(IOFailure(errno: ECANCELED, operation: "checkpoint abandoned", path: temporaryPath))
        try? fileSystem.remove(renamed ? path : temporaryPath)
        try? fileSystem.syncDirectory(files.directory)
    }

    // MARK: Internals

    /// Offset in `output` of the first record byte (past the header while it is still buffered).
    private var recordBytesStart: Int { written == 0 ? min(firstRecordOffset, output.count) : 0 }

    private func checkUsable() throws(StorageError) {
        if let failure { throw failure }
        precondition(!finished, "CheckpointWriter used after finish")
    }

    private func appendRecord(_ encode: (inout [UInt8]) -> Void) throws(StorageError) {
        try encodeRecord(encode)
        recordCount += 1
    }

    /// Adds the record `encode` writes to `output`, sealed for its offset when encrypted.
    private func encodeRecord(_ encode: (inout [UInt8]) -> Void) throws(StorageError) {
        guard let sealing else { return encode(&output) }
        plainRecord.removeAll(keepingCapacity: true)
        encode(&plainRecord)
        try sealing.seal(plainRecord, at: written + Int64(output.count), into: &output)
    }

    /// Writes the buffered records once they reach a block's size.
    private func flushIfNeeded() throws(StorageError) {
        guard output.count >= blockLimit else { return }
        do throws(IOFailure) {
            guard let file else { throw IOFailure(errno: EBADF, operation: "checkpoint closed", path: temporaryPath) }
            checksum = output.withUnsafeBytes { CRC32C.update(checksum, UnsafeRawBufferPointer(rebasing: $0[recordBytesStart...])) }
            try file.write(output, at: written)
        } catch {
            failure = .io(error)
            throw .io(error)
        }
        written += Int64(output.count)
        output.removeAll(keepingCapacity: true)
    }
}
