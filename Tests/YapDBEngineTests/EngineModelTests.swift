import Testing
import YapDBStorage
import YapDBSimulatedDisk
import YapDBIndex
@testable import YapDBEngine
import TestSupport

/// The seeded model test: random operations against the engine and a dictionary model,
/// with commits, rollbacks, reopens, checkpoints, compactions and old snapshots re-read.
/// Seed 1 runs in the environment's index read mode (mapped unless `YAPDB_TEST_INDEX_READ_MODE`
/// says otherwise); seed 2 always reads index pages of 512 bytes with `pread` through a cache
/// of 8 pages, so the cached mode (misses, evictions, checksums on read) runs under the model,
/// and with a write buffer limit of a few rows, so transactions spill their buffered rows into
/// the trees part way, and a dirty-page budget of four pages, so they spill changed index pages
/// to the index files too (seed 1 keeps the default limits: its transactions never spill). Some
/// transactions are long (up to 150 operations); reads inside them (point reads, counts,
/// ordered walks, lookups by row id) are checked against the transaction's model, and power
/// cuts on the simulated disk against the committed one.
@Suite struct EngineModelTests {
    @Test(arguments: zip([UInt64(1), 2], [0, 8]))
    func randomOperationsMatchTheModel(seed: UInt64, cachedPages: Int) throws {
        let operations = 20_000
        var rng = SeededRandom(seed: seed)
        let disk = try EngineTesting.simulated(seed: seed)
        var options = EngineTesting.options(disk, segmentLimit: 8192)
        if cachedPages > 0 {
            // Small pages, so the trees are several pages deep and the cache evicts.
            options.indexReadMode = .cached(pages: cachedPages)
            options.indexPageSize = 512
            options.writeBufferLimit = 600
            // A budget of four pages, counted after every change: long transactions spill.
            options.dirtyPageBudget = 2 << 10
            options.dirtyPageCountWork = 1
        }
        var engine: Engine? = try Engine.open(path: "/db/main", options: options)
        var model = Model()
        var committedSnapshot: UInt64 = 0
        var pinned: [(SnapshotLease, Model)] = []
        let collections = ["", "a", "b", "people"]
        var done = 0
        var counts: [String: Int] = [:]

        func value(_ size: Int) -> [UInt8] {
            rng.next() % 3 == 0 ? [UInt8](repeating: UInt8(truncatingIfNeeded: rng.next()), count: size) : rng.bytes(size)
        }

        while done < operations {
            let action = rng.next() % 100
            switch action {
            case 0..<70:
                // A transaction of 1...8 operations, committed, rolled back, or failing.
                var next = model
                let steps = rng.next() % 16 == 0 ? 1 + Int(rng.next() % 150) : 1 + Int(rng.next() % 8)
                let ending = rng.next() % 10   // 0: rollback(), 1: throw, else commit
                struct Abort: Error {}
                let sizes = [0, 1, 10, 100, 300, 2000]
                let result = try? engine!.write { tx -> Int in
                    for _ in 0..<steps {
                        let collection = collections[Int(rng.next() % UInt64(collections.count))]
                        let key = "k\(rng.next() % 40)"
                        switch rng.next() % 10 {
                        case 0, 1, 2:
                            let object = value(sizes[Int(rng.next() % 6)])
                            let metadata: [UInt8]? = rng.next() % 2 == 0 ? value(sizes[Int(rng.next() % 4)]) : nil
                            try EngineTesting.set(tx, collection, key, object, metadata: metadata)
                            next[collection, key] = Model.Row(object: object, metadata: metadata)
                            counts["set", default: 0] += 1
                        case 3:
                            let object = value(sizes[Int(rng.next() % 6)])
                            if next[collection, key] != nil {
                                try object.withUnsafeBytes { try tx.setObject($0, metadata: .keep, collection: collection, key: key) }
                                next[collection, key]!.object = object
                            }
                            counts["replace", default: 0] += 1
                        case 4:
                            let metadata: [UInt8]? = rng.next() % 3 == 0 ? nil : value(sizes[Int(rng.next() % 5)])
                            let applied = try metadata.map { m in try m.withUnsafeBytes { try tx.setMetadata($0, collection: collection, key: key) } }
                                ?? tx.setMetadata(nil, collection: collection, key: key)
                            #expect(applied == (next[collection, key] != nil), "seed \(seed)")
                            if applied { next[collection, key]!.metadata = metadata }
                            counts["set-metadata", default: 0] += 1
                        case 5, 6:
                            let removed = try tx.remove(collection: collection, key: key)
                            #expect((removed != nil) == (next[collection, key] != nil), "seed \(seed)")
                            next[collection, key] = nil
                            counts["remove", default: 0] += 1
                        case 7:
                            if rng.next() % 4 == 0 {
                                try tx.removeCollection(collection)
                                next.rows[collection] = nil
                                counts["clear-collection", default: 0] += 1
                            } else {
                                _ = try tx.touch(collection: collection, key: key, object: true, metadata: rng.next() % 2 == 0)
                                counts["touch", default: 0] += 1
                            }
                        case 8:
                            if rng.next() % 10 == 0 {
                                try tx.removeAll()
                                next = Model()
                                counts["clear-all", default: 0] += 1
                            } else if rng.next() % 3 == 0 {
                                try Self.checkOrderedReads(tx, collection: collection, model: next, seed: seed)
                                counts["ordered-read", default: 0] += 1
                            } else {
                                let got = try tx.object(collection: collection, key: key)
                                #expect(got == next[collection, key]?.object, "seed \(seed): read-your-writes")
                            }
                        default:
                            let got = try tx.metadata(collection: collection, key: key)
                            #expect(got == next[collection, key]?.metadata, "seed \(seed): read-your-writes metadata")
                        }
                        done += 1
                    }
                    if ending == 0 { tx.rollback() }
                    if ending == 1 { throw Abort() }
                    return steps
                }
                if let result, ending > 1 {
                    if let changeset = result.changeset {
                        committedSnapshot += 1
                        #expect(changeset.snapshot == committedSnapshot, "seed \(seed)")
                    }
                    model = next
                    counts["commit", default: 0] += 1
                } else {
                    counts["rollback", default: 0] += 1
                }
                #expect(engine!.snapshot().number == committedSnapshot, "seed \(seed)")
            case 70..<75:
                try engine!.close()
                engine = nil
                engine = try Engine.open(path: "/db/main", options: options)
                #expect(engine!.snapshot().number == committedSnapshot, "seed \(seed): snapshot number after reopen")
                counts["reopen", default: 0] += 1
            case 75..<80:
                try engine!.checkpoint()
                counts["checkpoint", default: 0] += 1
            case 80..<85:
                _ = try engine!.compact(force: rng.next() % 2 == 0)
                counts["compact", default: 0] += 1
            case 85..<90:
                pinned.append((engine!.acquireSnapshot(), model))
                if pinned.count > 4 {
                    let (old, oldModel) = pinned.removeFirst()
                    #expect(try old.snapshot.materialize() == oldModel, "seed \(seed): an old snapshot changed")
                }
                counts["pin", default: 0] += 1
            case 90..<91:
                // A power cut: every acknowledged commit (synced: `.full`) survives it.
                for (old, oldModel) in pinned {
                    #expect(try old.snapshot.materialize() == oldModel, "seed \(seed): an old snapshot changed")
                }
                pinned.removeAll()
                engine!.abandon()
                engine = nil
                disk.powerCut(seed: rng.next(), mode: rng.next() % 2 == 0 ? .drop : .torn)
                engine = try Engine.open(path: "/db/main", options: options)
                #expect(engine!.snapshot().number == committedSnapshot, "seed \(seed): snapshot number after a power cut")
                #expect(try engine!.snapshot().materialize() == model, "seed \(seed): the rows after a power cut")
                counts["power-cut", default: 0] += 1
            case 91..<93:
                let report = try engine!.verify()
                #expect(report.isValid, "seed \(seed): verify: \(report.problems)")
                counts["verify", default: 0] += 1
            default:
                #expect(try engine!.snapshot().materialize() == model, "seed \(seed): the snapshot differs from the model")
                engine!.snapshot().keydir.checkInvariants()
            }
            done += 1
        }
        for (old, oldModel) in pinned {
            #expect(try old.snapshot.materialize() == oldModel, "seed \(seed): an old snapshot changed")
        }
        pinned.removeAll()
        #expect(try engine!.snapshot().materialize() == model, "seed \(seed)")
        #expect(try engine!.verify().isValid, "seed \(seed)")
        try engine!.close()
        let reopened = try Engine.open(path: "/db/main", options: options)
        #expect(try reopened.snapshot().materialize() == model, "seed \(seed): after the final reopen")
        #expect(reopened.snapshot().number == committedSnapshot)
        print("engine model test seed \(seed): \(done) operations, \(counts.sorted { $0.key < $1.key })")
        #expect(counts["compact", default: 0] > 0 && counts["reopen", default: 0] > 0 && counts["clear-all", default: 0] > 0)
        #expect(counts["power-cut", default: 0] > 0 && counts["ordered-read", default: 0] > 0)
    }

    /// Reads inside a write transaction that need the trees in order (counts, a walk of a
    /// collection, owners by row id) answer as `model`, the transaction's rows so far.
    static func checkOrderedReads(_ tx: WriteTransaction, collection: String, model: Model, seed: UInt64) throws {
        // Through the reader the public layer's read-write transaction holds (`RowReader`).
        let reader: any RowReader = tx
        let expected = model.rows[collection]?.keys.sorted() ?? []
        #expect(try reader.rowCount(inCollection: collection) == expected.count, "seed \(seed): count in the transaction")
        var walked: [(String, UInt64)] = []
        try reader.forEachKey(inCollection: collection) { key, entry in
            walked.append((key, entry.rowid))
            return true
        }
        #expect(walked.map(\.0) == expected, "seed \(seed): ordered walk in the transaction")
        for (key, rowid) in walked {
            let owner = try reader.owner(ofRowid: rowid)
            #expect(owner?.collection == collection && owner?.key == key, "seed \(seed): row id owner")
        }
        #expect(reader.rowCount == model.count, "seed \(seed): row count in the transaction")
    }
}
