// Keydir+KeyBytes: the walk over one collection's rows that hands out each key's bytes as they
// lie in the page, for the lending reads (no string, no array per row).

extension Keydir {
    /// Calls `body` with the UTF-8 bytes of each key of `collection` and its entry, in key
    /// order (or `reversed`), from the first key ≥ `from` to the last ≤ `through` (nil:
    /// unbounded), until it returns false. The key bytes are lent: valid only during the call.
    /// O(log n + k), as `forEachKey`.
    /// - Throws: `PageError` from a page, or `.corrupt(…, .badEntry)` for an entry that is not
    ///   well formed (the walk stops before it).
    package func forEachKeyBytes(inCollection collection: String, from: String? = nil, through: String? = nil, reversed: Bool = false,
                                 _ body: (_ key: UnsafeRawBufferPointer, _ entry: KeydirEntry) -> Bool) throws(PageError) {
        let prefix = RowKey.prefix(collection)
        let lower = KeyBound(from.map { RowKey.encode(collection: collection, key: $0) } ?? prefix)
        let upper = through.map { KeyBound(RowKey.encode(collection: collection, key: $0)) }
            ?? KeyBound(RowKey.end(collection), inclusive: false)
        var malformed = false
        try withBytes(prefix) { (prefixBytes) throws(PageError) in
            try rows.forEachInKeyRange(from: lower, to: upper, reversed: reversed) { keyBytes, valueBytes in
                // Every key in the range starts with the collection's prefix, unless a page lies.
                guard keyBytes.count >= prefixBytes.count,
                      compareBytes(UnsafeRawBufferPointer(rebasing: keyBytes[..<prefixBytes.count]), prefixBytes) == 0,
                      let entry = KeydirEntry(pageEncoded: valueBytes) else {
                    malformed = true
                    return false
                }
                return body(UnsafeRawBufferPointer(rebasing: keyBytes[prefixBytes.count...]), entry)
            }
        }
        if malformed { throw .corrupt(page: .none, reason: .badEntry) }
    }
}
