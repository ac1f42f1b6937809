// MappedPages: the flat table the trees read mapped pages through. Lookups by file and page,
// ids outside the table, and trees read through a table giving what `withPage` gives — or the
// same typed errors when a page points outside it.
import Dispatch
import Synchronization
import Testing
import TestSupport
@testable import YapDBIndex

/// The hints trees have given through `countingHint` (a C function pointer cannot capture).
private let hintsGiven = Atomic<Int>(0)
/// A `MemoryHint` that only counts (it loads nothing: the answers must not depend on hints).
private let countingHint: MemoryHint = { address, length in
    if address != nil, length > 0 { hintsGiven.add(1, ordering: .relaxed) }
}

/// Pages of "file 1" in one region (page `n` at byte `n × pageSize`, page 0 unused), offered
/// as a `MappedPages` table when `offersTable` (with `countingHint` when `hints`), else only
/// through `withPage`.
/// `@unchecked Sendable`: written by one test thread before any tree reads it.
private final class RegionSource: PageSource, @unchecked Sendable {
    let format: PageFormat
    let offersTable: Bool
    let hints: Bool
    let region: UnsafeMutableRawBufferPointer
    private(set) var written = 0

    init(format: PageFormat, capacity: Int, offersTable: Bool, hints: Bool = false) {
        self.format = format
        self.offersTable = offersTable
        self.hints = hints
        region = .allocate(byteCount: format.pageSize * (capacity + 1), alignment: 16)
        region.initializeMemory(as: UInt8.self, repeating: 0)
    }

    deinit { region.deallocate() }

    func allocate() -> PageID {
        written += 1
        precondition((written + 1) * format.pageSize <= region.count, "RegionSource: full")
        return 1 << 32 | PageID(written)
    }

    func write(_ id: PageID, _ bytes: UnsafeRawBufferPointer) {
        let start = Int(UInt32(truncatingIfNeeded: id)) * format.pageSize
        UnsafeMutableRawBufferPointer(rebasing: region[start..<(start + format.pageSize)]).copyMemory(from: bytes)
    }

    /// The bytes of the file: the header page and every page written.
    var fileBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: region[0..<((written + 1) * format.pageSize)]) }

    func withPage(_ id: PageID, _ body: (UnsafeRawBufferPointer) throws(PageError) -> Void) throws(PageError) {
        let page = Int(UInt32(truncatingIfNeeded: id))
        guard id >> 32 == 1, page >= 1, page <= written else { throw .corrupt(page: id, reason: .missing) }
        try body(UnsafeRawBufferPointer(rebasing: fileBytes[(page * format.pageSize)..<((page + 1) * format.pageSize)]))
    }

    var mappedPages: MappedPages? {
        offersTable ? MappedPages(pageSize: format.pageSize, files: [(1, fileBytes)], owner: self, hint: hints ? countingHint : nil) : nil
    }
}

extension RegionSource: PageSink {}

/// A region whose table is made once, over its whole capacity, and shared by every tree read
/// through it, as an index view's table is (`RegionSource` makes a new table per tree). Pages
/// written after the table was made are new ids that no earlier read named.
private final class SharedTableSource: PageSource, PageSink, @unchecked Sendable {
    let region: RegionSource
    let table: MappedPages

    init(format: PageFormat, capacity: Int) {
        region = RegionSource(format: format, capacity: capacity, offersTable: false)
        table = MappedPages(pageSize: format.pageSize,
                            files: [(1, UnsafeRawBufferPointer(region.region))], owner: nil)!
    }

    func allocate() -> PageID { region.allocate() }
    func write(_ id: PageID, _ bytes: UnsafeRawBufferPointer) { region.write(id, bytes) }
    func withPage(_ id: PageID, _ body: (UnsafeRawBufferPointer) throws(PageError) -> Void) throws(PageError) {
        try region.withPage(id, body)
    }
    var mappedPages: MappedPages? { table }
}

/// Whether `body` throws `PageError.corrupt` with reason `.missing`.
private func throwsMissing(_ body: () throws -> Void) -> Bool {
    do { try body() } catch PageError.corrupt(_, .missing) { return true } catch { return false }
    return false
}

