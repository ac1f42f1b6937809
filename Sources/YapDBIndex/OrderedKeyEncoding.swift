// OrderedKeyEncoding: byte strings whose memcmp order is the order of the values they encode
// (SQLite's order for NULL, numbers, text and blobs), for the keys of key-ordered trees.

/// Encodes values into byte strings whose memcmp order is SQLite's value order: NULL, then every
/// number (integers and reals interleaved by exact numeric value), then text (UTF-8 bytes in
/// memcmp order, SQLite's BINARY collation), then blobs (memcmp order). Every encoding is
/// prefix-free, so a suffix appended after it (a row id) orders entries with equal values.
///
/// **Numbers.** A non-zero finite number is `m × 2^e` exactly, with `m` an integer (an `Int64`'s
/// magnitude, or a double's significand). It is written as the position of its leading one bit
/// (two bytes, biased) and the 64 bits after that bit (left-aligned), so an integer and a real
/// of equal value encode to the same bytes, and no `Int64` or double loses a bit. Negative
/// numbers invert those ten bytes. Zero (and -0.0) is one byte; infinities use the extreme
/// exponents. NaN has no encoding (SQLite stores it as NULL).
///
/// **Text and blobs.** The bytes, with 0x00 escaped as 0x00 0xFF, then a terminator: 0x00 0x01
/// for a complete value, 0x00 0x02 when the value was longer than the limit and only its first
/// `limit` bytes were written. Truncated values with equal prefixes encode equally (their
/// order must then be settled from the full values), and sort after the complete value equal
/// to the prefix.
package enum OrderedKeyEncoding {
    /// The first byte of each kind of value.
    package enum Tag {
        package static let null: UInt8 = 0x05
        package static let negative: UInt8 = 0x10
        package static let zero: UInt8 = 0x11
        package static let positive: UInt8 = 0x12
        package static let text: UInt8 = 0x20
        package static let blob: UInt8 = 0x30
    }

    /// The terminator's second byte for a complete and a truncated text or blob.
    static let complete: UInt8 = 0x01
    static let truncated: UInt8 = 0x02

    /// Bytes of a row id suffix.
    package static let rowidSize = 8

    /// The exponent bias (exponents run from -1074 to 63 for finite values).
    static let bias = 0x4000
    /// The biased exponent of infinity.
    static let infiniteExponent: UInt16 = 0xFFFF

    /// Appends NULL.
    package static func appendNull(to bytes: inout [UInt8]) {
        bytes.append(Tag.null)
    }

    /// Appends an integer.
    package static func appendInteger(_ value: Int64, to bytes: inout [UInt8]) {
        appendNumber(negative: value < 0, magnitude: value.magnitude, exponent: 0, to: &bytes)
    }

    /// Appends a real. - Precondition: `!value.isNaN` (the caller stores NaN as NULL).
    package static func appendReal(_ value: Double, to bytes: inout [UInt8]) {
        precondition(!value.isNaN, "OrderedKeyEncoding: NaN has no place in the order (store it as NULL)")
        if value.isInfinite {
            bytes.append(value < 0 ? Tag.negative : Tag.positive)
            appendBigEndian(value < 0 ? ~infiniteExponent : infiniteExponent, to: &bytes)
            appendBigEndian(value < 0 ? UInt64.max : 0, to: &bytes)
            return
        }
        let significand = value.significandBitPattern
        if value.isSubnormal || value.isZero {
            appendNumber(negative: value < 0, magnitude: significand, exponent: -1074, to: &bytes)
        } else {
            let magnitude = significand | (1 << UInt64(Double.significandBitCount))
            appendNumber(negative: value < 0, magnitude: magnitude,
                         exponent: Int(value.exponent) - Double.significandBitCount, to: &bytes)
        }
    }

    /// Appends `±magnitude × 2^exponent`.
    static func appendNumber(negative: Bool, magnitude: UInt64, exponent: Int, to bytes: inout [UInt8]) {
        guard magnitude != 0 else { return bytes.append(Tag.zero) }
        let leadingZeros = magnitude.leadingZeroBitCount
        let lead = UInt16(truncatingIfNeeded: 63 - leadingZeros + exponent + bias)
        let fraction = magnitude << UInt64(leadingZeros + 1)  // the bits after the leading one
        // Room made with one copy of zeros, then the tag, the exponent and the fraction stored
        // in place (appending them a byte or a buffer at a time costs several times more).
        let start = bytes.count
        bytes.append(contentsOf: numberRoom)
        bytes.withUnsafeMutableBytes { raw in
            raw[start] = negative ? Tag.negative : Tag.positive
            raw.storeBytes(of: (negative ? ~lead : lead).bigEndian, toByteOffset: start + 1, as: UInt16.self)
            raw.storeBytes(of: (negative ? ~fraction : fraction).bigEndian, toByteOffset: start + 3, as: UInt64.self)
        }
    }

    /// The size of a non-zero number's encoding (tag, exponent, fraction), as zeros (a literal,
    /// so the array is made when the program is compiled).
    static let numberRoom: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]

    /// A number read back from its encoding.
    package enum DecodedNumber: Equatable, Sendable {
        /// A whole number strictly inside the `Int64` range.
        case integer(Int64)
        /// Any other number (exact for every double the encoding was given).
        case real(Double)
    }

    /// The number at the start of `key` (a value's encoding, perhaps followed by a row id), or
    /// nil when it is not a number or is -2^63 (which an `Int64` and a double share: the caller
    /// must ask the stored value).
    package static func decodeNumber(_ key: UnsafeRawBufferPointer) -> DecodedNumber? {
        guard let tag = key.first else { return nil }
        if tag == Tag.zero { return .integer(0) }
        guard tag == Tag.negative || tag == Tag.positive, key.count >= 11 else { return nil }
        let negative = tag == Tag.negative
        // Big-endian, at offsets 1 and 3 (the length was checked above).
        var lead = UInt16(bigEndian: key.loadUnaligned(fromByteOffset: 1, as: UInt16.self))
        var fraction = UInt64(bigEndian: key.loadUnaligned(fromByteOffset: 3, as: UInt64.self))
        if negative { lead = ~lead; fraction = ~fraction }
        if lead == infiniteExponent { return .real(negative ? -.infinity : .infinity) }
        let exponent = Int(lead) - bias
        if exponent >= 0 && exponent <= 62 && fraction << UInt64(exponent) == 0 {
            let magnitude = (UInt64(1) << UInt64(exponent)) | (fraction >> UInt64(64 - exponent))
            return .integer(negative ? -Int64(magnitude) : Int64(magnitude))
        }
        if exponent == 63 && negative && fraction == 0 { return nil }
        let significand = 1 + Double(fraction >> 11) * 0x1p-53
        return .real(Double(sign: negative ? .minus : .plus, exponent: exponent, significand: significand))
    }

    /// Appends text (its UTF-8 bytes), writing at most `limit` of them. Returns whether the
    /// value was truncated.
    @discardableResult
    package static func appendText<C: Collection<UInt8>>(_ utf8: C, limit: Int, to bytes: inout [UInt8]) -> Bool {
        bytes.append(Tag.text)
        return appendEscaped(utf8, limit: limit, to: &bytes)
    }

    /// Appends a blob, writing at most `limit` of its bytes. Returns whether it was truncated.
    @discardableResult
    package static func appendBlob<C: Collection<UInt8>>(_ blob: C, limit: Int, to bytes: inout [UInt8]) -> Bool {
        bytes.append(Tag.blob)
        return appendEscaped(blob, limit: limit, to: &bytes)
    }

    static func appendEscaped<C: Collection<UInt8>>(_ value: C, limit: Int, to bytes: inout [UInt8]) -> Bool {
        var written = 0
        for byte in value {
            if written == limit {
                bytes.append(0)
                bytes.append(truncated)
                return true
            }
            bytes.append(byte)
            if byte == 0 { bytes.append(0xFF) }
            written += 1
        }
        bytes.append(0)
        bytes.append(complete)
        return false
    }

    /// The most bytes `appendText`/`appendBlob` write with `limit` (every byte escaped).
    package static func maximumEscapedSize(limit: Int) -> Int { 1 + 2 * limit + 2 }

    /// Whether `key` (a value's encoding, perhaps followed by a row id) holds a truncated text
    /// or blob. O(length of the value).
    package static func isTruncated(_ key: UnsafeRawBufferPointer) -> Bool {
        guard key.count > 1, key[0] == Tag.text || key[0] == Tag.blob else { return false }
        var i = 1
        while i + 1 < key.count {
            if key[i] == 0 {
                if key[i + 1] == 0xFF { i += 2; continue }
                return key[i + 1] == truncated
            }
            i += 1
        }
        return false
    }

    /// What a column entry's key says of its value by itself (`entryValue(ofKey:)`).
    package enum EntryValue {
        /// NULL.
        case null
        /// A number, exactly, with the entry's row id: in a column without affinity (BLOB) the
        /// key cannot tell 3 from 3.0, so the value is read from the row instead.
        case number(DecodedNumber, rowid: UInt64)
        /// A text or blob written whole, or -2^63: the row's stored value has it.
        case stored(rowid: UInt64)
        /// A text or blob cut to the key limit: entries with the same prefix must be compared
        /// by their stored values.
        case truncated
    }

    /// What the key of a column entry (a value's encoding followed by a row id) says of the
    /// value: one call for the readers that take a value from a single entry (`MIN`/`MAX` at
    /// the edge of a column's tree).
    package static func entryValue(ofKey key: UnsafeRawBufferPointer) -> EntryValue {
        let value = valueBytes(ofKey: key)
        switch value.first {
        case Tag.null?: return .null
        case Tag.text?, Tag.blob?: return isTruncated(value) ? .truncated : .stored(rowid: rowid(ofKey: key))
        default:
            let row = rowid(ofKey: key)
            return decodeNumber(value).map { .number($0, rowid: row) } ?? .stored(rowid: row)
        }
    }

    /// Appends a row id (big-endian, so equal values order by row id).
    package static func appendRowid(_ rowid: UInt64, to bytes: inout [UInt8]) {
        appendBigEndian(rowid, to: &bytes)
    }

    /// The row id at the end of `key`; `UInt64.max` (no row has it) for a key shorter than a
    /// row id, which only a damaged page holds.
    package static func rowid(ofKey key: UnsafeRawBufferPointer) -> UInt64 {
        guard key.count >= rowidSize else { return .max }
        return UInt64(bigEndian: key.loadUnaligned(fromByteOffset: key.count - rowidSize, as: UInt64.self))
    }

    /// The value part of `key` (everything before the row id), as a view of the same bytes.
    package static func valueBytes(ofKey key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: key[..<max(0, key.count - rowidSize)])
    }

    /// The bound just past every key that starts with the value encoding `prefix` (inclusive
    /// use: the greatest such key; exclusive use as a lower bound: skips them all).
    package static func afterPrefix(_ prefix: [UInt8]) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(prefix.count + rowidSize)
        key.append(contentsOf: prefix)
        for _ in 0..<rowidSize { key.append(0xFF) }
        return key
    }

    static func appendBigEndian<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        var v = value.bigEndian
        Swift.withUnsafeBytes(of: &v) { bytes.append(contentsOf: $0) }
    }
}
