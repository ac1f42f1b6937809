import Foundation

/// The `Decoder` handed to `init(from:)`: one per nested value, covering bytes `start..<end`.
final class _YapBinaryDecoder: Decoder {
    let source: ByteSource
    let start: Int
    let end: Int
    let parent: _YapBinaryDecoder?
    let key: (any CodingKey)?
    let depth: Int

    init(source: ByteSource, start: Int, end: Int, parent: _YapBinaryDecoder?, key: (any CodingKey)?, depth: Int) {
        self.source = source
        self.start = start
        self.end = end
        self.parent = parent
        self.key = key
        self.depth = depth
    }

    var codingPath: [any CodingKey] {
        var path: [any CodingKey] = []
        var current: _YapBinaryDecoder? = self
        while let decoder = current {
            if let key = decoder.key { path.append(key) }
            current = decoder.parent
        }
        return path.reversed()
    }

    var userInfo: [CodingUserInfoKey: Any] { source.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(try YapBinaryKeyedDecodingContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try YapBinaryUnkeyedDecodingContainer(decoder: self)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        YapBinarySingleValueDecodingContainer(decoder: self)
    }

    /// A decoder for the nested value at `start..<end`.
    func child(start: Int, end: Int, key: (any CodingKey)?) throws -> _YapBinaryDecoder {
        guard depth < source.maxDepth else {
            throw source.corrupt("nesting deeper than maxDepth (\(source.maxDepth))", at: codingPath)
        }
        return _YapBinaryDecoder(source: source, start: start, end: end, parent: self, key: key, depth: depth + 1)
    }

    func path(_ key: (any CodingKey)?) -> [any CodingKey] {
        if let key { return codingPath + [key] }
        return codingPath
    }

    // MARK: Reading one value at a position

    func mismatch(_ type: Any.Type, found tag: UInt8, key: (any CodingKey)?) -> DecodingError {
        .typeMismatch(type, .init(codingPath: path(key),
            debugDescription: "YapBinaryDecoder: expected \(type), found \(ByteSource.describe(tag))"))
    }

    @inline(__always)
    func isNil(at p: Int, end: Int, key: (any CodingKey)?) throws -> Bool {
        try source.byte(at: p, limit: end, path: self.path(key)) == YapBinaryFormat.nilTag
    }

    func decodeBool(at p: Int, end: Int, key: (any CodingKey)?) throws -> Bool {
        let tag = try source.byte(at: p, limit: end, path: self.path(key))
        switch tag {
        case YapBinaryFormat.trueTag: return true
        case YapBinaryFormat.falseTag: return false
        default: throw mismatch(Bool.self, found: tag, key: key)
        }
    }

    func decodeInteger<T: FixedWidthInteger>(_ type: T.Type, at p: Int, end: Int, key: (any CodingKey)?) throws -> T {
        let tag = try source.byte(at: p, limit: end, path: self.path(key))
        var q = p + 1
        let result: T?
        switch tag {
        case YapBinaryFormat.signedTag:
            result = T(exactly: YapBinaryFormat.unzigzag(try source.varint(&q, limit: end, path: self.path(key))))
        case YapBinaryFormat.unsignedTag:
            result = T(exactly: try source.varint(&q, limit: end, path: self.path(key)))
        default:
            throw mismatch(T.self, found: tag, key: key)
        }
        guard let result else {
            throw DecodingError.dataCorrupted(.init(codingPath: path(key),
                debugDescription: "YapBinaryDecoder: the stored number does not fit in \(T.self)"))
        }
        return result
    }

    func decodeDouble(at p: Int, end: Int, key: (any CodingKey)?) throws -> Double {
        let tag = try source.byte(at: p, limit: end, path: self.path(key))
        switch tag {
        case YapBinaryFormat.doubleTag: return Double(bitPattern: try source.fixed64(at: p + 1, limit: end, path: self.path(key)))
        case YapBinaryFormat.floatTag: return Double(Float(bitPattern: try source.fixed32(at: p + 1, limit: end, path: self.path(key))))
        default: throw mismatch(Double.self, found: tag, key: key)
        }
    }

    func decodeFloat(at p: Int, end: Int, key: (any CodingKey)?) throws -> Float {
        let tag = try source.byte(at: p, limit: end, path: self.path(key))
        switch tag {
        case YapBinaryFormat.floatTag: return Float(bitPattern: try source.fixed32(at: p + 1, limit: end, path: self.path(key)))
        case YapBinaryFormat.doubleTag: return Float(Double(bitPattern: try source.fixed64(at: p + 1, limit: end, path: self.path(key))))
        default: throw mismatch(Float.self, found: tag, key: key)
        }
    }

    /// The bytes of a String or Data payload (`tag` = `expected`).
    @inline(__always)
    private func blob(_ expected: UInt8, _ type: Any.Type, at p: Int, end: Int, key: (any CodingKey)?) throws -> Range<Int> {
        let tag = try source.byte(at: p, limit: end, path: self.path(key))
        guard tag == expected else { throw mismatch(type, found: tag, key: key) }
        var q = p + 1
        let n = try source.length(&q, limit: end, path: self.path(key))
        return q..<(q + n)
    }

    func decodeString(at p: Int, end: Int, key: (any CodingKey)?) throws -> String {
        let range = try blob(YapBinaryFormat.stringTag, String.self, at: p, end: end, key: key)
        return source.bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
    }

    // MARK: Generic values

    /// `T` read natively when it is a standard scalar, or `Data`/`Date` stored with their own
    /// tags; nil when `T` must decode itself.
    @inline(__always)
    func decodeNative<T: Decodable>(_ type: T.Type, at p: Int, end: Int, key: (any CodingKey)?) throws -> T? {
        if T.self == String.self { return unsafeBitCast(try decodeString(at: p, end: end, key: key), to: T.self) }
        if T.self == Int.self { return unsafeBitCast(try decodeInteger(Int.self, at: p, end: end, key: key), to: T.self) }
        if T.self == Double.self { return unsafeBitCast(try decodeDouble(at: p, end: end, key: key), to: T.self) }
        if T.self == Bool.self { return unsafeBitCast(try decodeBool(at: p, end: end, key: key), to: T.self) }
        if T.self == Int64.self { return unsafeBitCast(try decodeInteger(Int64.self, at: p, end: end, key: key), to: T.self) }
        if T.self == UInt64.self { return unsafeBitCast(try decodeInteger(UInt64.self, at: p, end: end, key: key), to: T.self) }
        if T.self == Float.self { return unsafeBitCast(try decodeFloat(at: p, end: end, key: key), to: T.self) }
        if T.self == Date.self, try source.byte(at: p, limit: end, path: self.path(key)) == YapBinaryFormat.dateTag {
            let seconds = Double(bitPattern: try source.fixed64(at: p + 1, limit: end, path: self.path(key)))
            return (Date(timeIntervalSinceReferenceDate: seconds) as! T)
        }
        if T.self == Data.self, try source.byte(at: p, limit: end, path: self.path(key)) == YapBinaryFormat.dataTag {
            let range = try blob(YapBinaryFormat.dataTag, Data.self, at: p, end: end, key: key)
            return (Data(source.bytes[range]) as! T)
        }
        return nil
    }

    /// The nested `T` at `start..<end` (an entry or element).
    func decodeNested<T: Decodable>(_ type: T.Type, at start: Int, end: Int, key: (any CodingKey)?) throws -> T {
        if let value = try decodeNative(type, at: start, end: end, key: key) { return value }
        return try T(from: child(start: start, end: end, key: key))
    }

    /// This decoder's whole value as `T` (the top level, or a single-value container).
    func decodeWhole<T: Decodable>(_ type: T.Type) throws -> T {
        if let value = try decodeNative(type, at: start, end: end, key: nil) { return value }
        return try T(from: self)
    }
}
