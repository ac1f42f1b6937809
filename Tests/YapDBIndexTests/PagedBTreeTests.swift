// Model-based tests of PagedBTree against a Dictionary, with tiny pages so that splits, merges
// and redistribution happen early; flushes to an in-memory source and reloads in the middle;
// old snapshots kept and re-checked after many later mutations.
import Testing
import TestSupport
@testable import YapDBIndex

/// A sorted-array model of the tree.
private struct KeyedModel {
    var entries: [[UInt8]: [UInt8]] = [:]
    var sortedKeys: [[UInt8]] { entries.keys.sorted { $0.lexicographicallyPrecedes($1) } }
}

/// A random key over a small alphabet (shared prefixes, equal lengths, empty keys all happen).
private func randomKey(_ rng: inout SeededRandom, maxLength: Int) -> [UInt8] {
    letterKey(&rng, lengths: 0..<(maxLength + 1), letters: 4)
}

private func randomValue(_ rng: inout SeededRandom, maxLength: Int) -> [UInt8] {
    rng.bytes(Int(rng.next() % UInt64(maxLength + 1)))
}

/// Every entry in order, by walking the tree.
private func allEntries(_ tree: PagedBTree, reversed: Bool = false) throws -> [([UInt8], [UInt8])] {
    var out: [([UInt8], [UInt8])] = []
    try tree.forEach(reversed: reversed) { key, value in out.append((Array(key), Array(value))); return true }
    return out
}

/// Compares the whole tree with the model: validate, count, order, lookups, positions.
private func expectMatches(_ tree: PagedBTree, _ model: KeyedModel, _ context: String) throws {
    guard isValid(tree.validate, context) else { return }
    let keys = model.sortedKeys
    #expect(tree.count == keys.count, "\(context) count")
    let entries = try allEntries(tree)
    #expect(entries.map(\.0) == keys, "\(context) order")
    #expect(entries.allSatisfy { model.entries[$0.0] == $0.1 }, "\(context) values")
    #expect(try allEntries(tree, reversed: true).map(\.0) == keys.reversed(), "\(context) reversed")
    for (i, key) in keys.enumerated() where i % 7 == 0 {
        #expect(try tree.value(forKey: key) == model.entries[key], "\(context) get")
        #expect(try tree.index(of: key) == i, "\(context) index(of:)")
        #expect(try tree.element(at: i).key == key, "\(context) element(at:)")
    }
    #expect(try tree.firstEntry()?.key == keys.first, "\(context) first")
    #expect(try tree.lastEntry()?.key == keys.last, "\(context) last")
}

@Test(arguments: [(1, 256), (2, 256), (3, 512), (4, 256), (5, 1024)] as [(UInt64, Int)])
func pagedBTreeModel(seed: UInt64, pageSize: Int) throws {
    var rng = SeededRandom(seed: seed)
    let format = PageFormat(pageSize: pageSize)
    let source = MemoryPageSource(format: format)
    let maxKey = 12, maxValue = format.maximumEntrySize - maxKey
    var tree = PagedBTree(format: format, source: source)
    var model = KeyedModel()
    var snapshots: [(PagedBTree, KeyedModel, Int)] = []
    for step in 0..<4000 {
        let context = "seed \(seed) page \(pageSize) step \(step)"
        let action = rng.next() % 100
        // Grow for the first half, then mostly shrink, so merges happen on flushed pages.
        let growing = step < 2000
        if action < (growing ? 55 : 30) {
            let key = randomKey(&rng, maxLength: maxKey), value = randomValue(&rng, maxLength: maxValue)
            let old = try tree.upsert(key, value)
            #expect(old == model.entries[key], "\(context) upsert old value")
            model.entries[key] = value
        } else if action < 85 {
            // Remove a present key most of the time.
            let keys = model.sortedKeys
            let key = keys.isEmpty || rng.next() % 4 == 0 ? randomKey(&rng, maxLength: maxKey) : keys[Int(rng.next() % UInt64(keys.count))]
            let old = try tree.remove(key)
            #expect(old == model.entries.removeValue(forKey: key), "\(context) remove old value")
        } else if action < 92 {
            // A bounded range, forward or reversed, with an early stop.
            let a = randomKey(&rng, maxLength: 4), b = randomKey(&rng, maxLength: 4)
            let (low, high) = a.lexicographicallyPrecedes(b) ? (a, b) : (b, a)
            let lowInclusive = rng.next() % 2 == 0, highInclusive = rng.next() % 2 == 0
            let reversed = rng.next() % 2 == 0, limit = 1 + Int(rng.next() % 6)
            var expected = model.sortedKeys.filter { key in
                (lowInclusive ? !key.lexicographicallyPrecedes(low) : low.lexicographicallyPrecedes(key))
                    && (highInclusive ? !high.lexicographicallyPrecedes(key) : key.lexicographicallyPrecedes(high))
            }
            if reversed { expected.reverse() }
            var seen: [[UInt8]] = []
            try tree.forEach(from: KeyBound(low, inclusive: lowInclusive), to: KeyBound(high, inclusive: highInclusive), reversed: reversed) { key, _ in
                seen.append(Array(key)); return seen.count < limit
            }
            #expect(seen == Array(expected.prefix(limit)), "\(context) range")
        } else if action < 96 {
            snapshots.append((tree, model, step))
            if snapshots.count > 6 { snapshots.remove(at: Int(rng.next() % 6)) }
        } else if action < 98 {
            // Checkpoint: flush, publish, then either reload from the root page or release
            // the written nodes in place.
            let flush = source.flush(tree)
            if rng.next() % 2 == 0 {
                tree = try PagedBTree(rootPage: flush.root, format: format, source: source)
            } else {
                tree = tree.releasingFlushedNodes()
                #expect(tree.cleanRootPage == flush.root, "\(context) released root")
            }
            try expectMatches(tree, model, "\(context) after flush")
        } else {
            try expectMatches(tree, model, context)
        }
        if step % 50 == 0 { guard isValid(tree.validate, context) else { return } }
    }
    try expectMatches(tree, model, "seed \(seed) end")
    for (old, oldModel, step) in snapshots {
        try expectMatches(old, oldModel, "seed \(seed) snapshot from step \(step)")
    }
}

