import Testing
import YapDBStorage
import YapDBSimulatedDisk
import YapDBIndex
@testable import YapDBEngine

/// Per-extension coverage (docs/format.md §3): an extension data record covers its commit and
/// every commit before it, so an extension's claim hands it only the rows changed after its
/// last record — from the log at open, from the commits made before it registers, and across a
/// checkpoint that carries its records.
@Suite struct ExtensionCoverageTests {
    static func options(_ disk: SimulatedDisk) -> EngineOptions {
        EngineTesting.options(disk, segmentLimit: 64 << 10)
    }

    static func pairs(_ keys: [String]) -> Set<CollectionKeyPair> {
        Set(keys.map { CollectionKeyPair(collection: "c", key: $0) })
    }

    /// One commit: rows set (value) or removed (nil), and records named as given.
    static func commit(_ engine: Engine, _ rows: [String: String?], records: [String] = []) throws {
        _ = try engine.write { tx in
            for (key, value) in rows.sorted(by: { $0.key < $1.key }) {
                if let value { try EngineTesting.set(tx, "c", key, Array(value.utf8)) } else { try tx.remove(collection: "c", key: key) }
            }
            for name in records { try tx.appendExtensionData(name: name, payload: [UInt8(name.utf8.count)]) }
            tx.markChanged()
        }
    }

    @Test func aClaimGetsOnlyTheRowsChangedAfterItsLastRecord() throws {
        let disk = try EngineTesting.simulated()
        var engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        try Self.commit(engine, ["a": "1", "b": "1"])
        try Self.commit(engine, ["c": "1"], records: ["x:r"])
        try Self.commit(engine, ["d": "1"])
        try Self.commit(engine, ["a": nil], records: ["x:r", "x:s"])
        try Self.commit(engine, ["e": "1"], records: ["x:s"])
        try Self.commit(engine, ["f": "1", "b": nil])
        engine.abandon()
        disk.powerCut(seed: 1, mode: .drop)

        engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        // Made before either registers: uncovered for both.
        try Self.commit(engine, ["g": "1"])
        let r = try #require(engine.claimExtensionRecords("x:r"))
        #expect(r.records == [[3], [3]])
        #expect(r.changedKeys == Self.pairs(["e", "f", "b", "g"]), "rows after r's last record only")
        #expect(!r.removedRowids.isEmpty && !r.rowChangesLost)
        let s = try #require(engine.claimExtensionRecords("x:s"))
        #expect(s.records == [[3], [3]])
        #expect(s.changedKeys == Self.pairs(["f", "b", "g"]))
        #expect(engine.claimExtensionRecords("x:t") == nil, "no record, nothing to claim")
        try engine.close()
    }

    @Test func aCheckpointCarriesRecordsAndMarksRowsLostOnlyWhenUncovered() throws {
        let disk = try EngineTesting.simulated()
        var engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        try Self.commit(engine, ["a": "1"], records: ["x:covered", "x:uncovered"])
        try Self.commit(engine, ["b": "1"], records: ["x:covered"])
        engine.abandon()
        disk.powerCut(seed: 2, mode: .drop)

        // Unclaimed at the checkpoint: "covered" has no row after its last record, "uncovered"
        // has b, which the checkpoint's replay position moves past.
        engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        try engine.checkpoint()
        try Self.commit(engine, ["c": "1"])
        engine.abandon()
        disk.powerCut(seed: 3, mode: .drop)

        engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        let covered = try #require(engine.claimExtensionRecords("x:covered"))
        #expect(covered.records.count == 2 && !covered.rowChangesLost)
        #expect(covered.changedKeys == Self.pairs(["c"]))
        let uncovered = try #require(engine.claimExtensionRecords("x:uncovered"))
        #expect(uncovered.records.count == 1 && uncovered.rowChangesLost, "b was changed after its record and is no longer listed")
        try engine.close()
    }

    @Test func aRecordAfterTheCheckpointCoversTheRowsItLost() throws {
        let disk = try EngineTesting.simulated()
        var engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        try Self.commit(engine, ["a": "1"], records: ["x:r"])
        try Self.commit(engine, ["b": "1"])
        engine.abandon()
        disk.powerCut(seed: 4, mode: .drop)
        engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        try engine.checkpoint()
        // The extension registers after the checkpoint: its record covers what came before.
        #expect(engine.claimExtensionRecords("x:r")?.rowChangesLost == true)
        try Self.commit(engine, ["c": "1"], records: ["x:r"])
        try Self.commit(engine, ["d": "1"])
        engine.abandon()
        disk.powerCut(seed: 5, mode: .drop)

        engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        let r = try #require(engine.claimExtensionRecords("x:r"))
        #expect(r.records.count == 2 && !r.rowChangesLost)
        #expect(r.changedKeys == Self.pairs(["d"]))
        try engine.close()
    }
}
