// Random keys over a few letters, for the tree tests: short keys over a small alphabet give
// shared prefixes, equal keys and (with lengths from 0) empty keys.
import TestSupport
@testable import YapDBIndex

/// A key of a length in `lengths`, each byte one of the first `letters` of "a", "b", ….
func letterKey(_ rng: inout SeededRandom, lengths: Range<Int>, letters: UInt64) -> [UInt8] {
    let length = lengths.lowerBound + Int(rng.next() % UInt64(lengths.count))
    return (0..<length).map { _ in UInt8(rng.next() % letters) + 0x61 }
}

/// `count` upserts into `tree` of a `letterKey` with a random one-byte value.
func upsertLetterKeys(_ tree: inout PagedBTree, _ rng: inout SeededRandom, count: Int, lengths: Range<Int>, letters: UInt64) throws {
    for _ in 0..<count {
        let key = letterKey(&rng, lengths: lengths, letters: letters)
        try tree.upsert(key, [UInt8(rng.next() % 256)])
    }
}

/// `upsertLetterKeys` into a new tree of 256-byte pages over a `MemoryPageSource`: the tree in
/// memory, and the same tree written to the source and opened from its root page.
func letterTrees(_ rng: inout SeededRandom, count: Int, lengths: Range<Int>, letters: UInt64) throws
    -> (inMemory: PagedBTree, written: PagedBTree) {
    let format = PageFormat(pageSize: 256)
    let source = MemoryPageSource(format: format)
    var tree = PagedBTree(format: format, source: source)
    try upsertLetterKeys(&tree, &rng, count: count, lengths: lengths, letters: letters)
    return (tree, try PagedBTree(rootPage: source.flush(tree).root, format: format, source: source))
}
