import Foundation

/// Decodes the bytes of ``YapBinaryEncoder`` (format: `YapBinaryFormat` in YapBinaryFormat.swift).
///
/// Hostile bytes make it throw `DecodingError`, never trap or over-allocate: every length is
/// checked against the bytes of its enclosing value before use, nesting is limited by
/// ``maxDepth``, and trailing bytes after the top-level value are an error.
///
/// Threading: a value type; `decode` keeps its state per call, so one decoder may be used from
/// several threads at once.
public struct YapBinaryDecoder: YapDatabaseDecoder {
    /// The default of ``maxDepth`` (and of the encoder's): 512 nested containers, as Foundation's
    /// `JSONDecoder` allows.
    public static let defaultMaxDepth = 512

    /// Values handed to `Decodable.init(from:)` as `decoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// The deepest nesting of values decoded; deeper input throws `DecodingError.dataCorrupted`
    /// (bounds the stack a hostile input can use).
    public var maxDepth: Int = YapBinaryDecoder.defaultMaxDepth

    /// A decoder with empty `userInfo` and the default `maxDepth`.
    public init() {}

    /// The `T` that `data` encodes.
    /// - Throws: `DecodingError` when the bytes are malformed, truncated, followed by trailing
    ///   bytes, nested deeper than ``maxDepth``, or do not have `T`'s shape.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try decode(type, from: [UInt8](data))
    }

    /// As ``decode(_:from:)``, from an array.
    public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        let source = ByteSource(bytes: bytes, userInfo: userInfo, maxDepth: maxDepth)
        let end = try source.skipValue(at: 0, limit: bytes.count, path: [])
        guard end == bytes.count else {
            throw source.corrupt("\(bytes.count - end) trailing bytes after the value", at: [])
        }
        let decoder = _YapBinaryDecoder(source: source, start: 0, end: end, parent: nil, key: nil, depth: 0)
        return try decoder.decodeWhole(T.self)
    }
}

/// The input of one `decode` call, with bounds-checked readers. Every reader takes a `limit`
/// (the end of the enclosing value) and throws rather than read past it.
final class ByteSource {
    let bytes: [UInt8]
    let userInfo: [CodingUserInfoKey: Any]
    let maxDepth: Int

    init(bytes: [UInt8], userInfo: [CodingUserInfoKey: any Sendable], maxDepth: Int) {
        self.bytes = bytes
        self.userInfo = userInfo
        self.maxDepth = maxDepth
    }

    func corrupt(_ message: String, at path: [any CodingKey]) -> DecodingError {
        .dataCorrupted(.init(codingPath: path, debugDescription: "YapBinaryDecoder: \(message)"))
    }

    @inline(__always)
    func byte(at position: Int, limit: Int, path: @autoclosure () -> [any CodingKey]) throws -> UInt8 {
        guard position < limit else { throw corrupt("truncated value", at: path()) }
        return bytes[position]
    }

