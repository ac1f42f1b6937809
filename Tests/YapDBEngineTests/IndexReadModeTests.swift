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
    @Test(arguments: [0, 8])
    func publishedIndexFilesAreMappedUpToTheirPublishedLength(cachedPages: Int) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var options = EngineOptions()
        options.syncMode = .normal
        options.checkpointThreshold = 0
        options.indexPageSize = 512
        if cachedPages > 0 { options.indexReadMode = .cached(pages: cachedPages) }
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
}
