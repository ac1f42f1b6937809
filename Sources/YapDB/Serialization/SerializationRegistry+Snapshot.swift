import Foundation

extension SerializationRegistry {
    /// The registrations at one moment: what a transaction uses to turn objects and metadata
    /// into bytes and back. A connection takes the newest one when a transaction starts, so a
    /// registration applies from the next transaction of every connection.
    ///
    /// Threading: immutable and `Sendable`; its methods may run on any thread at once. A class,
    /// so that a transaction holding it retains one object instead of copying every table.
    final class Snapshot: Sendable {
        let object: Table
        let metadata: Table
        let codables: CodableTable
        let objectPolicies: [String: YapDatabasePolicy]
        let metadataPolicies: [String: YapDatabasePolicy]
        let defaultObjectPolicy: YapDatabasePolicy
        let defaultMetadataPolicy: YapDatabasePolicy

        init(state: State) {
            object = state.object
            metadata = state.metadata
            codables = state.codables
            objectPolicies = state.objectPolicies
            metadataPolicies = state.metadataPolicies
            defaultObjectPolicy = state.defaultObjectPolicy
            defaultMetadataPolicy = state.defaultMetadataPolicy
        }

        private func table(_ part: Part) -> Table { part == .object ? object : metadata }

        /// The bytes to store for `value` (`part` of `key` in `collection`).
        ///
        /// Resolution: the collection's serializer, else the default serializer, else the
        /// built-in format (``YapValueFormat``).
        /// - Throws: `YapDatabaseError.serialization(collection:key:underlying:)` when the
        ///   serializer throws or nothing can serialize the value; nothing must be stored then.
        func serialize(_ part: Part, _ value: Any, forKey key: String, inCollection collection: String) throws(YapDatabaseError) -> Data {
            let table = table(part)
            return try serialize(with: table.collections[collection]?.serializer ?? table.defaults.serializer, value, forKey: key, inCollection: collection)
        }

        /// `serialize(_:_:forKey:inCollection:)` with the serializer already chosen (from
        /// `writeRules(forCollection:)` of the same snapshot).
        func serialize(with chosen: Serialize?, _ value: Any, forKey key: String, inCollection collection: String) throws(YapDatabaseError) -> Data {
            do {
                switch chosen {
                case .custom(let serializer)?:
                    return try serializer(collection, key, value)
                case .codable(let codec)?:
                    return try YapValueFormat.encode(value, preferred: codec, codables: codables)
                case nil:
                    return try YapValueFormat.encode(value, preferred: nil, codables: codables)
                }
            } catch let error as YapDatabaseError {
                throw error
            } catch {
                throw .serialization(collection: collection, key: key, underlying: String(describing: error))
            }
        }

        /// The object (or metadata) that stored `data` holds, or nil when the deserializer
        /// returns nil or the bytes cannot be decoded (reported to the log handler as a warning).
        func deserialize(_ part: Part, _ data: Data, forKey key: String, inCollection collection: String) -> Any? {
            deserialize(with: deserializer(part, forCollection: collection), data, forKey: key, inCollection: collection)
        }

        /// What deserializes `part` of `collection`'s rows: the collection's deserializer, else the
        /// default one, else (nil) the built-in format.
        func deserializer(_ part: Part, forCollection collection: String) -> Deserialize? {
            let table = table(part)
            return table.collections[collection]?.deserializer ?? table.defaults.deserializer
        }

        /// `deserialize(_:_:forKey:inCollection:)` with the deserializer already chosen
        /// (`deserializer(_:forCollection:)` of the same snapshot).
        func deserialize(with chosen: Deserialize?, _ data: Data, forKey key: String, inCollection collection: String) -> Any? {
            switch chosen {
            case .custom(let deserializer)?:
                return deserializer(collection, key, data)
            case .codable(let codec)?:
                return builtInDecode(data, preferred: codec, key: key, collection: collection)
            case nil:
                return builtInDecode(data, preferred: nil, key: key, collection: collection)
            }
        }

