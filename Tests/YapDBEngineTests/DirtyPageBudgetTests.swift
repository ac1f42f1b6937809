import Testing
import Foundation
import Synchronization
import YapDBStorage
import YapDBSimulatedDisk
import YapDBIndex
@testable import YapDBEngine
import TestSupport

/// The dirty-page budget (`EngineOptions.dirtyPageBudget`): between commits it triggers an
/// index checkpoint; inside one large transaction it spills the changed pages to unreferenced
/// places in the index files, so the pages held in memory stay near the budget. A spilled
/// transaction commits, survives a power cut, rolls back to exactly the state before, and is
/// never seen by readers before it commits. Both index read modes (mapped, and cached with
/// `pread`). Page counts come from the engine's own counts of dirty nodes, never from RSS.
@Suite struct DirtyPageBudgetTests {
    static let pageSize = 512

    static func options(_ disk: SimulatedDisk, budget: Int, cachedPages: Int) -> EngineOptions {
        var options = EngineTesting.options(disk, segmentLimit: 256 << 10)
        options.indexPageSize = pageSize
        options.indexFileSizeLimit = 64 << 10     // spills roll index files too
        options.dirtyPageBudget = budget
        options.dirtyPageCountWork = 1            // count after every change: the peak is exact
        options.writeBufferLimit = 2_000          // the buffer is applied every few dozen rows
        if cachedPages > 0 { options.indexReadMode = .cached(pages: cachedPages) }
        return options
    }

    static func rows(_ count: Int, seed: UInt64) -> [(key: String, value: [UInt8])] {
        var rng = SeededRandom(seed: seed)
        return (0..<count).map { i in ("k\(rng.next() % 1_000_000_000)-\(i)", rng.bytes(1 + Int(rng.next() % 30))) }
    }

    /// The most pages one application of the write buffer can dirty: each of its rows dirties
    /// at most a path in each tree (and a split adds a node per level).
    static func onePageSet(rows: Int, keydir: Keydir) -> Int {
        rows * 2 * (keydir.rows.height + keydir.rowids.height + 1)
    }

    @Test(arguments: [0, 16])
    func aLargeTransactionStaysWithinTheBudgetCommitsAndSurvivesAPowerCut(cachedPages: Int) throws {
        let disk = try EngineTesting.simulated()
        let budget = 32 << 10   // 64 pages of 512 bytes
        let options = Self.options(disk, budget: budget, cachedPages: cachedPages)
        let engine = try Engine.open(path: "/db/main", options: options)
        var model = Model()
        for (key, value) in Self.rows(200, seed: 1) { model["c", key] = Model.Row(object: value, metadata: nil) }
        _ = try engine.write { tx in for (key, row) in model.rows["c"]! { try EngineTesting.set(tx, "c", key, row.object) } }
        try engine.checkpoint()
        let before = model
        let lease = engine.acquireSnapshot()
        var largestBuffer = 0
        _ = try engine.write { tx in
            for (i, (key, value)) in Self.rows(6_000, seed: 2).enumerated() {
                try EngineTesting.set(tx, "c", key, value)
                model["c", key] = Model.Row(object: value, metadata: nil)
                largestBuffer = max(largestBuffer, tx.bufferedRowCount)
                if i % 1_500 == 1_499 {
                    // Readers meanwhile see the snapshot before the transaction, spilled pages or not.
                    #expect(try engine.snapshot().materialize() == before)
                    #expect(try lease.snapshot.materialize() == before)
                    #expect(try tx.object(collection: "c", key: key) == value, "the transaction reads its own rows")
                }
            }
            #expect(try tx.keydir.count(inCollection: "c") == model.rows["c"]!.count)
            #expect(tx.dirtyPages.spills > 3, "the transaction spilled (\(tx.dirtyPages.spills) times)")
        }
        let keydir = engine.snapshot().keydir
        let peak = engine.peakDirtyPages
        let bound = budget / Self.pageSize + Self.onePageSet(rows: largestBuffer, keydir: keydir)
        #expect(peak <= bound, "peak \(peak) dirty pages; budget \(budget / Self.pageSize) + one page set = \(bound)")
        #expect(peak * Self.pageSize < 6_000 * 40 / 2, "far below what the transaction changed")
        #expect(try engine.snapshot().materialize() == model)
        keydir.checkInvariants()
        #expect(try engine.verify().isValid)

        engine.abandon()   // a crash after the commit: no checkpoint names the spilled pages
        disk.powerCut(seed: 5, mode: .drop)
        let reopened = try Engine.open(path: "/db/main", options: options)
        #expect(reopened.openReport.commitsReplayed == 1)
        #expect(try reopened.snapshot().materialize() == model)
        #expect(try reopened.verify().isValid)
        try reopened.close()
        #expect(try Engine.open(path: "/db/main", options: options).snapshot().materialize() == model)
    }

