import YapDBEngine

// Indexing and un-indexing one row. Every change is made in the row's transaction, on the
// transaction's copy of the state; a `EngineError` leaves the copy half-changed, so the caller
// discards it (the transaction fails).

extension FullTextState {
    // MARK: Documents

    /// Whether row `rowid` is indexed (one lookup).
    func contains(_ rowid: UInt64) throws(EngineError) -> Bool {
        try documents.contains(Self.documentKey(rowid, chunk: 0))
    }

    // MARK: Changes

    /// Indexes row `rowid` as `analysis` says, replacing what it had.
    /// - Parameter newest: the row was just inserted, so its row id is above every indexed one
    ///   (the engine hands out row ids in ascending order): nothing to replace, and each
    ///   posting goes at the end of its term's last block (one search fewer per term).
    mutating func setRow(_ rowid: UInt64, _ analysis: FullTextAnalysis, newest: Bool = false) throws(EngineError) {
        precondition(analysis.lengths.count == columnCount, "FullTextState: \(analysis.lengths.count) columns for \(columnCount)")
        if !newest { try removeRow(rowid) }
        // A new row's postings wait in `pending` only while every pending row id is below it.
        let defers = newest && (pendingLastRowid.map { $0 < rowid } ?? true)
        if newest && !defers { try mergePending() }
        let length = analysis.totalLength
        if defers {
            // The postings, positions and document entry wait; the merge gives the terms ids.
            pending.add(rowid, analysis)
        } else {
            var ids: [UInt32] = []
            ids.reserveCapacity(analysis.terms.count)
            for (term, columns) in analysis.terms {
                let posting = FullTextPosting(rowid: rowid, hits: columns.map { (column: $0.column, count: $0.positions.count) })
                let id = try adjustFrequency(term, by: 1)
                ids.append(id)
                try insertPosting(id, posting, positions: FullTextPositions.encode(columns), length: length, newest: newest)
            }
            try Self.storeChunked(&documents, Self.encodeDocument(lengths: analysis.lengths, termIDs: ids), chunkSize: chunkSize) {
                Self.documentKey(rowid, chunk: $0)
            }
        }
        documentCount += 1
        totalLength += length
        if pendingBytes > pendingLimit { try mergePending(keepingCapacity: true) }
    }

    /// Takes row `rowid` out of the index. Returns whether it was in it.
    @discardableResult
    mutating func removeRow(_ rowid: UInt64) throws(EngineError) -> Bool {
        try mergePending()
        guard let stored = try document(rowid) else { return false }
        var names: [String] = []
        names.reserveCapacity(stored.termIDs.count)
        for id in stored.termIDs { names.append(try termName(id)) }
        // The postings first: the count's update may free the id.
        for (id, term) in zip(stored.termIDs, names) {
            try removePosting(id, rowid: rowid)
            try adjustFrequency(term, by: -1)
        }
        try Self.removeChunked(&documents) { Self.documentKey(rowid, chunk: $0) }
        documentCount -= 1
        totalLength -= stored.totalLength
        return true
    }

    /// Empties the index (a clear of every collection). O(1).
    mutating func removeAll() {
        terms.removeAll()
        postings.removeAll()
        positions.removeAll()
        documents.removeAll()
        pending = FullTextPendingPostings()
        nextTermID = nil
        documentCount = 0
        totalLength = 0
    }

    // MARK: Postings blocks

    /// The block of term `id` whose last row id is the first at or above `rowid`: its key and bytes.
    func block(_ id: UInt32, atOrAfter rowid: UInt64) throws(EngineError) -> (key: [UInt8], bytes: [UInt8])? {
        let prefix = Self.termPrefix(id)
        var found: (key: [UInt8], bytes: [UInt8])?
        try postings.forEachInKeyRange(from: KeyBound(Self.postingsKey(id, lastRowid: rowid)), to: nil) { key, value in
            if Self.key(key, hasPrefix: prefix, tail: 8) { found = (Array(key), Array(value)) }
            return false
        }
        return found
    }

    /// The last block of term `id` (the highest row ids), if any.
    func lastBlock(_ id: UInt32) throws(EngineError) -> (key: [UInt8], bytes: [UInt8])? {
        let prefix = Self.termPrefix(id)
        var found: (key: [UInt8], bytes: [UInt8])?
        try postings.forEachInKeyRange(from: nil, to: KeyBound(Self.postingsKey(id, lastRowid: .max)), reversed: true) { key, value in
            if Self.key(key, hasPrefix: prefix, tail: 8) { found = (Array(key), Array(value)) }
            return false
        }
        return found
    }

    private func decode(_ bytes: [UInt8]) throws(EngineError) -> FullTextPostingBlock {
        try bytes.withBytes { raw throws(EngineError) in try FullTextPostingBlock(decoding: raw, columnCount: columnCount) }
    }

    /// The block filed under `key` with its rows' positions, for editing.
    private func editable(_ key: [UInt8], _ bytes: [UInt8]) throws(EngineError) -> FullTextPostingBlock {
        var block = try decode(bytes)
        block.positions = try blockRowPositions(key, count: block.postings.count)
        return block
    }

    /// Takes the block filed under `key` (postings and positions) out of the trees.
    mutating func removeBlock(_ key: [UInt8]) throws(EngineError) {
        _ = try postings.remove(key)
        try removeBlockPositions(key)
    }

    /// Whether a block whose positions take `size` bytes may take one more row's `rowSize`.
    func positionsFit(_ size: Int, adding rowSize: Int) -> Bool { size + rowSize <= chunkSize }

