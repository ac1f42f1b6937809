/// A segment read through a bounded window: the recovery scan never holds a whole segment
/// (up to 4 GiB) in memory, only `windowSize` bytes at a time, or one record that is larger
/// and whose payload it needs (docs/format.md §5).
///
/// Threading: used by one scan on one thread.
final class SegmentWindow {
    let file: any StorageFile
    /// The file's size when it was opened.
    let size: Int
    let windowSize: Int
    /// File bytes `start ..< start + buffer.count`.
    private var buffer: [UInt8] = []
    private var start = 0
    /// The largest buffer held so far (tests check the bound).
    private(set) var largest = 0

    init(file: any StorageFile, size: Int, windowSize: Int) {
        self.file = file
        self.size = size
        self.windowSize = max(windowSize, RecordCodec.commitRecordSize)
    }

    /// File bytes `offset ..< offset + count` (which must lie inside the file), reading a new
    /// window starting at `offset` when they are not all in the current one.
    func bytes(at offset: Int, count: Int) throws(IOFailure) -> ArraySlice<UInt8> {
        precondition(offset >= 0 && count >= 0 && offset + count <= size, "SegmentWindow read outside the file")
        if offset < start || offset + count > start + buffer.count {
            let length = min(max(count, windowSize), size - offset)
            buffer = []   // the old window goes before the new one is allocated
            buffer = try file.readExactly(length, at: Int64(offset))
            start = offset
            largest = max(largest, length)
        }
        return buffer[(offset - start)..<(offset - start + count)]
    }

    func close() { file.close() }
}

extension LogScanner {
    /// Applies the valid commits of one segment, from file offset `startOffset`; returns the
    /// first damage, if any. Commits are applied as they are found.
    func scanSegment(_ loaded: Loaded, from startOffset: Int, report: inout ScanReport,
                     apply: (ScannedCommit) throws(StorageError) -> Void) throws(StorageError) -> Damage? {
        let number = loaded.number
        let window = loaded.window
        func damage(_ at: Int, _ reason: String) -> Damage { Damage(position: LogPosition(segment: number, offset: UInt32(at)), reason: reason) }
        if startOffset > window.size { return damage(window.size, "segment shorter than the replay position") }
        var pending: [ScannedOperation] = []
        var pendingStart = startOffset
        // CRC32C of the bytes pendingStart ..< position (the commit's records checksum).
        var pendingChecksum: UInt32 = 0
        var position = startOffset
        var lastSnapshot = report.lastSnapshot
        // A limit in this segment ends the scan there.
        let stop = limit.map { $0.segment == number ? min(window.size, Int($0.offset)) : window.size } ?? window.size
        while position < stop {
            let record: ScannedRecord
            let read: Result<ScannedRecord, RecordCodec.FrameError>
            if let sealing = loaded.sealing {
                read = try readSealedRecord(window, at: position, number: number, sealing: sealing, pendingChecksum: pendingChecksum)
            } else {
                read = try readRecord(window, at: position, number: number, pendingChecksum: pendingChecksum)
            }
            switch read {
            case .success(let read): record = read
            case .failure(let error): return damage(pendingStart, "record at \(position): \(error)")
            }
            switch record.content {
            case .operation(let operation):
                pending.append(operation)
                pendingChecksum = record.pendingChecksum
            case .commit(let info):
                let expectedSnapshot = lastSnapshot + 1
                let problem: String? =
                    info.recordCount != UInt32(pending.count) ? "commit counts \(info.recordCount) records, found \(pending.count)"
                    : info.recordsLength != UInt64(position - pendingStart) ? "commit length mismatch"
                    : info.recordsChecksum != pendingChecksum ? "commit checksum mismatch"
                    : info.snapshot != expectedSnapshot ? "commit snapshot \(info.snapshot), expected \(expectedSnapshot)" : nil
                if let problem { return damage(pendingStart, "record at \(position): \(problem)") }
                let end = position + record.totalLength
                let commit = ScannedCommit(info: info, end: LogPosition(segment: number, offset: UInt32(end)), operations: pending)
                try apply(commit)
                report.commits += 1
                report.records += pending.count
                report.lastSnapshot = info.snapshot
                report.end = commit.end
                lastSnapshot = info.snapshot
                pending.removeAll(keepingCapacity: true)
                pendingStart = end
                pendingChecksum = 0
            }
            position += record.totalLength
        }
        if !pending.isEmpty || pendingStart != position { return damage(pendingStart, "records without a commit record") }
        return nil
    }
}

