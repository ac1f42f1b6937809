// Checkpoint files (docs/format.md §4): the payload layouts shared by `CheckpointWriter` and
// `CheckpointReader`. The framing of each record is `RecordCodec`'s (§3).

/// What a checkpoint's info record says about the image (docs/format.md §4).
package struct CheckpointInfo: Sendable, Equatable {
    /// The snapshot the image shows; also the header's base snapshot.
    package var snapshot: UInt64
    /// The rowid the next inserted row gets.
    package var nextRowid: UInt64
    /// Log commits at or after this position are replayed on top of the image at open.
    package var replay: LogPosition

    package init(snapshot: UInt64, nextRowid: UInt64, replay: LogPosition) {
        self.snapshot = snapshot
        self.nextRowid = nextRowid
        self.replay = replay
    }
}

/// An extension state a checkpoint carries while no registered extension has claimed it
/// (docs/format.md §4, record 23): its extension data records since its roots (or since it
/// was registered, when it has none), in commit order, and whether rows changed between its
/// roots and this checkpoint's replay position (those changes are no longer listed).
package struct CheckpointPendingExtension: Sendable, Equatable {
    package var name: String
    package var rowChangesLost: Bool
    package var records: [[UInt8]]

    package init(name: String, rowChangesLost: Bool, records: [[UInt8]]) {
        self.name = name
        self.rowChangesLost = rowChangesLost
        self.records = records
    }

    /// The payload size of its record.
    package var encodedSize: Int {
        varintSize(UInt64(name.utf8.count)) + name.utf8.count + 1 + varintSize(UInt64(records.count))
            + records.reduce(0) { $0 + varintSize(UInt64($1.count)) + $1.count }
    }
}

/// Payload encodings of the checkpoint record types 16, 19, 20, 22 and 23 (docs/format.md §4). Decoders take
/// exactly one record's payload and throw `ByteReader.Overrun` on anything malformed; the
/// reader turns that into `corrupted` with the record's file offset.
enum CheckpointCodec {
    // MARK: Encoding

    static func appendInfo(_ info: CheckpointInfo, into buffer: inout [UInt8]) {
        let start = RecordCodec.begin(.checkpointInfo, in: &buffer)
        buffer.appendLE(info.snapshot)
        buffer.appendLE(info.nextRowid)
        buffer.appendLE(info.replay.segment)
        buffer.appendLE(info.replay.offset)
        // Reserved: 8 + 4 + 4 bytes of zeros.
        buffer.appendLE(UInt64(0))
        buffer.appendLE(UInt32(0))
        buffer.appendLE(UInt32(0))
        _ = RecordCodec.finish(&buffer, start: start)
    }

    /// Appends a pending-extension record (type 23).
    static func appendPendingExtension(_ pending: CheckpointPendingExtension, into buffer: inout [UInt8]) {
        let start = RecordCodec.begin(.checkpointPendingExtension, in: &buffer)
        buffer.appendString(pending.name)
        buffer.append(pending.rowChangesLost ? 1 : 0)
        buffer.appendVarint(UInt64(pending.records.count))
        for record in pending.records {
            buffer.appendVarint(UInt64(record.count))
            buffer.append(contentsOf: record)
        }
        _ = RecordCodec.finish(&buffer, start: start)
    }

    /// Decodes a pending-extension record's payload: a non-empty name, a flags byte (bit 0
    /// only), a count (checked against the bytes left before anything is reserved), that many
    /// length-prefixed records of at most `Format.maxExtensionDataPayload` bytes, and nothing
    /// after.
    static func pendingExtension(_ payload: UnsafeRawBufferPointer) throws(ByteReader.Overrun) -> CheckpointPendingExtension {
        var reader = ByteReader(payload)
        let name = try reader.readString()
        guard !name.isEmpty else { throw ByteReader.Overrun(what: "empty extension name") }
        let flags = try reader.readU8()
        guard flags & ~1 == 0 else { throw ByteReader.Overrun(what: "unknown flags \(flags)") }
        let count = try reader.readLength(max: reader.remaining)
        var records: [[UInt8]] = []
        records.reserveCapacity(count)
        for _ in 0..<count {
            let length = try reader.readLength(max: Format.maxExtensionDataPayload)
            records.append(Array(try reader.readBytes(length)))
        }
        guard reader.isAtEnd else { throw ByteReader.Overrun(what: "bytes after the records") }
        return CheckpointPendingExtension(name: name, rowChangesLost: flags & 1 != 0, records: records)
    }

