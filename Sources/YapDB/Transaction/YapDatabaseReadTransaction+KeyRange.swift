// Swift-native additions: rows of a collection in key order, between two keys.

extension YapDatabaseReadTransaction {
    /// Calls `block` with each key of `collection` (nil means "") from the first key ≥ `from`
    /// to the last key ≤ `through` (nil: unbounded on that side), in key order — ascending,
    /// or descending with `reversed` — until it sets `stop`.
    ///
    /// Keys order by their UTF-8 bytes (so "B" < "a" < "é"). Costs O(log n) to find the first
    /// key, then one step per key: a short scan reads a few index pages, never the collection.
    /// A Swift-native addition; YapDatabase has no key order.
    public func iterateKeys(inCollection collection: String?, from: String?, through: String?, reversed: Bool = false,
                            using block: (String, inout Bool) -> Void) {
        iterateEntries(inCollection: collection, from: from, through: through, reversed: reversed) { _, key, _, stop in block(key, &stop) }
    }

    /// Like `iterateKeys(inCollection:from:through:reversed:using:)`, with each row's object when
    /// it is a `T` (rows whose object is not are skipped).
    public func iterateKeysAndObjects<T>(inCollection collection: String?, from: String?, through: String?, reversed: Bool = false,
                                         using block: (String, T, inout Bool) -> Void) {
        iterateEntries(inCollection: collection, from: from, through: through, reversed: reversed) { name, key, entry, stop in
            guard let object = cachedOrDecodedObject(entry, collection: name, key: key) as? T else { return }
            block(key, object, &stop)
        }
    }

    /// Like `iterateKeysAndObjects(inCollection:from:through:reversed:using:)`, with each row's
    /// metadata as an `M` (nil when it has none or it is not an `M`).
    public func iterateRows<O, M>(inCollection collection: String?, from: String?, through: String?, reversed: Bool = false,
                                  using block: (String, O, M?, inout Bool) -> Void) {
        iterateEntries(inCollection: collection, from: from, through: through, reversed: reversed) { name, key, entry, stop in
            guard let object = cachedOrDecodedObject(entry, collection: name, key: key) as? O else { return }
            block(key, object, cachedOrDecodedMetadata(entry, collection: name, key: key) as? M, &stop)
        }
    }
}
