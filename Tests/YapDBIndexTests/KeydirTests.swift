import Testing
import TestSupport
@testable import YapDBIndex

/// The key directory on paged trees, against a plain dictionary model: tiny pages (splits and
/// merges early), checkpoints to an in-memory page source with reloads from the written roots,
/// and old snapshots re-read after many later changes.
@Suite struct KeydirTests {
    typealias Row = CollectionKeyPair

    /// What the directory must hold.
    struct Model {
        var rows: [Row: KeydirEntry] = [:]

        func keys(in collection: String) -> [String] {
            rows.keys.filter { $0.collection == collection }.map(\.key).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        }
        var collections: [String] {
            Set(rows.keys.map(\.collection)).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        }
    }

    /// Every observable answer of `keydir` equals `model`'s.
    static func expectEqual(_ keydir: Keydir, _ model: Model, _ context: String) throws {
        #expect(keydir.count == model.rows.count, "\(context): count")
        #expect(try keydir.collections() == model.collections, "\(context): collections")
        for collection in model.collections {
            let keys = model.keys(in: collection)
            #expect(try keydir.count(inCollection: collection) == keys.count, "\(context): count of \(collection)")
            var seen: [String] = []
            try keydir.forEachKey(inCollection: collection) { key, entry in
                seen.append(key)
                #expect(model.rows[Row(collection: collection, key: key)] == entry, "\(context): \(collection)/\(key)")
                return true
            }
            #expect(seen == keys, "\(context): keys of \(collection) in order")
            var reversed: [String] = []
            try keydir.forEachKey(inCollection: collection, reversed: true) { key, _ in reversed.append(key); return true }
            #expect(reversed == keys.reversed(), "\(context): reversed keys of \(collection)")
            // The prefetching walk: the same rows in order, each handed to `prefetch`
            // `prefetchDepth` rows before the body gets it; a stop ends it at once.
            let ids = keys.map { model.rows[Row(collection: collection, key: $0)]!.rowid }
            var events: [String] = []
            var ahead: [String] = []
            try keydir.forEachKey(inCollection: collection, prefetching: { events.append("p\($0.rowid)") }) { key, entry in
                events.append("b\(entry.rowid)")
                ahead.append(key)
                return true
            }
            let depth = Keydir.prefetchDepth
            var expected: [String] = []
            for (i, id) in ids.enumerated() {
                expected.append("p\(id)")
                if i >= depth { expected.append("b\(ids[i - depth])") }
            }
            for id in ids.suffix(min(depth, ids.count)) { expected.append("b\(id)") }
            #expect(ahead == keys, "\(context): prefetching walk of \(collection)")
            #expect(events == expected, "\(context): prefetch \(depth) rows ahead in \(collection)")
            var delivered = 0
            try keydir.forEachKey(inCollection: collection, prefetching: { _ in }) { _, _ in
                delivered += 1
                return delivered < 2
            }
            #expect(delivered == min(2, keys.count), "\(context): stop in the prefetching walk of \(collection)")
        }
        for (row, entry) in model.rows {
            #expect(try keydir.entry(collection: row.collection, key: row.key) == entry)
            let owner = try keydir.key(forRowid: entry.rowid)
            #expect(owner?.collection == row.collection && owner?.key == row.key, "\(context): owner of \(entry.rowid)")
        }
    }

    static func location(_ rng: inout SeededRandom) -> ValueLocation {
        ValueLocation(segment: UInt32(rng.next() % 5 + 1), offset: UInt32(rng.next() % 100_000), length: UInt32(rng.next() % 500 + 1))
    }

