import YapDBEngine

// How a merge of pending postings writes one term's rows. A block written at least 7/8 full is
// settled: new rows start a new block after it instead of rewriting it (reading its positions,
// removing both entries and writing them again). Rows that leave the last block short make it
// part of the term's tail, counted in the term's entry; while the tail is below `tailLimit`, the
// next commit's rows go into new blocks after it (no block read); at `tailLimit`, or when a commit
// brings enough rows to fill a block, the merge reads the tail blocks with their positions and
// writes them again with the new rows in full blocks (FTS5's segments and automerge, on one
// tree). So the work per commit is bounded (at most `tailLimit` blocks read back per term) and a
// term holds at most `tailLimit` short blocks after its settled ones.
//
// `tailLimit` is 1 by default: measured (Benchmarks/profiles.md, "W14 append steps"), a larger
// tail saves few instructions — every appended block is read and removed again by a later merge,
// so the tree operations per term and commit hardly fall — and costs index size (a short block
// costs its two keys and entry headers). Tests run with 4 as well. docs/format.md §11.

extension FullTextState {
    /// The default of `tailLimit`.
    static let defaultTailLimit = 1

    /// Writes the entries `run` of `waiting` (one term's, row ids ascending, all above every
    /// indexed row) into the term's blocks and updates its entry. Returns the term's id.
    mutating func mergeTerm(_ term: String, _ waiting: FullTextPendingPostings, _ run: ArraySlice<Int32>,
                            builder: inout FullTextBlockBuilder, stored: inout FullTextStoredRows) throws(EngineError) -> UInt32 {
        let key = Array(term.utf8)
        let old = try termEntry(key)
        let id: UInt32
        if let old { id = old.id } else { id = try newTermID(key) }
        let count = (old?.count ?? 0) + run.count
        let tail = old?.tail ?? 0
        if tail < tailLimit, let written = try appendBlocks(id, waiting, run, builder: &builder, mayFill: tail == 0) {
            // One new block joins the tail; blocks that filled up end it (their small
            // predecessors, if any, would be stranded: `appendBlocks` refuses that case).
            let newTail = written == 1 ? (tail == 0 && builder.isSettled(limit: blockLimit, chunkSize: chunkSize) ? 0 : tail + 1)
                                       : (builder.isSettled(limit: blockLimit, chunkSize: chunkSize) ? 0 : 1)
            _ = try terms.upsert(key, Self.encodeTermEntry(TermEntry(count: count, id: id, tail: newTail)))
            return id
        }
        guard let newTail = try mergeTail(id, blocks: max(1, min(tail, tailLimit)), waiting, run, builder: &builder, stored: &stored) else {
            // A stored block at or above the new rows (damage): the general path, a row at a time.
            _ = try terms.upsert(key, Self.encodeTermEntry(TermEntry(count: count, id: id, tail: tail)))
            for i in run {
                let range = waiting.positionsRange(Int(i))
                try insertPosting(id, waiting.posting(Int(i)), positions: Array(waiting.positions[range]),
                                  length: waiting.entries[Int(i)].length, newest: false)
            }
            return id
        }
        _ = try terms.upsert(key, Self.encodeTermEntry(TermEntry(count: count, id: id, tail: newTail)))
        return id
    }

    /// Writes `run` as new blocks after the term's last. Returns the number of blocks written,
    /// or nil, writing nothing, when the rows need more than one block and `mayFill` is false.
    private mutating func appendBlocks(_ id: UInt32, _ waiting: FullTextPendingPostings, _ run: ArraySlice<Int32>,
                                       builder: inout FullTextBlockBuilder, mayFill: Bool) throws(EngineError) -> Int? {
        let limit = blockLimit, chunk = chunkSize
        builder.reset()
        var written = 0
        var refused = false
        try waiting.counts.withBytes { counts throws(EngineError) in
            try waiting.positions.withBytes { positions throws(EngineError) in
                for i in run {
                    let entry = waiting.entries[Int(i)]
                    let countsRange = waiting.countsRange(Int(i)), positionsRange = waiting.positionsRange(Int(i))
                    if !builder.accepts(rowid: entry.rowid, countsBytes: countsRange.count, total: entry.total, length: entry.length,
                                        positionsBytes: positionsRange.count, limit: limit, chunkSize: chunk) {
                        guard mayFill else {
                            refused = true
                            return
                        }
                        try writeBlock(id, builder)
                        written += 1
                        builder.reset()
                    }
                    builder.append(rowid: entry.rowid, counts: UnsafeRawBufferPointer(rebasing: counts[countsRange]), total: entry.total,
                                   length: entry.length, positions: UnsafeRawBufferPointer(rebasing: positions[positionsRange]))
                }
            }
        }
        if refused { return nil }
        try writeBlock(id, builder)
        return written + 1
    }

