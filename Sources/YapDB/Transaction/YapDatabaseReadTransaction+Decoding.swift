import Foundation
import YapDBEngine

// Decoding a row's object and metadata: the connection's caches first, then the bytes read
// from the transaction's snapshot through the collection's deserializer.
extension YapDatabaseReadTransaction {
    func cachedOrDecodedObject(_ entry: KeydirEntry, collection: String, key: String) -> Any? {
        if let cached = cachedObject(collection: collection, key: key) { return cached }
        return decodeObject(entry, collection: collection, key: key)
    }

    func cachedOrDecodedMetadata(_ entry: KeydirEntry, collection: String, key: String) -> Any? {
        if let cached = cachedMetadata(collection: collection, key: key) { return cached }
        return decodeMetadata(entry, collection: collection, key: key)
    }

    /// The row's object read from `location`, where an index recorded it for row `rowid`: the
    /// connection's cache first; then the record there if it is still that row's object in
    /// this snapshot (`RowReader.readObject`); else through the key directory, as
    /// `object(forKey:inCollection:)`.
    func object(forKey key: String, inCollection collection: String, rowid: UInt64, at location: ValueLocation) -> Any? {
        if let cached = cachedObject(collection: collection, key: key) { return cached }
        var bytes: Data?
        if readsSnapshot, reader.readObject(at: location, ofRowid: rowid, { bytes = Data($0) }), let bytes {
            return decodeObject(bytes, collection: collection, key: key)
        }
        guard let entry = entry(collection: collection, key: key) else { return nil }
        return decodeObject(entry, collection: collection, key: key)
    }

    func decodeObject(_ entry: KeydirEntry, collection: String, key: String) -> Any? {
        guard let bytes = read(entry.object, owner: .object(entry.rowid), "object", collection: collection, key: key) else { return nil }
        return decodeObject(bytes, collection: collection, key: key)
    }

    /// The object of `collection`/`key` from its stored `bytes`, through the collection's
    /// deserializer, kept in the connection's cache.
    func decodeObject(_ bytes: Data, collection: String, key: String) -> Any? {
        let memo: DeserializerMemo
        if let known = objectDeserializer, known.collection == collection {
            memo = known
        } else {
            memo = DeserializerMemo(collection: collection, chosen: connection.serialization.deserializer(.object, forCollection: collection))
            objectDeserializer = memo
        }
        let object: Any?
        if let custom = memo.custom {
            object = custom(collection, key, bytes)
        } else {
            object = connection.serialization.deserialize(with: memo.chosen, bytes, forKey: key, inCollection: collection)
        }
        if connection.objectCacheOn, let object { connection.objectCache.set(object, collection: collection, key: key) }
        return object
    }

    func decodeMetadata(_ entry: KeydirEntry, collection: String, key: String) -> Any? {
        guard let location = entry.metadata else {
            if connection.metadataCacheOn { connection.metadataCache.set(NoMetadata.marker, collection: collection, key: key) }
            return nil
        }
        guard let bytes = read(location, owner: .metadata(entry.rowid), "metadata", collection: collection, key: key) else { return nil }
        let metadata = connection.serialization.deserialize(.metadata, bytes, forKey: key, inCollection: collection)
        if connection.metadataCacheOn {
            connection.metadataCache.set(metadata ?? NoMetadata.marker, collection: collection, key: key)
        }
        return metadata
    }

    /// Reads the value (`part`: "object" or "metadata") of `collection`/`key` at `location`;
    /// a damaged record goes to `readFailed` and reads as missing. The names are
    /// plain parameters, not a message closure: a closure capturing them retained and released
    /// both strings on every read.
    func read(_ location: ValueLocation, owner: ValueOwner, _ part: StaticString, collection: String, key: String) -> Data? {
        do throws(EngineError) {
            return try readValue(location, owner: owner) ?? Data()
        } catch {
            readFailed(error, "the \(part) of \(collection)/\(key)")
            return nil
        }
    }

    /// Starts loading the object of `entry` into the CPU's caches when it lies in a segment's
    /// map, for a read soon after. A hint only.
    func prefetchObject(at location: ValueLocation) {
        reader.prefetch(location)
    }
}
