import Foundation

/// Where each entry of a keyed container sits, found once when the container is opened.
/// Lookups try the entry after the last one found first (decoding usually follows encoding order).
final class YapBinaryKeyIndex {
    struct Entry {
        let keyStart: Int
        let keyCount: Int
        let valueStart: Int
        let valueEnd: Int
    }

    let source: ByteSource
    private(set) var entries: [Entry] = []
    private var hint = 0

    init(decoder: _YapBinaryDecoder) throws {
        source = decoder.source
        let end = decoder.end
        let (count, first) = try source.containerHeader(YapBinaryFormat.keyedTag, at: decoder.start, end: end, path: decoder.codingPath)
        // `count` is at most the bytes left / 2 (`containerHeader`); reserving no more than a
        // small page of entries up front keeps a hostile count from reserving 16 bytes of
        // `Entry` per input byte before a single entry has been read (the array still grows).
        entries.reserveCapacity(min(count, 256))
        var p = first
        for _ in 0..<count {
            let keyCount = try source.length(&p, limit: end, path: decoder.codingPath)
            let keyStart = p
            p += keyCount
            let valueEnd = try source.skipValue(at: p, limit: end, path: decoder.codingPath)
            entries.append(Entry(keyStart: keyStart, keyCount: keyCount, valueStart: p, valueEnd: valueEnd))
            p = valueEnd
        }
        guard p == end else { throw source.corrupt("keyed container has bytes after its last entry", at: decoder.codingPath) }
    }

    func find(_ key: some CodingKey) -> Entry? {
        var name = key.stringValue
        return name.withUTF8 { utf8 in
            if hint < entries.count, matches(entries[hint], utf8) {
                hint += 1
                return entries[hint - 1]
            }
            for i in entries.indices where matches(entries[i], utf8) {
                hint = i + 1
                return entries[i]
            }
            return nil
        }
    }

    private func matches(_ entry: Entry, _ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard entry.keyCount == utf8.count else { return false }
        if utf8.isEmpty { return true }
        return source.bytes.withUnsafeBufferPointer { bytes in
            memcmp(bytes.baseAddress! + entry.keyStart, utf8.baseAddress!, utf8.count) == 0
        }
    }

    func keyString(_ entry: Entry) -> String {
        String(decoding: source.bytes[entry.keyStart..<(entry.keyStart + entry.keyCount)], as: UTF8.self)
    }
}

