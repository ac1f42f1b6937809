import Testing
import YapDBStorage
import YapDBSimulatedDisk
import YapDBIndex
@testable import YapDBEngine
import TestSupport

/// `verify(progress:)` reports how far it got; `stats()` counts index pages, dirty pages, and
/// live and dead bytes per kind of file.
@Suite struct VerifyProgressAndStatsTests {
    static func options(_ disk: SimulatedDisk) -> EngineOptions {
        var options = EngineTesting.options(disk, segmentLimit: 64 << 10)
        options.indexPageSize = 512
        return options
    }

    /// Writes `rows` rows "k0"… in commits of 100.
    static func load(_ engine: Engine, rows: Range<Int>, value: UInt8 = 1) throws {
        for start in stride(from: rows.lowerBound, to: rows.upperBound, by: 100) {
            _ = try engine.write { tx in
                for i in start..<min(start + 100, rows.upperBound) {
                    try EngineTesting.set(tx, "c", "k\(i)", [UInt8](repeating: value, count: 20), metadata: i % 3 == 0 ? [value] : nil)
                }
            }
        }
    }

    /// Progress comes several times, every figure only grows, and the last report ends at the
    /// totals the report gives: every record listed is read, every commit after the
    /// checkpoint replayed. Verifying without a callback finds the same.
    @Test func verifyProgressGrowsAndEndsAtTheTotal() throws {
        let disk = try EngineTesting.simulated()
        let engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        try Self.load(engine, rows: 0..<3000)
        try engine.checkpoint()
        try Self.load(engine, rows: 2000..<4000, value: 2)   // replayed after the checkpoint
        var reports: [VerifyProgress] = []
        let report = try engine.verify { reports.append($0) }
        #expect(report.isValid, "\(report.problems)")
        #expect(reports.count >= 3, "\(reports.count) reports")
        for (earlier, later) in zip(reports, reports.dropFirst()) {
            #expect(later.pagesWalked >= earlier.pagesWalked)
            #expect(later.commitsReplayed >= earlier.commitsReplayed)
            #expect(later.recordsRead >= earlier.recordsRead)
            #expect(later.recordsTotal >= earlier.recordsTotal)
        }
        let last = try #require(reports.last)
        #expect(last.recordsTotal == 4000 + 4000 / 3 + 1)  // objects, plus metadata of every third row
        #expect(last.recordsRead == last.recordsTotal)
        #expect(last.recordsRead == report.recordsChecked)
        #expect(last.commitsReplayed == report.commitsChecked && last.commitsReplayed == 20)
        #expect(last.pagesWalked > 100)
        #expect(reports.dropLast().allSatisfy { $0.recordsRead < last.recordsTotal })
        #expect(try engine.verify() == report)
        try engine.close()
    }

    /// A damaged record is still counted as read (and reported), so the last report still
    /// ends at the total.
    @Test func verifyProgressEndsAtTheTotalWhenARecordIsBad() throws {
        let disk = try EngineTesting.simulated()
        let engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        try Self.load(engine, rows: 0..<300)
        let entry = try #require(try engine.snapshot().entry(collection: "c", key: "k7"))
        let file = try disk.open(DatabaseFiles(mainPath: "/db/main").segmentPath(entry.object.segment), mode: .readWrite)
        let last = Int64(entry.object.offset) + Int64(entry.object.length) - 1
        var byte = try file.readExactly(1, at: last)
        byte[0] ^= 0x40
        try file.write(byte, at: last)
        file.close()
        var final: VerifyProgress?
        let report = try engine.verify { final = $0 }
        #expect(!report.isValid)
        #expect(final?.recordsTotal == 400 && final?.recordsRead == 400)
        #expect(report.recordsChecked == 399)
    }

    /// Index pages, dirty pages, live and dead bytes per kind, through a load, a checkpoint,
    /// overwrites and an index compaction.
    @Test func statsCountIndexPagesDirtyPagesAndLiveAndDeadBytes() throws {
        let disk = try EngineTesting.simulated()
        let engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        func check(_ stats: EngineStats) {
            #expect(stats.segmentBytes == stats.liveBytes + stats.deadBytes)
            #expect(stats.indexFileBytes == stats.indexLiveBytes + stats.indexDeadBytes)
            #expect(stats.indexPages * 512 == Int(stats.indexFileBytes) && stats.indexPageSize == 512)
            #expect(stats.fileBytes == Int64(Format.mainFileSize) + stats.segmentBytes + stats.indexFileBytes
                    + stats.checkpointBytes + stats.deadCheckpointBytes)
            #expect(stats.hasUnwrittenIndexChanges == (stats.unwrittenIndexPages > 0))
        }
        try Self.load(engine, rows: 0..<2000)
        let loaded = try engine.stats()
        check(loaded)
        #expect(loaded.indexFileBytes == 0 && loaded.unwrittenIndexPages > 20, "no checkpoint yet: every page dirty")
        #expect(loaded.checkpointBytes == 0)

        try engine.checkpoint()
        let first = try engine.stats()
        check(first)
        #expect(first.unwrittenIndexPages == 0)
        // The first checkpoint wrote each page once (and a header page): all of it is live,
        // and every dirty page counted before is a page now.
        #expect(first.indexDeadBytes == 0)
        #expect(first.indexPages == loaded.unwrittenIndexPages + 1)
        #expect(first.checkpointBytes > 0 && first.deadCheckpointBytes == 0)

        // Overwrite a tenth of the rows: their leaves (and paths) are dirty again; after the
        // checkpoint the versions they replaced are dead.
        try Self.load(engine, rows: 0..<200, value: 3)
        let dirty = try engine.stats()
        check(dirty)
        #expect(dirty.unwrittenIndexPages > 0 && dirty.unwrittenIndexPages < first.indexPages)
        #expect(dirty.indexDeadBytes > 0, "pages replaced by unwritten ones no longer count as live")
        try engine.checkpoint()
        let second = try engine.stats()
        check(second)
        #expect(second.unwrittenIndexPages == 0)
        #expect(second.indexFileBytes == first.indexFileBytes + Int64(dirty.unwrittenIndexPages) * 512)
        #expect(second.indexDeadBytes == Int64(dirty.unwrittenIndexPages) * 512, "each rewritten page replaced one")
        #expect(second.deadBytes > first.deadBytes, "old values in the log are dead")

        try engine.compactIndex()
        let compacted = try engine.stats()
        check(compacted)
        #expect(compacted.indexDeadBytes == 0)
        // The copy is repacked into full pages: no larger than the first checkpoint's, all live.
        #expect(compacted.indexLiveBytes <= first.indexLiveBytes)
        #expect(compacted.indexLiveBytes == compacted.indexFileBytes)
        try engine.close()
    }
}
