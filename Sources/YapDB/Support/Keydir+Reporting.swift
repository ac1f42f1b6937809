import YapDBEngine
import YapDBIndex
import YapDBStorage

/// The key directory as the public API reads it. YapDatabase's read methods do not throw, so a
/// page of the index that is damaged or cannot be read is reported to the log handler (as an
/// error naming the page) and the read answers as if the row were absent, as a damaged value
/// record already does; `YapDatabase.verify()` then reports the damage.
extension Keydir {
    /// Logs an index failure met by `operation`.
    private static func report(_ error: any Error, _ operation: String) {
        let described = (error as? PageError).map { "\(StorageError($0))" } ?? "\(error)"
        YapDatabaseLogging.log(.error, "the index could not be read (\(operation)): \(described); run verify()")
    }

    /// The entry of (`collection`, `key`), or nil (also when the index cannot be read).
    func lookup(collection: String, key: String) -> KeydirEntry? {
        do { return try entry(collection: collection, key: key) } catch {
            Self.report(error, "row \(collection)/\(key)")
            return nil
        }
    }

    /// The entry of (`collection`, `key`), whose row key the caller has already made
    /// (`RowKey.encode`), or nil.
    func lookup(rowKey: [UInt8], collection: String, key: String) -> KeydirEntry? {
        do { return try rows.entry(forKey: rowKey) } catch {
            Self.report(error, "row \(collection)/\(key)")
            return nil
        }
    }

    /// The (collection, key) of row `rowid`, or nil.
    func owner(ofRowid rowid: UInt64) -> (collection: String, key: String)? {
        do { return try key(forRowid: rowid) } catch {
            Self.report(error, "row id \(rowid)")
            return nil
        }
    }

    /// The (collection, key) and entry of row `rowid`, or nil; `memo` as `row(forRowid:memo:)`.
    func row(ofRowid rowid: UInt64, memo: inout CollectionMemo) -> (collection: String, key: String, entry: KeydirEntry?)? {
        do { return try row(forRowid: rowid, memo: &memo) } catch {
            Self.report(error, "row id \(rowid)")
            return nil
        }
    }

    /// The number of rows in `collection`.
    func rowCount(inCollection collection: String) -> Int {
        do { return try count(inCollection: collection) } catch {
            Self.report(error, "count of \(collection)")
            return 0
        }
    }

    /// The number of collections that have rows.
    func numberOfCollections() -> Int {
        do { return try collectionCount() } catch {
            Self.report(error, "collections")
            return 0
        }
    }

    /// The names of the collections that have rows, in name order.
    func collectionNames() -> [String] {
        do { return try collections() } catch {
            Self.report(error, "collections")
            return []
        }
    }

    /// Calls `body` with each key and entry of `collection` in key order (or `reversed`), from
    /// `from` through `through` (nil: unbounded), until it returns false. A page that cannot
    /// be read ends the walk there (reported).
    /// With `prefetch`, each entry is handed to it one entry ahead of `body`
    /// (`forEachKey(…prefetching:…)`).
    func eachKey(inCollection collection: String, from: String? = nil, through: String? = nil, reversed: Bool = false,
                 prefetching prefetch: ((KeydirEntry) -> Void)? = nil, _ body: (String, KeydirEntry) -> Bool) {
        do {
            try forEachKey(inCollection: collection, from: from, through: through, reversed: reversed, prefetching: prefetch, body)
        } catch {
            Self.report(error, "keys of \(collection)")
        }
    }
}
