// Hostile page bytes: random, truncated, flipped, forged counts and offsets, cycles. Every case
// must give a typed PageError (never a trap, a hang or a huge allocation).
import Testing
import TestSupport
@testable import YapDBIndex

/// A written keyed tree of 400 entries on 256-byte pages, and its source.
private func writtenKeyedTree(verifiesChecksums: Bool = true) throws -> (PagedBTree, MemoryPageSource) {
    let format = PageFormat(pageSize: 256)
    let source = MemoryPageSource(format: format, verifiesChecksums: verifiesChecksums)
    var tree = PagedBTree(format: format, source: source)
    for i in 0..<400 { try tree.upsert(Array("key\(i)".utf8), Array("value\(i)".utf8)) }
    let flush = source.flush(tree)
    return (try PagedBTree(rootPage: flush.root, format: format, source: source), source)
}

/// Runs every operation on `tree`; returns the first PageError each gave (an operation that
/// succeeds on damaged bytes is allowed: the damage may not be on its path).
@discardableResult
private func exercise(_ tree: PagedBTree) -> [PageError] {
    var errors: [PageError] = []
    func run(_ body: () throws -> Void) {
        do { try body() } catch let error as PageError { errors.append(error) } catch { Issue.record("untyped error \(error)") }
    }
    run { try tree.validate() }
    for i in stride(from: 0, to: 400, by: 37) {
        run { _ = try tree.value(forKey: Array("key\(i)".utf8)) }
        run { _ = try tree.rank(of: Array("key\(i)".utf8)) }
        if i < tree.count { run { _ = try tree.element(at: i) } }
    }
    run { try tree.forEach { _, _ in true } }
    run { try tree.forEach(reversed: true) { _, _ in true } }
    run { var copy = tree; for i in 0..<60 { try copy.upsert(Array("key\(i * 5)x".utf8), [1, 2, 3]) } }
    run { var copy = tree; for i in 0..<200 { try copy.remove(Array("key\(i * 2)".utf8)) } }
    return errors
}

/// The reasons of the corrupt-page errors among `errors`.
private func reasons(_ errors: [PageError]) -> [PageCorruption] {
    errors.compactMap { if case .corrupt(_, let reason) = $0 { reason } else { nil } }
}

/// The root page, a branch page with at least three children, and a leaf of a written tree.
private func rootAndChild(_ tree: PagedBTree, _ source: MemoryPageSource) -> (root: PageID, child: PageID, leaf: PageID) {
    let wide = (1...UInt64(source.pageCount)).first { id in
        let page = source.bytes(id)!
        return page[PageLayout.kindOffset] == PageKind.keyedBranch.rawValue && page[PageLayout.countOffset] >= 3
    }!
    let root = tree.cleanRootPage!
    let bytes = source.bytes(root)!
    let child = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: PageLayout.keyedBodyStart, as: UInt64.self) }
    var leaf = child
    while true {
        let page = source.bytes(leaf)!
        if page[PageLayout.levelOffset] == 0 { break }
        leaf = page.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: PageLayout.keyedBodyStart, as: UInt64.self) }
    }
    _ = child
    return (root, wide, leaf)
}

/// Page `id`'s bytes changed by `edit`, stored back with a valid checksum.
private func forge(_ source: MemoryPageSource, _ id: PageID, _ edit: (inout [UInt8]) -> Void) {
    var bytes = source.bytes(id)!
    edit(&bytes)
    source.replace(id, with: bytes, reseal: true)
}

private func store<T: FixedWidthInteger>(_ value: T, at offset: Int, in bytes: inout [UInt8]) {
    withUnsafeBytes(of: value.littleEndian) { raw in for (i, byte) in raw.enumerated() { bytes[offset + i] = byte } }
}

