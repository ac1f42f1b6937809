// Keydir+StoredRowKey: a row found from a copy of its row key kept outside the key directory.

extension Keydir {
    /// The (collection, key) of the row whose row key is `rowKey` — the bytes the row-ids tree
    /// stores, as an extension keeps a copy of them — and, when `withEntry`, its entry (nil if
    /// the rows tree lacks that key). One walk of the rows tree with the bytes as they are, or
    /// none without the entry; `memo` as `row(forRowid:memo:)`.
    /// - Throws: `.corrupt(page: .none, reason: .badEntry)` when the bytes are not a row key or
    ///   the stored entry does not decode; `PageError` from a page.
    package func row(forRowKey rowKey: UnsafeRawBufferPointer, withEntry: Bool, memo: inout CollectionMemo) throws(PageError)
        -> (collection: String, key: String, entry: KeydirEntry?) {
        guard let (collection, length) = memo.collection(ofRowKey: rowKey),
              let key = RowKey.key(rowKey, partLength: length) else { throw .corrupt(page: .none, reason: .badEntry) }
        guard withEntry else { return (collection, key, nil) }
        var entry: KeydirEntry?, malformed = false
        _ = try rows.find(rowKey) { bytes in
            entry = KeydirEntry(pageEncoded: bytes)
            malformed = entry == nil
        }
        if malformed { throw .corrupt(page: .none, reason: .badEntry) }
        return (collection, key, entry)
    }

    /// The entries of the rows whose row keys are `rowKeys` (copies of the bytes the rows tree
    /// stores), in order, into `entries` (emptied first; nil for a key the rows tree lacks):
    /// the lookups made together, their memory waits overlapped (`PagedBTree.findEach`).
    /// - Throws: `.corrupt(page: .none, reason: .badEntry)` when a stored entry does not
    ///   decode; `PageError` from a page.
    package func entries(forRowKeys rowKeys: KeyBatch, into entries: inout [KeydirEntry?]) throws(PageError) {
        entries.removeAll(keepingCapacity: true)
        var malformed = false
        try rows.findEach(rowKeys) { _, bytes in
            guard let bytes else { return entries.append(nil) }
            let entry = KeydirEntry(pageEncoded: bytes)
            malformed = malformed || entry == nil
            entries.append(entry)
        }
        if malformed { throw .corrupt(page: .none, reason: .badEntry) }
    }
}
