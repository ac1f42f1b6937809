import YapDBEngine

// The connection's caches as a read-write transaction changes them: what it caches as it
// writes, what it keeps for other connections' caches (`.share`, `.copy`), and how a rollback
// takes it back. Each list of keys is bounded (`trackedKeyLimit`), so a bulk load holds none
// of them for every row.
extension YapDatabaseReadWriteTransaction {
    func cacheObject(_ object: Any, _ pair: CollectionKeyPair, rules: SerializationRegistry.WriteRules) {
        if connection.objectCacheOn {
            connection.objectCache.set(object, collection: pair.collection, key: pair.key)
            noteCacheTouched(pair)
        }
        if rules.objectPolicy != .containment && !writtenOverflowed {
            writtenObjects[pair] = object
            noteWrittenCount()
        }
    }

    func cacheMetadata(_ metadata: Any?, _ pair: CollectionKeyPair, rules: SerializationRegistry.WriteRules) {
        if connection.metadataCacheOn {
            connection.metadataCache.set(metadata ?? NoMetadata.marker, collection: pair.collection, key: pair.key)
            noteCacheTouched(pair)
        }
        if rules.metadataPolicy != .containment && !writtenOverflowed {
            writtenMetadata[pair] = metadata ?? NoMetadata.marker
            noteWrittenCount()
        }
    }

    /// Adds `pair` to `cacheTouched`, or past `trackedKeyLimit` keys stops tracking them.
    func noteCacheTouched(_ pair: CollectionKeyPair) {
        guard !cacheTouchedOverflowed else { return }
        if cacheTouched.count < Self.trackedKeyLimit {
            cacheTouched.insert(pair)
        } else {
            cacheTouchedOverflowed = true
            cacheTouched = []
        }
    }

    /// Past `trackedKeyLimit` written keys, stops keeping the written objects for others.
    func noteWrittenCount() {
        guard writtenObjects.count + writtenMetadata.count > Self.trackedKeyLimit else { return }
        writtenOverflowed = true
        writtenObjects = [:]
        writtenMetadata = [:]
    }

    /// After a rollback or failure: the caches keep nothing from this transaction.
    func discardCacheChanges() {
        if cacheTouchedOverflowed {
            connection.objectCache.removeAll()
            connection.metadataCache.removeAll()
            return
        }
        for pair in cacheTouched {
            connection.objectCache.remove(collection: pair.collection, key: pair.key)
            connection.metadataCache.remove(collection: pair.collection, key: pair.key)
        }
    }
}
