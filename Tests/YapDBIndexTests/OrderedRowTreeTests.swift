// Model-based tests of OrderedRowTree against a plain Array, with tiny nodes so that splits,
// borrows and merges happen early.
import Testing
import TestSupport
@testable import YapDBIndex

/// The test ordering: rows sort by `rowid % 37`, so there are long runs of equal rows.
private func sortKey(_ rowid: UInt64) -> UInt64 { rowid % 37 }

/// How `a` compares to `b` under the test ordering.
private func order(_ a: UInt64, _ b: UInt64) -> RowComparison {
    sortKey(a) < sortKey(b) ? .orderedAscending : sortKey(a) == sortKey(b) ? .orderedSame : .orderedDescending
}

/// The comparator for searching for `target` (how the target compares to an existing row).
private func comparing(_ target: UInt64) -> (UInt64) -> RowComparison { { existing in order(target, existing) } }

private func expectEqual(_ tree: OrderedRowTree, _ model: [UInt64], _ context: String) {
    guard isValid(tree.validate, context) else { return }
    #expect(tree.count == model.count, "\(context)")
    #expect(tree.rowids == model, "\(context)")
    var reversed: [UInt64] = []
    tree.forEach(in: 0..<tree.count, reversed: true) { index, rowid in
        #expect(index == model.count - 1 - reversed.count, "\(context)")
        reversed.append(rowid); return true
    }
    #expect(reversed == model.reversed(), "\(context)")
}

@Test(arguments: [(21, 4), (22, 4), (23, 5), (24, 3), (25, 64)] as [(UInt64, Int)])
func rowTreeSortedModel(seed: UInt64, capacity: Int) {
    var rng = SeededRandom(seed: seed)
    var tree = OrderedRowTree(nodeCapacity: capacity)
    var model: [UInt64] = []
    var nextRowid: UInt64 = 1
    var snapshots: [(OrderedRowTree, [UInt64])] = []
    for step in 0..<3000 {
        let context = "seed \(seed) capacity \(capacity) step \(step)"
        // Grow to a few hundred items, then drift.
        let action = rng.next() % 10
        if action < 5 || model.count < 8 {
            let rowid = nextRowid; nextRowid += 1
            let index = tree.insertionIndex(comparing(rowid))
            let expected = model.firstIndex { order(rowid, $0) == .orderedAscending } ?? model.count
            #expect(index == expected, "\(context) insertionIndex")
            tree.insert(rowid, at: index)
            model.insert(rowid, at: expected)
        } else if action < 8 {
            let index = Int(rng.next() % UInt64(model.count))
            #expect(tree.remove(at: index) == model.remove(at: index), "\(context) remove(at:)")
        } else if action == 8 {
            let rowid = model[Int(rng.next() % UInt64(model.count))]
            let index = tree.firstIndex(of: rowid, comparing(rowid))
            #expect(index == model.firstIndex(of: rowid), "\(context) firstIndex")
            if let index { tree.remove(at: index); model.remove(at: index) }
            #expect(tree.firstIndex(of: rowid, comparing(rowid)) == nil, "\(context) firstIndex after removal")
        } else {
            let target = rng.next() % 40  // as a row id, its sort key is target % 37
            let range = tree.findRange(comparing(target))
            let matching = model.indices.filter { order(target, model[$0]) == .orderedSame }
            if matching.isEmpty {
                #expect(range.isEmpty, "\(context) findRange")
                #expect(range.lowerBound == (model.firstIndex { order(target, $0) == .orderedAscending } ?? model.count))
            } else {
                #expect(range == matching.first!..<(matching.last! + 1), "\(context) findRange")
            }
            #expect(tree.lowerBound(comparing(target)) == range.lowerBound, "\(context)")
            if !model.isEmpty {
                let index = Int(rng.next() % UInt64(model.count))
                #expect(tree[index] == model[index], "\(context) subscript")
                let upper = index + Int(rng.next() % UInt64(model.count - index + 1))
                let stopAfter = Int(rng.next() % 20)
                let reversed = rng.next() % 2 == 0
                var seen: [UInt64] = []
                tree.forEach(in: index..<upper, reversed: reversed) { position, rowid in
                    #expect(model[position] == rowid, "\(context) forEach position")
                    seen.append(rowid); return seen.count < stopAfter
                }
                let slice = reversed ? Array(model[index..<upper].reversed()) : Array(model[index..<upper])
                #expect(seen == Array(slice.prefix(max(stopAfter, 1))), "\(context) forEach(in:)")
            }
        }
        guard isValid({ try tree.validate(ordering: order) }, context) else { return }
        #expect(tree.count == model.count, "\(context)")
        if step % 200 == 0 { snapshots.append((tree, model)) }
    }
    expectEqual(tree, model, "seed \(seed) end")
    for (i, (snapshot, snapshotModel)) in snapshots.enumerated() {
        expectEqual(snapshot, snapshotModel, "seed \(seed) snapshot \(i)")
    }
    // Drain completely: merges all the way down to an empty root.
    while !model.isEmpty {
        let index = Int(rng.next() % UInt64(model.count))
        #expect(tree.remove(at: index) == model.remove(at: index))
        guard isValid(tree.validate, "seed \(seed) drain") else { return }
    }
    #expect(tree.isEmpty && tree.first == nil && tree.last == nil)
}

