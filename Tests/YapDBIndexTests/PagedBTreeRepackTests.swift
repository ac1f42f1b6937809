// Index compaction's repack: a tree's live entries written again into full pages in key order,
// and a newer tree value carried onto the copy with its changes.
import Testing
import TestSupport
@testable import YapDBIndex

@Suite struct PagedBTreeRepackTests {
    static let format = PageFormat(pageSize: 512)

    /// Repacks `tree` into `target`, counting the pages written.
    static func repack(_ tree: PagedBTree, into target: MemoryPageSource) -> (PagedTreeRoot, written: Int) {
        var written = 0
        let root = tree.repackAll(allocate: { () throws(Never) in target.allocate() },
                                  write: { (id, bytes) throws(Never) in written += 1; target.write(id, bytes) },
                                  readFailed: { error in preconditionFailure("\(error)") })
        return (root, written)
    }

    static func contents(_ tree: PagedBTree) throws -> [[UInt8]: [UInt8]] {
        var all: [[UInt8]: [UInt8]] = [:]
        try tree.forEach { key, value in all[Array(key)] = Array(value); return true }
        return all
    }

    /// Payload bytes (prefixes, slots and entries, as stored) of each leaf page in `source`, in page order.
    static func leafFills(_ source: MemoryPageSource, pages: Int) -> [Int] {
        var fills: [Int] = []
        for id in PageID(1)...PageID(pages) {
            guard let page = source.bytes(id), page[PageLayout.kindOffset] == PageKind.keyedLeaf.rawValue else { continue }
            let count = Int(page[PageLayout.countOffset]) | Int(page[PageLayout.countOffset + 1]) << 8
            // The prefix lengths and the prefixes, then each slot and stored entry.
            let keyPrefix = Int(page[PageLayout.keyPrefixOffset]) | Int(page[PageLayout.keyPrefixOffset + 1]) << 8
            let valuePrefix = Int(page[PageLayout.valuePrefixOffset]) | Int(page[PageLayout.valuePrefixOffset + 1]) << 8
            var used = PageLayout.keyedBodyStart - PageLayout.headerSize + keyPrefix + valuePrefix
            for i in 0..<count {
                let slot = PageLayout.keyedBodyStart + i * PageLayout.slotSize
                let at = Int(page[slot]) | Int(page[slot + 1]) << 8
                let keyLength = Int(page[at]) | Int(page[at + 1]) << 8, valueLength = Int(page[at + 2]) | Int(page[at + 3]) << 8
                used += PageLayout.slotSize + PageLayout.leafEntryHeader + keyLength + valueLength
            }
            fills.append(used)
        }
        return fills
    }