@Test func hostileKeyedPagesGiveTypedReasons() throws {
    typealias Case = (name: String, target: (PageID, PageID, PageID) -> PageID, edit: (inout [UInt8], PageID) -> Void, expected: (PageCorruption) -> Bool)
    let cases: [Case] = [
        ("child pointing at its own page", { root, _, _ in root }, { bytes, root in store(root, at: PageLayout.keyedBodyStart, in: &bytes) },
         { if case .badLevel = $0 { true } else { false } }),
        ("null child", { root, _, _ in root }, { bytes, _ in store(UInt64(0), at: PageLayout.keyedBodyStart, in: &bytes) },
         { $0 == .nullChild(slot: 0) }),
        ("child count wrong in the parent", { root, _, _ in root }, { bytes, _ in store(UInt64(3), at: PageLayout.keyedBodyStart + 8, in: &bytes) },
         { if case .subtreeCountMismatch = $0 { true } else { false } }),
        ("leaf count beyond the page", { _, _, leaf in leaf }, { bytes, _ in store(UInt16(500), at: PageLayout.countOffset, in: &bytes) },
         { $0 == .badCount(500) }),
        ("leaf slot offset out of range", { _, _, leaf in leaf }, { bytes, _ in store(UInt16(0xFFF0), at: PageLayout.keyedBodyStart, in: &bytes) },
         { $0 == .slotOutOfRange(slot: 0) }),
        ("leaf key length past the page", { _, _, leaf in leaf }, { bytes, _ in
            let offset = Int(bytes[PageLayout.keyedBodyStart]) | Int(bytes[PageLayout.keyedBodyStart + 1]) << 8
            store(UInt16(0xFFFF), at: offset, in: &bytes)
         }, { $0 == .slotOutOfRange(slot: 0) }),
        ("leaf keys out of order", { _, _, leaf in leaf }, { bytes, _ in
            let s = PageLayout.keyedBodyStart
            (bytes[s], bytes[s + 1], bytes[s + 2], bytes[s + 3]) = (bytes[s + 2], bytes[s + 3], bytes[s], bytes[s + 1])
         }, { $0 == .keysOutOfOrder(slot: 1) }),
        ("unknown kind byte", { _, _, leaf in leaf }, { bytes, _ in bytes[PageLayout.kindOffset] = 0x99 },
         { $0 == .badKind(found: 0x99) }),
        ("level too deep", { root, _, _ in root }, { bytes, _ in bytes[PageLayout.levelOffset] = 200 },
         { if case .badLevel(_, 200) = $0 { true } else { false } }),
        ("key prefix longer than the page", { _, _, leaf in leaf }, { bytes, _ in store(UInt16(0xFFFF), at: PageLayout.keyPrefixOffset, in: &bytes) },
         { if case .badPrefix(0xFFFF, _) = $0 { true } else { false } }),
        ("value prefix past the page end", { _, _, leaf in leaf }, { bytes, _ in store(UInt16(250), at: PageLayout.valuePrefixOffset, in: &bytes) },
         { if case .badPrefix(_, 250) = $0 { true } else { false } }),
        ("branch with a value prefix", { root, _, _ in root }, { bytes, _ in store(UInt16(1), at: PageLayout.valuePrefixOffset, in: &bytes) },
         { if case .badPrefix(_, 1) = $0 { true } else { false } }),
        ("leaf slot pointing into the prefixes", { _, _, leaf in leaf }, { bytes, _ in
            let count = Int(bytes[PageLayout.countOffset])
            store(UInt16(PageLayout.keyedBodyStart + count * PageLayout.slotSize), at: PageLayout.keyedBodyStart, in: &bytes)
         }, { $0 == .slotOutOfRange(slot: 0) }),
        ("whole entry beyond the entry limit", { _, _, leaf in leaf }, { bytes, _ in
            // A prefix that fits the page but makes every key longer than an entry may be.
            let count = Int(bytes[PageLayout.countOffset])
            let prefixStart = PageLayout.keyedBodyStart + count * PageLayout.slotSize
            let room = 256 - prefixStart - 5 - 4 - 8
            store(UInt16(room), at: PageLayout.keyPrefixOffset, in: &bytes)
            for i in 0..<count { store(UInt16(256 - 8), at: PageLayout.keyedBodyStart + i * PageLayout.slotSize, in: &bytes) }
            store(UInt16(0), at: 256 - 8, in: &bytes); store(UInt16(0), at: 256 - 6, in: &bytes)
         }, { $0 == .overfilled }),
        ("separators out of order", { _, branch, _ in branch }, { bytes, _ in
            let count = Int(bytes[PageLayout.countOffset])
            let slots = PageLayout.keyedBodyStart + count * PageLayout.keyedChildSize
            (bytes[slots], bytes[slots + 1], bytes[slots + 2], bytes[slots + 3]) = (bytes[slots + 2], bytes[slots + 3], bytes[slots], bytes[slots + 1])
         }, { $0 == .keysOutOfOrder(slot: 1) }),
    ]
    for testCase in cases {
        let (tree, source) = try writtenKeyedTree()
        let (root, child, leaf) = rootAndChild(tree, source)
        let target = testCase.target(root, child, leaf)
        forge(source, target) { testCase.edit(&$0, target) }
        // The root case "level too deep" is caught when the tree is opened.
        let reopened: PagedBTree
        do {
            reopened = try PagedBTree(rootPage: root, format: tree.format, source: source)
        } catch {
            guard case .corrupt(_, let reason) = error else { Issue.record("\(testCase.name): \(error)"); continue }
            #expect(testCase.expected(reason), "\(testCase.name): \(reason)")
            continue
        }
        let found = reasons(exercise(reopened))
        #expect(!found.isEmpty, "\(testCase.name): no error")
        #expect(found.contains(where: testCase.expected), "\(testCase.name): \(found)")
        do {
            try reopened.validate()
            Issue.record("\(testCase.name): validate passed")
        } catch {}
    }
}