    /// Puts `posting` (with the row's `positions` bytes) into the term's blocks: into the block
    /// that covers its row id, or at the end of the last block, or a new block; a block over
    /// the limits splits in two.
    mutating func insertPosting(_ id: UInt32, _ posting: FullTextPosting, positions rowPositions: [UInt8], length: Int,
                                newest: Bool) throws(EngineError) {
        var target = newest ? nil : try block(id, atOrAfter: posting.rowid)
        if target == nil { target = try lastBlock(id) }
        guard let (oldKey, bytes) = target else {
            try writeBlocks(id, FullTextPostingBlock(postings: [posting], minimumLength: length, positions: [rowPositions]))
            return
        }
        // The common case, a row id past the term's last one: append to the block's bytes.
        let last = oldKey.withUnsafeBytes { Self.lastRowid(ofKey: $0) }
        if posting.rowid > last,
           let appended = try FullTextPostingBlock.appending(posting, after: last, length: length, to: bytes),
           appended.count <= blockLimit {
            guard var stored = try blockPositions(oldKey) else { throw FullTextPostingBlock.damaged }
            if positionsFit(stored.count, adding: FullTextBlockPositions.size(of: rowPositions)) {
                FullTextBlockPositions.append(rowPositions, to: &stored)
                try removeBlock(oldKey)
                let key = Self.postingsKey(id, lastRowid: posting.rowid)
                _ = try postings.upsert(key, appended)
                try storeBlockPositions(key, stored)
                return
            }
        }
        // A row id inside the block: the row is put in the block's bytes and positions entry
        // in place, while both stay within their limits.
        if posting.rowid <= last, try insertInPlace(oldKey, bytes, posting, positions: rowPositions, length: length) {
            return
        }
        var block = try editable(oldKey, bytes)
        let index = block.postings.firstIndex { $0.rowid >= posting.rowid } ?? block.postings.count
        if index < block.postings.count, block.postings[index].rowid == posting.rowid {
            block.postings[index] = posting
            block.positions[index] = rowPositions
        } else {
            block.postings.insert(posting, at: index)
            block.positions.insert(rowPositions, at: index)
        }
        block.minimumLength = min(block.minimumLength, length)
        try removeBlock(oldKey)
        try writeBlocks(id, block)
    }

    /// Puts `posting` into the block filed under `key` (which covers its row id) by editing the
    /// block's bytes and positions entry; false, changing nothing, when the block is full, holds
    /// the row already, or either part would pass its limit.
    private mutating func insertInPlace(_ key: [UInt8], _ bytes: [UInt8], _ posting: FullTextPosting, positions rowPositions: [UInt8],
                                        length: Int) throws(EngineError) -> Bool {
        let columns = columnCount
        guard let edit = try bytes.withBytes({ raw throws(EngineError) in
            try FullTextPostingBlock.inserting(posting, length: length, into: raw, columnCount: columns)
        }), edit.bytes.count <= blockLimit else { return false }
        guard let stored = try blockPositions(key) else { throw FullTextPostingBlock.damaged }
        guard stored.count <= chunkSize, positionsFit(stored.count, adding: FullTextBlockPositions.size(of: rowPositions)) else { return false }
        let rows = try FullTextBlockPositions.inserting(rowPositions, at: edit.index, of: edit.count, into: stored)
        _ = try postings.upsert(key, edit.bytes)
        try storeBlockPositions(key, rows)
        return true
    }

    /// Writes `block` (with its positions) under its key, split into as many blocks as the
    /// limits need: the postings bytes within `blockLimit`, at most `maximumEntries` rows, the
    /// positions within one chunk unless the block is one row.
    mutating func writeBlocks(_ id: UInt32, _ block: FullTextPostingBlock) throws(EngineError) {
        precondition(block.positions.count == block.postings.count, "FullTextState: a block written without its positions")
        let limit = blockLimit
        var pending = [block]
        while let next = pending.popLast() {
            let bytes = next.encoded()
            let over = bytes.count > limit || next.postings.count > FullTextPostingBlock.maximumEntries || next.positionsSize > chunkSize
            if over && next.postings.count > 1 {
                // The left half stays fuller when appending (row ids mostly grow): split 7/8.
                let count = next.postings.count
                let cut = count > FullTextPostingBlock.maximumEntries ? count * 7 / 8 : count / 2
                pending.append(next.slice(cut..<count))
                pending.append(next.slice(0..<cut))
                continue
            }
            let key = Self.postingsKey(id, lastRowid: next.lastRowid)
            _ = try postings.upsert(key, bytes)
            try storeBlockPositions(key, FullTextBlockPositions.encode(next.positions))
        }
    }

    /// Takes row `rowid` out of the term's block that holds it by editing the block's bytes and
    /// its positions entry (`FullTextPostingBlock.removing`); a block left empty is deleted, and
    /// a block whose last row went is filed again under its new last row id.
    mutating func removePosting(_ id: UInt32, rowid: UInt64) throws(EngineError) {
        guard let (key, bytes) = try block(id, atOrAfter: rowid) else { return }
        let columns = columnCount
        guard let cut = try bytes.withBytes({ raw throws(EngineError) in
            try FullTextPostingBlock.removing(rowid, from: raw, columnCount: columns)
        }) else { return }
        guard let edited = cut.bytes else {
            try removeBlock(key)
            return
        }
        guard let stored = try blockPositions(key) else { throw FullTextPostingBlock.damaged }
        let rows = try FullTextBlockPositions.removing(row: cut.index, of: cut.count, from: stored)
        let newKey = Self.postingsKey(id, lastRowid: cut.last)
        // A block of several rows keeps its positions in one chunk; anything longer is cleared
        // first so that no chunk is left behind.
        if newKey != key || stored.count > chunkSize { try removeBlock(key) }
        _ = try postings.upsert(newKey, edited)
        try storeBlockPositions(newKey, rows)
    }
}