    /// Appends the segment-usage record, segments in ascending order.
    static func appendSegmentUsage(_ usage: [UInt32: UInt64], into buffer: inout [UInt8]) {
        let start = RecordCodec.begin(.checkpointSegmentUsage, in: &buffer)
        buffer.appendVarint(UInt64(usage.count))
        for segment in usage.keys.sorted() {
            buffer.appendVarint(UInt64(segment))
            buffer.appendVarint(usage[segment] ?? 0)
        }
        _ = RecordCodec.finish(&buffer, start: start)
    }

    /// Appends the end record. `checksum` is the unmasked CRC32C of every record before it.
    static func appendEnd(recordCount: UInt32, checksum: UInt32, into buffer: inout [UInt8]) {
        let start = RecordCodec.begin(.checkpointEnd, in: &buffer)
        buffer.appendLE(UInt64(0))
        buffer.appendLE(recordCount)
        buffer.appendLE(CRC32C.mask(checksum))
        _ = RecordCodec.finish(&buffer, start: start)
    }

    // MARK: Decoding

    static func info(_ payload: UnsafeRawBufferPointer) throws(ByteReader.Overrun) -> CheckpointInfo {
        guard payload.count == Format.checkpointInfoPayloadSize else { throw ByteReader.Overrun(what: "info payload of \(payload.count) bytes") }
        var reader = ByteReader(payload)
        let info = CheckpointInfo(
            snapshot: try reader.readU64(), nextRowid: try reader.readU64(),
            replay: LogPosition(segment: try reader.readU32(), offset: try reader.readU32()))
        guard try reader.readU64() == 0, try reader.readU32() == 0, try reader.readU32() == 0 else {
            throw ByteReader.Overrun(what: "info reserved bytes not zero")
        }
        guard info.nextRowid <= Format.rowidLimit else { throw ByteReader.Overrun(what: "next row id \(info.nextRowid) over the limit") }
        return info
    }

    /// Decodes the segment-usage payload: segments strictly ascending, each once.
    static func segmentUsage(_ payload: UnsafeRawBufferPointer) throws(ByteReader.Overrun) -> [UInt32: UInt64] {
        var reader = ByteReader(payload)
        // Each pair takes at least two bytes: bound the count before reserving anything.
        let most = reader.remaining / 2
        let count = try reader.readLength(max: most)
        var usage: [UInt32: UInt64] = [:]
        usage.reserveCapacity(count)
        var previous: Int = -1
        for _ in 0..<count {
            let segment = try reader.readLength(max: Int(UInt32.max))
            guard segment > previous else { throw ByteReader.Overrun(what: "segment \(segment) out of order") }
            previous = segment
            let bytes = try reader.readVarint()
            guard bytes <= Format.maxSegmentUsage else { throw ByteReader.Overrun(what: "usage \(bytes) of segment \(segment) over a segment's size") }
            usage[UInt32(segment)] = bytes
        }
        guard reader.isAtEnd else { throw ByteReader.Overrun(what: "trailing bytes after the segment usage") }
        return usage
    }

    static func end(_ payload: UnsafeRawBufferPointer) throws(ByteReader.Overrun) -> (recordCount: UInt32, checksum: UInt32) {
        guard payload.count == Format.checkpointEndPayloadSize else { throw ByteReader.Overrun(what: "end payload of \(payload.count) bytes") }
        var reader = ByteReader(payload)
        guard try reader.readU64() == 0 else { throw ByteReader.Overrun(what: "end reserved bytes not zero") }
        return (try reader.readU32(), CRC32C.unmask(try reader.readU32()))
    }
}
