/// Whose record a value read expects at a location: the row, by its row id, and which of its
/// values. A location comes from the key directory, whose pages a damaged disk or another
/// program can change under their checksum's nose; a record of another row (or the row's other
/// value) found there is `corrupted`, never handed out as this row's. Row ids are never reused,
/// so the row id decides the row: the record's collection and key need not be compared.
package struct ValueOwner: Sendable, Equatable {
    package var rowid: UInt64
    package var isMetadata: Bool

    /// The object record of row `rowid`.
    package static func object(_ rowid: UInt64) -> ValueOwner { ValueOwner(rowid: rowid, isMetadata: false) }
    /// The metadata record of row `rowid`.
    package static func metadata(_ rowid: UInt64) -> ValueOwner { ValueOwner(rowid: rowid, isMetadata: true) }

    /// Throws `.invalid` unless the value record `frame` with row id `rowid` is this owner's.
    @inline(__always)
    func check(_ frame: RecordCodec.Frame, rowid found: UInt64) throws(RecordCodec.FrameError) {
        guard found == rowid, (frame.type == .metadata) == isMetadata else {
            throw .invalid("a \(frame.type == .metadata ? "metadata" : "object") record of row \(found) where row \(rowid)'s \(isMetadata ? "metadata" : "object") should be")
        }
    }
}

