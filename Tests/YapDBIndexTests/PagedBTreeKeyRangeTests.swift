import Testing
import TestSupport
@testable import YapDBIndex

/// `forEachInKeyRange` visits exactly what `forEach(from:to:reversed:)` visits, in the same
/// order, for random bounds (inclusive or not, present or absent, inverted), and stops when
/// the body does — on a tree in memory, on written pages (the key-directed descent reads
/// branch and leaf pages), and on written pages with fresh in-memory changes on top.
@Suite struct PagedBTreeKeyRangeTests {
    @Test func matchesThePositionalWalk() throws {
        var rng = SeededRandom(seed: 0xB0B)
        var tree = PagedBTree(format: PageFormat(pageSize: 256), source: EmptyPageSource())
        try upsertLetterKeys(&tree, &rng, count: 600, lengths: 0..<4, letters: 5)
        try check(tree, &rng)
    }

    @Test func matchesThePositionalWalkOnWrittenPages() throws {
        var rng = SeededRandom(seed: 0xB0C)
        let written = try letterTrees(&rng, count: 3_000, lengths: 0..<6, letters: 5).written
        #expect(written.height >= 3, "branch pages on the path")
        try check(written, &rng)
        var mixed = written
        for _ in 0..<200 {
            let key = letterKey(&rng, lengths: 0..<6, letters: 5)
            if rng.next() % 3 == 0 { _ = try mixed.remove(key) } else { try mixed.upsert(key, [7]) }
        }
        try check(mixed, &rng)
    }

    /// Compares the two walks over 400 random ranges and limits.
    func check(_ tree: PagedBTree, _ rng: inout SeededRandom) throws {
        func bound() -> KeyBound? {
            guard rng.next() % 5 != 0 else { return nil }
            return KeyBound((0..<Int(rng.next() % 6)).map { _ in UInt8(rng.next() % 6) + 0x60 }, inclusive: rng.next() % 2 == 0)
        }
        for _ in 0..<400 {
            let lower = bound(), upper = bound(), reversed = rng.next() % 2 == 0
            let limit = rng.next() % 3 == 0 ? Int(rng.next() % 5) + 1 : Int.max
            var expected: [[UInt8]] = [], actual: [[UInt8]] = []
            try tree.forEach(from: lower, to: upper, reversed: reversed) { key, _ in
                expected.append(Array(key))
                return expected.count < limit
            }
            try tree.forEachInKeyRange(from: lower, to: upper, reversed: reversed) { key, _ in
                actual.append(Array(key))
                return actual.count < limit
            }
            #expect(actual == expected, "\(String(describing: lower)) \(String(describing: upper)) reversed \(reversed)")
        }
    }
}