    @Test(arguments: [1 as UInt64, 2, 3])
    func matchesADictionaryAcrossCheckpointsAndReloads(seed: UInt64) throws {
        var rng = SeededRandom(seed: seed)
        let format = PageFormat(pageSize: 256)
        let source = MemoryPageSource(format: format)
        var keydir = Keydir(format: format, source: source)
        var model = Model()
        var nextRowid: UInt64 = 1
        var snapshots: [(Keydir, Model)] = []
        // Names include a zero byte and a prefix of another name, to exercise the row key's order.
        let collections = ["", "a", "ab", "a\u{0}b", "zz", "é"]
        for step in 0..<3_000 {
            let collection = collections[Int(rng.next() % UInt64(collections.count))]
            let key = "k\(rng.next() % 120)"
            switch rng.next() % 20 {
            case 0..<9:
                let old = model.rows[Row(collection: collection, key: key)]
                let entry = KeydirEntry(rowid: old?.rowid ?? nextRowid, object: Self.location(&rng),
                                        metadata: rng.next() % 2 == 0 ? nil : Self.location(&rng))
                if old == nil { nextRowid += 1 }
                #expect(try keydir.set(entry, collection: collection, key: key) == old)
                model.rows[Row(collection: collection, key: key)] = entry
            case 9..<13:
                let old = model.rows.removeValue(forKey: Row(collection: collection, key: key))
                #expect(try keydir.remove(collection: collection, key: key) == old)
            case 13:
                let removed = try keydir.removeCollection(collection)
                let expected = model.keys(in: collection)
                #expect(removed?.map(\.key) ?? [] == expected)
                model.rows = model.rows.filter { $0.key.collection != collection }
            case 14:
                let found = try keydir.modifyEntry(collection: collection, key: key) { $0.object.offset &+= 1 }
                #expect(found == (model.rows[Row(collection: collection, key: key)] != nil))
                model.rows[Row(collection: collection, key: key)]?.object.offset &+= 1
            case 15:
                let segment = UInt32(rng.next() % 5 + 1)
                let moved = try keydir.relocate { $0.segment == segment ? ValueLocation(segment: 9, offset: $0.offset, length: $0.length) : nil }
                var expectedMoves = 0
                for (row, var entry) in model.rows {
                    if entry.object.segment == segment { entry.object.segment = 9; expectedMoves += 1 }
                    if entry.metadata?.segment == segment { entry.metadata!.segment = 9; expectedMoves += 1 }
                    model.rows[row] = entry
                }
                #expect(moved == expectedMoves)
            case 16:
                // An index checkpoint: write the dirty nodes, then either keep the tree with its
                // written nodes released, or reopen from the roots alone.
                let flush = try keydir.flush(allocate: { () throws(Never) in source.allocate() },
                                             write: { (id, bytes) throws(Never) in source.write(id, bytes) })
                flush.rows.publish()
                flush.rowids.publish()
                if rng.next() % 2 == 0 {
                    keydir = keydir.releasingFlushedNodes()
                } else {
                    keydir = try Keydir(rowsRoot: flush.rows.root, rowidsRoot: flush.rowids.root, format: format, source: source)
                }
                #expect(!keydir.hasUnwrittenChanges, "seed \(seed) step \(step): clean after a checkpoint")
            case 17 where snapshots.count < 4:
                snapshots.append((keydir, model))
            case 18 where rng.next() % 10 == 0:
                keydir.removeAll()
                model.rows.removeAll()
            default:
                #expect(try keydir.entry(collection: collection, key: key) == model.rows[Row(collection: collection, key: key)])
            }
            if step % 250 == 0 {
                try keydir.validate()
                try Self.expectEqual(keydir, model, "seed \(seed) step \(step)")
            }
        }
        try keydir.validate()
        try Self.expectEqual(keydir, model, "seed \(seed) end")
        for (index, (old, oldModel)) in snapshots.enumerated() {
            try old.validate()
            try Self.expectEqual(old, oldModel, "seed \(seed) snapshot \(index)")
        }
    }

    /// Row keys keep (collection, key) order by UTF-8 bytes, a collection is one contiguous
    /// range, and the encoding decodes back.
    @Test func rowKeysOrderByCollectionThenKey() {
        let pairs: [(String, String)] = [("", ""), ("", "a"), ("a", ""), ("a", "\u{0}"), ("a", "b"), ("a\u{0}", ""), ("a\u{0}b", "x"),
                                         ("ab", ""), ("b", "a")]
        let encoded = pairs.map { RowKey.encode(collection: $0.0, key: $0.1) }
        for (a, b) in zip(encoded, encoded.dropFirst()) {
            #expect(a.lexicographicallyPrecedes(b))
        }
        for ((collection, key), bytes) in zip(pairs, encoded) {
            let decoded = bytes.withUnsafeBytes { RowKey.decode($0) }
            #expect(decoded?.collection == collection && decoded?.key == key)
            #expect(RowKey.prefix(collection).lexicographicallyPrecedes(bytes) || RowKey.prefix(collection) == bytes)
            #expect(bytes.lexicographicallyPrecedes(RowKey.end(collection)))
            #expect(RowKey.encodedLength(collection: collection, key: key) == bytes.count)
        }
        #expect([0xFF, 0x01].withUnsafeBytes { RowKey.decode($0) } == nil, "no terminator")
        #expect([0x61, 0x00, 0x07].withUnsafeBytes { RowKey.decode($0) } == nil, "bad escape")
    }

    /// A collection memo gives every row key's collection and part length as decoding does,
    /// whatever came before it: names that are prefixes of one another, names holding 0x00,
    /// the empty name, and bytes that are not a row key (nil, and the memo still answers
    /// the next key right).
    @Test func aCollectionMemoSplitsEachRowKeyAsDecodingDoes() {
        let names = ["", "a", "a\u{0}", "a\u{0}b", "ab", "\u{0}", "\u{0}\u{1}", "bench"]
        let keys = ["", "k", "\u{0}", "\u{1}x", "0123456789abcdef"]
        var rows: [[UInt8]] = []
        for name in names { for key in keys { rows.append(RowKey.encode(collection: name, key: key)) } }
        rows.append([0x61, 0x00, 0x07])
        rows.append([0xFF, 0x01])
        var rng = SeededRandom(seed: 11)
        var memo = CollectionMemo()
        for _ in 0..<2_000 {
            let bytes = rows[Int(rng.next() % UInt64(rows.count))]
            bytes.withUnsafeBytes { raw in
                let split = memo.collection(ofRowKey: raw)
                let decoded = RowKey.decode(raw)
                #expect(split?.name == decoded?.collection)
                if let split, let length = RowKey.collectionPartLength(raw) {
                    #expect(split.partLength == length)
                    #expect(RowKey.key(raw, partLength: split.partLength) == decoded?.key)
                }
            }
        }
    }

    /// A row key too long for the page size is refused by `fits`, and the limit follows the
    /// page size.
    @Test func longKeysAreRefusedByFits() {
        let keydir = Keydir(format: PageFormat(pageSize: 4096))
        let limit = Keydir.maximumRowKeyLength(keydir.format)
        #expect(limit > 800)
        #expect(keydir.fits(collection: "c", key: String(repeating: "k", count: limit - 3)))
        #expect(!keydir.fits(collection: "c", key: String(repeating: "k", count: limit - 2)))
    }
}
