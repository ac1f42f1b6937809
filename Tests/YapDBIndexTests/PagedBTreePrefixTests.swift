// Shared prefixes in keyed pages: stored once, shortest separators, and changes that shorten a
// node's shared prefix (which can make it need several pages at once).
import Testing
import TestSupport
@testable import YapDBIndex

@Suite struct PagedBTreePrefixTests {
    static let format = PageFormat(pageSize: 256)

    /// A key of `prefix` bytes of 7 followed by `suffix`.
    static func key(_ suffix: [UInt8], prefix: Int = 40) -> [UInt8] { [UInt8](repeating: 7, count: prefix) + suffix }

    static func contents(_ tree: PagedBTree) throws -> [[UInt8]: [UInt8]] {
        var all: [[UInt8]: [UInt8]] = [:]
        try tree.forEach { key, value in all[Array(key)] = Array(value); return true }
        return all
    }

    /// The little-endian UInt16 at `offset` of `page`.
    static func u16(_ page: [UInt8], _ offset: Int) -> Int { Int(page[offset]) | Int(page[offset + 1]) << 8 }

    @Test func aLeafStoresTheSharedPrefixesOnceAndHoldsMoreEntries() throws {
        let source = MemoryPageSource(format: Self.format)
        var tree = PagedBTree(format: Self.format, source: source)
        // 40 shared key bytes and 8 shared value bytes: 54 bytes an entry before sharing,
        // which would put at most 4 entries in a 256-byte leaf.
        var n: UInt8 = 0
        while tree.height <= 1 {
            try tree.upsert(Self.key([n]), [UInt8](repeating: 3, count: 8) + [n, n])
            n += 1
        }
        let written = try PagedBTree(rootPage: source.flush(tree).root, format: Self.format, source: source)
        var leaves = 0
        for id in PageID(1)...PageID(source.pageCount) {
            guard let page = source.bytes(id), page[PageLayout.kindOffset] == PageKind.keyedLeaf.rawValue else { continue }
            leaves += 1
            #expect(Self.u16(page, PageLayout.keyPrefixOffset) >= 40, "leaf \(id) shares no key prefix")
            #expect(Self.u16(page, PageLayout.valuePrefixOffset) >= 8, "leaf \(id) shares no value prefix")
        }
        // The first leaf was full when the second began: more entries than fit unshared.
        #expect(leaves == 2 && n > 8, "\(leaves) leaves for \(n) entries")
        #expect(try written.value(forKey: Self.key([5])) == [UInt8](repeating: 3, count: 8) + [5, 5])
        #expect(try written.value(forKey: Self.key([5], prefix: 39)) == nil)
        #expect(try written.value(forKey: Self.key([5], prefix: 41)) == nil)
        #expect(try written.rank(of: Self.key([], prefix: 39)) == (0, false))
        #expect(try written.rank(of: [8]) == (Int(n), false))
        try written.validate()
    }

    @Test func separatorsAreTheShortestThatSeparate() throws {
        let source = MemoryPageSource(format: Self.format)
        var tree = PagedBTree(format: Self.format, source: source)
        // Keys whose last bytes differ: a whole key as separator would repeat the 12 bytes.
        for i in 0..<300 { try tree.upsert(Array("row-\(10_000 + i * 7)-tail-bytes".utf8), [UInt8(i & 0xFF)]) }
        let root = source.flush(tree).root
        let written = try PagedBTree(rootPage: root, format: Self.format, source: source)
        let node = try KeyedNode.load(root, level: written.height - 1, count: written.count, format: Self.format, pages: written.pages)
        #expect(!node.keys.isEmpty)
        for separator in node.keys { #expect(separator.count < "row-10000-tail-bytes".utf8.count, "\(separator)") }
        try written.validate()
        // A search for a key between two keys lands where the model says.
        #expect(try written.rank(of: Array("row-10003".utf8)) == (1, false))
    }

    @Test(arguments: [false, true])
    func aKeyThatShortensTheSharedPrefixSplitsANodeIntoSeveral(written: Bool) throws {
        let source = MemoryPageSource(format: Self.format)
        var tree = PagedBTree(format: Self.format, source: source)
        var model: [[UInt8]: [UInt8]] = [:]
        // One leaf full of keys that share 40 bytes and hardly anything else.
        var n: UInt8 = 0
        while true {
            var next = tree
            try next.upsert(Self.key([n]), [n])
            if next.height > 1 { break }
            tree = next
            model[Self.key([n])] = [n]
            n += 1
        }
        #expect(n > 12)
        if written { tree = try PagedBTree(rootPage: source.flush(tree).root, format: Self.format, source: source) }
        // A key that sorts first and shares nothing: every entry's 40 bytes come back.
        try tree.upsert([0], [0])
        model[[0]] = [0]
        try tree.validate()
        #expect(tree.height >= 2)
        #expect(try Self.contents(tree) == model)
        // Removing it lets the pieces merge again as their prefix comes back.
        try tree.remove([0])
        model[[0]] = nil
        try tree.validate()
        #expect(try Self.contents(tree) == model)
    }

    @Test func aValueThatShortensTheSharedValuePrefixSplitsTheLeaf() throws {
        let source = MemoryPageSource(format: Self.format)
        var tree = PagedBTree(format: Self.format, source: source)
        var model: [[UInt8]: [UInt8]] = [:]
        let shared = [UInt8](repeating: 5, count: 44)
        var n: UInt8 = 0
        while true {
            var next = tree
            try next.upsert([n], shared + [n])
            if next.height > 1 { break }
            tree = next
            model[[n]] = shared + [n]
            n += 1
        }
        tree = try PagedBTree(rootPage: source.flush(tree).root, format: Self.format, source: source)
        try tree.upsert([n / 2], [9] + shared)
        model[[n / 2]] = [9] + shared
        try tree.validate()
        #expect(tree.height >= 2)
        #expect(try Self.contents(tree) == model)
    }

    @Test(arguments: [1, 2, 3])
    func randomKeysWithSharedPrefixesMatchAModel(seed: UInt64) throws {
        var rng = SeededRandom(seed: seed)
        let source = MemoryPageSource(format: Self.format)
        var tree = PagedBTree(format: Self.format, source: source)
        var model: [[UInt8]: [UInt8]] = [:]
        let stems: [[UInt8]] = [[], Array("collection-one\u{0}\u{1}".utf8), Array("c\u{0}\u{1}".utf8), [UInt8](repeating: 0, count: 30)]
        for step in 0..<1_500 {
            let stem = stems[Int(rng.next() % UInt64(stems.count))]
            let key = stem + (0..<Int(rng.next() % 4)).map { _ in UInt8(truncatingIfNeeded: rng.next() % 6) }
            guard key.count + 12 <= Self.format.maximumEntrySize else { continue }
            if rng.next() % 3 == 0 {
                #expect(try tree.remove(key) == model.removeValue(forKey: key))
            } else {
                let value = stem.prefix(8) + [UInt8(truncatingIfNeeded: rng.next() % 3)]
                #expect(try tree.upsert(key, Array(value)) == model.updateValue(Array(value), forKey: key))
            }
            if step % 300 == 299 {
                tree = try PagedBTree(rootPage: source.flush(tree).root, format: Self.format, source: source)
                guard isValid(tree.validate, "seed \(seed) step \(step)") else { return }
            }
        }
        try tree.validate()
        #expect(try Self.contents(tree) == model)
        for key in model.keys { #expect(try tree.value(forKey: key) == model[key]) }
    }
}