@Test func hostileKeyedPagesFailTheChecksumOrSize() throws {
    let (tree, source) = try writtenKeyedTree()
    let (_, _, leaf) = rootAndChild(tree, source)
    var bytes = source.bytes(leaf)!
    bytes[100] ^= 0x10
    source.replace(leaf, with: bytes, reseal: false)
    #expect(reasons(exercise(tree)).contains(.checksumMismatch))

    let (tree2, source2) = try writtenKeyedTree()
    let leaf2 = rootAndChild(tree2, source2).leaf
    source2.replace(leaf2, with: Array(source2.bytes(leaf2)!.prefix(100)), reseal: false)
    #expect(reasons(exercise(tree2)).contains(.wrongSize(100)))

    // A missing page, and a root that is a row-tree page.
    let (tree3, source3) = try writtenKeyedTree(verifiesChecksums: false)
    let leaf3 = rootAndChild(tree3, source3).leaf
    source3.replace(leaf3, with: [UInt8](repeating: 0, count: 256), reseal: false)
    #expect(!exercise(tree3).isEmpty)
    #expect(throws: PageError.self) { _ = try PagedRowTree(rootPage: tree3.cleanRootPage!, format: tree3.format, source: source3) }
}

/// A root page whose own count claims more entries than its children hold: a walk that runs to
/// the end of the root (the cursor checks a branch page's children when it leaves it) or a
/// position past what the children hold is refused with a typed reason, never a trap or a
/// short answer.
@Test func aBranchWhoseChildrenDoNotMakeUpItsCountFailsTheWalksThatReachItsEnd() throws {
    let (tree, source) = try writtenKeyedTree()
    let root = tree.cleanRootPage!
    let claimed = tree.count + 5
    forge(source, root) { store(UInt64(claimed), at: PageLayout.subtreeCountOffset, in: &$0) }
    let forged = try PagedBTree(rootPage: root, format: tree.format, source: source)
    #expect(forged.count == claimed)
    func reason(_ body: () throws(PageError) -> Void) -> PageCorruption? {
        do throws(PageError) { try body() } catch {
            if case .corrupt(let page, let reason) = error, page == root { return reason }
            Issue.record("unexpected \(error)")
        }
        return nil
    }
    let forward = reason { () throws(PageError) in try forged.forEach { _, _ in true } }
    #expect(forward == .subtreeCountMismatch(expected: claimed, found: tree.count))
    let fromKey = reason { () throws(PageError) in try forged.forEachInKeyRange(from: KeyBound(Array("key1".utf8)), to: nil) { _, _ in true } }
    #expect(fromKey == .subtreeCountMismatch(expected: claimed, found: tree.count))
    #expect(reason { () throws(PageError) in try forged.forEach(reversed: true) { _, _ in true } } == .positionOutOfRange)
    #expect(reason { () throws(PageError) in _ = try forged.element(at: claimed - 1) } == .positionOutOfRange)
    // A walk that stops before the end reads what is there.
    var seen = 0
    try forged.forEach { _, _ in seen += 1; return seen < 10 }
    #expect(seen == 10)
}