@Suite struct MappedPagesTests {
    @Test func looksPagesUpByFileAndPage() throws {
        let pageSize = 256
        let first = UnsafeMutableRawBufferPointer.allocate(byteCount: 4 * pageSize, alignment: 16)
        let second = UnsafeMutableRawBufferPointer.allocate(byteCount: 2 * pageSize + 100, alignment: 16)
        defer { first.deallocate(); second.deallocate() }
        let files: [(number: UInt32, bytes: UnsafeRawBufferPointer)] = [(3, UnsafeRawBufferPointer(first)), (5, UnsafeRawBufferPointer(second))]
        let table = try #require(MappedPages(pageSize: pageSize, files: files, owner: nil))
        func id(_ file: UInt64, _ page: UInt64) -> PageID { file << 32 | page }
        // Pages inside a file: the right bytes.
        #expect(table.bytes(id(3, 1))?.baseAddress == UnsafeRawPointer(first.baseAddress! + pageSize))
        #expect(table.bytes(id(3, 3))?.baseAddress == UnsafeRawPointer(first.baseAddress! + 3 * pageSize))
        #expect(table.bytes(id(3, 3))?.count == pageSize)
        #expect(table.bytes(id(5, 1))?.baseAddress == UnsafeRawPointer(second.baseAddress! + pageSize))
        // Page 0 (the header), a page past the file's whole pages, a partial page at the end.
        #expect(table.bytes(id(3, 0)) == nil)
        #expect(table.bytes(id(3, 4)) == nil)
        #expect(table.bytes(id(5, 2)) == nil)
        #expect(table.bytes(id(3, UInt64(UInt32.max))) == nil)
        // Files below, between and above the table's, file 0, and the "no page" id.
        for file: UInt64 in [0, 1, 2, 4, 6, 1 << 20, UInt64(UInt32.max)] { #expect(table.bytes(id(file, 1)) == nil) }
        #expect(table.bytes(.none) == nil)
        #expect(table.bytes(UInt64.max) == nil)
    }

    /// With a checksum function, a page is checked the first time the table hands it out and
    /// remembered: a page whose checksum fails is `.checksumMismatch` on every visit; one that
    /// passed is not checked again (its bytes changed afterwards still come back, which is
    /// sound only because published pages are never rewritten). A revoked file's pages are
    /// `.unreadable` and never touched.
    @Test func pagesAreCheckedOnTheirFirstVisitAndRevokedFilesAreUnreadable() throws {
        let format = PageFormat(pageSize: 256, checksum: .crc32c)
        let region = UnsafeMutableRawBufferPointer.allocate(byteCount: 4 * format.pageSize, alignment: 16)
        defer { region.deallocate() }
        region.initializeMemory(as: UInt8.self, repeating: 7)
        for page in 1..<4 { format.seal(UnsafeMutableRawBufferPointer(rebasing: region[(page * 256)..<((page + 1) * 256)])) }
        region[2 * 256 + 100] ^= 1  // page 2 damaged after sealing
        let revoked = UnsafeMutablePointer<Atomic<Bool>>.allocate(capacity: 1)
        revoked.initialize(to: Atomic(false))
        defer { revoked.deinitialize(count: 1); revoked.deallocate() }
        let checksum: PageChecksumFunction = { address, length in
            PageChecksum.crc32c.compute(UnsafeRawBufferPointer(start: address, count: length))
        }
        let mapped = try #require(MappedPages(pageSize: 256, files: [(UInt32(1), UnsafeRawBufferPointer(region))], owner: nil,
                                              checksum: checksum, revocations: [1: UnsafePointer(revoked)]))
        let table = mapped.table
        func id(_ page: UInt64) -> PageID { 1 << 32 | page }
        #expect(try table.page(id(1)).baseAddress == UnsafeRawPointer(region.baseAddress! + 256))
        func reason(_ page: UInt64) -> PageCorruption? {
            do { _ = try table.page(id(page)); return nil } catch {
                if case .corrupt(let failing, let reason) = error, failing == id(page) { return reason }
                return nil
            }
        }
        for _ in 0..<2 { #expect(reason(2) == .checksumMismatch) }
        region[256 + 100] ^= 1  // page 1 changed after its first visit: not checked again
        #expect(try table.page(id(1)).count == 256)
        #expect(try table.page(id(3)).count == 256)
        #expect(reason(4) == .missing)
        // Without a checksum function nothing is checked (the trees' bounds checks remain).
        let unchecked = try #require(MappedPages(pageSize: 256, files: [(UInt32(1), UnsafeRawBufferPointer(region))], owner: nil))
        #expect(try unchecked.table.page(id(2)).count == 256)
        revoked[0].store(true, ordering: .relaxed)
        for page: UInt64 in [1, 2] {
            do { _ = try table.page(id(page)); Issue.record("page \(page) of a revoked file was handed out") } catch {
                guard case .unreadable(let failing, _) = error, failing == id(page) else { Issue.record("\(error)"); continue }
            }
        }
    }