    /// A tree of `count` random keys, checkpointed into `source`, then about half removed.
    static func halfDeleted(_ source: MemoryPageSource, seed: UInt64, count: Int = 3000) throws -> (PagedBTree, [[UInt8]: [UInt8]]) {
        var rng = SeededRandom(seed: seed)
        var tree = PagedBTree(format: format, source: source)
        var model: [[UInt8]: [UInt8]] = [:]
        for _ in 0..<count {
            let key = Array("row\(rng.next() % 1_000_000)".utf8), value = rng.bytes(Int(rng.next() % 20) + 4)
            try tree.upsert(key, value)
            model[key] = value
        }
        let flush = source.flush(tree)
        tree = try PagedBTree(rootPage: flush.root, format: format, source: source)
        for key in model.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) where rng.next() % 2 == 0 {
            try tree.remove(key)
            model[key] = nil
        }
        return (tree, model)
    }

    @Test(arguments: [UInt64(3), 4, 5])
    func repackedLeavesAreFullAndHoldEveryEntry(seed: UInt64) throws {
        let old = MemoryPageSource(format: Self.format)
        let (tree, model) = try Self.halfDeleted(old, seed: seed)
        let new = MemoryPageSource(format: Self.format)
        let (root, written) = Self.repack(tree, into: new)
        let copy = PagedBTree(root: root, format: Self.format, source: new)
        try copy.validate()
        #expect(copy.count == model.count && copy.height == root.height)
        #expect(try Self.contents(copy) == model)

        // Every leaf but the last two is filled to the target (15/16 of the payload less one
        // entry); the last two meet the tree's bound (an eighth).
        let payload = Self.format.payloadSize
        let fills = Self.leafFills(new, pages: written)
        let largestEntry = PageLayout.slotSize + PageLayout.leafEntryHeader + 10 + 23
        let target = payload - payload / 16 - largestEntry
        #expect(fills.count >= 3)
        for (i, fill) in fills.enumerated() {
            if i < fills.count - 2 {
                #expect(fill >= target, "leaf \(i) of \(fills.count) holds \(fill) of \(payload) bytes")
            } else {
                #expect(fill >= payload / 8, "leaf \(i) of \(fills.count) holds \(fill) of \(payload) bytes")
            }
        }
        // A node-for-node copy keeps the half-empty leaves: the repack needs far fewer pages.
        let nodeCopy = MemoryPageSource(format: Self.format)
        var looseCount = 0
        _ = tree.copyAll(allocate: { () throws(Never) in nodeCopy.allocate() },
                          write: { (id, bytes) throws(Never) in looseCount += 1; nodeCopy.write(id, bytes) },
                          readFailed: { error in preconditionFailure("\(error)") })
        #expect(written * 10 < looseCount * 7, "repacked \(written) pages, copied node for node \(looseCount)")
    }

    @Test(arguments: [0, 1, 60, 2000])
    func aNewerTreeIsCarriedOntoTheCopyWithItsChanges(changes: Int) throws {
        let old = MemoryPageSource(format: Self.format)
        var (tree, model) = try Self.halfDeleted(old, seed: 11 + UInt64(changes))
        var rng = SeededRandom(seed: UInt64(changes) + 99)
        // Some dirty nodes in the captured tree too.
        for _ in 0..<20 {
            let key = Array("row\(rng.next() % 1_000_000)".utf8), value = rng.bytes(6)
            try tree.upsert(key, value)
            model[key] = value
        }
        let base = tree
        let new = MemoryPageSource(format: Self.format)
        let (root, _) = Self.repack(base, into: new)
        // The writer goes on after the capture: inserts, updates (some to the same value) and
        // removals, including keys the copy holds.
        let pool = model.keys.sorted(by: { $0.lexicographicallyPrecedes($1) })
        for _ in 0..<changes {
            let existing = pool[Int(rng.next() % UInt64(pool.count))]
            switch rng.next() % 4 {
            case 0:
                try tree.remove(existing)
                model[existing] = nil
            case 1:
                let same = model[existing] ?? [1]
                try tree.upsert(existing, same)
                model[existing] = same
            case 2:
                let value = rng.bytes(9)
                try tree.upsert(existing, value)
                model[existing] = value
            default:
                let key = Array("new\(rng.next() % 1_000_000)".utf8), value = rng.bytes(5)
                try tree.upsert(key, value)
                model[key] = value
            }
        }
        let copy = PagedBTree(root: root, format: Self.format, source: new)
        let rebased = try tree.rebasing(from: base, onto: copy)
        try rebased.validate()
        #expect(rebased.count == model.count)
        #expect(try Self.contents(rebased) == model)
        if changes == 0 { #expect(rebased.cleanRootPage == root.page, "nothing changed: the copy itself") }
        // It reads only the copy's pages: a flush into the new source makes a tree that needs
        // nothing of the old one.
        let flush = new.flush(rebased)
        let reopened = try PagedBTree(rootPage: flush.root, format: Self.format, source: new)
        try reopened.validate()
        #expect(try Self.contents(reopened) == model)
    }

    @Test func repackOfAnEmptyTreeIsEmpty() {
        let tree = PagedBTree(format: Self.format, source: MemoryPageSource(format: Self.format))
        let (root, written) = Self.repack(tree, into: MemoryPageSource(format: Self.format))
        #expect(root == .empty && written == 0)
    }

    @Test func aDamagedPageIsReportedNotRepacked() throws {
        let old = MemoryPageSource(format: Self.format, verifiesChecksums: false)
        var tree = PagedBTree(format: Self.format, source: old)
        for i in 0..<500 { try tree.upsert(Array("k\(i)".utf8), [UInt8(i & 255)]) }
        let flush = old.flush(tree)
        tree = try PagedBTree(rootPage: flush.root, format: Self.format, source: old)
        var damaged = old.bytes(flush.root - 1)!
        damaged[damaged.count - 1] ^= 0xFF
        old.replace(flush.root - 1, with: damaged, reseal: false)
        let target = MemoryPageSource(format: Self.format)
        #expect(throws: PageError.self) {
            _ = try tree.repackAll(allocate: { () throws(PageError) in target.allocate() },
                                   write: { (id, bytes) throws(PageError) in target.write(id, bytes) }, readFailed: { $0 })
        }
    }
}
