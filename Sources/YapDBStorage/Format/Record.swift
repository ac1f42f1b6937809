/// Encoding and decoding of records (docs/format.md §3, §4). One codec for log segments,
/// compaction segments and checkpoints.
package enum RecordCodec {
    // MARK: Encoding

    /// Starts a record of `type` at the end of `buffer`; returns its start offset in `buffer`.
    /// Finish it with `finish(_:start:)` after appending the payload.
    @inline(__always)
    package static func begin(_ type: RecordType, flags: UInt8 = 0, in buffer: inout [UInt8]) -> Int {
        let start = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: Format.recordHeaderSize))
        buffer[start + Format.recordTypeOffset] = type.rawValue
        buffer[start + Format.recordFlagsOffset] = flags
        return start
    }

    /// Fills in the length and the checksum of the record begun at `start`; returns its length.
    package static func finish(_ buffer: inout [UInt8], start: Int) -> Int {
        let payload = buffer.count - start - Format.recordHeaderSize
        precondition(payload <= Format.maxRecordPayload, "record payload \(payload) over the format limit")
        buffer.storeLE(UInt32(payload), at: start + Format.recordLengthOffset)
        let crc = buffer.withUnsafeBytes { raw in
            CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[(start + 4)...]))
        }
        buffer.storeLE(CRC32C.mask(crc), at: start)
        return buffer.count - start
    }

    /// Appends an object or metadata record. `value` nil (metadata records only) means the
    /// metadata becomes nil. Compresses the value when `compress` is set and it pays.
    /// Returns the record's start offset in `buffer` and its length.
    package static func appendValue(
        _ type: RecordType, rowid: UInt64, collection: String, key: String,
        value: UnsafeRawBufferPointer?, noMetadata: Bool, compress: Bool,
        into buffer: inout [UInt8]
    ) -> (start: Int, length: Int) {
        precondition(type == .object || type == .metadata, "appendValue takes object or metadata")
        var flags: UInt8 = noMetadata ? Format.flagNoMetadata : 0
        let compressed = compress ? value.flatMap(compressIfItPays) : nil
        if compressed != nil { flags |= Format.flagCompressed }
        let start = begin(type, flags: flags, in: &buffer)
        buffer.appendVarint(rowid)
        buffer.appendString(collection)
        buffer.appendString(key)
        if let compressed, let value {
            buffer.appendVarint(UInt64(value.count))
            buffer.append(contentsOf: compressed)
        } else if let value {
            buffer.append(contentsOf: value)
        }
        return (start, finish(&buffer, start: start))
    }

    /// The LZ4 block of `raw` when compressing pays (docs/format.md §3, compression choice):
    /// `raw` is at least `Format.compressionMinimum` bytes and the block plus its varint raw
    /// length saves at least 1/8 of the raw size. Nil means: store `raw` as is.
    package static func compressIfItPays(_ raw: UnsafeRawBufferPointer) -> [UInt8]? {
        guard raw.count >= Format.compressionMinimum, let packed = LZ4.compress(raw),
              packed.count + varintSize(UInt64(raw.count)) <= raw.count - raw.count / 8 else { return nil }
        return packed
    }

    /// Appends a remove record.
    package static func appendRemove(collection: String, key: String, into buffer: inout [UInt8]) {
        let start = begin(.remove, in: &buffer)
        buffer.appendString(collection)
        buffer.appendString(key)
        _ = finish(&buffer, start: start)
    }

    /// Appends a remove-collection record.
    package static func appendRemoveCollection(_ collection: String, into buffer: inout [UInt8]) {
        let start = begin(.removeCollection, in: &buffer)
        buffer.appendString(collection)
        _ = finish(&buffer, start: start)
    }

    /// Appends a remove-all record.
    package static func appendRemoveAll(into buffer: inout [UInt8]) {
        _ = finish(&buffer, start: begin(.removeAll, in: &buffer))
    }

    /// Appends an extension data record: `name` (non-empty, ≤ `Format.maxKeyLength` UTF-8
    /// bytes) and the extension's `payload` (≤ `Format.maxExtensionDataPayload` bytes; callers
    /// check both).
    package static func appendExtensionData(name: String, payload: [UInt8], into buffer: inout [UInt8]) {
        let start = begin(.extensionData, in: &buffer)
        buffer.appendString(name)
        buffer.append(contentsOf: payload)
        _ = finish(&buffer, start: start)
    }

    /// Appends a commit record.
    package static func appendCommit(_ info: CommitInfo, into buffer: inout [UInt8]) {
        let start = begin(.commit, in: &buffer)
        buffer.appendLE(info.snapshot)
        buffer.appendLE(info.recordCount)
        buffer.appendLE(CRC32C.mask(info.recordsChecksum))
        buffer.appendLE(info.recordsLength)
        buffer.appendLE(info.durableThrough.segment)
        buffer.appendLE(info.durableThrough.offset)
        _ = finish(&buffer, start: start)
    }

    /// Size of a commit record on disk.
    package static let commitRecordSize = Format.recordHeaderSize + Format.commitPayloadSize

    // MARK: Decoding

    /// The framing of one record, checked: type known, flags allowed for the type, length
    /// within the bytes available and the format's maximum, checksum matching.
    package struct Frame: Sendable {
        package var type: RecordType
        package var flags: UInt8
        /// Offset of the payload in the buffer the frame was read from.
        package var payloadStart: Int
        package var payloadLength: Int
        package var totalLength: Int { Format.recordHeaderSize + payloadLength }
    }

    /// Why a frame failed its checks.
    package enum FrameError: Error, Sendable, Equatable {
        /// Fewer bytes than a header, or than the length claims: possibly a torn write.
        case truncated
        /// The bytes are not a valid record.
        case invalid(String)
    }

    /// Reads and checks the record starting at `offset` of `bytes`.
    package static func frame(in bytes: UnsafeRawBufferPointer, at offset: Int) throws(FrameError) -> Frame {
        guard offset >= 0, bytes.count - offset >= Format.recordHeaderSize else { throw .truncated }
        let typeByte = bytes[offset + Format.recordTypeOffset]
        guard let type = RecordType(rawValue: typeByte) else { throw .invalid("unknown record type \(typeByte)") }
        let flags = bytes[offset + Format.recordFlagsOffset]
        let allowed: UInt8
        switch type {
        case .object, .metadata: allowed = Format.flagCompressed | Format.flagNoMetadata
        case .remove, .removeCollection, .removeAll, .commit, .extensionData, .checkpointInfo,
             .checkpointEnd, .checkpointSegmentUsage, .checkpointIndexRoot, .checkpointPendingExtension: allowed = 0
        }
        guard flags & ~allowed == 0 else { throw .invalid("flags \(flags) not allowed on record type \(typeByte)") }
        let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + Format.recordLengthOffset, as: UInt32.self)))
        guard length <= Format.maxRecordPayload else { throw .invalid("record length \(length) over the maximum") }
        if type == .commit && length != Format.commitPayloadSize { throw .invalid("commit record length \(length)") }
        guard bytes.count - offset - Format.recordHeaderSize >= length else { throw .truncated }
        let stored = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
        let actual = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[(offset + 4)..<(offset + Format.recordHeaderSize + length)]))
        guard CRC32C.unmask(stored) == actual else { throw .invalid("record checksum mismatch") }
        return Frame(type: type, flags: flags, payloadStart: offset + Format.recordHeaderSize, payloadLength: length)
    }

    /// The fields of an object or metadata record, with where its value bytes sit.
    package struct ValueRecord: Sendable {
        package var rowid: UInt64
        package var collection: String
        package var key: String
        package var flags: UInt8
        package var valueStart: Int
        package var valueLength: Int
        package var noMetadata: Bool { flags & Format.flagNoMetadata != 0 }
    }

    /// Parses the payload of an object or metadata record.
    package static func valueRecord(_ frame: Frame, in bytes: UnsafeRawBufferPointer) throws(FrameError) -> ValueRecord {
        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[frame.payloadStart..<(frame.payloadStart + frame.payloadLength)]))
        do throws(ByteReader.Overrun) {
            let rowid = try reader.readVarint()
            guard rowid < Format.rowidLimit else { throw ByteReader.Overrun(what: "row id \(rowid) over the limit") }
            let collection = try reader.readString()
            let key = try reader.readString()
            if frame.type == .metadata && frame.flags & Format.flagNoMetadata != 0 && !reader.isAtEnd {
                throw ByteReader.Overrun(what: "nil metadata record with value bytes")
            }
            return ValueRecord(rowid: rowid, collection: collection, key: key, flags: frame.flags,
                               valueStart: frame.payloadStart + reader.position, valueLength: reader.remaining)
        } catch {
            throw .invalid("value record: \(error.what)")
        }
    }

    /// The value of a value record, decompressed and size-checked.
    package static func value(of record: ValueRecord, in bytes: UnsafeRawBufferPointer) throws(FrameError) -> [UInt8] {
        let raw = UnsafeRawBufferPointer(rebasing: bytes[record.valueStart..<(record.valueStart + record.valueLength)])
        guard record.flags & Format.flagCompressed != 0 else { return Array(raw) }
        return try decompress(raw, maxRawLength: Format.maxValueSize, what: "compressed value")
    }

    /// Decodes compressed bytes: a varint raw length (≤ `maxRawLength` and ≤ what the block
    /// can hold, both checked before allocating) followed by an LZ4 block that decompresses to
    /// exactly that many bytes.
    /// Throws `.invalid` naming `what` otherwise.
    package static func decompress(_ raw: UnsafeRawBufferPointer, maxRawLength: Int, what: String) throws(FrameError) -> [UInt8] {
        var reader = ByteReader(raw)
        let rawLength: Int
        do { rawLength = try reader.readLength(max: maxRawLength) } catch { throw .invalid("\(what): \(error.what)") }
        let block = UnsafeRawBufferPointer(rebasing: raw[reader.position...])
        guard rawLength <= LZ4.maxDecompressedSize(blockSize: block.count) else {
            throw .invalid("\(what): declared \(rawLength) bytes, more than an LZ4 block of \(block.count) bytes can hold")
        }
        guard let output = LZ4.decompress(block, rawLength: rawLength) else {
            throw .invalid("\(what): LZ4 block does not decompress to its declared \(rawLength) bytes")
        }
        return output
    }

    /// Parses a remove record: (collection, key).
    package static func removeRecord(_ frame: Frame, in bytes: UnsafeRawBufferPointer) throws(FrameError) -> (collection: String, key: String) {
        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[frame.payloadStart..<(frame.payloadStart + frame.payloadLength)]))
        do throws(ByteReader.Overrun) {
            let collection = try reader.readString()
            let key = try reader.readString()
            guard reader.isAtEnd else { throw ByteReader.Overrun(what: "trailing bytes") }
            return (collection, key)
        } catch { throw .invalid("remove record: \(error.what)") }
    }

    /// Parses a remove-collection record.
    package static func removeCollectionRecord(_ frame: Frame, in bytes: UnsafeRawBufferPointer) throws(FrameError) -> String {
        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[frame.payloadStart..<(frame.payloadStart + frame.payloadLength)]))
        do throws(ByteReader.Overrun) {
            let collection = try reader.readString()
            guard reader.isAtEnd else { throw ByteReader.Overrun(what: "trailing bytes") }
            return collection
        } catch { throw .invalid("remove-collection record: \(error.what)") }
    }

    /// Parses an extension data record: the extension's name (non-empty, ≤
    /// `Format.maxKeyLength` bytes of valid UTF-8) and its payload (the rest of the record, ≤
    /// `Format.maxExtensionDataPayload` bytes). The payload is the extension's to check.
    package static func extensionDataRecord(_ frame: Frame, in bytes: UnsafeRawBufferPointer) throws(FrameError) -> (name: String, payload: [UInt8]) {
        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[frame.payloadStart..<(frame.payloadStart + frame.payloadLength)]))
        do throws(ByteReader.Overrun) {
            let name = try reader.readString()
            guard !name.isEmpty else { throw ByteReader.Overrun(what: "empty extension name") }
            guard reader.remaining <= Format.maxExtensionDataPayload else {
                throw ByteReader.Overrun(what: "extension payload of \(reader.remaining) bytes over the limit")
            }
            return (name, Array(try reader.readBytes(reader.remaining)))
        } catch { throw .invalid("extension data record: \(error.what)") }
    }

    /// Parses a commit record.
    package static func commitRecord(_ frame: Frame, in bytes: UnsafeRawBufferPointer) -> CommitInfo {
        let p = frame.payloadStart
        func u32(_ o: Int) -> UInt32 { UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: p + o, as: UInt32.self)) }
        func u64(_ o: Int) -> UInt64 { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: p + o, as: UInt64.self)) }
        return CommitInfo(
            snapshot: u64(0), recordCount: u32(8), recordsChecksum: CRC32C.unmask(u32(12)),
            recordsLength: u64(16), durableThrough: LogPosition(segment: u32(24), offset: u32(28)))
    }
}

/// The fields of a commit record (docs/format.md §3).
package struct CommitInfo: Hashable, Sendable {
    package var snapshot: UInt64
    package var recordCount: UInt32
    package var recordsChecksum: UInt32
    package var recordsLength: UInt64
    package var durableThrough: LogPosition

    package init(snapshot: UInt64, recordCount: UInt32, recordsChecksum: UInt32, recordsLength: UInt64, durableThrough: LogPosition) {
        self.snapshot = snapshot
        self.recordCount = recordCount
        self.recordsChecksum = recordsChecksum
        self.recordsLength = recordsLength
        self.durableThrough = durableThrough
    }
}
