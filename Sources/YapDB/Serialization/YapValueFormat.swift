import Foundation

/// The byte format of the built-in (default and Codable) serializers: one tag byte, then the payload.
///
/// | tag | payload | read back as |
/// |---|---|---|
/// | `0x00` | the bytes as they are | `Data` |
/// | `0x01` | UTF-8 text | `String` |
/// | `0x02` | coder bytes of the collection's registered Codable type | that type |
/// | `0x03` | varint byte count + UTF-8 type name (`String(reflecting:)`), then coder bytes | the named registered type |
/// | `0x04` | a binary property list (values `PropertyListSerialization` accepts, e.g. `[String: Any]`) | what `PropertyListSerialization` returns |
///
/// So stored bytes say which kind they hold, and the default deserializer returns `Data` for
/// bytes stored as `Data` and `String` for text stored as `String`. Values written by custom
/// serializers are stored exactly as those serializers return them (no tag). The varint is
/// LEB128 (docs/format.md). Other tags, truncated names and unknown type names deserialize to nil
/// (with a warning to the log handler). Recorded in docs/api.md.
enum YapValueFormat {
    static let dataTag: UInt8 = 0x00
    static let stringTag: UInt8 = 0x01
    static let collectionCodableTag: UInt8 = 0x02
    static let namedCodableTag: UInt8 = 0x03
    static let propertyListTag: UInt8 = 0x04

    /// The tagged bytes of `value`.
    /// - Parameters:
    ///   - preferred: the collection's registered Codable type, written with tag 2 when `value` is one.
    ///   - codables: the registered types, for tag 3.
    /// - Throws: the coder's error, or a description when no built-in handling fits `value`.
    static func encode(_ value: Any, preferred: CodableCodec?, codables: CodableTable) throws -> Data {
        if let preferred, let bytes = try preferred.encode(value) {
            return tagged(collectionCodableTag, bytes)
        }
        if let data = value as? Data { return tagged(dataTag, data) }
        if let string = value as? String { return tagged(stringTag, Data(string.utf8)) }
        if let codec = codables.codec(for: value), let bytes = try codec.encode(value) {
            var out = Data(capacity: bytes.count + codec.typeName.utf8.count + 3)
            out.append(namedCodableTag)
            appendVarint(UInt64(codec.typeName.utf8.count), to: &out)
            out.append(contentsOf: codec.typeName.utf8)
            out.append(bytes)
            return out
        }
        if PropertyListSerialization.propertyList(value, isValidFor: .binary) {
            let bytes = try PropertyListSerialization.data(fromPropertyList: value, format: .binary, options: 0)
            return tagged(propertyListTag, bytes)
        }
        throw UnsupportedValue(typeName: String(reflecting: type(of: value)))
    }

    /// The value that tagged `data` holds, or nil when the bytes are not in this format or the
    /// decoder fails.
    static func decode(_ data: Data, preferred: CodableCodec?, codables: CodableTable) throws -> Any? {
        guard let tag = data.first else { return nil }
        var payload = Data(data.dropFirst()) // rebased to index 0
        switch tag {
        case dataTag:
            return payload
        case stringTag:
            return String(validating: payload, as: UTF8.self)
        case collectionCodableTag:
            guard let preferred else { throw Malformed(reason: "tag 2 (collection Codable) in a collection without a Codable registration") }
            return try preferred.decode(payload)
        case namedCodableTag:
            guard let (count, used) = readVarint(payload), count <= UInt64(payload.count - used) else {
                throw Malformed(reason: "truncated type name")
            }
            let nameEnd = used + Int(count)
            guard let name = String(validating: payload[used..<nameEnd], as: UTF8.self) else {
                throw Malformed(reason: "type name is not UTF-8")
            }
            guard let codec = codables.byName[name] else { throw Malformed(reason: "no Codable registration for type \(name)") }
            payload = Data(payload[nameEnd...])
            return try codec.decode(payload)
        case propertyListTag:
            return try PropertyListSerialization.propertyList(from: payload, options: [], format: nil)
        default:
            throw Malformed(reason: "unknown tag \(tag)")
        }
    }

    /// Thrown by ``encode(_:preferred:codables:)`` when nothing built in can store the value.
    struct UnsupportedValue: Error, CustomStringConvertible {
        let typeName: String
        var description: String {
            "no serializer handles a value of type \(typeName): register a serializer or a Codable type (registerCodableSerialization) for it"
        }
    }

    /// Thrown by ``decode(_:preferred:codables:)`` for bytes that are not in this format.
    struct Malformed: Error, CustomStringConvertible {
        let reason: String
        var description: String { "not a YapDB built-in value: \(reason)" }
    }

    private static func tagged(_ tag: UInt8, _ payload: Data) -> Data {
        var out = Data(capacity: payload.count + 1)
        out.append(tag)
        out.append(payload)
        return out
    }

    static func appendVarint(_ value: UInt64, to out: inout Data) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    /// A LEB128 varint at the start of `data` (index 0 based) and its length, or nil when
    /// truncated or longer than 10 bytes / overflowing.
    static func readVarint(_ data: Data) -> (UInt64, Int)? {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        var index = data.startIndex
        while index < data.endIndex {
            let byte = data[index]
            index += 1
            if shift == 63 && byte > 1 { return nil }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return (result, index - data.startIndex) }
            shift += 7
            if shift > 63 { return nil }
        }
        return nil
    }
}