/// The same forgery on a row tree (a view group): the row cursor's walk checks a branch page's
/// children when it leaves it, and a position past what the children hold is refused.
@Test func aRowBranchWhoseChildrenDoNotMakeUpItsCountFailsTheWalksThatReachItsEnd() throws {
    let format = PageFormat(pageSize: 256)
    let source = MemoryPageSource(format: format)
    var tree = PagedRowTree(format: format, source: source)
    for rowid in 1...600 as ClosedRange<UInt64> { try tree.append(rowid) }
    let root = source.flush(tree).root
    let claimed = tree.count + 5
    forge(source, root) { store(UInt64(claimed), at: PageLayout.subtreeCountOffset, in: &$0) }
    let forged = try PagedRowTree(rootPage: root, format: format, source: source)
    #expect(forged.height > 1 && forged.count == claimed)
    func reason(_ body: () throws(PageError) -> Void) -> PageCorruption? {
        do throws(PageError) { try body() } catch {
            if case .corrupt(let page, let reason) = error, page == root { return reason }
            Issue.record("unexpected \(error)")
        }
        return nil
    }
    let forward = reason { () throws(PageError) in try forged.forEach(in: 0..<claimed) { _, _ in true } }
    #expect(forward == .subtreeCountMismatch(expected: claimed, found: tree.count))
    #expect(reason { () throws(PageError) in try forged.forEach(in: 0..<claimed, reversed: true) { _, _ in true } } == .positionOutOfRange)
    #expect(reason { () throws(PageError) in _ = try forged.element(at: claimed - 1) } == .positionOutOfRange)
    // A walk that stops before the end reads what is there, in order.
    var seen: [UInt64] = []
    try forged.forEach(in: 0..<claimed) { index, rowid in seen.append(rowid); return index == seen.count - 1 && seen.count < 300 }
    #expect(seen == Array(1...300))
}

@Test(arguments: [11, 12, 13] as [UInt64])
func hostileKeyedPagesFuzz(seed: UInt64) throws {
    var rng = SeededRandom(seed: seed)
    for round in 0..<150 {
        let (tree, source) = try writtenKeyedTree(verifiesChecksums: false)
        let pages = (1...UInt64(source.pageCount)).map { $0 }
        // Damage one to three pages: random bytes, a random run, or a few flipped bits; reseal
        // most of the time so that the structural checks must catch it.
        for _ in 0..<(1 + rng.next() % 3) {
            let id = pages[Int(rng.next() % UInt64(pages.count))]
            var bytes = source.bytes(id)!
            // A page cut short by an earlier round of damage is damaged again whole.
            if bytes.count < 256 { bytes += [UInt8](repeating: 0, count: 256 - bytes.count) }
            switch rng.next() % 4 {
            case 0: bytes = rng.bytes(256)
            case 1:
                let start = Int(rng.next() % 256), length = Int(rng.next() % 40)
                for i in start..<min(256, start + length) { bytes[i] = UInt8(truncatingIfNeeded: rng.next()) }
            case 2: bytes = Array(bytes.prefix(Int(rng.next() % 256)))
            default:
                for _ in 0..<(1 + rng.next() % 4) { bytes[Int(rng.next() % 256)] ^= UInt8(1) << (rng.next() % 8) }
            }
            source.replace(id, with: bytes, reseal: rng.next() % 4 != 0)
        }
        // Open (the root may be damaged too) and run everything: typed errors only.
        guard let damaged = try? PagedBTree(rootPage: tree.cleanRootPage!, format: tree.format, source: source) else { continue }
        let errors = exercise(damaged)
        // Validation reads every page, so it fails whenever some page's structure is broken
        // (any other operation failing implies validation fails too).
        if !errors.isEmpty {
            #expect(throws: PageError.self, "seed \(seed) round \(round)") { try damaged.validate() }
        }
    }
}
