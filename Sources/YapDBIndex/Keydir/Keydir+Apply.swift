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
    /// row-ids tree follows. The rows are sorted once. Then either
    /// - **a merge rebuild**, when the buffer holds at least an eighth as many rows as the trees
    ///   (a bulk load, a large delete; always when the trees are empty): both trees are read once
    ///   in order, merged with the buffer, and built anew bottom-up (`PagedBTreeBuilder`), no
    ///   descent and no split or merge of nodes; the new trees are wholly in memory until a
    ///   checkpoint writes them;
    /// - or **one change per row** in key order (small buffers into large trees), then the
    ///   row-ids tree's removals and additions in row-id order (new row ids are above every row
    ///   id present: its right edge).
    /// - Throws: `PageError` from a page; `.corrupt(…, .badEntry)` when the trees disagree with
    ///   the buffer (a row it saw is missing, a row id already taken). Then the directory holds
    ///   part of the change: discard it (the engine rolls the transaction back).
    ///
    /// `sink` (a merge rebuild only) writes the new trees' finished leaves as the build goes:
    /// see `PagedBTreeBuilder.init(format:source:sink:)`.
    package mutating func apply(_ buffer: KeydirBuffer, sink: LeafSink? = nil) throws(PageError) {
        guard !buffer.isEmpty else { return }
        let order = buffer.sortedSlots()
        if willRebuild(applying: buffer) {
            try rebuild(with: buffer, order: order, sink: sink)
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

    /// Whether `apply(buffer)` is a merge rebuild (the buffer holds at least an eighth as many
    /// rows as the trees).
    package func willRebuild(applying buffer: KeydirBuffer) -> Bool { buffer.count >= rows.count / 8 }

    /// The merge rebuild of `apply`: `order` is the buffer's slots in key order.
    private mutating func rebuild(with buffer: KeydirBuffer, order: [Int], sink: LeafSink?) throws(PageError) {
        var merge = RebuildMerge(buffer: buffer, builder: PagedBTreeBuilder(format: rows.format, source: rows.source, sink: sink))
        var next = 0
        var failure: PageError?
        try rows.forEach { key, value in
            do throws(PageError) {
                // The buffered rows before this key are new; one equal to it replaces it.
                while next < order.count {
                    let slot = order[next]
                    let comparison = try buffer.withKey(slot) { (buffered) throws(PageError) in compareBytes(buffered, key) }
                    if comparison > 0 { break }
                    try merge.take(slot, present: comparison == 0)
                    next += 1
                    if comparison == 0 { return true }
                }
                try merge.builder.append(key, value)
                return true
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        while next < order.count {
            try merge.take(order[next], present: false)
            next += 1
        }
        // The row-ids tree: the old row ids but the removed ones, then the new ones (all above).
        merge.removedRowids.sort()
        merge.addedRowids.sort { $0.rowid < $1.rowid }
        var rowidsBuilder = PagedBTreeBuilder(format: rowids.format, source: rowids.source, sink: sink)
        var removed = 0
        var last: UInt64?
        try rowids.forEach { key, value in
            do throws(PageError) {
                guard key.count == 8 else { throw .corrupt(page: .none, reason: .badEntry) }
                let rowid = UInt64(bigEndian: key.loadUnaligned(as: UInt64.self))
                while removed < merge.removedRowids.count && merge.removedRowids[removed] < rowid { removed += 1 }
                if removed < merge.removedRowids.count && merge.removedRowids[removed] == rowid {
                    removed += 1
                    return true
                }
                try rowidsBuilder.append(key, value)
                last = rowid
                return true
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        for (rowid, slot) in merge.addedRowids {
            guard last.map({ $0 < rowid }) ?? true else { throw .corrupt(page: .none, reason: .badEntry) }
            last = rowid
            try buffer.withKey(slot) { (key) throws(PageError) in
                try withUnsafeBytes(of: rowid.bigEndian) { id in Result { () throws(PageError) in try rowidsBuilder.append(id, key) } }.get()
            }
        }
        rows = merge.builder.finish()
        rowids = rowidsBuilder.finish()
        guard rows.count == rowids.count else { throw .corrupt(page: .none, reason: .subtreeCountMismatch(expected: rows.count, found: rowids.count)) }
    }
}

/// The state of a merge rebuild (`Keydir.apply`): the new rows tree being built, and the row
/// ids the buffered rows remove from and add to the row-ids tree.
private struct RebuildMerge {
    let buffer: KeydirBuffer
    var builder: PagedBTreeBuilder
    var removedRowids: [UInt64] = []
    var addedRowids: [(rowid: UInt64, slot: Int)] = []

    init(buffer: KeydirBuffer, builder: PagedBTreeBuilder) {
        self.buffer = buffer
        self.builder = builder
    }

    /// Adds buffered row `slot` in place of the trees' row of that key (`present`) or as a new
    /// one. Its `base` must agree: a row the buffer saw in the trees is there, and no other.
    mutating func take(_ slot: Int, present: Bool) throws(PageError) {
        let entry = buffer.entry(at: slot), base = buffer.base(at: slot)
        guard (base != nil) == present else { throw .corrupt(page: .none, reason: .badEntry) }
        if let entry {
            let value = entry.pageEncoded
            try buffer.withKey(slot) { (key) throws(PageError) in
                try value.withUnsafeBytes { value in Result { () throws(PageError) in try builder.append(key, value) } }.get()
            }
        }
        if base != entry?.rowid {
            if let base { removedRowids.append(base) }
            if let entry { addedRowids.append((entry.rowid, slot)) }
        }
    }
}
