import Foundation

/// Serializers, sanitizers, Codable registrations and object policies (API.md §1).
/// A registration applies to every connection, including connections created before it, from
/// each connection's next transaction on (a transaction already running keeps what it started
/// with). Resolution for a collection: its own registration, then the default.
/// Threading: any thread; registering costs a lock, and transactions notice it with one atomic load.
extension YapDatabase {
    /// The serializer of collections without their own, for objects and metadata.
    public func registerDefaultSerializer(_ serializer: @escaping YapDatabaseSerializer) {
        registry.registerDefaultSerializer(serializer)
    }

    /// The deserializer of collections without their own, for objects and metadata.
    public func registerDefaultDeserializer(_ deserializer: @escaping YapDatabaseDeserializer) {
        registry.registerDefaultDeserializer(deserializer)
    }

    /// The serializer of `collection` (nil means ""), for objects and metadata.
    public func registerSerializer(_ serializer: @escaping YapDatabaseSerializer, forCollection collection: String?) {
        registry.registerSerializer(serializer, forCollection: collection)
    }

    /// The deserializer of `collection` (nil means ""), for objects and metadata.
    public func registerDeserializer(_ deserializer: @escaping YapDatabaseDeserializer, forCollection collection: String?) {
        registry.registerDeserializer(deserializer, forCollection: collection)
    }

    /// The serializer of `collection`'s objects only.
    public func registerObjectSerializer(_ serializer: @escaping YapDatabaseSerializer, forCollection collection: String?) {
        registry.registerSerializer(serializer, forCollection: collection, parts: .object)
    }

    /// The deserializer of `collection`'s objects only.
    public func registerObjectDeserializer(_ deserializer: @escaping YapDatabaseDeserializer, forCollection collection: String?) {
        registry.registerDeserializer(deserializer, forCollection: collection, parts: .object)
    }

    /// The serializer of `collection`'s metadata only.
    public func registerMetadataSerializer(_ serializer: @escaping YapDatabaseSerializer, forCollection collection: String?) {
        registry.registerSerializer(serializer, forCollection: collection, parts: .metadata)
    }

    /// The deserializer of `collection`'s metadata only.
    public func registerMetadataDeserializer(_ deserializer: @escaping YapDatabaseDeserializer, forCollection collection: String?) {
        registry.registerDeserializer(deserializer, forCollection: collection, parts: .metadata)
    }

    /// Runs on each object and metadata of `collection` before it is serialized and cached;
    /// its result is what is stored.
    public func registerPreSanitizer(_ sanitizer: @escaping YapDatabasePreSanitizer, forCollection collection: String?) {
        registry.registerPreSanitizer(sanitizer, forCollection: collection)
    }

    /// Runs on each object and metadata of `collection` after it was stored.
    public func registerPostSanitizer(_ sanitizer: @escaping YapDatabasePostSanitizer, forCollection collection: String?) {
        registry.registerPostSanitizer(sanitizer, forCollection: collection)
    }

    /// Stores `T` values in `collection` (objects and metadata) with a Codable coder: the
    /// given `encoder`/`decoder`, or the default `YapBinaryEncoder`/`YapBinaryDecoder`
    /// (chosen by measurement, docs/api.md). An encoding failure is reported to the writing
    /// transaction as `serialization(collection:key:underlying:)`.
    public func registerCodableSerialization<T: Codable>(_ type: T.Type, forCollection collection: String?,
                                                         encoder: (any YapDatabaseEncoder)? = nil,
                                                         decoder: (any YapDatabaseDecoder)? = nil) {
        registry.registerCodableSerialization(type, forCollection: collection, encoder: encoder, decoder: decoder)
    }

    /// Stores `O` objects and `M` metadata in `collection` with a Codable coder.
    public func registerCodableSerialization<O: Codable, M: Codable>(_ objectType: O.Type, metadata metadataType: M.Type,
                                                                     forCollection collection: String?,
                                                                     encoder: (any YapDatabaseEncoder)? = nil,
                                                                     decoder: (any YapDatabaseDecoder)? = nil) {
        registry.registerCodableSerialization(objectType, metadata: metadataType, forCollection: collection, encoder: encoder, decoder: decoder)
    }

    /// How other connections' caches follow a committed object of `collection`.
    public func setObjectPolicy(_ policy: YapDatabasePolicy, forCollection collection: String?) {
        registry.setObjectPolicy(policy, forCollection: collection)
    }

    /// The object policy of collections without their own (`.containment` unless set).
    public func setDefaultObjectPolicy(_ policy: YapDatabasePolicy) {
        registry.setDefaultObjectPolicy(policy)
    }

    /// How other connections' caches follow committed metadata of `collection`.
    public func setMetadataPolicy(_ policy: YapDatabasePolicy, forCollection collection: String?) {
        registry.setMetadataPolicy(policy, forCollection: collection)
    }

    /// The metadata policy of collections without their own.
    public func setDefaultMetadataPolicy(_ policy: YapDatabasePolicy) {
        registry.setDefaultMetadataPolicy(policy)
    }
}