    /// A varint at `position`; advances `position`.
    @inline(__always)
    func varint(_ position: inout Int, limit: Int, path: @autoclosure () -> [any CodingKey]) throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard position < limit else { throw corrupt("truncated varint", at: path()) }
            let b = bytes[position]
            position += 1
            if shift == 63 && b > 1 { throw corrupt("varint overflows 64 bits", at: path()) }
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return result }
            shift += 7
            if shift > 63 { throw corrupt("varint longer than 10 bytes", at: path()) }
        }
    }

    /// A length at `position` that fits in the bytes left before `limit`; advances `position`.
    @inline(__always)
    func length(_ position: inout Int, limit: Int, path: @autoclosure () -> [any CodingKey]) throws -> Int {
        let n = try varint(&position, limit: limit, path: path())
        guard n <= UInt64(limit - position) else { throw corrupt("length \(n) exceeds the \(limit - position) bytes left", at: path()) }
        return Int(n)
    }

    /// Eight little-endian bytes at `position`.
    @inline(__always)
    func fixed64(at position: Int, limit: Int, path: @autoclosure () -> [any CodingKey]) throws -> UInt64 {
        guard limit - position >= 8 else { throw corrupt("truncated 8-byte value", at: path()) }
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(bytes[position + i]) << (8 * UInt64(i)) }
        return v
    }

    /// Four little-endian bytes at `position`.
    @inline(__always)
    func fixed32(at position: Int, limit: Int, path: @autoclosure () -> [any CodingKey]) throws -> UInt32 {
        guard limit - position >= 4 else { throw corrupt("truncated 4-byte value", at: path()) }
        var v: UInt32 = 0
        for i in 0..<4 { v |= UInt32(bytes[position + i]) << (8 * UInt32(i)) }
        return v
    }

    /// The end of the value starting at `position` (O(1): containers carry their length).
    func skipValue(at start: Int, limit: Int, path: @autoclosure () -> [any CodingKey]) throws -> Int {
        var p = start
        let tag = try byte(at: p, limit: limit, path: path())
        p += 1
        switch tag {
        case YapBinaryFormat.nilTag, YapBinaryFormat.falseTag, YapBinaryFormat.trueTag:
            return p
        case YapBinaryFormat.signedTag, YapBinaryFormat.unsignedTag:
            _ = try varint(&p, limit: limit, path: path())
            return p
        case YapBinaryFormat.doubleTag, YapBinaryFormat.dateTag:
            guard limit - p >= 8 else { throw corrupt("truncated 8-byte value", at: path()) }
            return p + 8
        case YapBinaryFormat.floatTag:
            guard limit - p >= 4 else { throw corrupt("truncated 4-byte value", at: path()) }
            return p + 4
        case YapBinaryFormat.stringTag, YapBinaryFormat.dataTag, YapBinaryFormat.keyedTag, YapBinaryFormat.unkeyedTag:
            let n = try length(&p, limit: limit, path: path())
            return p + n
        default:
            throw corrupt("unknown tag \(tag)", at: path())
        }
    }

    /// The (count, first entry, end) of the container with `tag` at `start`, whose value ends at `end`.
    /// An entry of a keyed container takes at least 2 bytes (a key length and a value tag), an
    /// element of an unkeyed one at least 1 (a tag): a count over the bytes left divided by that
    /// is a lie, refused before anything is reserved for it.
    func containerHeader(_ tag: UInt8, at start: Int, end: Int, path: @autoclosure () -> [any CodingKey]) throws -> (count: Int, first: Int) {
        let found = try byte(at: start, limit: end, path: path())
        guard found == tag else {
            let wanted = tag == YapBinaryFormat.keyedTag ? "a keyed container" : "an unkeyed container"
            throw DecodingError.typeMismatch(Any.self, .init(codingPath: path(),
                debugDescription: "YapBinaryDecoder: expected \(wanted), found \(Self.describe(found))"))
        }
        var p = start + 1
        let content = try length(&p, limit: end, path: path())
        guard p + content == end else { throw corrupt("container length disagrees with its extent", at: path()) }
        let count = try varint(&p, limit: end, path: path())
        let minimumEntryBytes = tag == YapBinaryFormat.keyedTag ? 2 : 1
        guard count <= UInt64((end - p) / minimumEntryBytes) else { throw corrupt("count \(count) exceeds the bytes left", at: path()) }
        return (Int(count), p)
    }

    static func describe(_ tag: UInt8) -> String {
        switch tag {
        case YapBinaryFormat.nilTag: "nil"
        case YapBinaryFormat.falseTag, YapBinaryFormat.trueTag: "a Bool"
        case YapBinaryFormat.signedTag: "a signed integer"
        case YapBinaryFormat.unsignedTag: "an unsigned integer"
        case YapBinaryFormat.doubleTag: "a Double"
        case YapBinaryFormat.floatTag: "a Float"
        case YapBinaryFormat.stringTag: "a String"
        case YapBinaryFormat.dataTag: "Data"
        case YapBinaryFormat.dateTag: "a Date"
        case YapBinaryFormat.keyedTag: "a keyed container"
        case YapBinaryFormat.unkeyedTag: "an unkeyed container"
        default: "unknown tag \(tag)"
        }
    }
}