    @Test func givesNoTableForFileZeroOrAWideSpan() {
        let bytes = UnsafeRawBufferPointer(start: nil, count: 0)
        #expect(MappedPages(pageSize: 256, files: [], owner: nil) == nil)
        #expect(MappedPages(pageSize: 256, files: [(0, bytes)], owner: nil) == nil)
        #expect(MappedPages(pageSize: 256, files: [(1, bytes), (UInt32(MappedPages.maximumFileSpan) + 1, bytes)], owner: nil) == nil)
        #expect(MappedPages(pageSize: 256, files: [(1, bytes), (UInt32(MappedPages.maximumFileSpan), bytes)], owner: nil) != nil)
    }

    /// A keyed tree and a row tree read through the table answer as through `withPage`.
    @Test func treesReadThroughTheTableAsThroughTheSource() throws {
        let format = PageFormat(pageSize: 256)
        var answers: [[String]] = []
        for offersTable in [false, true] {
            let source = RegionSource(format: format, capacity: 600, offersTable: offersTable)
            var keyed = PagedBTree(format: format, source: source)
            for i in 0..<500 { try keyed.upsert(Array("key\(i * 7 % 500)".utf8), Array("value\(i)".utf8)) }
            var rows = PagedRowTree(format: format, source: source)
            for rowid in 1...400 as ClosedRange<UInt64> { try rows.append(rowid * 3) }
            let keyedRoot = source.flush(keyed).root, rowsRoot = source.flush(rows).root
            let tree = try PagedBTree(rootPage: keyedRoot, format: format, source: source)
            let rowTree = try PagedRowTree(rootPage: rowsRoot, format: format, source: source)
            #expect(tree.height >= 3 && rowTree.height >= 2)
            #expect((source.mappedPages != nil) == offersTable)
            var answer: [String] = []
            for i in stride(from: 0, to: 520, by: 13) {
                let key = Array("key\(i)".utf8)
                answer.append("\(try tree.value(forKey: key) ?? []) \(try tree.rank(of: key))")
                if i < tree.count { answer.append("\(try tree.element(at: i))") }
            }
            try tree.forEach(from: KeyBound(Array("key2".utf8)), to: KeyBound(Array("key3".utf8))) { key, value in
                answer.append("\(Array(key)) \(Array(value))")
                return true
            }
            // Key-range walks (a cursor over the table: `MappedTree`): bounds in and between keys,
            // inclusive or not, before the first key and past the last, walks across many
            // leaves, and a walk stopped early.
            let bounds: [(KeyBound, KeyBound?, stop: Int)] = [
                (KeyBound(Array("key2".utf8)), KeyBound(Array("key3".utf8)), .max),
                (KeyBound(Array("key250".utf8), inclusive: false), KeyBound(Array("key26".utf8), inclusive: false), .max),
                (KeyBound(Array("key250".utf8)), nil, .max),
                (KeyBound(Array("key1".utf8)), nil, 37),
                (KeyBound([]), KeyBound(Array("key105".utf8)), .max),
                (KeyBound(Array("kez".utf8)), nil, .max),
            ]
            for (lower, upper, stop) in bounds {
                var walked: [String] = []
                try tree.forEachInKeyRange(from: lower, to: upper) { key, value in
                    walked.append(String(decoding: key, as: UTF8.self) + "=" + String(decoding: value, as: UTF8.self))
                    return walked.count < stop
                }
                answer.append(walked.joined(separator: ","))
                var inPlace: [String] = []
                try [tree].forEachInKeyRange(ofTree: 0, from: lower, to: upper) { key, value in
                    inPlace.append(String(decoding: key, as: UTF8.self) + "=" + String(decoding: value, as: UTF8.self))
                    return inPlace.count < stop
                }
                #expect(inPlace == walked)
            }
            for last in [false, true] {
                var edge: [UInt8] = [], inPlace: [UInt8] = []
                try tree.withEdgeEntry(last: last) { key, _ in edge = Array(key) }
                #expect(try [tree].withEdgeEntry(ofTree: 0, last: last) { key, _ in inPlace = Array(key) })
                let expected = try tree.element(at: last ? tree.count - 1 : 0).key
                #expect(edge == inPlace && edge == expected)
                answer.append("\(edge)")
            }
            answer.append("\(try rowTree.rowids().count) \(try rowTree.element(at: 123)) \(try rowTree.lowerBound { 600 < $0 ? .orderedAscending : 600 == $0 ? .orderedSame : .orderedDescending })")
            try tree.validate()
            try rowTree.validate()
            answers.append(answer)
        }
        #expect(answers[0] == answers[1])
        #expect(answers[0].count > 80)
    }

