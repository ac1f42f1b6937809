import Foundation

/// Turns an object (or metadata) into bytes: `(collection, key, object) throws -> Data`.
///
/// Register with `database.registerSerializer(_:forCollection:)` and its siblings. A thrown
/// error fails the write with `YapDatabaseError.serialization(collection:key:underlying:)`;
/// nothing is stored. Threading: called on the writing connection's thread; may run on any thread.
public typealias YapDatabaseSerializer = @Sendable (String, String, Any) throws -> Data

/// Turns stored bytes back into an object (or metadata): `(collection, key, data) -> Any?`.
/// Returning nil makes the read return nil. Threading: may run on any thread.
public typealias YapDatabaseDeserializer = @Sendable (String, String, Data) -> Any?

/// Runs before serialization, on the object passed to `setObject`/`replaceObject`:
/// `(collection, key, object) -> object to store` (e.g. to make it immutable). The returned
/// object is what is serialized and cached. Threading: the writing connection's thread.
public typealias YapDatabasePreSanitizer = @Sendable (String, String, Any) -> Any

/// Runs after the object (or metadata) was stored in the transaction: `(collection, key, object)`
/// (e.g. to clear a "changed properties" flag). Threading: the writing connection's thread.
public typealias YapDatabasePostSanitizer = @Sendable (String, String, Any) -> Void

/// An encoder for Codable registrations (`registerCodableSerialization(_:forCollection:encoder:decoder:)`).
///
/// The requirement is `JSONEncoder`'s `encode(_:)`, so Foundation's `JSONEncoder` and
/// `PropertyListEncoder` conform as they are, as does ``YapBinaryEncoder``.
/// Threading: the registry calls `encode` from any thread, possibly from several at once, so a
/// conforming type must be `Sendable` and must not mutate shared state while encoding.
public protocol YapDatabaseEncoder: Sendable {
    /// The bytes of `value`.
    /// - Throws: when `value` cannot be encoded (e.g. `EncodingError`).
    func encode<T: Encodable>(_ value: T) throws -> Data
}

/// A decoder for Codable registrations; the counterpart of ``YapDatabaseEncoder``.
///
/// The requirement is `JSONDecoder`'s `decode(_:from:)`, so Foundation's `JSONDecoder` and
/// `PropertyListDecoder` conform as they are, as does ``YapBinaryDecoder``.
/// Threading: as for ``YapDatabaseEncoder``.
public protocol YapDatabaseDecoder: Sendable {
    /// The value of type `type` that `data` encodes.
    /// - Throws: when `data` does not encode a `T` (e.g. `DecodingError`).
    func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T
}

extension JSONEncoder: YapDatabaseEncoder {}
extension JSONDecoder: YapDatabaseDecoder {}
extension PropertyListEncoder: YapDatabaseEncoder {}
extension PropertyListDecoder: YapDatabaseDecoder {}
