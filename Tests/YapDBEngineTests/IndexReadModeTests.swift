import Testing
import YapDBStorage
import YapDBIndex
@testable import YapDBEngine
import TestSupport

/// How the engine reads its index files, on real files: in `.mapped` mode every published
/// index file — the one the next checkpoint appends to included — is mapped up to exactly its
/// published length, so a lookup reads pages from a real `mmap` (no `pread`, no checksum per
/// visit); a newer checkpoint maps the longer prefix while an older snapshot keeps reading its
/// own mapping; in `.cached` mode nothing is mapped.
@Suite struct IndexReadModeTests {
    /// Options for a database on real files with 512-byte index pages, read in `mode`.
    static func options(_ mode: IndexReadMode) -> EngineOptions {
        var options = EngineOptions()
        options.syncMode = .normal
        options.checkpointThreshold = 0
        options.indexPageSize = 512
        options.indexReadMode = mode
        return options
    }

    @Test(arguments: [0, 8])
    func publishedIndexFilesAreMappedUpToTheirPublishedLength(cachedPages: Int) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let options = Self.options(cachedPages > 0 ? .cached(pages: cachedPages) : .mapped)
        let engine = try Engine.open(path: dir.file("db"), options: options)
        func load(_ range: Range<Int>, _ fill: UInt8) throws {
            _ = try engine.write { tx in
                for i in range { try EngineTesting.set(tx, "c", "k\(i)", [UInt8](repeating: fill, count: 16)) }
            }
            try engine.checkpoint()
        }
        func checkMappings() {
            let view = engine.index.store.view()
            let published = engine.index.published
            #expect(!published.isEmpty)
            for extent in published {
                #expect(view.mappedLength(extent.number) == (cachedPages == 0 ? Int(extent.length) : nil))
            }
        }
        try load(0..<1500, 1)
        checkMappings()
        let older = engine.snapshot()
        let olderLength = engine.index.store.view().mappedLength(engine.index.published.last!.number)
        // A second checkpoint appends to the same (active) file: a longer mapping, in a new view.
        try load(0..<300, 2)
        checkMappings()
        if cachedPages == 0 {
            #expect(engine.index.published.count == 1, "one index file, still being appended")
            #expect(engine.index.store.view().mappedLength(engine.index.published[0].number)! > olderLength!)
        }
        // The lookups of both snapshots read real mapped pages (or cached pread pages).
        let entry = try #require(try engine.snapshot().entry(collection: "c", key: "k7"))
        #expect(try engine.snapshot().object(collection: "c", key: "k7") == [UInt8](repeating: 2, count: 16))
        #expect(try older.object(collection: "c", key: "k7") == [UInt8](repeating: 1, count: 16))
        #expect(entry.object.length > 0)
        let root = try #require(engine.snapshot().keydir.rows.cleanRootPage)
        let page = try engine.index.store.page(IndexPageID(rawValue: root))
        #expect(page.isMapped == (cachedPages == 0))
        #expect(try engine.verify().isValid)
        try engine.close()
    }

    /// In the cached mode a page is checked once, when read: a damaged page is never cached,
    /// so every read through it fails, the second as the first.
    @Test func aDamagedPageFailsEveryReadInTheCachedMode() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let options = Self.options(.cached(pages: 64))
        var engine = try Engine.open(path: dir.file("db"), options: options)
        _ = try engine.write { tx in
            for i in 0..<200 { try EngineTesting.set(tx, "c", "k\(i)", [UInt8(i % 200)]) }
        }
        try engine.close()
        // Reopened (the open reads and caches the two root pages), then one byte of every
        // page's body changes on disk: the pages below the roots are read damaged.
        engine = try Engine.open(path: dir.file("db"), options: options)
        let cachedAtOpen = try #require(engine.index.store.cache?.count)
        let path = DatabaseFiles(mainPath: dir.file("db")).indexPath(1)
        let file = try PosixFileSystem.shared.open(path, mode: .readWrite)
        let size = try file.size()
        for page in stride(from: Int64(512), to: size, by: 512) {
            var byte = try file.readExactly(1, at: page + 300)
            byte[0] ^= 0x21
            try file.write(byte, at: page + 300)
        }
        try file.sync()
        file.close()
        for _ in 0..<2 {
            #expect(throws: EngineError.self) { try engine.snapshot().object(collection: "c", key: "k7") }
        }
        #expect(engine.index.store.cache?.count == cachedAtOpen, "no damaged page was cached")
        try engine.close()
    }
}