struct YapBinaryKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: _YapBinaryDecoder
    let index: YapBinaryKeyIndex

    init(decoder: _YapBinaryDecoder) throws {
        self.decoder = decoder
        index = try YapBinaryKeyIndex(decoder: decoder)
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var allKeys: [Key] { index.entries.compactMap { Key(stringValue: index.keyString($0)) } }
    func contains(_ key: Key) -> Bool { index.find(key) != nil }

    private func entry(_ key: Key) throws -> YapBinaryKeyIndex.Entry {
        guard let entry = index.find(key) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath,
                debugDescription: "YapBinaryDecoder: no value for key \"\(key.stringValue)\""))
        }
        return entry
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        let e = try entry(key)
        return try decoder.isNil(at: e.valueStart, end: e.valueEnd, key: key)
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        let e = try entry(key); return try decoder.decodeBool(at: e.valueStart, end: e.valueEnd, key: key)
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        let e = try entry(key); return try decoder.decodeString(at: e.valueStart, end: e.valueEnd, key: key)
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        let e = try entry(key); return try decoder.decodeDouble(at: e.valueStart, end: e.valueEnd, key: key)
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        let e = try entry(key); return try decoder.decodeFloat(at: e.valueStart, end: e.valueEnd, key: key)
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(key) }

    private func integer<T: FixedWidthInteger>(_ key: Key) throws -> T {
        let e = try entry(key)
        return try decoder.decodeInteger(T.self, at: e.valueStart, end: e.valueEnd, key: key)
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let e = try entry(key)
        return try decoder.decodeNested(T.self, at: e.valueStart, end: e.valueEnd, key: key)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        let e = try entry(key)
        return try decoder.child(start: e.valueStart, end: e.valueEnd, key: key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let e = try entry(key)
        return try decoder.child(start: e.valueStart, end: e.valueEnd, key: key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        guard let e = index.find(YapBinaryKey.super) else {
            throw DecodingError.keyNotFound(YapBinaryKey.super, .init(codingPath: codingPath,
                debugDescription: "YapBinaryDecoder: no value for key \"super\""))
        }
        return try decoder.child(start: e.valueStart, end: e.valueEnd, key: YapBinaryKey.super)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        let e = try entry(key)
        return try decoder.child(start: e.valueStart, end: e.valueEnd, key: key)
    }
}

struct YapBinaryUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let decoder: _YapBinaryDecoder
    let elementCount: Int
    private var position: Int

    init(decoder: _YapBinaryDecoder) throws {
        self.decoder = decoder
        let header = try decoder.source.containerHeader(YapBinaryFormat.unkeyedTag, at: decoder.start, end: decoder.end, path: decoder.codingPath)
        elementCount = header.count
        position = header.first
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { elementCount }
    var isAtEnd: Bool { currentIndex >= elementCount }
    private(set) var currentIndex = 0

    /// The next element's extent; throws at the end.
    private mutating func next(_ type: Any.Type) throws -> (start: Int, end: Int, key: YapBinaryKey) {
        let key = YapBinaryKey(intValue: currentIndex)
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: codingPath + [key],
                debugDescription: "YapBinaryDecoder: the unkeyed container is at its end"))
        }
        let start = position
        let end = try decoder.source.skipValue(at: start, limit: decoder.end, path: self.codingPath + [key])
        position = end
        currentIndex += 1
        return (start, end, key)
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { return false }
        let key = YapBinaryKey(intValue: currentIndex)
        if try decoder.isNil(at: position, end: decoder.end, key: key) {
            position += 1
            currentIndex += 1
            return true
        }
        return false
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool {
        let e = try next(type); return try decoder.decodeBool(at: e.start, end: e.end, key: e.key)
    }
    mutating func decode(_ type: String.Type) throws -> String {
        let e = try next(type); return try decoder.decodeString(at: e.start, end: e.end, key: e.key)
    }
    mutating func decode(_ type: Double.Type) throws -> Double {
        let e = try next(type); return try decoder.decodeDouble(at: e.start, end: e.end, key: e.key)
    }
    mutating func decode(_ type: Float.Type) throws -> Float {
        let e = try next(type); return try decoder.decodeFloat(at: e.start, end: e.end, key: e.key)
    }
    mutating func decode(_ type: Int.Type) throws -> Int { try integer() }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer() }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer() }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer() }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer() }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try integer() }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer() }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer() }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer() }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer() }

    private mutating func integer<T: FixedWidthInteger>() throws -> T {
        let e = try next(T.self)
        return try decoder.decodeInteger(T.self, at: e.start, end: e.end, key: e.key)
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let e = try next(type)
        return try decoder.decodeNested(T.self, at: e.start, end: e.end, key: e.key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let e = try next(KeyedDecodingContainer<NestedKey>.self)
        return try decoder.child(start: e.start, end: e.end, key: e.key).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let e = try next((any UnkeyedDecodingContainer).self)
        return try decoder.child(start: e.start, end: e.end, key: e.key).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let e = try next((any Decoder).self)
        return try decoder.child(start: e.start, end: e.end, key: e.key)
    }
}

struct YapBinarySingleValueDecodingContainer: SingleValueDecodingContainer {
    let decoder: _YapBinaryDecoder

    var codingPath: [any CodingKey] { decoder.codingPath }
    private var start: Int { decoder.start }
    private var end: Int { decoder.end }

    func decodeNil() -> Bool { (try? decoder.isNil(at: start, end: end, key: nil)) ?? false }
    func decode(_ type: Bool.Type) throws -> Bool { try decoder.decodeBool(at: start, end: end, key: nil) }
    func decode(_ type: String.Type) throws -> String { try decoder.decodeString(at: start, end: end, key: nil) }
    func decode(_ type: Double.Type) throws -> Double { try decoder.decodeDouble(at: start, end: end, key: nil) }
    func decode(_ type: Float.Type) throws -> Float { try decoder.decodeFloat(at: start, end: end, key: nil) }
    func decode(_ type: Int.Type) throws -> Int { try decoder.decodeInteger(type, at: start, end: end, key: nil) }
    func decode(_ type: Int8.Type) throws -> Int8 { try decoder.decodeInteger(type, at: start, end: end, key: nil) }
    func decode(_ type: Int16.Type) throws -> Int16 { try decoder.decodeInteger(type, at: start, end: end, key: nil) }
    func decode(_ type: Int32.Type) throws -> Int32 { try decoder.decodeInteger(type, at: start, end: end, key: nil) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decoder.decodeInteger(type, at: start, end: end, key: nil) }
    func decode(_ type: UInt.Type) throws -> UInt { try decoder.decodeInteger(type, at: start, end: end, key: nil) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decoder.decodeInteger(type, at: start, end: end, key: nil) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decoder.decodeInteger(type, at: start, end: end, key: nil) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decoder.decodeInteger(type, at: start, end: end, key: nil) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decoder.decodeInteger(type, at: start, end: end, key: nil) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decodeWhole(type) }
}