@Test func pagedBTreeFlushWritesOnlyTheChangedPath() throws {
    let format = PageFormat(pageSize: 256)
    let source = MemoryPageSource(format: format)
    var tree = PagedBTree(format: format, source: source)
    for i in 0..<2000 { try tree.upsert(Array("key\(i)".utf8), [UInt8(i & 0xFF)]) }
    let first = source.flush(tree)
    #expect(first.pagesWritten == source.pageCount)
    tree = try PagedBTree(rootPage: first.root, format: format, source: source)
    #expect(tree.height >= 3)
    // One value replaced in place (same size): exactly the root-to-leaf path is rewritten.
    #expect(tree.unwrittenPageCount == 0)
    try tree.upsert(Array("key777".utf8), [7])
    #expect(tree.unwrittenPageCount == tree.height)
    let second = source.flush(tree)
    #expect(second.pagesWritten == tree.height)
    // Flushing again after publishing writes nothing: the nodes remember their pages.
    #expect(tree.unwrittenPageCount == 0)
    #expect(source.flush(tree).pagesWritten == 0)
    let reloaded = try PagedBTree(rootPage: second.root, format: format, source: source)
    #expect(try reloaded.value(forKey: Array("key777".utf8)) == [7])
    #expect(try reloaded.value(forKey: Array("key778".utf8)) == [UInt8(778 & 0xFF)])
    #expect(reloaded.count == 2000)
    reloaded.checkInvariants()
    // An unpublished flush is not remembered: a failed checkpoint writes everything again.
    var again = reloaded
    try again.remove(Array("key5".utf8))
    let unpublished = again.flush(allocate: { () throws(Never) in source.allocate() }, write: { (id, bytes) throws(Never) in source.write(id, bytes) })
    #expect(unpublished.pagesWritten == again.flush(allocate: { () throws(Never) in source.allocate() }, write: { (_, _) throws(Never) in }).pagesWritten)
}

@Test func pagedBTreeRejectsEntriesLargerThanAPage() throws {
    let format = PageFormat(pageSize: 256)
    var tree = PagedBTree(format: format, source: EmptyPageSource())
    let limit = format.maximumEntrySize
    try tree.upsert([1], [UInt8](repeating: 2, count: limit - 1))
    #expect(throws: PageError.self) { try tree.upsert([1], [UInt8](repeating: 2, count: limit)) }
    #expect(tree.count == 1)
    do {
        try tree.upsert([3], [UInt8](repeating: 2, count: limit))
        Issue.record("expected entryTooLarge")
    } catch {
        guard case .entryTooLarge(let size, let reported) = error else { Issue.record("\(error)"); return }
        #expect(size == limit + 1 && reported == limit)
    }
}

@Test func pagedBTreeSnapshotsShareNodesAndDoNotSeeLaterWrites() throws {
    let format = PageFormat(pageSize: 512)
    var tree = PagedBTree(format: format, source: EmptyPageSource())
    for i in 0..<300 { try tree.upsert(Array("k\(i)".utf8), Array("v\(i)".utf8)) }
    let snapshot = tree
    for i in 0..<300 where i % 3 == 0 { try tree.remove(Array("k\(i)".utf8)) }
    try tree.upsert(Array("k1".utf8), Array("changed".utf8))
    #expect(snapshot.count == 300)
    #expect(try snapshot.value(forKey: Array("k1".utf8)) == Array("v1".utf8))
    #expect(try snapshot.value(forKey: Array("k0".utf8)) == Array("v0".utf8))
    #expect(tree.count == 200)
    #expect(try tree.value(forKey: Array("k1".utf8)) == Array("changed".utf8))
    #expect(try tree.value(forKey: Array("k0".utf8)) == nil)
    snapshot.checkInvariants()
    tree.checkInvariants()
}

