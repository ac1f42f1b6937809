/// A bounds-checked cursor over bytes read from disk. Every read checks the bytes remaining
/// first and throws `ByteReader.Overrun` instead of trapping; callers turn that into
/// `StorageError.corrupted` with the file offset.
///
/// It borrows the buffer: use it only inside the `withUnsafeBytes` call that provided it.
package struct ByteReader {
    /// Reading past the end, or a malformed varint.
    package struct Overrun: Error, Sendable {
        package var what: String
    }

    package let bytes: UnsafeRawBufferPointer
    package private(set) var position: Int

    package init(_ bytes: UnsafeRawBufferPointer, position: Int = 0) {
        self.bytes = bytes
        self.position = position
    }

    package var remaining: Int { bytes.count - position }
    package var isAtEnd: Bool { position >= bytes.count }

    package mutating func readU8() throws(Overrun) -> UInt8 {
        guard remaining >= 1 else { throw Overrun(what: "u8") }
        defer { position += 1 }
        return bytes[position]
    }

    package mutating func readU32() throws(Overrun) -> UInt32 {
        guard remaining >= 4 else { throw Overrun(what: "u32") }
        defer { position += 4 }
        return UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt32.self))
    }

    package mutating func readU64() throws(Overrun) -> UInt64 {
        guard remaining >= 8 else { throw Overrun(what: "u64") }
        defer { position += 8 }
        return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self))
    }

    /// Reads an unsigned LEB128 varint of at most 10 bytes that fits a `UInt64`. A one-byte
    /// varint (under 128: most lengths) is read inline.
    @inline(__always)
    package mutating func readVarint() throws(Overrun) -> UInt64 {
        if position < bytes.count {
            let byte = bytes[position]
            if byte < 0x80 {
                position &+= 1
                return UInt64(byte)
            }
        }
        return try readLongVarint()
    }

    /// `readVarint` for a varint of more than one byte (or none left).
    private mutating func readLongVarint() throws(Overrun) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard remaining >= 1 else { throw Overrun(what: "varint") }
            let byte = bytes[position]
            position += 1
            if shift == 63 && byte > 1 { throw Overrun(what: "varint overflow") }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { throw Overrun(what: "varint too long") }
        }
    }

    /// Reads a varint that must be ≤ `limit`, as an `Int`.
    @inline(__always)
    package mutating func readLength(max limit: Int) throws(Overrun) -> Int {
        let value = try readVarint()
        guard value <= UInt64(limit) else { throw Overrun(what: "length \(value) over limit \(limit)") }
        return Int(value)
    }

    /// The next `count` bytes, as a slice of the borrowed buffer.
    @inline(__always)
    package mutating func readBytes(_ count: Int) throws(Overrun) -> UnsafeRawBufferPointer {
        guard count >= 0, remaining >= count else { throw Overrun(what: "\(count) bytes") }
        // Checked above: `position + count` is within the buffer (an empty one has no base).
        let slice = UnsafeRawBufferPointer(start: bytes.baseAddress.map { $0 + position }, count: count)
        position &+= count
        return slice
    }

    /// A varint length (≤ `Format.maxKeyLength`) followed by that many bytes of valid UTF-8.
    package mutating func readString() throws(Overrun) -> String {
        let length = try readLength(max: Format.maxKeyLength)
        let raw = try readBytes(length)
        let utf8 = raw.bindMemory(to: UInt8.self)
        // ASCII is valid UTF-8: skip the generic validating initializer, which costs more than
        // the rest of an entry's decoding (measured on checkpoint reads).
        if !utf8.contains(where: { $0 >= 0x80 }) { return String(decoding: utf8, as: UTF8.self) }
        guard let string = String(validating: utf8, as: UTF8.self) else {
            throw Overrun(what: "invalid UTF-8")
        }
        return string
    }

    /// Moves the cursor to `offset` (checked).
    package mutating func seek(to offset: Int) throws(Overrun) {
        guard offset >= 0, offset <= bytes.count else { throw Overrun(what: "seek \(offset)") }
        position = offset
    }
}
