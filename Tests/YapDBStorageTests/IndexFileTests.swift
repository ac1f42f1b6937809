#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
import TestSupport
@testable import YapDBStorage
import YapDBSimulatedDisk

/// Index files and the page store (docs/format.md §9, §10): pages written, synced and published
/// read back by id after a reopen, through a memory map and through `pread` + cache.
@Suite struct IndexFileTests {
    static let modes: [IndexReadMode] = [.mapped, .cached(pages: 3)]

    func simulated() throws -> IndexFileHarness {
        let disk = SimulatedDisk(seed: 1)
        try disk.mkdir("/db")
        return IndexFileHarness(fs: disk, mainPath: "/db/main")
    }

    @Test(arguments: modes)
    func pagesReadBackAfterReopenOnTheSimulatedDisk(mode: IndexReadMode) throws {
        let harness = try simulated()
        let (first, writer) = try harness.cycle(after: nil, count: 10)
        writer.close()
        // 10 pages of 256 bytes, 4 per file after the header page: files 1, 2, 3.
        #expect(first.root.files.map(\.number) == [1, 2, 3])
        #expect(first.root.files.map(\.length) == [1280, 1280, 768])
        let loaded = try #require(try harness.load())
        #expect(loaded == first.root)
        let store = try harness.store(loaded, mode: mode)
        #expect(IndexFileHarness.mismatches(store.view(), first.pages).isEmpty)
        #expect(store.view().fileNumbers == [1, 2, 3])
        for number: UInt32 in 1...3 { #expect(store.view().isMapped(number) == (mode == .mapped)) }
    }

    @Test(arguments: modes)
    func pagesReadBackAfterReopenOnPosixFiles(mode: IndexReadMode) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let harness = IndexFileHarness(fs: PosixFileSystem.shared, mainPath: dir.file("db"))
        let (first, writer) = try harness.cycle(after: nil, count: 7)
        writer.close()
        let (second, resumed) = try harness.cycle(after: first, count: 6)
        resumed.close()
        let loaded = try #require(try harness.load())
        #expect(loaded == second.root)
        let store = try harness.store(loaded, mode: mode)
        let view = store.view()
        #expect(IndexFileHarness.mismatches(view, second.pages).isEmpty)
        if mode == .mapped {
            // A real memory map, not a copy.
            let page = try view.page(second.root.trees[0].root)
            #expect(view.isMapped(page.id.file))
        }
        // The view keeps its files readable after the store retires them.
        store.retire(view.fileNumbers)
        #expect(throws: IndexFileError.self) { try store.page(second.root.trees[0].root) }
        #expect(IndexFileHarness.mismatches(view, second.pages).isEmpty)
    }