    @Test(arguments: [0, 16])
    func aRollbackAfterSpillsLeavesTheDatabaseAsBeforeAndCompactionReclaimsThePages(cachedPages: Int) throws {
        let disk = try EngineTesting.simulated()
        var options = Self.options(disk, budget: 16 << 10, cachedPages: cachedPages)
        options.indexCompactionSlack = .max   // only compactIndex() copies
        let engine = try Engine.open(path: "/db/main", options: options)
        var model = Model()
        for (key, value) in Self.rows(300, seed: 3) { model["c", key] = Model.Row(object: value, metadata: nil) }
        _ = try engine.write { tx in for (key, row) in model.rows["c"]! { try EngineTesting.set(tx, "c", key, row.object) } }
        try engine.checkpoint()
        let indexBefore = try engine.stats().indexFileBytes
        struct Abort: Error {}
        #expect {
            try engine.write { tx in
                for (key, value) in Self.rows(4_000, seed: 4) { try EngineTesting.set(tx, "c", key, value) }
                _ = try tx.keydir.count(inCollection: "c")
                #expect(tx.dirtyPages.spills > 0)
                throw Abort()
            }
        } throws: { EngineTesting.bodyThrew($0, Abort.self) }
        _ = try engine.write { tx in
            for (key, value) in Self.rows(4_000, seed: 6) { try EngineTesting.set(tx, "d", key, value) }
            _ = try tx.keydir.count(inCollection: "d")
            #expect(tx.dirtyPages.spills > 0)
            tx.rollback()
        }
        #expect(try engine.snapshot().materialize() == model)
        engine.snapshot().keydir.checkInvariants()
        // The spilled pages are garbage: published with the next checkpoint's lengths, dead.
        _ = try engine.write { tx in try EngineTesting.set(tx, "c", "one more", [1]) }
        model["c", "one more"] = Model.Row(object: [1], metadata: nil)
        try engine.checkpoint()
        let stats = try engine.stats()
        #expect(stats.indexFileBytes > indexBefore + 16 << 10, "the rolled-back spills are in the files")
        #expect(stats.indexDeadBytes > 16 << 10)
        try engine.compactIndex()
        let compacted = try engine.stats()
        #expect(compacted.indexDeadBytes == 0, "index compaction reclaimed them")
        #expect(compacted.indexFileBytes <= indexBefore + 4 * Int64(Self.pageSize))
        #expect(try engine.verify().isValid)
        try engine.close()
        #expect(try Engine.open(path: "/db/main", options: options).snapshot().materialize() == model)
    }

    @Test(arguments: [0, 16])
    func aBulkLoadWritesItsNewLeavesAsItBuildsThem(cachedPages: Int) throws {
        let disk = try EngineTesting.simulated()
        let budget = 16 << 10   // 32 pages
        var options = Self.options(disk, budget: budget, cachedPages: cachedPages)
        options.writeBufferLimit = 1 << 20     // one buffer: the commit's merge rebuild builds everything
        let engine = try Engine.open(path: "/db/main", options: options)
        var model = Model()
        _ = try engine.write { tx in
            for (key, value) in Self.rows(5_000, seed: 8) {
                try EngineTesting.set(tx, "c", key, value)
                model["c", key] = Model.Row(object: value, metadata: nil)
            }
            #expect(tx.bufferedRowCount == 5_000)
        }
        #expect(engine.spillCount == 1, "the rebuild wrote its leaves as it went")
        let keydir = engine.snapshot().keydir
        #expect(keydir.rows.height >= 3)
        let peak = engine.peakDirtyPages
        #expect(try engine.snapshot().materialize() == model)
        keydir.checkInvariants()
        #expect(try engine.verify().isValid)
        engine.abandon()
        disk.powerCut(seed: 9, mode: .drop)
        let reopened = try Engine.open(path: "/db/main", options: options)
        #expect(try reopened.snapshot().materialize() == model)
        #expect(try reopened.verify().isValid)
        try reopened.checkpoint()
        // Held in memory: half the budget of leaves per tree (and the last two of each), and
        // the branches over all of them (under an eighth of the pages with 512-byte pages).
        let pages = try reopened.stats().indexPages
        #expect(peak <= budget / Self.pageSize + 4 + pages / 8, "peak \(peak) dirty pages of \(pages)")
        #expect(peak < pages / 3)
        try reopened.close()
    }

    @Test func aLargeTransactionIsChargedItsDirtyNodesHeapBytes() throws {
        let disk = try EngineTesting.simulated()
        let budget = 64 << 10   // 128 pages of 512 bytes
        let engine = try Engine.open(path: "/db/main", options: Self.options(disk, budget: budget, cachedPages: 0))
        var largestBuffer = 0
        var counts = 0
        _ = try engine.write { tx in
            for (key, value) in Self.rows(6_000, seed: 11) {
                try EngineTesting.set(tx, "c", key, value)
                largestBuffer = max(largestBuffer, tx.bufferedRowCount)
                let gauge = tx.dirtyPages
                guard gauge.countedPages > 0 else { continue }
                counts += 1
                // The charge is the nodes' heap bytes: every dirty node holds its object and
                // arrays beside what its page would hold.
                #expect(gauge.countedBytes >= gauge.countedPages * KeyedNode.objectBytes)
                #expect(gauge.counted * Self.pageSize >= gauge.countedBytes)
            }
            #expect(tx.dirtyPages.spills > 3, "the transaction spilled (\(tx.dirtyPages.spills) times)")
        }
        #expect(counts > 0)
        // A spill comes at the first count past the budget: the peak is the budget plus what one
        // application of the write buffer can dirty (a node of a 512-byte page holds well under
        // 4 pages' worth of heap).
        let slack = Self.onePageSet(rows: largestBuffer, keydir: engine.snapshot().keydir) * 4 * Self.pageSize
        let peakBytes = engine.peakDirtyBytes
        #expect(peakBytes >= budget, "the budget was reached before each spill")
        #expect(peakBytes <= budget + slack, "peak \(peakBytes) bytes; budget \(budget) + slack \(slack)")
        // Charged by heap bytes, the budget holds fewer pages than its size in pages.
        #expect(engine.peakDirtyPages * Self.pageSize < peakBytes)
        try engine.close()
    }

    @Test func dirtyPagesTriggerACheckpointBetweenCommits() throws {
        let disk = try EngineTesting.simulated()
        let budget = 8 << 10   // 16 pages
        let engine = try Engine.open(path: "/db/main", options: Self.options(disk, budget: budget, cachedPages: 0))
        var model = Model()
        for (n, batch) in Self.rows(1_000, seed: 7).chunks(of: 5).enumerated() {
            _ = try engine.write { tx in
                for (key, value) in batch { try EngineTesting.set(tx, "c", key, value) }
            }
            for (key, value) in batch { model["c", key] = Model.Row(object: value, metadata: nil) }
            let dirty = engine.dirtyPageCount
            let bound = budget / Self.pageSize + Self.onePageSet(rows: 5, keydir: engine.snapshot().keydir)
            #expect(dirty <= bound, "after commit \(n): \(dirty) dirty pages, bound \(bound)")
        }
        #expect(engine.writer.withLock { $0.checkpointNumber } > 5, "the budget made checkpoints")
        #expect(engine.spillCount == 0, "small transactions never spill")
        #expect(try engine.snapshot().materialize() == model)
        try engine.close()
    }

    @Test func extensionTreesSpillWithTheKeyDirectory() throws {
        let disk = try EngineTesting.simulated()
        let options = Self.options(disk, budget: 16 << 10, cachedPages: 0)
        let engine = try Engine.open(path: "/db/main", options: options)
        var expected: [String: String] = [:]
        _ = try engine.write { tx in
            tx.extensions["t"] = TreeState(tag: "v1", tree: PagedBTree(format: tx.keydir.format, source: tx.keydir.rows.source))
            for i in 0..<3_000 {
                var state = tx.extensions.removeValue(forKey: "t") as! TreeState
                _ = try state.tree.upsert(Array("key \(i * 7919 % 3_000)".utf8), Array("value \(i)".utf8))
                expected["key \(i * 7919 % 3_000)"] = "value \(i)"
                tx.extensions["t"] = state
            }
            #expect(tx.dirtyPages.spills > 0)
            tx.markChanged()
        }
        let bound = (16 << 10) / Self.pageSize + 2 * 4
        #expect(engine.peakDirtyPages <= bound)
        let state = try #require(engine.snapshot().extensions["t"] as? TreeState)
        #expect(try state.contents() == expected)
        state.tree.checkInvariants()
        try engine.checkpoint()
        try engine.close()
        let reopened = try Engine.open(path: "/db/main", options: options)
        let claimed = try #require(reopened.claimExtensionRoots("t"))
        #expect(try TreeState(claimed: claimed)?.contents() == expected)
        try reopened.close()
    }
}

extension TreeState {
    var unwrittenPageCount: Int { tree.unwrittenPageCount }
}

extension Array {
    /// Consecutive pieces of at most `size` elements.
    func chunks(of size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
