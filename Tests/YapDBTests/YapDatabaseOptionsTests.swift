import Foundation
import Testing
@testable import YapDB
import YapDBStorage

@Suite struct YapDatabaseOptionsTests {
    @Test func defaults() {
        let o = YapDatabaseOptions()
        #expect(o.createIfMissing)
        #expect(o.corruptAction == .fail)
        #expect(o.durability == .full)
        #expect(o.pragmaSynchronous == .full)
        #expect(o.compression == .lz4)
        #expect(o.maxValueSize == 1 << 30)
        #expect(o.checkpointThreshold == 64 << 20)
        #expect(o.compactionThreshold == 0.5)
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        #expect(o.indexReadMode == .cached(pages: YapDatabaseIndexReadMode.defaultCachedPages), "no maps by default on mobile")
        #else
        #expect(o.indexReadMode == .memoryMapped)
        #endif
        #expect(o.indexReadMode == YapDatabaseIndexReadMode.platformDefault)
        #expect(o.idleCheckpointDelay == 5)
    }

    /// `compactionThreshold` takes a fraction in 0...1; anything else (NaN, negative, over 1)
    /// stops the program when set (checked by this predicate, which the setter's precondition
    /// uses), instead of silently turning compaction off or rewriting every segment.
    @Test func compactionThresholdsOutsideZeroToOneAreRefused() {
        for valid in [0, 0.25, 0.5, 1] { #expect(YapDatabaseOptions.isValidCompactionThreshold(valid), "\(valid)") }
        for invalid in [Double.nan, -0.1, -.infinity, 1.01, .infinity] {
            #expect(!YapDatabaseOptions.isValidCompactionThreshold(invalid), "\(invalid)")
        }
        let options = YapDatabaseOptions()
        options.compactionThreshold = 0
        #expect(options.compactionThreshold == 0)
    }

    /// The idle delay reaches the engine (off at 0), and a quiet database writes its index
    /// changes in the background: the stats stop reporting unwritten changes without a
    /// checkpoint call (a bounded poll, not a timing).
    @Test func idleCheckpointDelayReachesTheEngineAndWritesTheIndex() throws {
        let off = DatabaseFixture.fastOptions()
        off.idleCheckpointDelay = 0
        let fixture = try DatabaseFixture(options: off)
        #expect(fixture.database.engine.options.idleCheckpointDelay == nil)
        let options = DatabaseFixture.fastOptions()
        options.idleCheckpointDelay = 0.02
        try fixture.reopen(options: options)
        #expect(fixture.database.engine.options.idleCheckpointDelay == .milliseconds(20))
        fixture.database.newConnection().readWrite { tx in
            for i in 0..<300 { tx.setObject("v\(i)", forKey: "k\(i)", inCollection: "c") }
        }
        var written = false
        for _ in 0..<2000 where !written {
            written = try !fixture.database.stats().hasUnwrittenIndexChanges
            if !written { Thread.sleep(forTimeInterval: 0.01) }
        }
        #expect(written, "the idle checkpoint wrote the index changes")
    }

    /// The index read mode reaches the engine (a page count below 1 acts as 1), survives
    /// `copy()`, and a database written in one mode reads back in the other: 2,000 rows read
    /// with `pread` through a cache of 2 pages, then through the map again.
    @Test func indexReadModeReachesTheEngineAndBothModesReadTheSameFiles() throws {
        let options = DatabaseFixture.fastOptions()
        options.indexReadMode = .cached(pages: 2)
        #expect(options.copy().indexReadMode == .cached(pages: 2))
        let fixture = try DatabaseFixture(options: options)
        #expect(fixture.database.engine.options.indexReadMode == .cached(pages: 2))
        #expect(fixture.database.options.indexReadMode == .cached(pages: 2))
        let keys = (0..<2000).map { "row-\(($0 * 7919) % 2000)" }
        fixture.database.newConnection().readWrite { tx in
            for key in keys { tx.setObject(key, forKey: key, inCollection: "c") }
        }
        try fixture.database.checkpoint()
        func check() {
            fixture.database.newConnection().read { tx in
                var wrong = 0
                for key in keys where tx.object(forKey: key, inCollection: "c") as? String != key { wrong += 1 }
                #expect(wrong == 0)
                #expect(tx.numberOfKeys(inCollection: "c") == 2000)
            }
        }
        check()
        let zero = DatabaseFixture.fastOptions()
        zero.indexReadMode = .cached(pages: 0)
        try fixture.reopen(options: zero)
        #expect(fixture.database.engine.options.indexReadMode == .cached(pages: 1))
        check()
        let mapped = DatabaseFixture.fastOptions()
        mapped.indexReadMode = .memoryMapped
        try fixture.reopen(options: mapped)
        #expect(fixture.database.engine.options.indexReadMode == .mapped)
        check()
    }

    @Test func rawValuesMatchYapDatabase() {
        #expect(YapDatabaseCorruptAction.fail.rawValue == 0)
        #expect(YapDatabaseCorruptAction.rename.rawValue == 1)
        #expect(YapDatabaseCorruptAction.delete.rawValue == 2)
        #expect(YapDatabasePragmaSynchronous.off.rawValue == 0)
        #expect(YapDatabasePragmaSynchronous.normal.rawValue == 1)
        #expect(YapDatabasePragmaSynchronous.full.rawValue == 2)
    }

    @Test func pragmaSynchronousIsAnAliasOfDurability() {
        let o = YapDatabaseOptions()
        o.pragmaSynchronous = .normal
        #expect(o.durability == .normal)
        o.durability = .off
        #expect(o.pragmaSynchronous == .off)
    }

    @Test func copyIsIndependent() {
        let a = YapDatabaseOptions()
        a.corruptAction = .rename
        a.maxValueSize = 10
        let b = a.copy()
        #expect(b.corruptAction == .rename && b.maxValueSize == 10)
        b.corruptAction = .delete
        b.compression = .none
        a.checkpointThreshold = 1
        #expect(a.corruptAction == .rename && a.compression == .lz4)
        #expect(b.checkpointThreshold == 64 << 20)
        #expect(a.values != b.values)
        #expect(YapDatabaseOptions(values: a.values).values == a.values)
    }

    @Test func connectionConfigDefaultsAndCopy() {
        let c = YapDatabaseConnectionConfig()
        #expect(c.objectCacheEnabled && c.metadataCacheEnabled)
        #expect(c.objectCacheLimit == 250 && c.metadataCacheLimit == 250)
        let people = [1, 2, 3]
        c.objectCacheLimit = UInt(people.count)
        c.metadataCacheEnabled = false
        let d = c.copy()
        d.objectCacheLimit = 0
        d.metadataCacheEnabled = true
        #expect(c.objectCacheLimit == 3 && !c.metadataCacheEnabled)
        #expect(d.objectCacheLimit == 0 && d.metadataCacheEnabled)
    }

    @Test func optionsCrossThreads() async {
        let o = YapDatabaseOptions()
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<8 { group.addTask { o.maxValueSize = i; _ = o.copy() } }
        }
        #expect((0..<8).contains(o.maxValueSize))
    }
}
