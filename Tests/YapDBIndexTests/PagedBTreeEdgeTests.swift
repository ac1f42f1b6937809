import Testing
import TestSupport
@testable import YapDBIndex

/// `withEdgeEntry` gives the same first and last entries as the positional reads at either
/// end — on a tree in memory, on written pages, and on written pages with in-memory changes on
/// top that remove the ends (emptied children) — and reports an empty tree.
@Suite struct PagedBTreeEdgeTests {
    @Test func anEmptyTreeHasNoEdge() throws {
        let tree = PagedBTree(format: PageFormat(pageSize: 256), source: EmptyPageSource())
        var calls = 0
        #expect(try !tree.withEdgeEntry(last: false) { _, _ in calls += 1 })
        #expect(try !tree.withEdgeEntry(last: true) { _, _ in calls += 1 })
        #expect(calls == 0)
    }

    @Test func edgesMatchThePositionalReads() throws {
        var rng = SeededRandom(seed: 0xED6E)
        let (tree, written) = try letterTrees(&rng, count: 2_000, lengths: 1..<7, letters: 7)
        try check(tree)
        #expect(written.height >= 3, "branch pages on the path")
        try check(written)
        // Take entries off both ends in memory, checking the edges after each removal.
        var mixed = written
        for step in 0..<300 {
            let end = try mixed.element(at: step % 2 == 0 ? 0 : mixed.count - 1).key
            #expect(try mixed.remove(end) != nil)
            try check(mixed)
        }
    }

    /// Both edges of `tree` against `element(at:)`.
    func check(_ tree: PagedBTree) throws {
        for last in [false, true] {
            var edge: (key: [UInt8], value: [UInt8])?
            let found = try tree.withEdgeEntry(last: last) { edge = (Array($0), Array($1)) }
            let expected = try tree.element(at: last ? tree.count - 1 : 0)
            #expect(found)
            #expect(edge?.key == expected.key && edge?.value == expected.value, "last \(last), \(tree.count) entries")
        }
    }
}