        private func builtInDecode(_ data: Data, preferred: CodableCodec?, key: String, collection: String) -> Any? {
            do {
                return try YapValueFormat.decode(data, preferred: preferred, codables: codables)
            } catch {
                YapDatabaseLogging.log(.warning, "cannot deserialize the value for key \"\(key)\" in collection \"\(collection)\": \(error)")
                return nil
            }
        }

        /// The value to serialize and cache for `value`: the pre-sanitizer's result (the
        /// collection's, else the default), or `value` itself when none is registered.
        func preSanitize(_ part: Part, _ value: Any, forKey key: String, inCollection collection: String) -> Any {
            let table = table(part)
            guard let sanitizer = table.collections[collection]?.preSanitizer ?? table.defaults.preSanitizer else { return value }
            return sanitizer(collection, key, value)
        }

        /// Runs the post-sanitizer (the collection's, else the default) after `value` was stored.
        func postSanitize(_ part: Part, _ value: Any, forKey key: String, inCollection collection: String) {
            let table = table(part)
            (table.collections[collection]?.postSanitizer ?? table.defaults.postSanitizer)?(collection, key, value)
        }

        /// Whether any pre- or post-sanitizer is registered for `part` (lets the writer skip the lookups).
        func hasSanitizers(_ part: Part) -> Bool {
            let table = table(part)
            return table.defaults.preSanitizer != nil || table.defaults.postSanitizer != nil
                || table.collections.values.contains { $0.preSanitizer != nil || $0.postSanitizer != nil }
        }

        /// Everything a write of `collection`'s rows consults, resolved once (each part: the
        /// collection's registration, else the default): a transaction keeps the rules of the
        /// collection it wrote last, so a bulk write hashes the collection name once instead of
        /// five times per row.
        func writeRules(forCollection collection: String) -> WriteRules {
            func resolved(_ table: Table) -> Entry {
                let own = table.collections[collection]
                return Entry(serializer: own?.serializer ?? table.defaults.serializer,
                             deserializer: own?.deserializer ?? table.defaults.deserializer,
                             preSanitizer: own?.preSanitizer ?? table.defaults.preSanitizer,
                             postSanitizer: own?.postSanitizer ?? table.defaults.postSanitizer)
            }
            return WriteRules(collection: collection, object: resolved(object), metadata: resolved(metadata),
                              objectPolicy: objectPolicy(forCollection: collection),
                              metadataPolicy: metadataPolicy(forCollection: collection))
        }

        /// The object policy of `collection` (its own, else the default).
        func objectPolicy(forCollection collection: String) -> YapDatabasePolicy {
            objectPolicies[collection] ?? defaultObjectPolicy
        }

        /// The metadata policy of `collection` (its own, else the default).
        func metadataPolicy(forCollection collection: String) -> YapDatabasePolicy {
            metadataPolicies[collection] ?? defaultMetadataPolicy
        }
    }
}

extension SerializationRegistry {
    /// The registrations that apply to one collection's writes in one snapshot
    /// (`Snapshot.writeRules(forCollection:)`). A class, so a transaction keeps it with one
    /// reference. Immutable.
    final class WriteRules {
        let collection: String
        let object: Entry
        let metadata: Entry
        let objectPolicy: YapDatabasePolicy
        let metadataPolicy: YapDatabasePolicy

        init(collection: String, object: Entry, metadata: Entry, objectPolicy: YapDatabasePolicy, metadataPolicy: YapDatabasePolicy) {
            self.collection = collection
            self.object = object
            self.metadata = metadata
            self.objectPolicy = objectPolicy
            self.metadataPolicy = metadataPolicy
        }

        /// The entry of `part`.
        func entry(_ part: Part) -> Entry { part == .object ? object : metadata }

        /// The value to serialize and cache for `value`: the pre-sanitizer's result, or `value`.
        func preSanitize(_ part: Part, _ value: Any, forKey key: String) -> Any {
            guard let sanitizer = entry(part).preSanitizer else { return value }
            return sanitizer(collection, key, value)
        }

        /// Runs the post-sanitizer, if any, after `value` was stored.
        func postSanitize(_ part: Part, _ value: Any, forKey key: String) {
            entry(part).postSanitizer?(collection, key, value)
        }
    }
}