/// One record the scan read: what it says, its size, and the commit checksum so far.
struct ScannedRecord {
    enum Content {
        case operation(ScannedOperation)
        case commit(CommitInfo)
    }
    var content: Content
    var totalLength: Int
    /// The running records checksum with this record's bytes added (operations only).
    var pendingChecksum: UInt32
}

extension LogScanner {
    /// Reads and checks the record at file offset `position`. Frame errors are returned (they
    /// are damage); I/O errors are thrown. A value record larger than the window is checked in
    /// window-sized pieces and only its names are kept; any other record is read whole, and
    /// only when its type allows its length.
    func readRecord(_ window: SegmentWindow, at position: Int, number: UInt32,
                    pendingChecksum: UInt32) throws(StorageError) -> Result<ScannedRecord, RecordCodec.FrameError> {
        let headerSize = Format.recordHeaderSize
        guard window.size - position >= headerSize else { return .failure(.truncated) }
        let head: [UInt8]
        do { head = Array(try window.bytes(at: position, count: headerSize)) } catch { throw .io(error) }
        let length = head.withBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: Format.recordLengthOffset, as: UInt32.self))) }
        guard let type = RecordType(rawValue: head[Format.recordTypeOffset]) else {
            return .failure(.invalid("unknown record type \(head[Format.recordTypeOffset])"))
        }
        guard length <= Format.maxRecordPayload else { return .failure(.invalid("record length \(length) over the maximum")) }
        guard window.size - position - headerSize >= length else { return .failure(.truncated) }
        let total = headerSize + length
        if total > window.windowSize {
            switch type {
            case .object, .metadata:
                return try readLargeValueRecord(window, at: position, type: type, head: head, total: total, number: number,
                                                pendingChecksum: pendingChecksum)
            case .extensionData: break   // its payload is needed: read whole (at most 1 GiB, the format's limit)
            default: return .failure(.invalid("record length \(length) over its type's maximum"))
            }
        }
        let bytes: ArraySlice<UInt8>
        do { bytes = try window.bytes(at: position, count: total) } catch { throw .io(error) }
        let location = RecordLocation(segment: number, offset: UInt32(position), length: UInt32(total))
        return bytes.withUnsafeBytes { raw in
            Self.decodeRecord(raw, location: location).map { content in
                if case .commit = content { return ScannedRecord(content: content, totalLength: total, pendingChecksum: pendingChecksum) }
                return ScannedRecord(content: content, totalLength: total, pendingChecksum: CRC32C.update(pendingChecksum, raw))
            }
        }
    }

    /// What the whole plain record in `raw` says (framing and checksum checked), read from
    /// `location`: an operation, or a commit.
    static func decodeRecord(_ raw: UnsafeRawBufferPointer, location: RecordLocation) -> Result<ScannedRecord.Content, RecordCodec.FrameError> {
        do throws(RecordCodec.FrameError) {
            let frame = try RecordCodec.frame(in: raw, at: 0)
            guard frame.totalLength == raw.count else { throw .invalid("record length disagrees with its frame") }
            let operation: ScannedOperation
            switch frame.type {
            case .object, .metadata:
                let record = try RecordCodec.valueRecord(frame, in: raw)
                operation = .value(type: frame.type, rowid: record.rowid, collection: record.collection, key: record.key,
                                   noMetadata: record.noMetadata, location: location)
            case .remove:
                let (collection, key) = try RecordCodec.removeRecord(frame, in: raw)
                operation = .remove(collection: collection, key: key)
            case .removeCollection:
                operation = .removeCollection(try RecordCodec.removeCollectionRecord(frame, in: raw))
            case .removeAll:
                guard frame.payloadLength == 0 else { throw .invalid("remove-all record with a payload") }
                operation = .removeAll
            case .extensionData:
                let (name, payload) = try RecordCodec.extensionDataRecord(frame, in: raw)
                operation = .extensionData(name: name, payload: payload)
            case .commit:
                return .success(.commit(RecordCodec.commitRecord(frame, in: raw)))
            case .checkpointInfo, .checkpointEnd, .checkpointSegmentUsage, .checkpointIndexRoot, .checkpointPendingExtension:
                throw .invalid("checkpoint record in a log segment")
            }
            return .success(.operation(operation))
        } catch {
            return .failure(error)
        }
    }

    /// A value record larger than the window: its checksum computed over window-sized pieces,
    /// then its row id and names parsed from its first bytes (the value itself is not kept).
    private func readLargeValueRecord(_ window: SegmentWindow, at position: Int, type: RecordType, head: [UInt8], total: Int,
                                      number: UInt32, pendingChecksum: UInt32) throws(StorageError) -> Result<ScannedRecord, RecordCodec.FrameError> {
        let flags = head[Format.recordFlagsOffset]
        guard flags & ~(Format.flagCompressed | Format.flagNoMetadata) == 0 else {
            return .failure(.invalid("flags \(flags) not allowed on record type \(type.rawValue)"))
        }
        if type == .metadata && flags & Format.flagNoMetadata != 0 { return .failure(.invalid("value record: nil metadata record with value bytes")) }
        var recordChecksum = head.withBytes { CRC32C.update(0, UnsafeRawBufferPointer(rebasing: $0[4...])) }
        var runningChecksum = head.withBytes { CRC32C.update(pendingChecksum, $0) }
        var offset = position + Format.recordHeaderSize
        while offset < position + total {
            let count = min(window.windowSize, position + total - offset)
            let piece: ArraySlice<UInt8>
            do { piece = try window.bytes(at: offset, count: count) } catch { throw .io(error) }
            piece.withUnsafeBytes { raw in
                recordChecksum = CRC32C.update(recordChecksum, raw)
                runningChecksum = CRC32C.update(runningChecksum, raw)
            }
            offset += count
        }
        let stored = head.withBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 0, as: UInt32.self)) }
        guard CRC32C.unmask(stored) == recordChecksum else { return .failure(.invalid("record checksum mismatch")) }
        // The names come first: a row id varint and two length-prefixed strings of at most
        // `Format.maxKeyLength` bytes each.
        let prefix = min(total - Format.recordHeaderSize, 10 + 2 * (5 + Format.maxKeyLength))
        let bytes: ArraySlice<UInt8>
        do { bytes = try window.bytes(at: position + Format.recordHeaderSize, count: prefix) } catch { throw .io(error) }
        return bytes.withUnsafeBytes { raw -> Result<ScannedRecord, RecordCodec.FrameError> in
            var reader = ByteReader(raw)
            do throws(ByteReader.Overrun) {
                let rowid = try reader.readVarint()
                let collection = try reader.readString()
                let key = try reader.readString()
                let operation = ScannedOperation.value(type: type, rowid: rowid, collection: collection, key: key,
                                                       noMetadata: flags & Format.flagNoMetadata != 0,
                                                       location: RecordLocation(segment: number, offset: UInt32(position), length: UInt32(total)))
                return .success(ScannedRecord(content: .operation(operation), totalLength: total, pendingChecksum: runningChecksum))
            } catch {
                return .failure(.invalid("value record: \(error.what)"))
            }
        }
    }
}
