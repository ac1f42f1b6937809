// KeydirEntry+PageCodec: the value bytes a key-ordered collection tree stores for a key — row
// id, object location, optional metadata location — in a compact varint form (docs/format.md,
// "Index pages").

extension KeydirEntry {
    /// The largest encoded size: flags, a 10-byte row id, two locations of three varints (each
    /// field's varint is at most 10 bytes, so the format can widen `offset` to 64 bits later).
    package static let maximumPageEncodedSize = 1 + 10 + 2 * 30

    /// The tree value bytes: one flags byte (bit 0: has metadata; other bits zero), the row id as
    /// an unsigned LEB128 varint, then the object location and, if flagged, the metadata
    /// location, each as three varints (segment, offset, length).
    package var pageEncoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        bytes.append(metadata == nil ? 0 : 1)
        appendVarint(rowid, to: &bytes)
        appendLocation(object, to: &bytes)
        if let metadata { appendLocation(metadata, to: &bytes) }
        return bytes
    }

    /// Decodes tree value bytes; nil unless they are exactly one well-formed entry (known flags,
    /// varints neither truncated nor overlong, fields within their types, no trailing bytes).
    /// Never traps.
    package init?(pageEncoded bytes: UnsafeRawBufferPointer) {
        guard let flags = bytes.first, flags <= 1 else { return nil }
        var cursor = 1
        guard let rowid = readVarint(bytes, &cursor), let object = readLocation(bytes, &cursor) else { return nil }
        var metadata: ValueLocation? = nil
        if flags == 1 {
            guard let location = readLocation(bytes, &cursor) else { return nil }
            metadata = location
        }
        guard cursor == bytes.count else { return nil }
        self.init(rowid: rowid, object: object, metadata: metadata)
    }
}

/// Appends a location's three varints.
private func appendLocation(_ location: ValueLocation, to bytes: inout [UInt8]) {
    appendVarint(UInt64(location.segment), to: &bytes)
    appendVarint(UInt64(location.offset), to: &bytes)
    appendVarint(UInt64(location.length), to: &bytes)
}

/// Reads a location's three varints; nil if any is malformed or out of its field's range.
private func readLocation(_ bytes: UnsafeRawBufferPointer, _ cursor: inout Int) -> ValueLocation? {
    guard let segment = readVarint(bytes, &cursor), let offset = readVarint(bytes, &cursor),
          let length = readVarint(bytes, &cursor),
          let segment32 = UInt32(exactly: segment), let offset32 = UInt32(exactly: offset),
          let length32 = UInt32(exactly: length) else { return nil }
    return ValueLocation(segment: segment32, offset: offset32, length: length32)
}

/// Appends `value` as an unsigned LEB128 varint.
func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
    var rest = value
    while rest >= 0x80 {
        bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
        rest >>= 7
    }
    bytes.append(UInt8(rest))
}

/// Reads an unsigned LEB128 varint at `cursor`: nil if truncated, longer than ten bytes,
/// beyond 64 bits, or not minimal (a trailing zero byte).
func readVarint(_ bytes: UnsafeRawBufferPointer, _ cursor: inout Int) -> UInt64? {
    var value: UInt64 = 0
    for shift in stride(from: 0, to: 70, by: 7) {
        guard cursor < bytes.count else { return nil }
        let byte = bytes[cursor]
        cursor += 1
        if shift == 63 && byte > 1 { return nil }
        if byte == 0 && shift > 0 { return nil }  // non-minimal: one encoding per value
        value |= UInt64(byte & 0x7F) << UInt64(shift)
        if byte & 0x80 == 0 { return value }
    }
    return nil
}

extension PagedBTree {
    /// The entry stored for `key` in a collection tree, decoded straight from the page bytes
    /// (no allocation for a clean page), or nil if absent. O(log n).
    /// - Throws: `PageError` if a page on the path cannot be read or is damaged, including a
    ///   value that is not a well-formed entry (`.corrupt(page: .none, reason: .badEntry)`).
    package func entry(forKey key: [UInt8]) throws(PageError) -> KeydirEntry? {
        var entry: KeydirEntry? = nil, malformed = false
        try withValue(forKey: key) { bytes in
            entry = KeydirEntry(pageEncoded: bytes)
            malformed = entry == nil
        }
        if malformed { throw .corrupt(page: .none, reason: .badEntry) }
        return entry
    }
}
