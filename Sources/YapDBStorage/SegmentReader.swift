/// Reads single records of committed data at a `RecordLocation`, checking the checksum.
///
/// Stateless; safe from any thread (it only calls `read` on the file it is given).
package enum SegmentReader {
    /// The whole record at `location`, verified: framing, checksum, and that it is exactly
    /// `location.length` bytes. Locations come from the keydir or a checkpoint, so their
    /// length is checked against the format's maximum before allocating.
    package static func record(at location: RecordLocation, in file: any StorageFile) throws(StorageError) -> [UInt8] {
        let length = Int(location.length)
        guard length >= Format.recordHeaderSize, length <= Format.recordHeaderSize + Format.maxRecordPayload else {
            throw .corrupted(offset: Int64(location.offset), reason: "\(Paths.fileName(of: file.path)): record length \(length) out of range")
        }
        let bytes: [UInt8]
        do { bytes = try file.readExactly(length, at: Int64(location.offset)) } catch {
            if error.operation == "short read" {
                throw .corrupted(offset: Int64(location.offset), reason: "\(Paths.fileName(of: file.path)): record runs past the end of the file")
            }
            throw .io(error)
        }
        let frameLength: Int
        do throws(RecordCodec.FrameError) {
            frameLength = try bytes.withBytes { (raw) throws(RecordCodec.FrameError) -> Int in try RecordCodec.frame(in: raw, at: 0).totalLength }
        } catch {
            throw .corrupted(offset: Int64(location.offset), reason: "\(Paths.fileName(of: file.path)): \(error)")
        }
        guard frameLength == length else {
            throw .corrupted(offset: Int64(location.offset), reason: "\(Paths.fileName(of: file.path)): record length differs from the index")
        }
        return bytes
    }

    /// A verified object or metadata record at `location`: its fields and its value
    /// (decompressed; nil for a nil-metadata record).
    package static func value(at location: RecordLocation, in file: any StorageFile) throws(StorageError) -> (RecordCodec.ValueRecord, [UInt8]?) {
        try decodeValue(try record(at: location, in: file), offset: Int64(location.offset), path: file.path)
    }

    /// Decodes an object or metadata record held in `bytes` (already read, e.g. still staged).
    package static func decodeValue(_ bytes: [UInt8], offset: Int64, path: String) throws(StorageError) -> (RecordCodec.ValueRecord, [UInt8]?) {
        do throws(RecordCodec.FrameError) {
            return try bytes.withBytes { (raw) throws(RecordCodec.FrameError) -> (RecordCodec.ValueRecord, [UInt8]?) in
                let frame = try RecordCodec.frame(in: raw, at: 0)
                guard frame.type == .object || frame.type == .metadata else {
                    throw .invalid("expected a value record, found type \(frame.type.rawValue)")
                }
                let record = try RecordCodec.valueRecord(frame, in: raw)
                if frame.type == .metadata && record.noMetadata { return (record, nil) }
                return (record, try RecordCodec.value(of: record, in: raw))
            }
        } catch {
            throw .corrupted(offset: offset, reason: "\(Paths.fileName(of: path)): \(error)")
        }
    }
}