    /// A branch whose child is a page the table does not hold (a page past the file's end, page
    /// 0, another file) gives `.corrupt(.missing)` through the table, as through `withPage`.
    @Test(arguments: [1 << 32 | 9_999, 1 << 32, 2 << 32 | 1, 1] as [PageID])
    func aChildOutsideTheTableIsMissing(child: PageID) throws {
        let format = PageFormat(pageSize: 256)
        for offersTable in [false, true] {
            let source = RegionSource(format: format, capacity: 200, offersTable: offersTable, hints: true)
            var keyed = PagedBTree(format: format, source: source)
            for i in 0..<300 { try keyed.upsert(Array("key\(i)".utf8), Array("value\(i)".utf8)) }
            let root = source.flush(keyed).root
            // Point every child of the root at `child`.
            let rootStart = Int(UInt32(truncatingIfNeeded: root)) * format.pageSize
            let children = Int(source.region.loadUnaligned(fromByteOffset: rootStart + PageLayout.countOffset, as: UInt16.self))
            #expect(children >= 2)
            for k in 0..<children {
                source.region.storeBytes(of: child.littleEndian, toByteOffset: rootStart + PageLayout.keyedBodyStart + k * PageLayout.keyedChildSize, as: UInt64.self)
            }
            let tree = try PagedBTree(rootPage: root, format: format, source: source)
            #expect(throwsMissing { _ = try tree.value(forKey: Array("key7".utf8)) })
            #expect(throwsMissing { _ = try tree.rank(of: Array("key7".utf8)) })
            #expect(throwsMissing { _ = try tree.element(at: 5) })
            #expect(throwsMissing { try tree.forEach { _, _ in true } })
            #expect(throwsMissing { try tree.forEachInKeyRange(from: KeyBound(Array("key7".utf8)), to: nil) { _, _ in true } })
            #expect(throwsMissing { var copy = tree; try copy.upsert([1], [2]) })
            #expect(throwsMissing { _ = try [tree].withEdgeEntry(ofTree: 0, last: true) { _, _ in } })
            #expect(throwsMissing { _ = try tree.withEdgeEntry(last: false) { _, _ in } })
            #expect(throwsMissing { try tree.findEach(batch(["key7", "key8", "key9"])) { _, _ in } })
        }
    }

    /// Random bytes in the mapped pages (no checksum is checked on this path) give typed
    /// errors, never a trap.
    @Test(arguments: [31, 32] as [UInt64])
    func damagedMappedPagesGiveTypedErrors(seed: UInt64) throws {
        var rng = SeededRandom(seed: seed)
        let format = PageFormat(pageSize: 256)
        var failures = 0
        for _ in 0..<60 {
            let source = RegionSource(format: format, capacity: 200, offersTable: true, hints: true)
            var keyed = PagedBTree(format: format, source: source)
            for i in 0..<300 { try keyed.upsert(Array("key\(i)".utf8), Array("value\(i)".utf8)) }
            let root = source.flush(keyed).root
            for _ in 0..<(1 + rng.next() % 4) {
                let page = 1 + Int(rng.next() % UInt64(source.written))
                let offset = page * format.pageSize + Int(rng.next() % UInt64(format.pageSize))
                source.region[offset] ^= UInt8(1) << (rng.next() % 8)
                if rng.next() % 3 == 0 { source.region[page * format.pageSize + Int(rng.next() % 32)] = UInt8(truncatingIfNeeded: rng.next()) }
            }
            guard let tree = try? PagedBTree(rootPage: root, format: format, source: source) else { failures += 1; continue }
            for body in [{ _ = try tree.value(forKey: Array("key\(rng.next() % 300)".utf8)) },
                         { _ = try tree.rank(of: Array("key\(rng.next() % 300)".utf8)) },
                         { try tree.forEach(reversed: rng.next() % 2 == 0) { _, _ in true } },
                         { try tree.forEachInKeyRange(from: KeyBound(Array("key\(rng.next() % 300)".utf8)), to: nil) { _, _ in true } },
                         { try tree.findEach(batch((0..<16).map { _ in "key\(rng.next() % 300)" })) { _, _ in } },
                         { try tree.validate() }] as [() throws -> Void] {
                do { try body() } catch is PageError { failures += 1 } catch { Issue.record("untyped \(error)") }
            }
        }
        #expect(failures > 0)
    }