@Test func pageChecksumIsCRC32C() {
    let check = Array("123456789".utf8).withUnsafeBytes { PageChecksum.crc32c.compute($0) }
    #expect(check == 0xE306_9283)
}

@Test func keydirEntryPageCodecRoundTripsAndRejectsDamage() {
    var rng = SeededRandom(seed: 77)
    for _ in 0..<500 {
        let object = ValueLocation(segment: UInt32(truncatingIfNeeded: rng.next()), offset: UInt32(truncatingIfNeeded: rng.next() >> (rng.next() % 32)), length: UInt32(truncatingIfNeeded: rng.next() >> 40))
        let metadata = rng.next() % 2 == 0 ? nil : ValueLocation(segment: 1, offset: UInt32(truncatingIfNeeded: rng.next()), length: 9)
        let entry = KeydirEntry(rowid: rng.next() >> (rng.next() % 64), object: object, metadata: metadata)
        let bytes = entry.pageEncoded
        #expect(bytes.count <= KeydirEntry.maximumPageEncodedSize)
        #expect(bytes.withUnsafeBytes { KeydirEntry(pageEncoded: $0) } == entry)
        // Every truncation, and one trailing byte, is rejected.
        for cut in 0..<bytes.count { #expect(bytes[..<cut].withUnsafeBytes { KeydirEntry(pageEncoded: $0) } == nil) }
        #expect((bytes + [0]).withUnsafeBytes { KeydirEntry(pageEncoded: $0) } == nil)
    }
    // Unknown flags, an overlong varint, a segment beyond 32 bits.
    #expect([UInt8]([2, 1, 1, 1, 1]).withUnsafeBytes { KeydirEntry(pageEncoded: $0) } == nil)
    #expect([UInt8]([0, 0x81, 0x00, 1, 1, 1]).withUnsafeBytes { KeydirEntry(pageEncoded: $0) } == nil)
    #expect([UInt8]([0, 1, 0x80, 0x80, 0x80, 0x80, 0x10, 1, 1]).withUnsafeBytes { KeydirEntry(pageEncoded: $0) } == nil)
    #expect([UInt8]([0, 1, 1, 1, 1]).withUnsafeBytes { KeydirEntry(pageEncoded: $0) } == KeydirEntry(rowid: 1, object: ValueLocation(segment: 1, offset: 1, length: 1)))
}

@Test func pagedBTreeShrinksWhenValuesShrink() throws {
    let format = PageFormat(pageSize: 256)
    let source = MemoryPageSource(format: format)
    var tree = PagedBTree(format: format, source: source)
    // Values that differ in their first byte, so the leaves share no value prefix.
    let big = [UInt8](repeating: 9, count: format.maximumEntrySize - 3)
    var key: UInt8 = 0
    while tree.height < 2 { try tree.upsert([key, 0], [key] + big); key += 1 }
    // Written and reopened, so the merges read clean pages.
    tree = try PagedBTree(rootPage: source.flush(tree).root, format: format, source: source)
    for k in 0..<key {
        try tree.upsert([k, 0], [k])
        guard isValid(tree.validate, "after shrinking value \(k)") else { return }
    }
    #expect(tree.height == 1)
    #expect(tree.count == Int(key))
    #expect(try tree.value(forKey: [3, 0]) == [3])
}

@Test func pagedBTreeAscendingInsertsFillPages() throws {
    let format = PageFormat(pageSize: 256)
    let keys = (0..<3000).map { Array(("00000" + String($0)).suffix(6).utf8) }
    func pages(_ order: [[UInt8]]) throws -> Int {
        let source = MemoryPageSource(format: format)
        var tree = PagedBTree(format: format, source: source)
        for key in order { try tree.upsert(key, [1, 2, 3, 4]) }
        tree.checkInvariants()
        return source.flush(tree).pagesWritten
    }
    var rng = SeededRandom(seed: 5)
    let ascending = try pages(keys), random = try pages(keys.shuffled(using: &rng))
    // Halving on every split would leave ascending loads at half-full pages (more pages than
    // a random order, which averages about 70 %); appends leave the left page full instead.
    #expect(Double(ascending) < 0.9 * Double(random), "ascending \(ascending) pages, random \(random)")
    // Descending loads are not helped, but stay valid.
    #expect(try pages(keys.reversed()) > 0)
}