/// Reads single records of committed data at a `RecordLocation`, checking the checksum.
///
/// Stateless; safe from any thread (it only calls `read` on the file it is given).
package enum SegmentReader {
    /// The whole record at `location`, verified: framing, checksum, and that it is exactly
    /// `location.length` bytes. Locations come from the keydir or a checkpoint, so their
    /// length is checked against the format's maximum before allocating.
    ///
    /// With `sealing` (an encrypted database's segment), `location` names the sealed frame:
    /// it is read, opened for its offset, and the plain record inside is returned and checked.
    package static func record(at location: RecordLocation, in file: any StorageFile, sealing: RecordSealing? = nil) throws(StorageError) -> [UInt8] {
        if let sealing { return try sealedRecord(at: location, in: file, sealing: sealing) }
        let length = Int(location.length)
        try RecordCodec.checkLocatedLength(length, offset: Int64(location.offset), path: file.path)
        let bytes: [UInt8]
        do { bytes = try file.readExactly(length, at: Int64(location.offset)) } catch {
            if error.isShortRead {
                throw .corrupted(offset: Int64(location.offset), reason: "\(Paths.fileName(of: file.path)): record runs past the end of the file")
            }
            throw .io(error)
        }
        _ = try bytes.withBytes { (raw) throws(StorageError) in
            try RecordCodec.locatedFrame(in: raw, offset: Int64(location.offset), path: file.path)
        }
        return bytes
    }

    /// A verified object or metadata record at `location`: its fields and its value
    /// (decompressed; nil for a nil-metadata record).
    package static func value(at location: RecordLocation, in file: any StorageFile,
                              sealing: RecordSealing? = nil) throws(StorageError) -> (RecordCodec.ValueRecord, [UInt8]?) {
        try decodeValue(try record(at: location, in: file, sealing: sealing), offset: Int64(location.offset), path: file.path)
    }

    /// The plain record inside the sealed frame at `location`, opened and checked as
    /// `record(at:in:)` checks a plain one (the frame's length first, before anything is read).
    static func sealedRecord(at location: RecordLocation, in file: any StorageFile, sealing: RecordSealing) throws(StorageError) -> [UInt8] {
        let length = Int(location.length)
        let offset = Int64(location.offset)
        try RecordSealing.checkLocatedLength(length, offset: offset, path: file.path)
        let frame: [UInt8]
        do { frame = try file.readExactly(length, at: offset) } catch {
            if error.isShortRead {
                throw .corrupted(offset: offset, reason: "\(Paths.fileName(of: file.path)): record runs past the end of the file")
            }
            throw .io(error)
        }
        let plain = try sealing.open(frame, at: offset, path: file.path)
        _ = try plain.withBytes { (raw) throws(StorageError) in try RecordCodec.locatedFrame(in: raw, offset: offset, path: file.path) }
        return plain
    }

    /// `value(at:in:)` for a record inside `mapped`, the bytes of the segment from its start
    /// (a memory map of a prefix that never shrinks): the same checks, no read and no copy of
    /// the record. `location` is bounds-checked against `mapped` before use.
    package static func value(at location: RecordLocation, inMapped mapped: UnsafeRawBufferPointer, path: String)
        throws(StorageError) -> (RecordCodec.ValueRecord, [UInt8]?) {
        try withRecord(at: location, inMapped: mapped, path: path) { (raw, frame) throws(StorageError) in
            try decodeValue(frame, in: raw, offset: Int64(location.offset), path: path)
        }
    }

    /// Decodes an object or metadata record held in `bytes` (already read, e.g. still staged).
    /// With `owner`, the record must be that row's object or metadata record (`corrupted` if not).
    package static func decodeValue(_ bytes: [UInt8], offset: Int64, path: String, owner: ValueOwner? = nil) throws(StorageError) -> (RecordCodec.ValueRecord, [UInt8]?) {
        try bytes.withBytes { (raw) throws(StorageError) -> (RecordCodec.ValueRecord, [UInt8]?) in
            let frame: RecordCodec.Frame
            do throws(RecordCodec.FrameError) { frame = try RecordCodec.frame(in: raw, at: 0) } catch {
                throw .corrupted(offset: offset, reason: "\(Paths.fileName(of: path)): \(error)")
            }
            return try decodeValue(frame, in: raw, offset: offset, path: path, owner: owner)
        }
    }

    /// Decodes the fields and value of the checked value-record `frame` in `raw`.
    static func decodeValue(_ frame: RecordCodec.Frame, in raw: UnsafeRawBufferPointer, offset: Int64, path: String,
                            owner: ValueOwner? = nil) throws(StorageError) -> (RecordCodec.ValueRecord, [UInt8]?) {
        do throws(RecordCodec.FrameError) {
            guard frame.type == .object || frame.type == .metadata else {
                throw .invalid("expected a value record, found type \(frame.type.rawValue)")
            }
            let record = try RecordCodec.valueRecord(frame, in: raw)
            try owner?.check(frame, rowid: record.rowid)
            if frame.type == .metadata && record.noMetadata { return (record, nil) }
            return (record, try RecordCodec.value(of: record, in: raw))
        } catch {
            throw .corrupted(offset: offset, reason: "\(Paths.fileName(of: path)): \(error)")
        }
    }

    // MARK: Fast paths (no intermediate arrays, no strings)

    /// Records up to this many bytes are read into a stack buffer by `withRecord`.
    static let stackRecordLimit = 4096

    /// Calls `body` with the bytes of the whole record at `location` after the same checks as
    /// `record(at:in:)` (length in range, framing, checksum, exactly `location.length` bytes),
    /// without allocating for records of up to `stackRecordLimit` bytes. The bytes are valid
    /// only during the call. Throws what `record(at:in:)` throws, or `body`'s error.
    package static func withRecord<R>(
        at location: RecordLocation, in file: any StorageFile, sealing: RecordSealing? = nil,
        _ body: (UnsafeRawBufferPointer, RecordCodec.Frame) throws(StorageError) -> R
    ) throws(StorageError) -> R {
        if let sealing {
            let plain = try sealedRecord(at: location, in: file, sealing: sealing)
            return try plain.withBytes { (raw) throws(StorageError) -> R in
                try body(raw, RecordCodec.locatedFrame(in: raw, offset: Int64(location.offset), path: file.path))
            }
        }
        let length = Int(location.length)
        try RecordCodec.checkLocatedLength(length, offset: Int64(location.offset), path: file.path)
        func run(_ buffer: UnsafeMutableRawBufferPointer) throws(StorageError) -> R {
            let got: Int
            do { got = try file.read(into: buffer, at: Int64(location.offset)) } catch { throw .io(error) }
            guard got == length else {
                throw .corrupted(offset: Int64(location.offset), reason: "\(Paths.fileName(of: file.path)): record runs past the end of the file")
            }
            let raw = UnsafeRawBufferPointer(buffer)
            return try body(raw, RecordCodec.locatedFrame(in: raw, offset: Int64(location.offset), path: file.path))
        }
        if length <= stackRecordLimit {
            return try withUnsafeTemporaryAllocation(byteCount: length, alignment: 8) { (buffer) throws(StorageError) -> R in try run(buffer) }
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: length, alignment: 8)
        defer { buffer.deallocate() }
        return try run(buffer)
    }

    /// `withRecord(at:in:_:)` for a record inside `mapped`, the bytes of the segment from its
    /// start: the location's length is checked against the format's maximum and the record
    /// against the end of `mapped` before any byte is touched, then framing, checksum and
    /// exact length as for a `pread` record. A record past the end of `mapped` is `corrupted`
    /// (callers fall back to `pread` for a location past their map before calling this).
    package static func withRecord<R>(
        at location: RecordLocation, inMapped mapped: UnsafeRawBufferPointer, path: String,
        _ body: (UnsafeRawBufferPointer, RecordCodec.Frame) throws(StorageError) -> R
    ) throws(StorageError) -> R {
        let length = Int(location.length)
        let offset = Int(location.offset)
        try RecordCodec.checkLocatedLength(length, offset: Int64(offset), path: path)
        guard offset <= mapped.count, length <= mapped.count - offset else {
            throw .corrupted(offset: Int64(offset), reason: "\(Paths.fileName(of: path)): record runs past the end of the mapped file")
        }
        let raw = UnsafeRawBufferPointer(rebasing: mapped[offset..<(offset + length)])
        return try body(raw, RecordCodec.locatedFrame(in: raw, offset: Int64(offset), path: path))
    }

    /// Calls `body` with the value of the verified object or metadata record at `location`:
    /// its bytes (decompressed if needed; nil for a nil-metadata record), valid only during
    /// the call. The checks are those of `value(at:in:)` except that the collection and key
    /// are skipped rather than decoded (the checksum covers them and they were valid UTF-8
    /// when written); use `value(at:in:)` to read them. One `pread`, no allocation for an
    /// uncompressed record of up to `stackRecordLimit` bytes.
    ///
    /// Not generic, as the other value readers are not: a generic function called from
    /// another module runs unspecialized, moving its result through the type's value
    /// witnesses, which cost more than the read (callers keep the result in a local).
    ///
    /// With `owner`, the record must be that row's object or metadata record (`corrupted` if not).
    package static func withValue(
        at location: RecordLocation, in file: any StorageFile, sealing: RecordSealing? = nil, owner: ValueOwner? = nil,
        _ body: (UnsafeRawBufferPointer?) throws(StorageError) -> Void
    ) throws(StorageError) {
        try withRecord(at: location, in: file, sealing: sealing) { (raw, frame) throws(StorageError) in
            try withValue(of: frame, in: raw, offset: Int64(location.offset), path: file.path, owner: owner, body)
        }
    }

    /// `withValue(at:in:_:)` for a record inside `mapped`, the bytes of the segment from its
    /// start (a memory map of a prefix that never shrinks): the same checks, the checksum
    /// included, with no system call and no copy (an uncompressed value is handed out where it
    /// lies in the map). `location` is bounds-checked against `mapped` before use.
    package static func withValue(
        at location: RecordLocation, inMapped mapped: UnsafeRawBufferPointer, path: String, owner: ValueOwner? = nil,
        _ body: (UnsafeRawBufferPointer?) throws(StorageError) -> Void
    ) throws(StorageError) {
        try withRecord(at: location, inMapped: mapped, path: path) { (raw, frame) throws(StorageError) in
            try withValue(of: frame, in: raw, offset: Int64(location.offset), path: path, owner: owner, body)
        }
    }

    /// `withValue(at:inMapped:path:_:)` for a record an index expects to be the object of row
    /// `rowid` (a location kept outside the key directory): true after calling `body`; false,
    /// without calling it, when the checked record there is not an object record of that row.
    /// Damage throws as for `withValue`.
    package static func withObject(
        at location: RecordLocation, inMapped mapped: UnsafeRawBufferPointer, path: String, ofRowid rowid: UInt64,
        _ body: (UnsafeRawBufferPointer?) throws(StorageError) -> Void
    ) throws(StorageError) -> Bool {
        try withRecord(at: location, inMapped: mapped, path: path) { (raw, frame) throws(StorageError) in
            try withValue(of: frame, in: raw, offset: Int64(location.offset), path: path, ofRowid: rowid, body)
        }
    }

    /// `withObject(at:inMapped:path:ofRowid:_:)` read with one `pread`.
    package static func withObject(
        at location: RecordLocation, in file: any StorageFile, sealing: RecordSealing? = nil, ofRowid rowid: UInt64,
        _ body: (UnsafeRawBufferPointer?) throws(StorageError) -> Void
    ) throws(StorageError) -> Bool {
        try withRecord(at: location, in: file, sealing: sealing) { (raw, frame) throws(StorageError) in
            try withValue(of: frame, in: raw, offset: Int64(location.offset), path: file.path, ofRowid: rowid, body)
        }
    }

    /// Calls `body` with the value of the checked value-record `frame` in `raw` (decompressed
    /// if needed; nil for a nil-metadata record). With `rowid`, only an object record of that
    /// row is read: false, without calling `body`, for any other. With `owner`, any record but
    /// the owner's is `corrupted`.
    @discardableResult
    private static func withValue(
        of frame: RecordCodec.Frame, in raw: UnsafeRawBufferPointer, offset: Int64, path: String, ofRowid rowid: UInt64? = nil,
        owner: ValueOwner? = nil, _ body: (UnsafeRawBufferPointer?) throws(StorageError) -> Void
    ) throws(StorageError) -> Bool {
        let value: UnsafeRawBufferPointer?
        do throws(RecordCodec.FrameError) {
            let parts = try valueParts(frame, in: raw)
            if let rowid, frame.type != .object || parts.rowid != rowid { return false }
            try owner?.check(frame, rowid: parts.rowid)
            value = parts.value
        } catch {
            throw .corrupted(offset: offset, reason: "\(Paths.fileName(of: path)): \(error)")
        }
        guard let value else {
            try body(nil)
            return true
        }
        guard frame.flags & Format.flagCompressed != 0 else {
            try body(value)
            return true
        }
        let decompressed: [UInt8]
        do throws(RecordCodec.FrameError) {
            decompressed = try RecordCodec.decompress(value, maxRawLength: Format.maxValueSize, what: "compressed value")
        } catch {
            throw .corrupted(offset: offset, reason: "\(Paths.fileName(of: path)): \(error)")
        }
        try decompressed.withBytes { (bytes) throws(StorageError) in try body(bytes) }
        return true
    }

    /// The fields of a checked value-record frame as raw bytes, nothing decoded: the rowid,
    /// the collection and key bytes (lengths checked, UTF-8 not validated) and the stored,
    /// possibly compressed, value bytes (nil for a nil-metadata record). Throws `.invalid` for
    /// any other record type or a malformed payload.
    package static func valueParts(_ frame: RecordCodec.Frame, in raw: UnsafeRawBufferPointer) throws(RecordCodec.FrameError)
        -> (rowid: UInt64, collection: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?) {
        guard frame.type == .object || frame.type == .metadata else {
            throw .invalid("expected a value record, found type \(frame.type.rawValue)")
        }
        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: raw[frame.payloadStart..<(frame.payloadStart + frame.payloadLength)]))
        let rowid: UInt64, collection: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer
        do throws(ByteReader.Overrun) {
            rowid = try reader.readVarint()
            collection = try reader.readBytes(try reader.readLength(max: Format.maxKeyLength))
            key = try reader.readBytes(try reader.readLength(max: Format.maxKeyLength))
        } catch {
            throw .invalid("value record: \(error.what)")
        }
        if frame.type == .metadata && frame.flags & Format.flagNoMetadata != 0 {
            guard reader.isAtEnd else { throw .invalid("value record: nil metadata record with value bytes") }
            return (rowid, collection, key, nil)
        }
        return (rowid, collection, key, UnsafeRawBufferPointer(rebasing: reader.bytes[reader.position...]))
    }

    /// The stored (possibly compressed) value bytes of a checked value-record frame (see
    /// `valueParts`).
    static func valueBytes(_ frame: RecordCodec.Frame, in raw: UnsafeRawBufferPointer) throws(RecordCodec.FrameError) -> UnsafeRawBufferPointer? {
        try valueParts(frame, in: raw).value
    }
}
