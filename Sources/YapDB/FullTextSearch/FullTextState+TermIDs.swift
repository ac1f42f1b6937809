import YapDBEngine

// Term ids. Each indexed term has a number, kept in the terms tree twice: the term's entry
// holds its row count and its id, and an id entry (0x00, the id in 4 bytes big-endian — no term
// starts with 0x00, so id entries sort before every term) holds the term. A row's document
// entry lists its terms by id, delta-coded (a few bytes a term instead of its UTF-8), and a
// removal or update turns the ids back into terms with one lookup each. Ids are the smallest
// unused above the highest in use; an id whose term leaves the index may be given again (no
// document refers to it any more). docs/format.md §11.
//
// Why ids and not the handler: a removal must find the row's old terms, and the row's old value
// is gone by then (an update reaches the extension after the row changed; a removal caught up at
// open has no value at all), so the terms have to be stored; ids store them in a third of the bytes.

extension FullTextState {
    /// The key of term id `id`'s entry in the terms tree.
    static func termIDKey(_ id: UInt32) -> [UInt8] {
        [separator, UInt8(id >> 24), UInt8(truncatingIfNeeded: id >> 16), UInt8(truncatingIfNeeded: id >> 8), UInt8(truncatingIfNeeded: id)]
    }

    /// Whether a terms-tree key is an id entry's (not a term's).
    static func isTermIDKey(_ key: UnsafeRawBufferPointer) -> Bool { key.first == separator }

    /// A term's entry: the rows holding it, its id, and the number of its trailing postings
    /// blocks written by merges since its small blocks were last merged (`FullTextState.mergeTerm`;
    /// a hint for when to merge them, never trusted for an answer).
    struct TermEntry {
        var count: Int
        var id: UInt32
        var tail: Int
    }

    static func decodeTermEntry(_ bytes: UnsafeRawBufferPointer) throws(EngineError) -> TermEntry {
        var reader = ByteReader(bytes)
        do {
            let count = try reader.readLength(max: Int(Int32.max))
            let id = try reader.readLength(max: Int(UInt32.max))
            let tail = try reader.readLength(max: Int(UInt16.max))
            guard reader.isAtEnd, count > 0, id > 0 else { throw FullTextPostingBlock.bad }
            return TermEntry(count: count, id: UInt32(id), tail: tail)
        } catch {
            throw FullTextPostingBlock.damaged
        }
    }

