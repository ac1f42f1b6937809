import Testing
import TestSupport
@testable import YapDBIndex

/// `apply(_:)` leaves the tree holding what applying each change in turn to a dictionary
/// leaves (last change per key wins, removing an absent key does nothing), through both of its
/// paths — small batches change key by key, large ones rebuild — on a tree in memory and on
/// written pages, and the result passes `validate()`.
@Suite struct PagedBTreeSortedChangesTests {
    @Test func smallAndLargeBatchesMatchADictionary() throws {
        var rng = SeededRandom(seed: 0x50A7)
        let trees = try letterTrees(&rng, count: 2_000, lengths: 0..<6, letters: 5)
        for start in [trees.inMemory, trees.written] {
            for batchSize in [0, 1, 7, 40, 300, 3_000] {
                var tree = start
                var model: [[UInt8]: [UInt8]] = [:]
                try tree.forEach { key, value in
                    model[Array(key)] = Array(value)
                    return true
                }
                var changes: [PagedBTreeChange] = []
                for _ in 0..<batchSize {
                    let key = letterKey(&rng, lengths: 0..<6, letters: 5)
                    let value: [UInt8]? = rng.next() % 3 == 0 ? nil : [UInt8(rng.next() % 256), 1]
                    changes.append(PagedBTreeChange(key: key, value: value))
                    model[key] = value
                }
                try tree.apply(changes)
                try tree.validate()
                var actual: [[UInt8]: [UInt8]] = [:]
                var keys: [[UInt8]] = []
                try tree.forEach { key, value in
                    actual[Array(key)] = Array(value)
                    keys.append(Array(key))
                    return true
                }
                #expect(actual == model, "batch of \(batchSize)")
                #expect(tree.count == model.count)
                #expect(keys == keys.sorted { $0.lexicographicallyPrecedes($1) })
            }
        }
    }

    @Test func removingEverythingLeavesAnEmptyTree() throws {
        var rng = SeededRandom(seed: 0x50A8)
        var tree = try letterTrees(&rng, count: 500, lengths: 1..<5, letters: 4).written
        var changes: [PagedBTreeChange] = []
        try tree.forEach { key, _ in
            changes.append(PagedBTreeChange(key: Array(key), value: nil))
            return true
        }
        try tree.apply(changes.reversed())
        #expect(tree.count == 0)
        try tree.validate()
    }

    @Test func anOversizedEntryChangesNothing() throws {
        var rng = SeededRandom(seed: 0x50A9)
        var tree = try letterTrees(&rng, count: 100, lengths: 1..<5, letters: 4).inMemory
        let before = tree.count
        let huge = [UInt8](repeating: 0x61, count: tree.format.maximumEntrySize + 1)
        #expect(throws: PageError.self) { try tree.apply([PagedBTreeChange(key: [0x7A], value: [1]), PagedBTreeChange(key: huge, value: [])]) }
        #expect(tree.count == before)
    }
}
