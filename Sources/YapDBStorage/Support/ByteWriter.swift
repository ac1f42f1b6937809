/// Little-endian and varint encoding into a growable byte array (docs/format.md).
extension Array where Element == UInt8 {
    package mutating func appendLE(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value)); append(UInt8(truncatingIfNeeded: value >> 8))
    }

    package mutating func appendLE(_ value: UInt32) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    package mutating func appendLE(_ value: UInt64) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    /// Appends `value` as an unsigned LEB128 varint (1 to 10 bytes).
    package mutating func appendVarint(_ value: UInt64) {
        var v = value
        while v >= 0x80 { append(UInt8(truncatingIfNeeded: v) | 0x80); v >>= 7 }
        append(UInt8(truncatingIfNeeded: v))
    }

    /// Appends a varint length followed by the string's UTF-8 bytes.
    package mutating func appendString(_ string: String) {
        var s = string
        s.withUTF8 { utf8 in
            appendVarint(UInt64(utf8.count))
            append(contentsOf: utf8)
        }
    }

    /// Overwrites four bytes at `offset` with `value`, little-endian.
    package mutating func storeLE(_ value: UInt32, at offset: Int) {
        precondition(offset >= 0 && offset + 4 <= count, "storeLE out of range")
        withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self) }
    }
}

/// Number of bytes `appendVarint(value)` writes.
package func varintSize(_ value: UInt64) -> Int {
    var v = value, n = 1
    while v >= 0x80 { v >>= 7; n += 1 }
    return n
}

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` that keeps the body's typed error.
    @inlinable
    package func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        var result: Result<R, E>?
        withUnsafeBytes { raw in result = Result { () throws(E) -> R in try body(raw) } }
        return try result!.get()
    }
}
