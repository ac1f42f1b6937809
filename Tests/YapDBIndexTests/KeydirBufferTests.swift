import Testing
import TestSupport
@testable import YapDBIndex

/// The write buffer path: `PagedBTreeBuilder` (a tree built bottom-up from sorted entries) and
/// `Keydir.apply(_:)` (buffered rows applied in key order), each against a plain model, with
/// tiny pages so that the trees are several levels deep.
@Suite struct KeydirBufferTests {
    typealias Row = CollectionKeyPair

    /// A tree built from `count` sorted random entries holds exactly them, meets every
    /// invariant (fill bounds, counts, order), and reads the same after a checkpoint and a reload.
    @Test(arguments: [256, 512, 4096], [1, 2, 3, 40, 1_000, 5_000])
    func builtTreesHoldTheirEntriesAndMeetTheInvariants(pageSize: Int, count: Int) throws {
        var rng = SeededRandom(seed: UInt64(pageSize * 31 + count))
        let format = PageFormat(pageSize: pageSize)
        let source = MemoryPageSource(format: format)
        var entries: [[UInt8]: [UInt8]] = [:]
        let longest = format.maximumEntrySize / 2
        while entries.count < count {
            let key = rng.bytes(1 + Int(rng.next() % UInt64(longest)))
            entries[key] = rng.bytes(Int(rng.next() % UInt64(longest)))
        }
        let sorted = entries.keys.sorted { $0.lexicographicallyPrecedes($1) }
        var builder = PagedBTreeBuilder(format: format, source: source)
        for key in sorted {
            try key.withUnsafeBytes { k in try entries[key]!.withUnsafeBytes { v in try builder.append(k, v) } }
        }
        let tree = builder.finish()
        try tree.validate()
        #expect(tree.count == count)
        var walked: [[UInt8]] = []
        try tree.forEach { key, value in
            walked.append(Array(key))
            #expect(entries[Array(key)] == Array(value))
            return true
        }
        #expect(walked == sorted)
        let flush = try tree.flush(allocate: { () throws(Never) in source.allocate() },
                                   write: { (id, bytes) throws(Never) in source.write(id, bytes) })
        flush.publish()
        let reloaded = try PagedBTree(rootPage: flush.root, format: format, source: source)
        try reloaded.validate()
        for key in sorted.prefix(200) {
            var value: [UInt8]?
            _ = try reloaded.withValue(forKey: key) { value = Array($0) }
            #expect(value == entries[key])
        }
        // The built tree takes ordinary changes afterwards.
        var changed = tree
        for key in sorted.prefix(50) { _ = try changed.remove(key) }
        _ = try changed.upsert([0], [1, 2, 3])
        try changed.validate()
        // [0] is the least possible key: if it was there, it was among the 50 removed.
        #expect(changed.count == count - min(50, count) + 1)
    }

    /// A transaction's writes recorded the way the engine records them: each row's entry in
    /// the buffer, looked up there first and then in the trees as they were when applied last.
    struct Transaction {
        var trees: Keydir
        var buffer = KeydirBuffer()

        func entry(_ collection: String, _ key: String) throws -> KeydirEntry? {
            let rowKey = RowKey.encode(collection: collection, key: key)
            return try rowKey.withUnsafeBytes { raw in
                if let slot = buffer.slot(for: raw, hash: KeydirBuffer.hash(raw)) { return buffer.entry(at: slot) }
                return try trees.entry(rowKey: raw)
            }
        }

        mutating func write(_ entry: KeydirEntry?, _ collection: String, _ key: String) throws {
            let rowKey = RowKey.encode(collection: collection, key: key)
            try rowKey.withUnsafeBytes { raw in
                let hash = KeydirBuffer.hash(raw)
                if let slot = buffer.slot(for: raw, hash: hash) {
                    buffer.set(entry, at: slot)
                } else {
                    buffer.insert(raw, hash: hash, entry: entry, base: try trees.entry(rowKey: raw)?.rowid)
                }
            }
        }

        mutating func apply() throws {
            try trees.apply(buffer)
            buffer.removeAll()
        }
    }

    /// Random sets (new rows, updates), removals, and rows removed and set again, buffered and
    /// applied in batches of random size (empty trees take the bottom-up build), give the
    /// directory a model of the same writes expects; point reads through the buffer agree
    /// before each apply, and checkpoints with reloads come in between.
    @Test(arguments: [1 as UInt64, 2, 3, 4])
    func appliedBuffersMatchTheModel(seed: UInt64) throws {
        var rng = SeededRandom(seed: seed)
        let format = PageFormat(pageSize: seed % 2 == 0 ? 256 : 512)
        let source = MemoryPageSource(format: format)
        var tx = Transaction(trees: Keydir(format: format, source: source))
        var model = KeydirTests.Model()
        var nextRowid: UInt64 = 1
        let collections = ["", "a", "ab", "a\u{0}b", "zz", "é"]
        for batch in 0..<60 {
            let writes = rng.next() % 4 == 0 ? Int(rng.next() % 2_000) : Int(rng.next() % 60)
            let keySpace = UInt64(rng.next() % 2 == 0 ? 300 : 3_000)
            for _ in 0..<writes {
                let collection = collections[Int(rng.next() % UInt64(collections.count))]
                let key = "k\(rng.next() % keySpace)"
                let row = Row(collection: collection, key: key)
                #expect(try tx.entry(collection, key) == model.rows[row], "seed \(seed) batch \(batch): read through the buffer")
                if rng.next() % 4 == 0 {
                    try tx.write(nil, collection, key)
                    model.rows[row] = nil
                } else {
                    let old = model.rows[row]
                    let entry = KeydirEntry(rowid: old?.rowid ?? nextRowid, object: KeydirTests.location(&rng),
                                            metadata: rng.next() % 2 == 0 ? nil : KeydirTests.location(&rng))
                    if old == nil { nextRowid += 1 }
                    try tx.write(entry, collection, key)
                    model.rows[row] = entry
                }
            }
            try tx.apply()
            #expect(tx.buffer.isEmpty)
            try tx.trees.rows.validate()
            try tx.trees.rowids.validate()
            try KeydirTests.expectEqual(tx.trees, model, "seed \(seed) batch \(batch)")
            switch rng.next() % 6 {
            case 0:
                let flush = try tx.trees.flush(allocate: { () throws(Never) in source.allocate() },
                                               write: { (id, bytes) throws(Never) in source.write(id, bytes) })
                flush.rows.publish()
                flush.rowids.publish()
                tx.trees = try Keydir(rowsRoot: flush.rows.root, rowidsRoot: flush.rowids.root, format: format, source: source)
            case 1 where rng.next() % 3 == 0:
                tx.trees.removeAll()   // the next batch builds the trees bottom-up
                model.rows.removeAll()
            default:
                break
            }
        }
    }
}