    @Test func posixMapIsAMemoryMapAndRefusesToPassTheEnd() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let file = try PosixFileSystem.shared.open(dir.file("f"), mode: .createNew)
        try file.write([UInt8](1...200), at: 0)
        let mapping = try file.map(length: 150)
        file.close()
        #expect(mapping.backing == .memoryMap)
        #expect(Array(mapping.bytes) == Array(1...150))  // still valid after close
        let again = try PosixFileSystem.shared.open(dir.file("f"), mode: .readOnly)
        #expect(failure { try again.map(length: 201) } == IOFailure(errno: EINVAL, operation: "mmap", path: dir.file("f")))
        #expect(try again.map(length: 0).count == 0)
    }

    @Test func simulatedMapIsACopyOfTheCurrentImage() throws {
        let harness = try simulated()
        let disk = try #require(harness.fs as? SimulatedDisk)
        let file = try disk.open("/db/f", mode: .createNew)
        try file.write([1, 2, 3, 4], at: 0)
        let mapping = try file.map(length: 3)
        try file.write([9, 9, 9, 9], at: 0)
        #expect(mapping.backing == .copy && Array(mapping.bytes) == [1, 2, 3])
        #expect(failure { try file.map(length: 5) }?.errno == EINVAL)
        disk.crashAfter(operations: 0)
        #expect(failure { try file.map(length: 1) }?.operation == "power lost")
    }

    /// The file still being appended is mapped up to its published length only; publishing
    /// more of it maps it again, longer, in a new view; older views keep the shorter mapping.
    @Test(arguments: modes)
    func theActiveFileIsMappedUpToItsPublishedLength(mode: IndexReadMode) throws {
        let harness = try simulated()
        let (first, writer) = try harness.cycle(after: nil, count: 3)
        let store = try harness.store(first.root, mode: mode)
        #expect(writer.activeNumber == 1)
        #expect(store.view().mappedLength(1) == (mode == .mapped ? 4 * 256 : nil))
        let before = store.view()
        // More pages: file 1 fills (4 data pages) and the writer rolls to file 2. Before they
        // are adopted, the store maps nothing past what was published.
        var pages = first.pages
        for index in 0..<3 { pages[try writer.append(harness.page(sequence: 9, index: index))] = harness.page(sequence: 9, index: index) }
        let extents = try writer.sync()
        #expect(store.view().mappedLength(1) == (mode == .mapped ? 4 * 256 : nil))
        try store.adopt(extents)
        #expect(writer.activeNumber == 2)
        #expect(store.view().mappedLength(1) == (mode == .mapped ? 5 * 256 : nil))
        #expect(store.view().mappedLength(2) == (mode == .mapped ? 3 * 256 : nil))
        #expect(before.mappedLength(1) == (mode == .mapped ? 4 * 256 : nil))
        #expect(IndexFileHarness.mismatches(store.view(), pages).isEmpty)
        // The older view still reads what it knew, and refuses what it did not.
        #expect(IndexFileHarness.mismatches(before, first.pages).isEmpty)
        let late = pages.keys.max()!
        #expect(throws: IndexFileError.badPageID(late, reason: .unknownFile(2))) { try before.page(late) }
        writer.close()
    }

    /// On real files (a real `mmap`): the active file's published prefix is mapped while a
    /// checkpoint that never publishes writes past it and a resuming writer (as after a crash,
    /// or the cut-back after a failed sync) truncates that tail away, then appends again. The
    /// mapped view reads every published page throughout; a truncation below the mapped
    /// length would make these reads fault (`SIGBUS`) or differ.
    @Test func truncatingAnUnpublishedTailNeverTouchesTheMappedPrefix() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var harness = IndexFileHarness(fs: PosixFileSystem.shared, mainPath: dir.file("db"))
        harness.fileSizeLimit = 256 * 64
        let (first, writer) = try harness.cycle(after: nil, count: 5)
        let store = try harness.store(first.root, mode: .mapped)
        let mapped = store.view()
        #expect(mapped.mappedLength(1) == 6 * 256)
        #expect(try mapped.page(first.root.trees[0].root).isMapped)
        // A checkpoint that never publishes: 20 pages past the published length, synced.
        for index in 0..<20 { _ = try writer.append(harness.page(sequence: 50, index: index)) }
        try writer.sync()
        writer.close()
        #expect(IndexFileHarness.mismatches(mapped, first.pages).isEmpty)
        // The next writer resumes at the published length, cutting the tail, and appends.
        let (second, resumed) = try harness.cycle(after: first, count: 3)
        #expect(second.root.files.map(\.length) == [9 * 256])
        #expect(IndexFileHarness.mismatches(mapped, first.pages).isEmpty)
        try store.adopt(second.root.files.map(\.extent))
        #expect(store.view().mappedLength(1) == 9 * 256)
        #expect(IndexFileHarness.mismatches(store.view(), second.pages).isEmpty)
        resumed.close()
    }

    @Test func resumingCutsAnUnpublishedTailAndContinuesThePageNumbers() throws {
        let harness = try simulated()
        let (first, writer) = try harness.cycle(after: nil, count: 2)
        // Pages of a checkpoint that never publishes.
        _ = try writer.append(harness.page(sequence: 77, index: 0))
        try writer.sync()
        writer.close()
        let disk = try #require(harness.fs as? SimulatedDisk)
        #expect(disk.currentBytes(of: harness.files.indexPath(1))?.count == 4 * 256)
        let (second, resumed) = try harness.cycle(after: first, count: 1)
        resumed.close()
        #expect(second.root.trees[1].root == IndexPageID(file: 1, page: 3))
        let store = try harness.store(try #require(try harness.load()), mode: .mapped)
        #expect(IndexFileHarness.mismatches(store.view(), second.pages).isEmpty)
    }

    @Test(arguments: modes)
    func badPageIDsGetTypedErrors(mode: IndexReadMode) throws {
        let harness = try simulated()
        let (first, writer) = try harness.cycle(after: nil, count: 2)
        writer.close()
        let view = try harness.store(first.root, mode: mode).view()
        #expect(throws: IndexFileError.badPageID(.none, reason: .invalidPageID)) { try view.page(.none) }
        let headerPage = IndexPageID(file: 1, page: 0)
        #expect(throws: IndexFileError.badPageID(headerPage, reason: .invalidPageID)) { try view.page(headerPage) }
        let unknown = IndexPageID(file: 9, page: 1)
        #expect(throws: IndexFileError.badPageID(unknown, reason: .unknownFile(9))) { try view.page(unknown) }
        let past = IndexPageID(file: 1, page: 3)
        #expect(throws: IndexFileError.badPageID(past, reason: .pastEnd(fileLength: 768))) { try view.page(past) }
        let far = IndexPageID(file: 1, page: UInt32.max)
        #expect(throws: IndexFileError.badPageID(far, reason: .pastEnd(fileLength: 768))) { try view.page(far) }
    }

    /// A view with a gap in its file numbers (file 2 retired) finds files by number on both
    /// sides of the gap, and reports the gap, and numbers below and above, as unknown files;
    /// `mappedFiles` lists each mapped file with its vouched length, or nil in the cached mode.
    @Test(arguments: modes)
    func filesAreFoundByNumberAcrossAGap(mode: IndexReadMode) throws {
        let harness = try simulated()
        let (first, writer) = try harness.cycle(after: nil, count: 10)
        writer.close()
        let store = try harness.store(first.root, mode: mode)
        store.retire([2])
        let view = store.view()
        #expect(view.fileNumbers == [1, 3])
        let kept = first.pages.filter { $0.key.file != 2 }
        #expect(kept.count == 6)
        #expect(IndexFileHarness.mismatches(view, kept).isEmpty)
        for number: UInt32 in [0, 2, 4, 1 << 20, UInt32.max] {
            let id = IndexPageID(file: number, page: 1)
            let reason: IndexDamage = number == 0 ? .invalidPageID : .unknownFile(number)
            #expect(throws: IndexFileError.badPageID(id, reason: reason)) { try view.page(id) }
        }
        let mapped = view.mappedFiles?.sorted { $0.number < $1.number }.map { "\($0.number):\($0.bytes.count)" }
        #expect(mapped == (mode == .mapped ? ["1:1280", "3:768"] : nil))
    }

    /// A page read with a check is cached only when the check passes, and a hit then says it
    /// was checked; one that fails is never cached (read, and failed, on every visit).
    @Test func theCacheKeepsOnlyPagesThatPassedTheReadersCheck() throws {
        let harness = try simulated()
        let (first, writer) = try harness.cycle(after: nil, count: 3)
        writer.close()
        let store = try harness.store(first.root, mode: .cached(pages: 8))
        let ids = first.pages.keys.sorted()
        let view = store.view()
        let good = try view.page(ids[0], check: { _ in true })
        #expect(good.isChecked)
        #expect(try view.page(ids[0]).isChecked, "a hit of a checked page")
        let bad = try view.page(ids[1], check: { _ in false })
        #expect(!bad.isChecked && bad.array == first.pages[ids[1]])
        #expect(store.cache?.count == 1, "the page that failed its check is not cached")
        var checks = 0
        _ = try view.page(ids[1], check: { _ in checks += 1; return false })
        #expect(checks == 1, "read and checked again")
        #expect(!(try view.page(ids[2])).isChecked, "no check given: cached unchecked")
        #expect(store.cache?.count == 2)
    }

    @Test func theCacheHoldsAtMostItsCapacityAndServesHitsWithoutReading() throws {
        let harness = try simulated()
        let disk = try #require(harness.fs as? SimulatedDisk)
        let (first, writer) = try harness.cycle(after: nil, count: 4)
        writer.close()
        let store = try harness.store(first.root, mode: .cached(pages: 2))
        let ids = first.pages.keys.sorted()
        _ = try store.page(ids[0])
        _ = try store.page(ids[1])
        _ = try store.page(ids[0])  // ids[0] most recent; ids[1] least
        _ = try store.page(ids[2])  // drops ids[1]
        #expect(store.cache?.count == 2)
        disk.inject(Fault(.read, persistent: true, effect: .error(EIO)))
        #expect(try store.page(ids[0]).array == first.pages[ids[0]])
        #expect(try store.page(ids[2]).array == first.pages[ids[2]])
        #expect(throws: IndexFileError.io(IOFailure(errno: EIO, operation: "pread", path: harness.files.indexPath(1)))) {
            try store.page(ids[1])
        }
    }

    @Test func pageIDEncodingIsFileHighPageLow() {
        let id = IndexPageID(file: 3, page: 7)
        #expect(id.rawValue == 3 << 32 | 7)
        #expect(id.file == 3 && id.page == 7 && id.isValid)
        #expect(id.offset(pageSize: 4096) == 7 * 4096)
        #expect(IndexPageID(file: 1, page: UInt32.max) < IndexPageID(file: 2, page: 1))
        #expect(!IndexPageID.none.isValid)
    }

    @Test func indexFilesAreListedByNumber() throws {
        let harness = try simulated()
        let (_, writer) = try harness.cycle(after: nil, count: 9)
        writer.close()
        #expect(try harness.files.listIndexFiles(harness.fs) == [1, 2, 3])
    }
}
