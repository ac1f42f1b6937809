// Keydir+Apply: a write transaction's buffered rows applied to the two trees at once, in key
// order, and the lookup by a row key already encoded.

extension Keydir {
    /// The entry stored for the row key `rowKey` (`RowKey.encode`), or nil. One walk of the
    /// rows tree, no allocation.
    package func entry(rowKey: UnsafeRawBufferPointer) throws(PageError) -> KeydirEntry? {
        var entry: KeydirEntry?, malformed = false
        _ = try rows.find(rowKey) { bytes in
            entry = KeydirEntry(pageEncoded: bytes)
            malformed = entry == nil
        }
        if malformed { throw .corrupt(page: .none, reason: .badEntry) }
        return entry
    }

    /// Applies the rows of `buffer` (recorded against this directory: each row's `base` is the
    /// row id it has here): each buffered entry is stored, each removed row removed, and the
    /// row-ids tree follows. The rows are sorted once and each tree is changed in key order;
    /// when both trees are empty they are built bottom-up (`PagedBTreeBuilder`), no descent at
    /// all. New row ids are above every row id present, so the row-ids tree grows at its right
    /// edge.
    /// - Throws: `PageError` from a page; `.corrupt(…, .badEntry)` when the trees disagree with
    ///   the buffer (a row id already taken). Then the directory holds part of the change:
    ///   discard it (the engine rolls the transaction back).
    package mutating func apply(_ buffer: KeydirBuffer) throws(PageError) {
        guard !buffer.isEmpty else { return }
        let order = buffer.sortedSlots()
        if rows.isEmpty && rowids.isEmpty {
            try build(buffer, order: order)
            return
        }
        var removedRowids: [UInt64] = [], addedRowids: [(rowid: UInt64, slot: Int)] = []
        for slot in order {
            let entry = buffer.entry(at: slot), base = buffer.base(at: slot)
            if entry == nil && base == nil { continue }  // inserted and removed again
            let key = try buffer.withKey(slot) { Array($0) }
            if let entry {
                _ = try rows.upsert(key, entry.pageEncoded)
            } else {
                guard try rows.removeFound(key) != nil else { throw .corrupt(page: .none, reason: .badEntry) }
            }
            if base != entry?.rowid {
                if let base { removedRowids.append(base) }
                if let entry { addedRowids.append((entry.rowid, slot)) }
            }
        }
        removedRowids.sort()
        for rowid in removedRowids {
            guard try rowids.removeFound(RowKey.rowid(rowid)) != nil else { throw .corrupt(page: .none, reason: .badEntry) }
        }
        addedRowids.sort { $0.rowid < $1.rowid }
        for (rowid, slot) in addedRowids {
            let key = try buffer.withKey(slot) { Array($0) }
            if try rowids.upsert(RowKey.rowid(rowid), key) != nil { throw .corrupt(page: .none, reason: .badEntry) }
        }
    }

    /// Builds both (empty) trees from the buffered rows, `order` being their key order.
    private mutating func build(_ buffer: KeydirBuffer, order: [Int]) throws(PageError) {
        var rowsBuilder = PagedBTreeBuilder(format: rows.format, source: rows.source)
        var fresh: [(rowid: UInt64, slot: Int)] = []
        fresh.reserveCapacity(order.count)
        for slot in order {
            guard let entry = buffer.entry(at: slot) else { continue }
            let value = entry.pageEncoded
            try buffer.withKey(slot) { (key) throws(PageError) in
                try value.withUnsafeBytes { value in Result { () throws(PageError) in try rowsBuilder.append(key, value) } }.get()
            }
            fresh.append((entry.rowid, slot))
        }
        // Row ids were handed out in the order rows were first written: nearly sorted already.
        fresh.sort { $0.rowid < $1.rowid }
        var rowidsBuilder = PagedBTreeBuilder(format: rowids.format, source: rowids.source)
        var previous: UInt64?
        for (rowid, slot) in fresh {
            guard previous.map({ $0 < rowid }) ?? true else { throw .corrupt(page: .none, reason: .badEntry) }
            previous = rowid
            try buffer.withKey(slot) { (key) throws(PageError) in
                try withUnsafeBytes(of: rowid.bigEndian) { id in Result { () throws(PageError) in try rowidsBuilder.append(id, key) } }.get()
            }
        }
        rows = rowsBuilder.finish()
        rowids = rowidsBuilder.finish()
    }
}
