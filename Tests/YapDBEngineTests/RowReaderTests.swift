import Testing
import YapDBStorage
import YapDBIndex
@testable import YapDBEngine
import TestSupport

/// The engine's one read surface (`RowReader`) as the public layer uses it: a write
/// transaction answers with its own rows so far, a snapshot with its commit's, and both the same
/// way.
@Suite struct RowReaderTests {
    @Test func aWriteTransactionReadsItsOwnRowsAndWalksThemAsTheyWereWhenTheWalkBegan() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let engine = try Engine.open(path: dir.file("db"), options: EngineOptions())
        defer { try? engine.close() }
        _ = try engine.write { tx in
            for i in 0..<5 { try EngineTesting.set(tx, "c", "k\(i)", [UInt8(i)], metadata: i == 2 ? [42] : nil) }
        }
        var inTransaction: [String: [UInt8]] = [:]
        _ = try engine.write { tx in
            try EngineTesting.set(tx, "c", "k5", [5])
            try EngineTesting.set(tx, "d", "x", [9])
            let reader: any RowReader = tx
            // Point reads: the new row from the log's staging buffer, an old one from its segment.
            #expect(try reader.object(collection: "c", key: "k5") == [5])
            #expect(try reader.object(collection: "c", key: "k1") == [1])
            #expect(try reader.metadata(collection: "c", key: "k2") == [42])
            #expect(try reader.entry(collection: "c", key: "nope") == nil)
            // Ordered reads: the buffer applied first.
            #expect(reader.rowCount == 7)
            #expect(try reader.rowCount(inCollection: "c") == 6)
            #expect(try reader.collectionNames() == ["c", "d"])
            let entry = try #require(try reader.entry(collection: "d", key: "x"))
            #expect(try reader.owner(ofRowid: entry.rowid)?.collection == "d")
            // A write during a walk does not disturb it.
            var walked: [String] = []
            try reader.forEachKey(inCollection: "c") { key, entry in
                walked.append(key)
                if key == "k0" { _ = try? tx.remove(collection: "c", key: "k3") }
                inTransaction[key] = try? reader.objectBytes(entry)
                return true
            }
            #expect(walked == ["k0", "k1", "k2", "k3", "k4", "k5"])
            #expect(try reader.rowCount(inCollection: "c") == 5, "the removal is seen after the walk")
            inTransaction["k3"] = nil
        }
        // The snapshot of that commit answers as the transaction did.
        let snapshot: any RowReader = engine.snapshot()
        var committed: [String: [UInt8]] = [:]
        try snapshot.forEachKey(inCollection: "c") { key, entry in
            committed[key] = try? snapshot.objectBytes(entry)
            return true
        }
        #expect(committed == inTransaction)
        #expect(try snapshot.collectionNames() == ["c", "d"])
    }

    @Test func locatedObjectReadsAreForSnapshotsOnly() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let engine = try Engine.open(path: dir.file("db"), options: EngineOptions())
        defer { try? engine.close() }
        _ = try engine.write { tx in try EngineTesting.set(tx, "c", "k", [7, 7]) }
        let snapshot = engine.snapshot()
        let entry = try #require(try snapshot.entry(collection: "c", key: "k"))
        var read: [UInt8] = []
        #expect(snapshot.readObject(at: entry.object, ofRowid: entry.rowid) { read = Array($0) })
        #expect(read == [7, 7])
        #expect(!snapshot.readObject(at: entry.object, ofRowid: entry.rowid + 1) { _ in }, "another row's id: not its object")
        _ = try engine.write { tx in
            // The row may have been rewritten within the transaction: the caller looks it up by key.
            #expect(!tx.readObject(at: entry.object, ofRowid: entry.rowid) { _ in })
        }
    }
}