    /// Reads the term's last `blocks` blocks (with their positions), takes them out, and writes
    /// their rows and then `run`'s in full blocks. Returns the new tail (1 when the last block
    /// written is not settled, else 0), or nil, changing nothing, when a stored block is not
    /// below the run's first row.
    private mutating func mergeTail(_ id: UInt32, blocks: Int, _ waiting: FullTextPendingPostings, _ run: ArraySlice<Int32>,
                                    builder: inout FullTextBlockBuilder, stored: inout FullTextStoredRows) throws(EngineError) -> Int? {
        let prefix = Self.termPrefix(id)
        var tail: [(key: [UInt8], bytes: [UInt8])] = []
        try postings.forEachInKeyRange(from: nil, to: KeyBound(Self.postingsKey(id, lastRowid: .max)), reversed: true) { key, value in
            guard Self.key(key, hasPrefix: prefix, tail: 8) else { return false }
            tail.append((Array(key), Array(value)))
            return tail.count < blocks
        }
        tail.reverse()
        if let last = tail.last, let first = run.first {
            let lastRowid = last.key.withUnsafeBytes { Self.lastRowid(ofKey: $0) }
            if lastRowid >= waiting.entries[Int(first)].rowid { return nil }
        }
        var rowPositions: [[UInt8]] = []
        for block in tail {
            guard let bytes = try blockPositions(block.key) else { throw FullTextPostingBlock.damaged }
            rowPositions.append(bytes)
        }
        for block in tail { try removeBlock(block.key) }
        let limit = blockLimit, chunk = chunkSize, columns = columnCount
        builder.reset()
        func add(_ rowid: UInt64, _ counts: UnsafeRawBufferPointer, _ total: Int, _ length: Int, _ positions: UnsafeRawBufferPointer) throws(EngineError) {
            if !builder.accepts(rowid: rowid, countsBytes: counts.count, total: total, length: length,
                                positionsBytes: positions.count, limit: limit, chunkSize: chunk) {
                try writeBlock(id, builder)
                builder.reset()
            }
            // A damaged block could hold rows out of order with the ones before it.
            guard builder.isEmpty || rowid > builder.last else { throw FullTextPostingBlock.damaged }
            builder.append(rowid: rowid, counts: counts, total: total, length: length, positions: positions)
        }
        for (i, (block, positions)) in zip(tail, rowPositions).enumerated() {
            if i == 0 {
                // The first block's sections are copied whole.
                try builder.start(from: block.bytes, last: block.key.withUnsafeBytes { Self.lastRowid(ofKey: $0) }, positions: positions)
                continue
            }
            try block.bytes.withBytes { raw throws(EngineError) in
                try positions.withBytes { rows throws(EngineError) in
                    try stored.read(block: raw, positions: rows, columnCount: columns)
                    for r in stored.rowids.indices {
                        try add(stored.rowids[r], UnsafeRawBufferPointer(rebasing: raw[stored.counts[r]]), stored.totals[r],
                                stored.minimumLength, UnsafeRawBufferPointer(rebasing: rows[stored.positions[r]]))
                    }
                }
            }
        }
        try waiting.counts.withBytes { counts throws(EngineError) in
            try waiting.positions.withBytes { positions throws(EngineError) in
                for i in run {
                    let entry = waiting.entries[Int(i)]
                    try add(entry.rowid, UnsafeRawBufferPointer(rebasing: counts[waiting.countsRange(Int(i))]), entry.total, entry.length,
                            UnsafeRawBufferPointer(rebasing: positions[waiting.positionsRange(Int(i))]))
                }
            }
        }
        try writeBlock(id, builder)
        return builder.isSettled(limit: limit, chunkSize: chunk) ? 0 : 1
    }

    /// Writes the builder's block (postings and positions) under its key.
    private mutating func writeBlock(_ id: UInt32, _ builder: FullTextBlockBuilder) throws(EngineError) {
        guard !builder.isEmpty else { return }
        let key = Self.postingsKey(id, lastRowid: builder.last)
        _ = try postings.upsert(key, builder.encoded())
        try storeBlockPositions(key, builder.positions)
    }
}
