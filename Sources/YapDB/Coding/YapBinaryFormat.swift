import Foundation

/// The byte format of ``YapBinaryEncoder`` and ``YapBinaryDecoder`` ("YapBinary", version 1).
///
/// Every value is a tag byte followed by its payload. Integers are little-endian; `varint` is
/// LEB128 (at most 10 bytes; longer or overflowing is corrupt).
///
/// | tag | value | payload |
/// |---|---|---|
/// | `0x00` | nil | — |
/// | `0x01` / `0x02` | false / true | — |
/// | `0x03` | signed integer (any width) | zigzag varint |
/// | `0x04` | unsigned integer (any width) | varint |
/// | `0x05` | `Double` | 8 bytes, IEEE 754 bit pattern |
/// | `0x06` | `Float` | 4 bytes, IEEE 754 bit pattern |
/// | `0x07` | `String` | varint byte count, UTF-8 |
/// | `0x08` | `Data` | varint byte count, the bytes |
/// | `0x09` | `Date` | 8 bytes: `timeIntervalSinceReferenceDate` as a `Double` |
/// | `0x0A` | keyed container | varint content length, then varint entry count, then per entry: varint key byte count, UTF-8 key (`stringValue`), value |
/// | `0x0B` | unkeyed container | varint content length, then varint element count, then the values |
///
/// Keys are stored by name, so a type may gain optional properties (absent keys decode as nil
/// with `decodeIfPresent`) or lose properties (unknown keys are skipped) and still read old values.
/// Containers carry their length, so skipping any value is O(1). A value that requested no
/// container encodes as an empty keyed container.
enum YapBinaryFormat {
    static let nilTag: UInt8 = 0x00
    static let falseTag: UInt8 = 0x01
    static let trueTag: UInt8 = 0x02
    static let signedTag: UInt8 = 0x03
    static let unsignedTag: UInt8 = 0x04
    static let doubleTag: UInt8 = 0x05
    static let floatTag: UInt8 = 0x06
    static let stringTag: UInt8 = 0x07
    static let dataTag: UInt8 = 0x08
    static let dateTag: UInt8 = 0x09
    static let keyedTag: UInt8 = 0x0A
    static let unkeyedTag: UInt8 = 0x0B

    /// Bytes the varint of `value` takes.
    @inline(__always)
    static func varintSize(_ value: UInt64) -> Int {
        var v = value, n = 1
        while v >= 0x80 { v >>= 7; n += 1 }
        return n
    }

    @inline(__always)
    static func appendVarint(_ value: UInt64, to out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(truncatingIfNeeded: v))
    }

    @inline(__always)
    static func zigzag(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }

    @inline(__always)
    static func unzigzag(_ value: UInt64) -> Int64 { Int64(bitPattern: (value >> 1) ^ (0 &- (value & 1))) }
}

/// A coding key made from a string or an index (for `super`, array elements and error paths).
struct YapBinaryKey: CodingKey, Sendable {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) { self.stringValue = stringValue; intValue = nil }
    init(intValue: Int) { stringValue = "Index \(intValue)"; self.intValue = intValue }

    static let `super` = YapBinaryKey(stringValue: "super")
}