    static func encodeTermEntry(_ entry: TermEntry) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendVarint(UInt64(entry.count))
        bytes.appendVarint(UInt64(entry.id))
        bytes.appendVarint(UInt64(min(entry.tail, Int(UInt16.max))))
        return bytes
    }

    /// The entry of the term whose UTF-8 is `key`, or nil when no row holds it.
    func termEntry(_ key: [UInt8]) throws(EngineError) -> TermEntry? {
        var entry: TermEntry?
        var failure: EngineError?
        _ = try terms.withValue(forKey: key) { raw in
            do throws(EngineError) { entry = try Self.decodeTermEntry(raw) } catch { failure = error }
        }
        if let failure { throw failure }
        return entry
    }

    /// The id of `term`, or nil when no row holds it (one lookup in the terms tree).
    func termID(_ term: String) throws(EngineError) -> UInt32? {
        guard isIndexable(term) else { return nil }
        return try termEntry(Array(term.utf8))?.id
    }

    /// The number of rows holding `term` (0 when none).
    func frequency(_ term: String) throws(EngineError) -> Int {
        try termEntry(Array(term.utf8))?.count ?? 0
    }

    /// Changes `term`'s row count by `delta`, giving it an id when it is new and taking its
    /// entries out when no row holds it any more. Returns its id (0 when it left the index).
    @discardableResult
    mutating func adjustFrequency(_ term: String, by delta: Int) throws(EngineError) -> UInt32 {
        let key = Array(term.utf8)
        let old = try termEntry(key)
        let new = (old?.count ?? 0) + delta
        if new <= 0 {
            if let old {
                _ = try terms.remove(key)
                _ = try terms.remove(Self.termIDKey(old.id))
            }
            return 0
        }
        let id: UInt32
        if let old { id = old.id } else { id = try newTermID(key) }
        _ = try terms.upsert(key, Self.encodeTermEntry(TermEntry(count: new, id: id, tail: old?.tail ?? 0)))
        return id
    }

    /// Gives the term whose UTF-8 is `key` a new id and writes its id entry.
    mutating func newTermID(_ key: [UInt8]) throws(EngineError) -> UInt32 {
        let id = try takeTermID()
        _ = try terms.upsert(Self.termIDKey(id), key)
        return id
    }

    /// The next unused id (one above the highest in use, read from the tree the first time).
    private mutating func takeTermID() throws(EngineError) -> UInt32 {
        if nextTermID == nil {
            var highest: UInt32 = 0
            try terms.forEachInKeyRange(from: nil, to: KeyBound(Self.termIDKey(.max)), reversed: true) { key, _ in
                if key.count == 5, Self.isTermIDKey(key) {
                    highest = UInt32(key[1]) << 24 | UInt32(key[2]) << 16 | UInt32(key[3]) << 8 | UInt32(key[4])
                }
                return false
            }
            nextTermID = highest &+ 1
        }
        guard let id = nextTermID, id > 0, id < .max else { throw FullTextPostingBlock.damaged }
        nextTermID = id + 1
        return id
    }

    /// The term with id `id`.
    /// - Throws: `.badEntry` when no term has it (a document entry naming a lost term).
    func termName(_ id: UInt32) throws(EngineError) -> String {
        var name: String?
        _ = try terms.withValue(forKey: Self.termIDKey(id)) { raw in name = String(validating: raw, as: UTF8.self) }
        guard let name, isIndexable(name) else { throw FullTextPostingBlock.damaged }
        return name
    }

    // MARK: Document entries

    /// A row's stored document entry: its length per column and its distinct terms' ids.
    struct StoredDocument {
        var lengths: [Int]
        /// Ascending.
        var termIDs: [UInt32]
        var totalLength: Int { lengths.reduce(0, +) }
    }

    /// A document entry's bytes: C, the lengths, the number of terms and their ids (sorted,
    /// delta-coded).
    static func encodeDocument(lengths: [Int], termIDs: [UInt32]) -> [UInt8] {
        var entry: [UInt8] = []
        entry.reserveCapacity(lengths.count + termIDs.count * 2 + 4)
        entry.appendVarint(UInt64(lengths.count))
        for length in lengths { entry.appendVarint(UInt64(length)) }
        entry.appendVarint(UInt64(termIDs.count))
        var previous: UInt32 = 0
        for id in termIDs.sorted() {
            entry.appendVarint(UInt64(id - previous))
            previous = id
        }
        return entry
    }

    /// The stored entry of row `rowid`, or nil when the row is not indexed.
    /// - Throws: `EngineError`; `.badEntry` when the entry does not decode.
    func document(_ rowid: UInt64) throws(EngineError) -> StoredDocument? {
        guard let bytes = try Self.chunked(documents, chunkSize: chunkSize, { Self.documentKey(rowid, chunk: $0) }) else {
            return nil
        }
        return try bytes.withBytes { raw throws(EngineError) in
            var reader = ByteReader(raw)
            do {
                let columns = try reader.readLength(max: columnCount)
                guard columns == columnCount else { throw FullTextPostingBlock.bad }
                var lengths: [Int] = []
                for _ in 0..<columns { lengths.append(try reader.readLength(max: Int(Int32.max))) }
                let termCount = try reader.readLength(max: reader.remaining)
                var ids: [UInt32] = []
                ids.reserveCapacity(termCount)
                var id: UInt64 = 0
                for i in 0..<termCount {
                    let delta = try reader.readVarint()
                    guard delta > 0 || i == 0, delta <= UInt64(UInt32.max) - id else { throw FullTextPostingBlock.bad }
                    id += delta
                    guard id > 0 else { throw FullTextPostingBlock.bad }
                    ids.append(UInt32(id))
                }
                guard reader.isAtEnd else { throw FullTextPostingBlock.bad }
                return StoredDocument(lengths: lengths, termIDs: ids)
            } catch {
                throw FullTextPostingBlock.damaged
            }
        }
    }
}
