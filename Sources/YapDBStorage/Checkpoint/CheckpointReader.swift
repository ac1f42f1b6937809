/// Reads and checks a checkpoint file (docs/format.md §4).
///
/// The file is read record by record through a reused window of two blocks, never whole:
/// each record's declared length is checked against the bytes left in the file and the
/// maximum for its type before anything is allocated for it.
///
/// Stateless; safe from any thread (each call opens its own handle).
package enum CheckpointReader {
    /// Reads and checks checkpoint `number` fully: the header (kind 4, `uuid`, file number,
    /// base snapshot equal to the info record's snapshot), every record's framing and
    /// checksum, the record order (info first; one segment-usage record; pending-extension
    /// records and at most one index root record after it; end last, with no bytes after it),
    /// the reserved bytes (zero), the end record's record count and its checksum over all
    /// records before it.
    ///
    /// Calls `indexRoot` and `pendingExtension` *while* reading: when the call throws,
    /// everything passed to them must be discarded. An error thrown by a callback is rethrown
    /// as is.
    ///
    /// - Returns: the info record and the live bytes per segment.
    /// - Throws: `.notADatabase` or `.unsupportedVersion` from the header; `.corrupted(offset:
    ///   reason:)` for any failed check, with the offset of the bad record (or header field)
    ///   and a reason starting with the file name; `.io` when the file cannot be opened or read
    ///   (errno `ENOENT` when checkpoint `number` does not exist).
    package static func read(
        files: DatabaseFiles, fileSystem: any FileSystem, uuid: [UInt8], number: UInt32, cipher: DatabaseCipher? = nil,
        indexRoot: ([UInt8]) throws(StorageError) -> Void = { _ throws(StorageError) in },
        pendingExtension: (CheckpointPendingExtension) throws(StorageError) -> Void = { _ throws(StorageError) in }
    ) throws(StorageError) -> (CheckpointInfo, segmentUsage: [UInt32: UInt64]) {
        let path = files.checkpointPath(number)
        let file: any StorageFile
        do { file = try fileSystem.open(path, mode: .readOnly) } catch { throw .io(error) }
        defer { file.close() }
        let input = try Input(file: file)
        let name = Paths.fileName(of: path)
        func corrupt(_ offset: Int64, _ reason: String) -> StorageError {
            .corrupted(offset: offset, reason: "\(name): \(reason)")
        }

        // Header: magic, version, checksum (FileHeader.decode), then our fields.
        let headerBytes = Array(try input.load(at: 0, count: Int(min(input.size, Int64(Format.headerSize)))))
        let header = try FileHeader.decode(headerBytes, path: path)
        guard header.kind == .checkpoint else { throw corrupt(Int64(Format.headerKindOffset), "not a checkpoint (kind \(header.kind.rawValue))") }
        guard header.uuid == uuid else { throw corrupt(Int64(Format.headerUUIDOffset), "belongs to another database") }
        guard header.fileNumber == number else { throw corrupt(Int64(Format.headerFileNumberOffset), "header names checkpoint \(header.fileNumber)") }
        guard header.encrypted == (cipher != nil) else {
            throw corrupt(Int64(Format.headerVersionOffset), header.encrypted ? "an encrypted checkpoint in a plain database" : "a plain checkpoint in an encrypted database")
        }
        // An encrypted checkpoint's records are sealed (docs/format.md §12).
        var sealing: RecordSealing?
        if let cipher {
            let end = Int64(Format.cipherHeaderOffset + Format.cipherHeaderSize)
            guard input.size >= end else { throw corrupt(Int64(Format.cipherHeaderOffset), "cipher header is short") }
            let bytes = Array(try input.load(at: Int64(Format.cipherHeaderOffset), count: Format.cipherHeaderSize))
            sealing = try RecordSealing.of(header: header, cipherBytes: bytes, cipher: cipher, unitType: .checkpointRecord, path: path)
        }

        var state = ReadState()
        var position = Int64(Format.firstRecordOffset(encrypted: cipher != nil))
        while true {
            guard position < input.size else { throw corrupt(position, "missing end record") }
            let frame: RawRecord
            if let sealing {
                frame = try input.sealedRecord(at: position, sealing: sealing, corrupt: corrupt)
            } else {
                frame = try input.record(at: position, corrupt: corrupt)
            }
            let payload = frame.payload
            let next = position + Int64(frame.storedLength)
            do throws(Failure) {
                switch frame.type {
                case .checkpointInfo:
                    guard state.info == nil else { throw .corrupt("second info record") }
                    let info = try decode { () throws(ByteReader.Overrun) in try CheckpointCodec.info(payload) }
                    guard header.baseSnapshot == info.snapshot else {
                        throw .corrupt("header snapshot \(header.baseSnapshot) differs from the info record's \(info.snapshot)")
                    }
                    state.info = info
                case .checkpointSegmentUsage:
                    _ = try state.requireInfo()
                    guard !state.usageSeen else { throw .corrupt("second segment-usage record") }
                    state.usage = try decode { () throws(ByteReader.Overrun) in try CheckpointCodec.segmentUsage(payload) }
                    state.usageSeen = true
                case .checkpointPendingExtension:
                    _ = try state.requireInfo()
                    guard state.usageSeen else { throw .corrupt("pending extension record before the segment-usage record") }
                    guard !state.indexRootSeen else { throw .corrupt("pending extension record after the index root record") }
                    let pending = try decode { () throws(ByteReader.Overrun) in try CheckpointCodec.pendingExtension(payload) }
                    guard state.pendingNames.insert(pending.name).inserted else { throw .corrupt("second pending record of extension \(pending.name)") }
                    do throws(StorageError) { try pendingExtension(pending) } catch { throw .callback(error) }
                case .checkpointIndexRoot:
                    _ = try state.requireInfo()
                    guard state.usageSeen else { throw .corrupt("index root record before the segment-usage record") }
                    guard !state.indexRootSeen else { throw .corrupt("second index root record") }
                    state.indexRootSeen = true
                    do throws(StorageError) { try indexRoot(Array(payload)) } catch { throw .callback(error) }
                case .checkpointEnd:
                    let info = try state.requireInfo()
                    guard state.usageSeen else { throw .corrupt("end record before the segment-usage record") }
                    let end = try decode { () throws(ByteReader.Overrun) in try CheckpointCodec.end(payload) }
                    guard end.recordCount == state.records else { throw .corrupt("end record counts \(end.recordCount) records, found \(state.records)") }
                    guard end.checksum == state.checksum else { throw .corrupt("end record checksum mismatch") }
                    guard next == input.size else { throw .corruptAt(next, "\(input.size - next) bytes after the end record") }
                    return (info, state.usage)
                case .object, .metadata, .remove, .removeCollection, .removeAll, .commit, .extensionData:
                    throw .corrupt("log record type \(frame.type.rawValue) in a checkpoint")
                }
            } catch {
                switch error {
                case .corrupt(let reason): throw corrupt(position, reason)
                case .corruptAt(let offset, let reason): throw corrupt(offset, reason)
                case .callback(let error): throw error
                }
            }
            state.records += 1
            state.checksum = try input.checksum(at: position, count: Int(next - position), after: state.checksum)
            position = next
        }
    }

    /// Why one record failed: a reason for `corrupted` at the record (or at an offset), or a
    /// callback's error to rethrow.
    enum Failure: Error {
        case corrupt(String)
        case corruptAt(Int64, String)
        case callback(StorageError)
    }

    /// Runs a payload decoder, turning its error into `Failure.corrupt`.
    static func decode<T, E: Error>(_ body: () throws(E) -> T) throws(Failure) -> T {
        do { return try body() } catch {
            switch error {
            case let overrun as ByteReader.Overrun: throw .corrupt(overrun.what)
            case let frame as RecordCodec.FrameError:
                if case .invalid(let reason) = frame { throw .corrupt(reason) }
                throw .corrupt("truncated")
            default: throw .corrupt("\(error)")
            }
        }
    }

    /// What the reader has seen so far.
    struct ReadState {
        var info: CheckpointInfo?
        var usageSeen = false
        var usage: [UInt32: UInt64] = [:]
        var pendingNames: Set<String> = []
        var indexRootSeen = false
        var records: UInt32 = 0
        var checksum: UInt32 = 0

        func requireInfo() throws(Failure) -> CheckpointInfo {
            guard let info else { throw .corrupt("first record is not the info record") }
            return info
        }
    }
}
