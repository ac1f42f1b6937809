import YapDBEngine

// The batch removal the relationship extension's cascades use.
extension YapDatabaseReadWriteTransaction {
    /// Removes each row of `rows` that exists, in the order given, exactly as
    /// `removeObject(forKey:inCollection:)` called for each in turn would: hooks and extensions
    /// hear of each row before it goes (hooks after it too), the caches drop it and the
    /// changeset records it. A row that does not exist — absent, or already removed by an
    /// earlier entry — is passed over. What is decided once per batch instead of per row: the
    /// transaction's validity, and whether anything must hear of the removals.
    func removeRows(_ rows: [CollectionKeyPair]) {
        checkValid()
        guard !extensions.isEmpty else {
            for row in rows { removeObject(forKey: row.key, inCollection: row.collection) }
            return
        }
        let hooks = hasHooks
        for row in rows {
            guard entry(collection: row.collection, key: row.key) != nil else { continue }
            noteMutation()
            if hooks { runRemoveHooks(will: true, collection: row.collection, keys: [row.key]) }
            for (extName, ext) in extensions {
                ext.willRemoveRow(name: extName, collection: row.collection, key: row.key, transaction: self)
            }
            var removed = false
            guard engine({ () throws(EngineError) in
                removed = try engineTransaction.remove(collection: row.collection, key: row.key) != nil
            }), removed else { continue }
            forgetRemovedRow(row)
            if hooks { runRemoveHooks(will: false, collection: row.collection, keys: [row.key]) }
        }
    }

    /// Drops a removed row from the caches and from the transaction's written and touched sets.
    func forgetRemovedRow(_ row: CollectionKeyPair) {
        connection.objectCache.remove(collection: row.collection, key: row.key)
        connection.metadataCache.remove(collection: row.collection, key: row.key)
        // (Removals from empty tables are skipped: they hash the key even then.)
        if !writtenObjects.isEmpty { writtenObjects[row] = nil }
        if !writtenMetadata.isEmpty { writtenMetadata[row] = nil }
        if !touchedOnlyObjects.isEmpty { touchedOnlyObjects.remove(row) }
        if !touchedOnlyMetadata.isEmpty { touchedOnlyMetadata.remove(row) }
    }
}
