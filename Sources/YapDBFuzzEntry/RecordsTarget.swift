import YapDBStorage
import YapDBSimulatedDisk

/// Target (a), the record and commit decoder. See `FuzzEntry.decodeRecords`.
enum RecordsTarget {
    static let name = "records"
    /// The database UUID of the segment and checkpoint files built around the input.
    static let uuid = [UInt8](repeating: 0x5A, count: 16)
    static let mainPath = "/fuzz/db"

    /// Input: a mode byte (bit 0: recompute the checksums first, see `ChecksumRepair`), then
    /// the record bytes.
    static func run(_ input: FuzzInput) {
        var input = input
        let repair = input.byte() & 1 != 0
        var bytes = input.take(input.remaining)
        if repair { ChecksumRepair.repairRecords(&bytes, from: 0) }
        decodeStream(bytes)
        scanAsSegment(bytes)
        readAsCheckpoint(bytes)
    }

    // MARK: Decoders, record by record

    /// Frames records from the start until the first bad one, decoding each payload.
    static func decodeStream(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                guard let frame = try? RecordCodec.frame(in: raw, at: offset) else { return }
                guard frame.totalLength > 0, offset + frame.totalLength <= raw.count else {
                    finding(name, "frame at \(offset) claims \(frame.totalLength) bytes of \(raw.count - offset)")
                }
                decodePayload(frame, in: raw)
                offset += frame.totalLength
            }
        }
    }

    static func decodePayload(_ frame: RecordCodec.Frame, in raw: UnsafeRawBufferPointer) {
        switch frame.type {
        case .object, .metadata:
            guard let record = try? RecordCodec.valueRecord(frame, in: raw) else { return }
            guard record.valueStart >= frame.payloadStart,
                  record.valueStart + record.valueLength == frame.payloadStart + frame.payloadLength else {
                finding(name, "value bytes \(record.valueStart)+\(record.valueLength) outside the payload")
            }
            guard let value = try? RecordCodec.value(of: record, in: raw) else { return }
            checkValueRoundTrip(frame.type, record, value)
        case .remove:
            guard let (collection, key) = try? RecordCodec.removeRecord(frame, in: raw) else { return }
            var buffer: [UInt8] = []
            RecordCodec.appendRemove(collection: collection, key: key, into: &buffer)
            let again = reframe(buffer) { frame, raw in try? RecordCodec.removeRecord(frame, in: raw) }
            guard let again, again == (collection, key) else { finding(name, "remove record does not round-trip") }
        case .removeCollection:
            guard let collection = try? RecordCodec.removeCollectionRecord(frame, in: raw) else { return }
            var buffer: [UInt8] = []
            RecordCodec.appendRemoveCollection(collection, into: &buffer)
            let again = reframe(buffer) { frame, raw in try? RecordCodec.removeCollectionRecord(frame, in: raw) }
            guard again == collection else { finding(name, "remove-collection record does not round-trip") }
        case .extensionData:
            guard let (extensionName, payload) = try? RecordCodec.extensionDataRecord(frame, in: raw) else { return }
            var buffer: [UInt8] = []
            RecordCodec.appendExtensionData(name: extensionName, payload: payload, into: &buffer)
            let again = reframe(buffer) { frame, raw in try? RecordCodec.extensionDataRecord(frame, in: raw) }
            guard let again, again.name == extensionName, again.payload == payload else {
                finding(name, "extension data record does not round-trip")
            }
        case .commit:
            let info = RecordCodec.commitRecord(frame, in: raw)
            var buffer: [UInt8] = []
            RecordCodec.appendCommit(info, into: &buffer)
            guard buffer.count == RecordCodec.commitRecordSize,
                  reframe(buffer, { frame, raw in RecordCodec.commitRecord(frame, in: raw) }) == info else {
                finding(name, "commit record does not round-trip: \(info)")
            }
        case .checkpointIndexRoot:
            // Hostile root records: a typed error or a root that passes its own validation.
            let bytes = Array(UnsafeRawBufferPointer(rebasing: raw[frame.payloadStart..<(frame.payloadStart + frame.payloadLength)]))
            let uuid = bytes.count >= Format.headerUUIDOffset + 16 ? Array(bytes[Format.headerUUIDOffset..<(Format.headerUUIDOffset + 16)]) : []
            guard let root = try? IndexRoot.decode(bytes, path: "fuzz", uuid: uuid) else { return }
            if let damage = root.damage() { finding(name, "a decoded index root fails its own validation: \(damage)") }
        case .removeAll, .checkpointInfo, .checkpointEnd, .checkpointSegmentUsage, .checkpointPendingExtension:
            return
        }
    }

    /// Re-encodes a decoded value record (compressing when it pays) and decodes it again: every
    /// field and the value must come back.
    static func checkValueRoundTrip(_ type: RecordType, _ record: RecordCodec.ValueRecord, _ value: [UInt8]) {
        let nilMetadata = type == .metadata && record.noMetadata
        var buffer: [UInt8] = []
        value.withUnsafeBytes { bytes in
            _ = RecordCodec.appendValue(type, rowid: record.rowid, collection: record.collection, key: record.key,
                                        value: nilMetadata ? nil : bytes, noMetadata: record.noMetadata,
                                        compress: true, into: &buffer)
        }
        let again = reframe(buffer) { frame, raw -> (RecordCodec.ValueRecord, [UInt8])? in
            guard frame.type == type, let decoded = try? RecordCodec.valueRecord(frame, in: raw),
                  let decodedValue = try? RecordCodec.value(of: decoded, in: raw) else { return nil }
            return (decoded, decodedValue)
        }
        guard let (decoded, decodedValue) = again else { finding(name, "re-encoded \(type) record does not decode") }
        guard decoded.rowid == record.rowid, decoded.collection == record.collection, decoded.key == record.key,
              decoded.noMetadata == record.noMetadata, decodedValue == value else {
            finding(name, "\(type) record does not round-trip (rowid \(record.rowid), \(value.count) value bytes)")
        }
    }

    /// Frames the single record in `buffer` (which must be valid) and decodes it with `decode`.
    static func reframe<T>(_ buffer: [UInt8], _ decode: (RecordCodec.Frame, UnsafeRawBufferPointer) -> T?) -> T? {
        buffer.withUnsafeBytes { raw in
            guard let frame = try? RecordCodec.frame(in: raw, at: 0) else {
                finding(name, "a record the encoder wrote does not frame")
            }
            guard frame.totalLength == raw.count else { finding(name, "re-encoded record length \(frame.totalLength) of \(raw.count)") }
            return decode(frame, raw)
        }
    }

    // MARK: Recovery scan and checkpoint reader

    /// Scans a log segment holding `bytes` after a valid header, repairing it; a second scan of
    /// the repaired segment must find the same commits and no damage.
    static func scanAsSegment(_ bytes: [UInt8]) {
        let disk = SimulatedDisk()
        let files = DatabaseFiles(mainPath: mainPath)
        let header = FileHeader(kind: .logSegment, uuid: uuid, fileNumber: 1, baseSnapshot: 0, createdAtMilliseconds: 0)
        do throws(IOFailure) {
            try disk.mkdir("/fuzz")
            let file = try disk.open(files.segmentPath(1), mode: .createNew)
            try file.write(header.encoded() + bytes, at: 0)
            try file.sync()
            file.close()
            try disk.syncDirectory("/fuzz")
        } catch { finding(name, "simulated disk refused a segment: \(error)") }
        let scanner = LogScanner(files: files, fileSystem: disk, uuid: uuid)
        let start = LogPosition(segment: 1, offset: UInt32(Format.headerSize))
        var first: [CommitInfo] = []
        let report: ScanReport
        do throws(StorageError) {
            report = try scanner.scan(segments: [1], from: start, baseSnapshot: 0, repair: true) { first.append($0.info) }
        } catch {
            return   // corruption proven by a later commit: a typed error, as promised
        }
        guard report.commits == first.count else { finding(name, "scan reports \(report.commits) commits, applied \(first.count)") }
        let remaining = disk.kind(of: files.segmentPath(1)) == .file ? [UInt32(1)] : []
        var second: [CommitInfo] = []
        do throws(StorageError) {
            let again = try scanner.scan(segments: remaining, from: start, baseSnapshot: 0, repair: false) { second.append($0.info) }
            guard again.tornAt == nil else { finding(name, "repaired segment still torn at \(again.tornAt!): \(again.tornReason ?? "")") }
            guard again.lastSnapshot == report.lastSnapshot else {
                finding(name, "repaired segment ends at snapshot \(again.lastSnapshot), first scan at \(report.lastSnapshot)")
            }
        } catch {
            finding(name, "repaired segment fails to scan: \(error)")
        }
        guard second == first else { finding(name, "repaired segment yields \(second.count) commits, first scan \(first.count)") }
    }

    /// Reads a checkpoint holding `bytes` after a valid header (whose base snapshot is taken
    /// from the input's first record when it looks like an info record, so that check passes).
    static func readAsCheckpoint(_ bytes: [UInt8]) {
        let disk = SimulatedDisk()
        let files = DatabaseFiles(mainPath: mainPath)
        var snapshot: UInt64 = 0
        if bytes.count >= Format.recordHeaderSize + 8, bytes[Format.recordTypeOffset] == RecordType.checkpointInfo.rawValue {
            for index in 0..<8 { snapshot |= UInt64(bytes[Format.recordHeaderSize + index]) << UInt64(8 * index) }
        }
        let header = FileHeader(kind: .checkpoint, uuid: uuid, fileNumber: 1, baseSnapshot: snapshot, createdAtMilliseconds: 0)
        do throws(IOFailure) {
            try disk.mkdir("/fuzz")
            let file = try disk.open(files.checkpointPath(1), mode: .createNew)
            try file.write(header.encoded() + bytes, at: 0)
            file.close()
        } catch { finding(name, "simulated disk refused a checkpoint: \(error)") }
        var roots = 0
        do throws(StorageError) {
            _ = try CheckpointReader.read(files: files, fileSystem: disk, uuid: uuid, number: 1, indexRoot: { _ in roots += 1 })
            guard roots <= 1 else { finding(name, "checkpoint accepted with \(roots) index root records") }
        } catch {
            return
        }
    }
}
