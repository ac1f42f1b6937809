// What a tree's dirty nodes are charged in memory (`unwrittenNodes`): the figure the engine
// compares with its dirty-page budget must be the nodes' heap bytes, which run well past the
// bytes of the pages they encode to.
import Testing
@testable import YapDBIndex

@Suite struct PagedTreeMemoryTests {
    /// Keys sharing a long prefix: a page stores it once, a dirty leaf holds it in every key.
    static func key(_ i: Int) -> [UInt8] { Array("collection-with-a-long-name/row-\(100_000 + i * 7919 % 100_000)".utf8) }

    @Test func dirtyNodesAreChargedTheirHeapBytesNotTheirPageBytes() throws {
        let format = PageFormat(pageSize: 1024)
        let source = MemoryPageSource(format: format)
        var tree = PagedBTree(format: format, source: source)
        var payload = 0
        for i in 0..<3_000 {
            let value = Array(repeating: UInt8(i & 0xFF), count: 20)
            try tree.upsert(Self.key(i), value)
            payload += Self.key(i).count + value.count
        }
        let dirty = tree.unwrittenNodes
        #expect(dirty.nodes == tree.unwrittenPageCount)
        #expect(dirty.nodes > 10)
        // Every key and value is held whole, plus the node objects.
        #expect(dirty.bytes >= payload + dirty.nodes * KeyedNode.objectBytes)
        // More than the pages they encode to (which share each page's key prefix).
        #expect(dirty.bytes > dirty.nodes * format.pageSize, "\(dirty.bytes) bytes in \(dirty.nodes) nodes")

        // Written and published, the nodes are no longer charged; released, they are gone.
        let flush = source.flush(tree)
        #expect(tree.unwrittenNodes == UnwrittenNodes())
        tree = tree.releasingFlushedNodes()
        #expect(tree.unwrittenNodes == UnwrittenNodes())
        #expect(flush.pagesWritten == dirty.nodes)

        // A large apply onto the written tree dirties only the paths it touches, charged alike.
        let changes = (0..<500).map { PagedBTreeChange(key: Self.key($0 * 6), value: [1, 2, 3]) }
        try tree.apply(changes)
        let after = tree.unwrittenNodes
        #expect(after.nodes == tree.unwrittenPageCount)
        #expect(after.bytes >= after.nodes * KeyedNode.objectBytes + 500 * (Self.key(0).count + 3))
        tree.checkInvariants()
    }

    @Test func rowTreeNodesAreChargedTheirRowIds() throws {
        let format = PageFormat(pageSize: 512)
        var tree = PagedRowTree(format: format, source: MemoryPageSource(format: format))
        for i in 0..<5_000 { try tree.insert(UInt64(i), at: i) }
        let dirty = tree.unwrittenNodes
        #expect(dirty.nodes == tree.unwrittenPageCount)
        #expect(dirty.bytes >= 5_000 * 8 + dirty.nodes * RowNode.objectBytes)
    }
}
