// The full copy of index compaction: every node of a tree written again into fresh pages, and a
// newer tree value re-pointed at the copy, so nothing reads the old pages any more.
import Testing
import TestSupport
@testable import YapDBIndex

@Suite struct PagedBTreeCopyTests {
    /// Copies `tree` into `target`, counting the pages written.
    static func copy(_ tree: PagedBTree, into target: MemoryPageSource) -> (PageCopy, written: Int) {
        var written = 0
        let copy = tree.copyAll(allocate: { () throws(Never) in target.allocate() },
                                write: { (id, bytes) throws(Never) in written += 1; target.write(id, bytes) },
                                readFailed: { error in preconditionFailure("\(error)") })
        return (copy, written)
    }

    static func contents(_ tree: PagedBTree) throws -> [[UInt8]: [UInt8]] {
        var all: [[UInt8]: [UInt8]] = [:]
        try tree.forEach { key, value in all[Array(key)] = Array(value); return true }
        return all
    }

    @Test(arguments: [false, true])
    func copyHoldsEveryEntryInNewPagesOnly(releaseBeforeCopy: Bool) throws {
        var rng = SeededRandom(seed: releaseBeforeCopy ? 91 : 92)
        let format = PageFormat(pageSize: 256)
        let old = MemoryPageSource(format: format)
        var tree = PagedBTree(format: format, source: old)
        var model: [[UInt8]: [UInt8]] = [:]
        func write(_ count: Int) throws {
            for _ in 0..<count {
                let key = Array("key\(rng.next() % 5000)".utf8)
                if rng.next() % 5 == 0 {
                    try tree.remove(key)
                    model[key] = nil
                } else {
                    let value = rng.bytes(Int(rng.next() % 24))
                    try tree.upsert(key, value)
                    model[key] = value
                }
            }
        }
        try write(6000)
        // Checkpoints into the old pages: the tree mixes clean pages, dirty nodes, and (without
        // the release) dirty nodes a published flush already wrote.
        _ = old.flush(tree)
        if releaseBeforeCopy { tree = tree.releasingFlushedNodes().reading(from: old) }
        try write(200)
        _ = old.flush(tree)
        if releaseBeforeCopy { tree = tree.releasingFlushedNodes().reading(from: old) }
        try write(40)
        let dirtyBefore = tree.unwrittenPageCount
        #expect(dirtyBefore > 0)

        // The copy of a snapshot, while the writer goes on.
        let snapshot = tree, snapshotModel = model
        let new = MemoryPageSource(format: format)
        let (copy, written) = Self.copy(snapshot, into: new)
        try write(300)

        #expect(written == copy.pagesWritten)
        #expect(new.pageCount == written, "only the copy's pages are in the new source")
        // Memory bound, structurally: the result keeps only the snapshot's dirty nodes alive,
        // never the pages it decoded (those are dropped as the depth-first walk returns).
        #expect(copy.flush.nodes.count <= dirtyBefore + (releaseBeforeCopy ? 0 : written))
        if releaseBeforeCopy {
            #expect(copy.flush.pagesWritten == dirtyBefore)
            #expect(written > 3 * dirtyBefore, "clean pages are copied too")
        }

        // The copy, opened from its root on a source holding only the new pages.
        let reopened = try PagedBTree(rootPage: copy.root, format: format, source: new)
        try reopened.validate()
        #expect(reopened.count == snapshotModel.count)
        #expect(try Self.contents(reopened) == snapshotModel)

        // Published, the writer's newer tree re-points at the copy and reads nothing old.
        copy.flush.publish()
        let remapped = tree.remapping(to: copy).reading(from: new)
        try remapped.validate()
        #expect(remapped.count == model.count)
        #expect(try Self.contents(remapped) == model)
        // Its next checkpoint writes only what changed after the snapshot.
        let unwritten = remapped.unwrittenPageCount
        #expect(unwritten < written)
        let next = new.flush(remapped)
        #expect(next.pagesWritten == unwritten)
        let final = try PagedBTree(rootPage: next.root, format: format, source: new)
        try final.validate()
        #expect(try Self.contents(final) == model)
    }

    @Test func copyOfAnEmptyTreeIsEmpty() throws {
        let format = PageFormat(pageSize: 256)
        let tree = PagedBTree(format: format, source: MemoryPageSource(format: format))
        let (copy, written) = Self.copy(tree, into: MemoryPageSource(format: format))
        #expect(copy.root == .none && written == 0)
    }

    @Test func aDamagedPageIsReportedNotCopied() throws {
        let format = PageFormat(pageSize: 256)
        let old = MemoryPageSource(format: format, verifiesChecksums: false)
        var tree = PagedBTree(format: format, source: old)
        for i in 0..<500 { try tree.upsert(Array("k\(i)".utf8), [UInt8(i & 255)]) }
        let flush = old.flush(tree)
        tree = try PagedBTree(rootPage: flush.root, format: format, source: old)
        var damaged = old.bytes(flush.root - 1)!
        damaged[damaged.count - 1] ^= 0xFF
        old.replace(flush.root - 1, with: damaged, reseal: false)
        let target = MemoryPageSource(format: format)
        #expect(throws: PageError.self) {
            _ = try tree.copyAll(allocate: { () throws(PageError) in target.allocate() },
                                 write: { (id, bytes) throws(PageError) in target.write(id, bytes) }, readFailed: { $0 })
        }
    }
}
