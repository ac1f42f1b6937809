import Foundation
import YapDBEngine

// Rows through the engine's one read surface (`RowReader`), with the public layer's one
// policy for a read that fails.
//
// YapDatabase's read methods do not throw, so a damaged or unreadable index page or record
// met by one of them is handed to `readFailed(_:_:)` and the read answers as if the row were
// absent: a read-only transaction reports it to the log handler (and `YapDatabase.verify()`
// then reports the damage); a read-write transaction also fails, so that nothing is committed
// on the strength of a read that could not be made. The Swift-native forms that throw
// (`withSerializedObject`, `iterateKeysAndSerializedObjects`) throw the error instead.
extension YapDatabaseReadTransaction {
    // MARK: The error policy

    /// Handles a read that failed with `error` while doing `operation` (a description for the
    /// log, built only on failure). See the policy above; `YapDatabaseReadWriteTransaction`
    /// also fails the transaction.
    func readFailed(_ error: EngineError, _ operation: String) {
        YapDatabaseLogging.log(.error, "could not read \(operation): \(error); run verify()")
        if !readsSnapshot { (self as? YapDatabaseReadWriteTransaction)?.fail(YapDatabaseError(error)) }
    }

    // MARK: Rows

    /// The entry of (`collection`, `key`) in this transaction's view (a read-write
    /// transaction's own writes included), or nil.
    final func entry(collection: String, key: String) -> KeydirEntry? {
        do throws(EngineError) { return try reader.entry(collection: collection, key: key) } catch {
            readFailed(error, "the index (row \(collection)/\(key))")
            return nil
        }
    }

    /// `entry(collection:key:)` when the caller has the row key already (`RowKey.encode`).
    final func entry(rowKey: [UInt8], collection: String, key: String) -> KeydirEntry? {
        do throws(EngineError) {
            return try rowKey.withUnsafeBytes { bytes in Result { () throws(EngineError) in try reader.entry(rowKey: bytes) } }.get()
        } catch {
            readFailed(error, "the index (row \(collection)/\(key))")
            return nil
        }
    }

    /// The (collection, key) of row `rowid`, or nil.
    final func owner(ofRowid rowid: UInt64) -> (collection: String, key: String)? {
        do throws(EngineError) { return try reader.owner(ofRowid: rowid) } catch {
            readFailed(error, "the index (row id \(rowid))")
            return nil
        }
    }

    /// The (collection, key) and entry of row `rowid`, or nil (`RowReader.row(ofRowid:memo:)`).
    final func row(ofRowid rowid: UInt64, memo: inout CollectionMemo) -> (collection: String, key: String, entry: KeydirEntry?)? {
        do throws(EngineError) { return try reader.row(ofRowid: rowid, memo: &memo) } catch {
            readFailed(error, "the index (row id \(rowid))")
            return nil
        }
    }

    /// The number of rows in `collection` (0 when the index cannot be read).
    final func rowCount(inCollection collection: String) -> Int {
        do throws(EngineError) { return try reader.rowCount(inCollection: collection) } catch {
            readFailed(error, "the index (count of \(collection))")
            return 0
        }
    }

    /// The number of collections that have rows.
    final func collectionCount() -> Int {
        do throws(EngineError) { return try reader.collectionCount() } catch {
            readFailed(error, "the index (collections)")
            return 0
        }
    }

    /// The names of the collections that have rows, in name order.
    final func collectionNames() -> [String] {
        do throws(EngineError) { return try reader.collectionNames() } catch {
            readFailed(error, "the index (collections)")
            return []
        }
    }

    /// Calls `body` with each key and entry of `collection` in key order (or `reversed`), from
    /// `from` through `through` (nil: unbounded), until it returns false; with `prefetch`, each
    /// entry a few rows ahead (`RowReader.forEachKey`). A page that cannot be read ends the
    /// walk there (`readFailed`). Writes made by `body` do not disturb the walk.
    final func forEachKey(inCollection collection: String, from: String? = nil, through: String? = nil, reversed: Bool = false,
                          prefetching prefetch: ((KeydirEntry) -> Void)? = nil, _ body: (String, KeydirEntry) -> Bool) {
        do throws(EngineError) {
            try reader.forEachKey(inCollection: collection, from: from, through: through, reversed: reversed, prefetching: prefetch, body)
        } catch {
            readFailed(error, "the index (keys of \(collection))")
        }
    }

    /// Calls `body` with the key directory of this transaction's view, lent rather than copied
    /// (a copy retains every node it reaches), for extensions that walk its trees themselves.
    final func withKeydir<R, E: Error>(_ body: (borrowing Keydir) throws(E) -> R) throws(E) -> R {
        var result: Result<R, E>?
        reader.withKeydir { keydir in result = Result { () throws(E) -> R in try body(keydir) } }
        return try result!.get()
    }

    /// The key directory of this transaction's view, copied (see `withKeydir`).
    final var keydir: Keydir { withKeydir { copy $0 } }

    /// An extension's state as this transaction sees it.
    final func extensionState(_ key: String) -> (any Sendable)? { reader.extensions[key] }

    // MARK: Values

    /// The value at `location` (nil for a nil-metadata record), copied once into `Data` from
    /// where the reader lends it (a memory map, a `pread` buffer, the log's staging buffer).
    final func readValue(_ location: ValueLocation, owner: ValueOwner) throws(EngineError) -> Data? {
        var data: Data?
        try reader.readValue(at: location, owner: owner) { data = $0.map { Data($0) } }
        return data
    }

    // MARK: The connection's caches

    /// The row's object from the connection's object cache, or nil when it is not there (or
    /// the cache is off).
    @inline(__always)
    final func cachedObject(collection: String, key: String) -> Any? {
        guard connection.objectCacheOn else { return nil }
        return connection.objectCache.value(collection: collection, key: key)
    }

    /// The row's metadata from the connection's metadata cache: nil when it is not there (or
    /// the cache is off); `.some(nil)` when the cache knows the row has none.
    @inline(__always)
    final func cachedMetadata(collection: String, key: String) -> Any?? {
        guard connection.metadataCacheOn, let cached = connection.metadataCache.value(collection: collection, key: key) else { return nil }
        return .some(cached is NoMetadata ? nil : cached)
    }
}