    /// The edge read through a shared table remembers the leaf under each root and edge
    /// (`MappedPages.EdgeLeaves`) and, reading only that leaf afterwards, gives what the full
    /// descent gives: for two trees in one table, for a tree changed and written again (a new
    /// root; the old root still gives its old edges), and from several threads at once.
    @Test func theEdgeLeafIsRememberedPerRootAndGivesWhatTheDescentGives() throws {
        let format = PageFormat(pageSize: 256)
        let source = SharedTableSource(format: format, capacity: 600)
        var a = PagedBTree(format: format, source: source), b = PagedBTree(format: format, source: source)
        for i in 0..<300 {
            let digits = String(i)
            try a.upsert(Array(("a" + String(repeating: "0", count: 4 - digits.count) + digits).utf8), Array("value\(i)".utf8))
            try b.upsert(Array("b\(1000 - i)".utf8), Array("other\(i)".utf8))
        }
        let rootA = source.flush(a).root, rootB = source.flush(b).root
        a = try PagedBTree(rootPage: rootA, format: format, source: source)
        b = try PagedBTree(rootPage: rootB, format: format, source: source)
        #expect(a.height >= 3 && b.height >= 2)
        // A new version of `a`: a smaller first key, the last one removed, written again.
        var changed = a
        try changed.upsert(Array("a".utf8), Array("first".utf8))
        _ = try changed.remove(Array("a0299".utf8))
        let rootC = source.flush(changed).root
        let c = try PagedBTree(rootPage: rootC, format: format, source: source)
        #expect(rootC != rootA)
        let trees = [a, b, c]
        let edges = source.table.table.edges

        func viaTable(_ i: Int, last: Bool) throws -> [UInt8] {
            var found: [UInt8] = []
            #expect(try trees.withEdgeEntry(ofTree: i, last: last) { key, value in found = Array(key) + [0] + Array(value) })
            return found
        }
        func viaDescent(_ tree: PagedBTree, last: Bool) throws -> [UInt8] {
            var found: [UInt8] = []
            _ = try tree.withEdgeEntry(last: last) { key, value in found = Array(key) + [0] + Array(value) }
            return found
        }
        var expected: [[UInt8]] = []
        for (i, tree) in trees.enumerated() {
            for last in [false, true] {
                let want = try viaDescent(tree, last: last)
                expected.append(want)
                #expect(edges.leaf(under: tree.root.page, last: last) == nil, "tree \(i), last \(last): nothing remembered yet")
                #expect(try viaTable(i, last: last) == want)
                #expect(edges.leaf(under: tree.root.page, last: last) != nil, "tree \(i), last \(last): the leaf is remembered")
                #expect(try viaTable(i, last: last) == want, "tree \(i), last \(last): read from the remembered leaf")
            }
        }
        #expect(expected[4].starts(with: Array("a".utf8) + [0]) && expected[0] != expected[4])
        #expect(expected[5] != expected[1], "the changed tree's last key was removed")

        // Readers on several threads, the leaves forgotten first so that some remember them
        // while others read.
        let fresh = SharedTableSource(format: format, capacity: 600)
        fresh.region.region.copyMemory(from: UnsafeRawBufferPointer(source.region.region))
        for _ in 0..<source.region.written { _ = fresh.allocate() }
        let shared = try [rootA, rootB, rootC].map { root throws(PageError) in try PagedBTree(rootPage: root, format: format, source: fresh) }
        let mismatches = Mutex(0), wanted = expected
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            var wrong = 0
            for step in 0..<600 {
                let i = (step + thread) % 3, last = (step / 3 + thread) % 2 == 1
                var found: [UInt8] = []
                let ok = (try? shared.withEdgeEntry(ofTree: i, last: last) { key, value in found = Array(key) + [0] + Array(value) }) ?? false
                if !ok || found != wanted[i * 2 + (last ? 1 : 0)] { wrong += 1 }
            }
            mismatches.withLock { $0 += wrong }
        }
        #expect(mismatches.withLock { $0 } == 0)
    }

    /// The edge read through the table (`[PagedBTree].withEdgeEntry(ofTree:)`, which reads the
    /// tree's fields in place) checks pages as the descent through the source does. Each byte
    /// of the header, first slots and first child records of every page on both edges, changed
    /// by +1, -1 and its top bit in turn, and the edge slots, entry lengths and child records
    /// forged past their bounds: both reads give the same entry or the same error.
    @Test func theEdgeReadThroughTheTableAgreesWithTheFullChecks() throws {
        let format = PageFormat(pageSize: 256)
        let source = RegionSource(format: format, capacity: 200, offersTable: true, hints: false)
        var keyed = PagedBTree(format: format, source: source)
        for i in 0..<300 { try keyed.upsert(Array("key\(i)".utf8), Array("value\(i)".utf8)) }
        let root = source.flush(keyed).root
        #expect(try PagedBTree(rootPage: root, format: format, source: source).height >= 3)
        // The pages along both edges.
        var edgePages: [Int] = []
        for last in [false, true] {
            var page = Int(UInt32(truncatingIfNeeded: root))
            while true {
                if !edgePages.contains(page) { edgePages.append(page) }
                let start = page * format.pageSize
                guard source.region[start + PageLayout.levelOffset] > 0 else { break }
                let count = Int(source.region.loadUnaligned(fromByteOffset: start + PageLayout.countOffset, as: UInt16.self))
                let child = source.region.loadUnaligned(fromByteOffset: start + PageLayout.keyedBodyStart + (last ? count - 1 : 0) * PageLayout.keyedChildSize,
                                                        as: UInt64.self)
                page = Int(UInt32(truncatingIfNeeded: child))
            }
        }
        #expect(edgePages.count >= 5)
        var outcomes: [String: Int] = [:]
        /// Writes `bytes` at `at`, compares both reads at either edge, and puts the bytes back.
        func compare(writing bytes: [UInt8], at: Int, _ what: String) {
            let original = Array(source.region[at..<(at + bytes.count)])
            for (k, byte) in bytes.enumerated() { source.region[at + k] = byte }
            defer { for (k, byte) in original.enumerated() { source.region[at + k] = byte } }
            guard let tree = try? PagedBTree(rootPage: root, format: format, source: source) else { return }
            for last in [false, true] {
                var viaSource: [UInt8] = [], viaTable: [UInt8] = []
                let expected = edgeOutcome({ () throws(PageError) in
                    try tree.withEdgeEntry(last: last) { key, value in viaSource = Array(key) + Array(value) }
                }, { viaSource })
                let found = edgeOutcome({ () throws(PageError) in
                    try [tree].withEdgeEntry(ofTree: 0, last: last) { key, value in viaTable = Array(key) + Array(value) }
                }, { viaTable })
                #expect(found == expected, "\(what), last \(last)")
                outcomes[String(expected.prefix(5)), default: 0] += 1
            }
        }
        func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
        let size = format.pageSize
        for page in edgePages {
            let start = page * size
            // Every header, first-slot and first-child byte, nudged.
            for offset in 4..<48 {
                let original = source.region[start + offset]
                for changed in [original &+ 1, original &- 1, original ^ 0x80] {
                    compare(writing: [changed], at: start + offset, "page \(page), byte \(offset) = \(changed)")
                }
            }
            // The edge slots, their entries' lengths and the edge child records, forged.
            let count = Int(source.region.loadUnaligned(fromByteOffset: start + PageLayout.countOffset, as: UInt16.self))
            for i in Set([0, count - 1]) {
                if source.region[start + PageLayout.levelOffset] == 0 {
                    let slot = start + PageLayout.keyedBodyStart + i * PageLayout.slotSize
                    let entry = Int(source.region.loadUnaligned(fromByteOffset: slot, as: UInt16.self))
                    let dataStart = PageLayout.keyedBodyStart + count * PageLayout.slotSize
                    compare(writing: le(UInt16(dataStart - 1)), at: slot, "page \(page), slot \(i) before the entries")
                    compare(writing: le(UInt16(dataStart)), at: slot, "page \(page), slot \(i) at the shared prefixes")
                    // Into the header, where the subtree count reads as small lengths.
                    compare(writing: le(UInt16(PageLayout.subtreeCountOffset)), at: slot, "page \(page), slot \(i) in the header")
                    compare(writing: le(UInt16(size - 3)), at: slot, "page \(page), slot \(i) at the page's end")
                    compare(writing: le(UInt16(size)), at: start + entry, "page \(page), entry \(i)'s key length")
                    compare(writing: le(UInt16(size)), at: start + entry + 2, "page \(page), entry \(i)'s value length")
                } else {
                    let child = start + PageLayout.keyedBodyStart + i * PageLayout.keyedChildSize
                    compare(writing: le(UInt64(0)), at: child, "page \(page), child \(i)'s page 0")
                    compare(writing: le(UInt64(0)), at: child + 8, "page \(page), child \(i)'s count 0")
                    compare(writing: le(UInt64(1 << 48 + 1)), at: child + 8, "page \(page), child \(i)'s count past the limit")
                }
            }
        }
        #expect(outcomes["entry", default: 0] > 100 && outcomes["error", default: 0] > 100, "\(outcomes)")
    }

    /// `findEach` answers key by key as `value(forKey:)` does, in the batch's order — through
    /// the stepped search of mapped leaves with a hint function, and through lookups one by
    /// one without a table — over clean pages, dirty paths (keys added, replaced and removed
    /// after the flush), absent and repeated keys, and batches of 0 to 40 keys.
    @Test(arguments: [false, true])
    func findEachAnswersAsLookupsDo(offersTable: Bool) throws {
        var rng = SeededRandom(seed: offersTable ? 43 : 44)
        let format = PageFormat(pageSize: 256)
        let source = RegionSource(format: format, capacity: 900, offersTable: offersTable, hints: true)
        var keyed = PagedBTree(format: format, source: source)
        for i in 0..<600 { try keyed.upsert(Array("key\(i * 7 % 600)".utf8), Array("value\(i)".utf8)) }
        let clean = try PagedBTree(rootPage: source.flush(keyed).root, format: format, source: source)
        #expect(clean.height >= 3)
        var dirty = clean
        for i in stride(from: 0, to: 600, by: 37) { _ = try dirty.upsert(Array("key\(i)".utf8), Array("new\(i)".utf8)) }
        for i in 600..<620 { _ = try dirty.upsert(Array("key\(i)".utf8), Array("added\(i)".utf8)) }
        for i in stride(from: 5, to: 600, by: 41) { _ = try dirty.remove(Array("key\(i)".utf8)) }
        let hintsBefore = hintsGiven.load(ordering: .relaxed)
        var checked = 0, found = 0
        for tree in [clean, dirty] {
            for size in [0, 1, 2, 16, 40] {
                for _ in 0..<12 {
                    let names = (0..<size).map { _ in rng.next() % 9 == 0 ? "" : "key\(rng.next() % 700)" }
                    var order: [Int] = [], values: [[UInt8]?] = []
                    try tree.findEach(batch(names)) { i, value in
                        order.append(i)
                        values.append(value.map { Array($0) })
                    }
                    #expect(order == Array(0..<size))
                    let expected = try names.map { try tree.value(forKey: Array($0.utf8)) }
                    #expect(values == expected)
                    checked += size
                    found += expected.count { $0 != nil }
                }
            }
        }
        #expect(found > checked / 2 && found < checked)
        if offersTable { #expect(hintsGiven.load(ordering: .relaxed) > hintsBefore) }
    }
}

/// A batch of the UTF-8 bytes of `keys`.
/// "entry <bytes>", "empty" or "error <description>": what an edge read gave.
private func edgeOutcome(_ read: () throws(PageError) -> Bool, _ entry: () -> [UInt8]) -> String {
    do throws(PageError) { return try read() ? "entry \(entry())" : "empty" } catch { return "error \(error)" }
}

private func batch(_ keys: [String]) -> KeyBatch {
    var batch = KeyBatch()
    for key in keys { Array(key.utf8).withUnsafeBytes { batch.append($0) } }
    return batch
}