@Test func rowTreePositionalModel() {
    // Positional inserts anywhere (no ordering), capacity 4.
    let seed: UInt64 = 31
    var rng = SeededRandom(seed: seed)
    var tree = OrderedRowTree(nodeCapacity: 4)
    var model: [UInt64] = []
    for step in 0..<4000 {
        if rng.next() % 3 != 0 || model.isEmpty {
            let index = Int(rng.next() % UInt64(model.count + 1))
            let rowid = rng.next()
            tree.insert(rowid, at: index); model.insert(rowid, at: index)
        } else {
            let index = Int(rng.next() % UInt64(model.count))
            #expect(tree.remove(at: index) == model.remove(at: index), "seed \(seed) step \(step)")
        }
        guard isValid(tree.validate, "seed \(seed) step \(step)") else { return }
        #expect(tree.count == model.count, "seed \(seed) step \(step)")
    }
    expectEqual(tree, model, "seed \(seed) end")
    #expect(tree.first == model.first && tree.last == model.last)
}

@Test func rowTreeSnapshotsAreIsolated() {
    var tree = OrderedRowTree(nodeCapacity: 4)
    for i in 0..<1000 as Range<UInt64> { tree.append(i) }
    let snapshot = tree
    let rootBefore = ObjectIdentifier(snapshot.root)
    var rng = SeededRandom(seed: 41)
    var model = Array(0..<1000 as Range<UInt64>)
    for _ in 0..<2000 {
        if rng.next() % 2 == 0 {
            let index = Int(rng.next() % UInt64(model.count + 1))
            tree.insert(5000 + rng.next() % 1000, at: index); model.insert(tree[index], at: index)
        } else {
            let index = Int(rng.next() % UInt64(model.count))
            model.remove(at: index); tree.remove(at: index)
        }
    }
    expectEqual(tree, model, "seed 41 mutated")
    expectEqual(snapshot, Array(0..<1000), "seed 41 snapshot")
    #expect(ObjectIdentifier(snapshot.root) == rootBefore)
    var copy = snapshot
    copy.removeAll()
    expectEqual(snapshot, Array(0..<1000), "seed 41 snapshot after clearing a copy")
}

@Test func rowTreeAppendAndPrependCompareOnce() {
    var tree = OrderedRowTree(nodeCapacity: 4)
    var comparisons = 0
    for rowid in 100..<200 as Range<UInt64> {  // ascending: appends
        let index = tree.insertionIndex { existing in
            comparisons += 1
            return rowid < existing ? .orderedAscending : rowid == existing ? .orderedSame : .orderedDescending
        }
        #expect(index == tree.count)
        tree.insert(rowid, at: index)
    }
    #expect(comparisons == 99)
    comparisons = 0
    for rowid in (0..<100 as Range<UInt64>).reversed() {  // descending: prepends
        let index = tree.insertionIndex { existing in
            comparisons += 1
            return rowid < existing ? .orderedAscending : rowid == existing ? .orderedSame : .orderedDescending
        }
        #expect(index == 0)
        tree.insert(rowid, at: index)
    }
    #expect(comparisons == 200)
    tree.checkInvariants { $0 < $1 ? .orderedAscending : $0 == $1 ? .orderedSame : .orderedDescending }
    #expect(tree.rowids == Array(0..<200))
    // Equal items: a new equal item goes after its equals.
    var equal = OrderedRowTree(nodeCapacity: 4)
    for rowid in 0..<50 as Range<UInt64> { equal.insert(rowid, at: equal.insertionIndex { _ in .orderedSame }) }
    #expect(equal.rowids == Array(0..<50))
    #expect(equal.findRange { _ in .orderedSame } == 0..<50)
    #expect(equal.findRange { _ in .orderedAscending } == 0..<0)
    #expect(equal.findRange { _ in .orderedDescending } == 50..<50)
}
