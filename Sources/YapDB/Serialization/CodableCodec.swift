import Foundation

/// A Codable type registered for serialization, with its coders, behind type-erased closures.
///
/// Threading: immutable; its closures are `@Sendable` and call coders that must be `Sendable`.
struct CodableCodec: Sendable {
    /// `String(reflecting: T.self)`: how the built-in format names the type in self-describing
    /// values (tag 3, see ``YapValueFormat``). Renaming or moving the type changes it.
    let typeName: String
    /// `ObjectIdentifier(T.self)`, to find the codec from a value's dynamic type.
    let typeID: ObjectIdentifier
    private let box: any CodableBox
    private let encoder: any YapDatabaseEncoder
    private let decoder: any YapDatabaseDecoder

    init<T: Codable>(_ type: T.Type, encoder: any YapDatabaseEncoder, decoder: any YapDatabaseDecoder) {
        typeName = String(reflecting: T.self)
        typeID = ObjectIdentifier(T.self)
        box = Typed<T>()
        self.encoder = encoder
        self.decoder = decoder
    }

    /// The coder bytes of `value`, or nil when `value` is not a `T`.
    func encode(_ value: Any) throws -> Data? { try box.encode(value, with: encoder) }

    /// The `T` that the coder bytes encode.
    func decode(_ data: Data) throws -> Any { try box.decode(data, with: decoder) }
}

/// `T`'s Codable operations behind an existential (keeps `CodableCodec` Sendable without
/// capturing a metatype).
private protocol CodableBox: Sendable {
    func encode(_ value: Any, with encoder: any YapDatabaseEncoder) throws -> Data?
    func decode(_ data: Data, with decoder: any YapDatabaseDecoder) throws -> Any
}

private struct Typed<T: Codable>: CodableBox {
    func encode(_ value: Any, with encoder: any YapDatabaseEncoder) throws -> Data? {
        guard let typed = value as? T else { return nil }
        return try encoder.encode(typed)
    }

    func decode(_ data: Data, with decoder: any YapDatabaseDecoder) throws -> Any {
        try decoder.decode(T.self, from: data)
    }
}

/// Every Codable type the default serializer knows: the registered ones plus a few standard
/// library and Foundation types, found by dynamic type (to encode) and by name (to decode).
struct CodableTable: Sendable {
    private(set) var byType: [ObjectIdentifier: CodableCodec] = [:]
    private(set) var byName: [String: CodableCodec] = [:]

    /// Adds (or replaces) `codec`.
    mutating func add(_ codec: CodableCodec) {
        byType[codec.typeID] = codec
        byName[codec.typeName] = codec
    }

    /// The codec for `value`'s dynamic type, if registered.
    func codec(for value: Any) -> CodableCodec? { byType[ObjectIdentifier(Swift.type(of: value))] }

    /// The standard types the default serializer handles without registration: `Bool`, `Int`,
    /// `Int64`, `UInt64`, `Double`, `Date`, `UUID`, `URL`, and arrays and string-keyed
    /// dictionaries of `String`, `Int`, `Double`. (Other plist-compatible values, e.g.
    /// `[String: Any]`, use the property-list tag.)
    static func builtIn(encoder: any YapDatabaseEncoder, decoder: any YapDatabaseDecoder) -> CodableTable {
        var table = CodableTable()
        func add<T: Codable>(_ type: T.Type) { table.add(CodableCodec(type, encoder: encoder, decoder: decoder)) }
        add(Bool.self); add(Int.self); add(Int64.self); add(UInt64.self); add(Double.self)
        add(Date.self); add(UUID.self); add(URL.self)
        add([String].self); add([Int].self); add([Double].self)
        add([String: String].self); add([String: Int].self); add([String: Double].self)
        return table
    }
}
