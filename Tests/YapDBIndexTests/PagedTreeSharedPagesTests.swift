// Hostile page graphs (reliability finding F21): levels strictly decrease, so pages cannot form
// a cycle, but a branch whose children are all the same page, stacked level upon level, makes
// a tree of a few dozen pages claim billions of entries. Opening such a root must fail with a
// typed error, so no walk or count runs for as long as the claim.
import Testing
import TestSupport
@testable import YapDBIndex

/// Turns branch `branch` (children of `childSize` bytes from `first` on: page id, then subtree
/// count) into a
/// DAG root: every child slot points at its first child, then copies of it are stacked above,
/// each pointing all its children at the one below, until the claimed count passes 2^40.
/// Returns the top page and the count it claims.
private func stackSharedPages(_ source: MemoryPageSource, branch: PageID, childSize: Int) -> (top: PageID, claimed: Int) {
    let first = childSize == PageLayout.keyedChildSize ? PageLayout.keyedBodyStart : PageLayout.headerSize
    func u64(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
        bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian }
    }
    func store(_ value: UInt64, at offset: Int, in bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { raw in for (i, byte) in raw.enumerated() { bytes[offset + i] = byte } }
    }
    var bytes = source.bytes(branch)!
    let width = Int(bytes[PageLayout.countOffset])
    var below = u64(bytes, first), belowCount = u64(bytes, first + 8)
    var top = branch
    var level = bytes[PageLayout.levelOffset]
    while true {
        for slot in 0..<width {
            store(below, at: first + slot * childSize, in: &bytes)
            store(belowCount, at: first + slot * childSize + 8, in: &bytes)
        }
        let claimed = belowCount * UInt64(width)
        store(claimed, at: PageLayout.subtreeCountOffset, in: &bytes)
        bytes[PageLayout.levelOffset] = level
        source.replace(top, with: bytes, reseal: true)
        guard claimed * UInt64(width) < 1 << 40, level < UInt8(PageLayout.maximumLevel) else { return (top, Int(claimed)) }
        (below, belowCount) = (top, claimed)
        top = source.allocate()
        level += 1
    }
}

/// The first branch page (of `kind`) with at least three children.
private func wideBranch(_ source: MemoryPageSource, kind: PageKind) -> PageID {
    (1...PageID(source.pageCount)).first { id in
        let page = source.bytes(id)!
        return page[PageLayout.kindOffset] == kind.rawValue && page[PageLayout.countOffset] >= 3
    }!
}

/// A keyed tree of 400 rows on 256-byte pages, flushed, whose widest branch then has its children
/// stacked so that a few pages claim more than 2^30 entries: (format, source, that root, its claim).
private func keyedTreeWithSharedPages() throws -> (PageFormat, MemoryPageSource, PageID, Int) {
    let format = PageFormat(pageSize: 256)
    let source = MemoryPageSource(format: format)
    var tree = PagedBTree(format: format, source: source)
    for i in 0..<400 { try tree.upsert(Array("key\(i)".utf8), Array("value\(i)".utf8)) }
    _ = source.flush(tree)
    let (top, claimed) = stackSharedPages(source, branch: wideBranch(source, kind: .keyedBranch), childSize: PageLayout.keyedChildSize)
    return (format, source, top, claimed)
}

@Test func sharedChildPagesInAKeyedTreeAreRefusedAtOpen() throws {
    let (format, source, top, claimed) = try keyedTreeWithSharedPages()
    #expect(claimed > 1 << 30 && source.pageCount < 200, "a few pages claim \(claimed) entries")
    do {
        let dag = try PagedBTree(rootPage: top, format: format, source: source)
        // Without the bound, a full walk would visit `claimed` entries: walk a bounded prefix.
        var visited = 0
        try? dag.forEach { _, _ in visited += 1; return visited < 100_000 }
        Issue.record("a root claiming \(claimed) entries over \(source.pageCount) pages opened (count \(dag.count))")
    } catch let PageError.corrupt(page, reason) {
        #expect(page == top)
        guard case .countBeyondCapacity(let found, let capacity) = reason else { Issue.record("reason \(reason)"); return }
        #expect(found == claimed && capacity < found)
    }
}

/// An extension opens its trees from the root it recorded (`PagedTreeRoot`), reading nothing:
/// a recorded count beyond what the pages can hold fails the first page read, and still does
/// after the tree is rebound to another source.
@Test func aRecordedRootClaimingSharedPagesFailsItsFirstRead() throws {
    let (format, source, top, claimed) = try keyedTreeWithSharedPages()
    let height = Int(source.bytes(top)![PageLayout.levelOffset]) + 1
    let recorded = PagedBTree(root: PagedTreeRoot(page: top, count: claimed, height: height, first: 0), format: format, source: source)
    #expect(recorded.count == claimed, "counting reads nothing")
    for dag in [recorded, recorded.reading(from: source)] {
        var visited = 0
        #expect {
            try dag.forEach { _, _ in visited += 1; return visited < 100_000 }
        } throws: { error in
            guard case PageError.corrupt(_, .countBeyondCapacity) = error else { return false }
            return true
        }
        #expect(visited == 0)
        #expect(throws: PageError.self) { _ = try dag.value(forKey: Array("key1".utf8)) }
    }
}

@Test func sharedChildPagesInARowTreeAreRefusedAtOpen() throws {
    let format = PageFormat(pageSize: 256)
    let source = MemoryPageSource(format: format)
    var tree = PagedRowTree(format: format, source: source)
    for rowid in 1...2000 as ClosedRange<UInt64> { try tree.append(rowid) }
    _ = source.flush(tree)
    let (top, claimed) = stackSharedPages(source, branch: wideBranch(source, kind: .rowBranch), childSize: PageLayout.rowChildSize)
    #expect(claimed > 1 << 30)
    #expect {
        let dag = try PagedRowTree(rootPage: top, format: format, source: source)
        var visited = 0
        try? dag.forEach(in: 0..<dag.count) { _, _ in visited += 1; return visited < 100_000 }
    } throws: { error in
        guard case PageError.corrupt(_, .countBeyondCapacity) = error else { return false }
        return true
    }
}

/// The bound never refuses a real tree: every count a tree of these pages can reach passes.
@Test func theCapacityBoundAdmitsFullTrees() throws {
    let format = PageFormat(pageSize: 256)
    let source = MemoryPageSource(format: format)
    var rows = PagedRowTree(format: format, source: source)
    for rowid in 1...3000 as ClosedRange<UInt64> { try rows.append(rowid) }   // leaves full to the last row id
    let flush = source.flush(rows)
    let reopened = try PagedRowTree(rootPage: flush.root, format: format, source: source)
    #expect(reopened.count == 3000)
    var keyed = PagedBTree(format: format, source: source)
    for i in 0..<500 { try keyed.upsert([UInt8(i % 256), UInt8(i / 256)], []) }   // the smallest entries
    let keyedFlush = source.flush(keyed)
    #expect(try PagedBTree(rootPage: keyedFlush.root, format: format, source: source).count == 500)
}
