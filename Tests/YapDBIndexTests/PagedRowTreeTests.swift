// Model-based tests of PagedRowTree (a paged view group) against an Array, with comparator-based
// insertion, tiny pages, flushes and reloads, snapshots, and hostile pages.
import Testing
import TestSupport
@testable import YapDBIndex

/// The test ordering: rows sort by `rowid % 37`, so there are long runs of equal rows.
private func order(_ a: UInt64, _ b: UInt64) -> RowComparison {
    a % 37 < b % 37 ? .orderedAscending : a % 37 == b % 37 ? .orderedSame : .orderedDescending
}

/// The comparator for searching for `target`.
private func comparing(_ target: UInt64) -> (UInt64) -> RowComparison { { existing in order(target, existing) } }

private func expectMatches(_ tree: PagedRowTree, _ model: [UInt64], _ context: String) throws {
    guard isValid(tree.validate, context) else { return }
    #expect(tree.count == model.count, "\(context) count")
    #expect(try tree.rowids() == model, "\(context) rowids")
    var reversed: [UInt64] = []
    try tree.forEach(in: 0..<tree.count, reversed: true) { index, rowid in
        #expect(index == model.count - 1 - reversed.count, "\(context) reversed index")
        reversed.append(rowid); return true
    }
    #expect(reversed == model.reversed(), "\(context) reversed")
    for i in stride(from: 0, to: model.count, by: 11) { #expect(try tree.element(at: i) == model[i], "\(context) element(at:)") }
    #expect(tree.first == model.first, "\(context) first")
    #expect(try tree.last() == model.last, "\(context) last")
}

@Test(arguments: [(31, 256), (32, 256), (33, 512), (34, 4096)] as [(UInt64, Int)])
func pagedRowTreeModel(seed: UInt64, pageSize: Int) throws {
    var rng = SeededRandom(seed: seed)
    let format = PageFormat(pageSize: pageSize)
    let source = MemoryPageSource(format: format)
    var tree = PagedRowTree(format: format, source: source)
    var model: [UInt64] = []
    var nextRowid: UInt64 = 1
    var snapshots: [(PagedRowTree, [UInt64], Int)] = []
    for step in 0..<5000 {
        let context = "seed \(seed) page \(pageSize) step \(step)"
        let action = rng.next() % 100
        if action < (step < 2500 ? 60 : 35) || model.count < 8 {
            let rowid = nextRowid; nextRowid += 1
            let index = try tree.insertionIndex(comparing(rowid))
            let expected = model.firstIndex { order(rowid, $0) == .orderedAscending } ?? model.count
            #expect(index == expected, "\(context) insertionIndex")
            try tree.insert(rowid, at: index)
            model.insert(rowid, at: expected)
        } else if action < 80 {
            let index = Int(rng.next() % UInt64(model.count))
            #expect(try tree.remove(at: index) == model.remove(at: index), "\(context) remove(at:)")
        } else if action < 86 {
            let rowid = model[Int(rng.next() % UInt64(model.count))]
            #expect(try tree.firstIndex(of: rowid, comparing(rowid)) == model.firstIndex(of: rowid), "\(context) firstIndex")
        } else if action < 92 {
            let target = rng.next() % 40
            let range = try tree.findRange(comparing(target))
            let matching = model.indices.filter { order(target, model[$0]) == .orderedSame }
            if let low = matching.first, let high = matching.last {
                #expect(range == low..<(high + 1), "\(context) findRange")
            } else {
                #expect(range.isEmpty && range.lowerBound == (model.firstIndex { order(target, $0) == .orderedAscending } ?? model.count), "\(context) empty findRange")
            }
            // A partial range walk with a stop.
            let start = Int(rng.next() % UInt64(model.count)), length = Int(rng.next() % 50), limit = 1 + Int(rng.next() % 10)
            var seen: [UInt64] = []
            try tree.forEach(in: start..<(start + length), reversed: rng.next() % 2 == 0 ? false : true) { _, rowid in
                seen.append(rowid); return seen.count < limit
            }
            #expect(seen.count == min(limit, min(start + length, model.count) - start), "\(context) range walk")
        } else if action < 95 {
            snapshots.append((tree, model, step))
            if snapshots.count > 6 { snapshots.remove(at: Int(rng.next() % 6)) }
        } else if action < 98 {
            let flush = source.flush(tree)
            tree = rng.next() % 2 == 0 ? try PagedRowTree(rootPage: flush.root, format: format, source: source) : tree.releasingFlushedNodes()
            #expect(tree.cleanRootPage == flush.root, "\(context) clean after flush")
            try expectMatches(tree, model, "\(context) after flush")
        } else {
            try expectMatches(tree, model, context)
        }
        if step % 50 == 0 { guard isValid(tree.validate, context) else { return } }
    }
    try expectMatches(tree, model, "seed \(seed) end")
    for (old, oldModel, step) in snapshots { try expectMatches(old, oldModel, "seed \(seed) snapshot from step \(step)") }
}

@Test func pagedRowTreeAppendsCompareWithOneRow() throws {
    let format = PageFormat(pageSize: 256)
    let source = MemoryPageSource(format: format)
    var tree = PagedRowTree(format: format, source: source)
    for rowid in 1...2000 as ClosedRange<UInt64> { try tree.append(rowid) }
    tree.checkInvariants()
    let flush = source.flush(tree)
    // Appends leave full pages behind (30 row ids per leaf at this size; halving would leave 15).
    #expect(flush.pagesWritten < 2000 / 20, "\(flush.pagesWritten) pages")
    tree = try PagedRowTree(rootPage: flush.root, format: format, source: source)
    var comparisons = 0
    let index = try tree.insertionIndex { existing in comparisons += 1; return 5000 < existing ? .orderedAscending : .orderedDescending }
    #expect(index == 2000 && comparisons == 1)
    comparisons = 0
    #expect(try tree.insertionIndex { existing in comparisons += 1; return 0 < existing ? .orderedAscending : .orderedDescending } == 0)
    #expect(comparisons == 2)
    // A search in the middle costs O(log n) comparisons, not O(n).
    comparisons = 0
    #expect(try tree.lowerBound { existing in comparisons += 1; return 1234 < existing ? .orderedAscending : 1234 == existing ? .orderedSame : .orderedDescending } == 1233)
    #expect(comparisons <= 4 * tree.height + 8)
}

@Test(arguments: [21, 22] as [UInt64])
func hostileRowPagesFuzz(seed: UInt64) throws {
    var rng = SeededRandom(seed: seed)
    let format = PageFormat(pageSize: 256)
    var caught = 0
    for round in 0..<150 {
        let source = MemoryPageSource(format: format, verifiesChecksums: false)
        var tree = PagedRowTree(format: format, source: source)
        for rowid in 1...600 as ClosedRange<UInt64> { try tree.append(rowid * 3) }
        let root = source.flush(tree).root
        for _ in 0..<(1 + rng.next() % 3) {
            let id = 1 + rng.next() % UInt64(source.pageCount)
            var bytes = source.bytes(id)!
            switch rng.next() % 4 {
            case 0: bytes = rng.bytes(256)
            case 1: bytes = Array(bytes.prefix(Int(rng.next() % 256)))
            case 2: // a child pointing at its own page, or a huge count
                if bytes[PageLayout.levelOffset] > 0 {
                    let slot = PageLayout.headerSize + PageLayout.rowChildSize * Int(rng.next() % 2)
                    withUnsafeBytes(of: (rng.next() % 2 == 0 ? id : UInt64.max).littleEndian) { raw in
                        for i in 0..<8 { bytes[slot + (rng.next() % 2 == 0 ? 0 : 8) + i] = raw[i] }
                    }
                }
            default:
                for _ in 0..<(1 + rng.next() % 4) { bytes[Int(rng.next() % 256)] ^= UInt8(1) << (rng.next() % 8) }
            }
            source.replace(id, with: bytes, reseal: true)
        }
        var errors = 0
        func run(_ body: () throws -> Void) {
            do { try body() } catch is PageError { errors += 1 } catch { Issue.record("untyped \(error)") }
        }
        guard let damaged = try? PagedRowTree(rootPage: root, format: format, source: source) else { caught += 1; continue }
        run { try damaged.validate() }
        run { _ = try damaged.rowids() }
        run { try damaged.forEach(in: 0..<damaged.count, reversed: true) { _, _ in true } }
        for i in stride(from: 0, to: damaged.count, by: 29) { run { _ = try damaged.element(at: i) } }
        run { _ = try damaged.findRange { 900 < $0 ? .orderedAscending : 900 == $0 ? .orderedSame : .orderedDescending } }
        run { var copy = damaged; for i in 0..<100 { try copy.insert(UInt64(i), at: min(copy.count, i * 7)) } }
        run { var copy = damaged; for i in 0..<100 where copy.count > 0 { try copy.remove(at: (i * 13) % copy.count) } }
        if errors > 0 { caught += 1 }
        if errors > 0 { #expect(throws: PageError.self, "seed \(seed) round \(round)") { try damaged.validate() } }
    }
    #expect(caught > 100)
}

/// Positions only (no comparator): inserts and removals anywhere, front and back often, so the
/// first-row-id column of every branch level is exercised; flushes and reloads in between.
@Test(arguments: [(41, 256), (42, 512)] as [(UInt64, Int)])
func pagedRowTreePositionalModel(seed: UInt64, pageSize: Int) throws {
    var rng = SeededRandom(seed: seed)
    let format = PageFormat(pageSize: pageSize)
    let source = MemoryPageSource(format: format)
    var tree = PagedRowTree(format: format, source: source)
    var model: [UInt64] = []
    var snapshots: [(PagedRowTree, [UInt64])] = []
    for step in 0..<6000 {
        let context = "seed \(seed) page \(pageSize) step \(step)"
        let action = rng.next() % 100
        let where_ = rng.next() % 3  // 0: front, 1: back, 2: anywhere
        if action < (step < 3000 ? 60 : 40) || model.isEmpty {
            let index = where_ == 0 ? 0 : where_ == 1 ? model.count : Int(rng.next() % UInt64(model.count + 1))
            let rowid = rng.next()
            try tree.insert(rowid, at: index)
            model.insert(rowid, at: index)
        } else if action < 95 {
            let index = where_ == 0 ? 0 : where_ == 1 ? model.count - 1 : Int(rng.next() % UInt64(model.count))
            #expect(try tree.remove(at: index) == model.remove(at: index), "\(context) remove(at:)")
        } else if action < 97 {
            snapshots.append((tree, model))
            if snapshots.count > 5 { snapshots.removeFirst() }
        } else {
            let flush = source.flush(tree)
            tree = try PagedRowTree(rootPage: flush.root, format: format, source: source)
        }
        #expect(tree.first == model.first, "\(context) first")
        if step % 100 == 0 { try expectMatches(tree, model, context) }
    }
    try expectMatches(tree, model, "seed \(seed) end")
    for (old, oldModel) in snapshots { try expectMatches(old, oldModel, "seed \(seed) snapshot") }
}
