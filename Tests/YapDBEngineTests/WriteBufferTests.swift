import Testing
import YapDBStorage
import YapDBSimulatedDisk
import YapDBIndex
@testable import YapDBEngine
import TestSupport

/// The write transaction's buffer of changed rows (`KeydirBuffer`): a large transaction spills
/// it into the trees past `writeBufferLimit` and reads the same rows either way; a rollback
/// after a spill leaves nothing behind; a bulk load into an empty database (built bottom-up)
/// commits, checkpoints, verifies and reopens like any other.
@Suite struct WriteBufferTests {
    static func rows(_ count: Int, seed: UInt64) -> [(key: String, value: [UInt8])] {
        var rng = SeededRandom(seed: seed)
        return (0..<count).map { _ in ("k\(rng.next() % 1_000_000_000)", rng.bytes(Int(rng.next() % 40))) }
    }

    @Test func aLargeTransactionSpillsAndReadsItsOwnRows() throws {
        let disk = try EngineTesting.simulated()
        var options = EngineTesting.options(disk, segmentLimit: 1 << 20)
        options.writeBufferLimit = 4_000
        let engine = try Engine.open(path: "/db/main", options: options)
        var model = Model()
        for (key, value) in Self.rows(300, seed: 1) { model["c", key] = Model.Row(object: value, metadata: nil) }
        _ = try engine.write { tx in
            for (key, row) in model.rows["c"]! { try EngineTesting.set(tx, "c", key, row.object) }
        }
        var spills = 0, previous = 0
        _ = try engine.write { tx in
            var rng = SeededRandom(seed: 2)
            for i in 0..<2_000 {
                let key = rng.next() % 3 == 0 ? "n\(rng.next() % 500)" : model.rows["c"]!.keys.randomElement(using: &rng)!
                if rng.next() % 4 == 0 {
                    #expect((try tx.remove(collection: "c", key: key) != nil) == (model["c", key] != nil))
                    model["c", key] = nil
                } else {
                    let value = rng.bytes(Int(rng.next() % 30))
                    try EngineTesting.set(tx, "c", key, value, metadata: i % 2 == 0 ? [1] : nil)
                    model["c", key] = Model.Row(object: value, metadata: i % 2 == 0 ? [1] : nil)
                }
                #expect(try tx.object(collection: "c", key: key) == model["c", key]?.object)
                // Only a spill empties the buffer (an update of a buffered row keeps the count).
                if tx.bufferedRowCount < previous { spills += 1 }
                previous = tx.bufferedRowCount
            }
            #expect(try tx.keydir.count(inCollection: "c") == model.rows["c"]?.count ?? 0)
            #expect(tx.bufferedRowCount == 0, "an ordered read applies the buffer")
        }
        #expect(spills > 10, "the buffer spilled (\(spills) times)")
        #expect(try engine.snapshot().materialize() == model)
        engine.snapshot().keydir.checkInvariants()
        try engine.checkpoint()
        #expect(try engine.verify().isValid)
        try engine.close()
        #expect(try Engine.open(path: "/db/main", options: options).snapshot().materialize() == model)
    }

    /// The memory the buffer holds (its arrays' capacities, which double as they fill and stay
    /// after a spill) never passes `writeBufferLimit`: it spills before a growth would.
    @Test func theBufferHoldsNoMoreThanItsLimit() throws {
        let disk = try EngineTesting.simulated()
        var options = EngineTesting.options(disk, segmentLimit: 1 << 20)
        let limit = 64 << 10
        options.writeBufferLimit = limit
        let engine = try Engine.open(path: "/db/main", options: options)
        var most = 0, spills = 0, previous = 0
        _ = try engine.write { tx in
            for i in 0..<6_000 {
                try EngineTesting.set(tx, "c", "key-\(i &* 7_919 % 6_000)", [UInt8(truncatingIfNeeded: i)])
                most = max(most, tx.bufferAllocatedBytes)
                if tx.bufferedRowCount < previous { spills += 1 }
                previous = tx.bufferedRowCount
            }
        }
        #expect(spills > 3, "the buffer spilled (\(spills) times)")
        #expect(most <= limit, "the buffer held \(most) bytes (limit \(limit))")
        #expect(most > limit / 4, "the buffer used its room (\(most) bytes)")
        let snapshot = engine.snapshot()
        #expect(try snapshot.keydir.count(inCollection: "c") == 6_000)
        try engine.close()
    }

    @Test func aRollbackAfterASpillLeavesNothing() throws {
        let disk = try EngineTesting.simulated()
        var options = EngineTesting.options(disk, segmentLimit: 1 << 20)
        options.writeBufferLimit = 2_000
        let engine = try Engine.open(path: "/db/main", options: options)
        _ = try engine.write { tx in try EngineTesting.set(tx, "c", "keep", [1]) }
        let before = try engine.snapshot().materialize()
        struct Abort: Error {}
        #expect {
            try engine.write { tx in
                for (key, value) in Self.rows(500, seed: 3) { try EngineTesting.set(tx, "c", key, value) }
                _ = try tx.remove(collection: "c", key: "keep")
                #expect(tx.bufferedRowCount < 500)
                throw Abort()
            }
        } throws: { EngineTesting.bodyThrew($0, Abort.self) }
        _ = try engine.write { tx in
            for (key, value) in Self.rows(500, seed: 4) { try EngineTesting.set(tx, "d", key, value) }
            tx.rollback()
        }
        #expect(try engine.snapshot().materialize() == before)
        engine.snapshot().keydir.checkInvariants()
        try engine.close()
        #expect(try Engine.open(path: "/db/main", options: options).snapshot().materialize() == before)
    }

    @Test(arguments: [512, 4096])
    func aBulkLoadIntoAnEmptyDatabaseIsBuiltBottomUp(pageSize: Int) throws {
        let disk = try EngineTesting.simulated()
        var options = EngineTesting.options(disk, segmentLimit: 1 << 20)
        options.indexPageSize = pageSize
        let engine = try Engine.open(path: "/db/main", options: options)
        var model = Model()
        _ = try engine.write { tx in
            for (i, (key, value)) in Self.rows(5_000, seed: 5).enumerated() {
                let collection = ["a", "b", ""][i % 3]
                try EngineTesting.set(tx, collection, key, value, metadata: i % 5 == 0 ? [7] : nil)
                model[collection, key] = Model.Row(object: value, metadata: i % 5 == 0 ? [7] : nil)
            }
            #expect(tx.bufferedRowCount == model.count, "no spill under the default limit")
        }
        let keydir = engine.snapshot().keydir
        keydir.checkInvariants()
        keydir.rowids.checkInvariants()
        #expect(try engine.snapshot().materialize() == model)
        // Every row id names its row.
        var memo = CollectionMemo()
        try keydir.forEachRow { collection, key, entry in
            let row = try keydir.row(forRowid: entry.rowid, memo: &memo)
            #expect(row?.collection == collection && row?.key == key)
            return true
        }
        try engine.checkpoint()
        #expect(try engine.verify().isValid)
        try engine.close()
        let reopened = try Engine.open(path: "/db/main", options: options)
        #expect(try reopened.snapshot().materialize() == model)
        // And the built trees take ordinary small transactions afterwards.
        _ = try reopened.write { tx in
            try EngineTesting.set(tx, "a", "zz", [1])
            _ = try tx.remove(collection: "b", key: model.rows["b"]!.keys.first!)
        }
        reopened.snapshot().keydir.checkInvariants()
        #expect(try reopened.verify().isValid)
    }
}
