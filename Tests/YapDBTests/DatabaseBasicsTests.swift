import Foundation
import Testing
import YapDB

/// Behaviours ported from YapDatabase's own tests: the basics of rows and collections.
@Suite struct DatabaseBasicsTests {
    @Test func emptyDatabase() throws {
        let fixture = try DatabaseFixture()
        let connection = fixture.database.newConnection()
        #expect(fixture.database.snapshot == 0)
        connection.read { tx in
            #expect(tx.numberOfCollections() == 0)
            #expect(tx.numberOfKeys(inCollection: nil) == 0)
            #expect(tx.numberOfKeysInAllCollections() == 0)
            #expect(tx.allCollections().isEmpty)
            #expect(tx.allKeys(inCollection: "c").isEmpty)
            #expect(tx.object(forKey: "k", inCollection: nil) == nil)
            #expect(tx.metadata(forKey: "k", inCollection: nil) == nil)
            #expect(!tx.hasObject(forKey: "k", inCollection: nil))
        }
    }

    @Test func nilCollectionIsTheEmptyCollectionAndMetadataIsNilUnlessGiven() throws {
        let fixture = try DatabaseFixture()
        let connection = fixture.database.newConnection()
        connection.readWrite { tx in
            tx.setObject("object", forKey: "key", inCollection: nil)
            tx.setObject("other", forKey: "key2", inCollection: "", withMetadata: "meta")
        }
        connection.read { tx in
            #expect(tx.object(forKey: "key", inCollection: "") as? String == "object")
            #expect(tx.metadata(forKey: "key", inCollection: nil) == nil, "implicit nil metadata")
            #expect(tx.metadata(forKey: "key2", inCollection: nil) as? String == "meta")
            #expect(tx.allCollections() == [""])
            #expect(Set(tx.allKeys(inCollection: nil)) == ["key", "key2"])
        }
        // setObject without metadata clears the metadata.
        connection.readWrite { tx in tx.setObject("again", forKey: "key2", inCollection: nil) }
        connection.read { tx in #expect(tx.metadata(forKey: "key2", inCollection: nil) == nil) }
    }

    @Test func replaceSemantics() throws {
        let fixture = try DatabaseFixture()
        let connection = fixture.database.newConnection()
        connection.readWrite { tx in
            tx.setObject("o1", forKey: "k", inCollection: "c", withMetadata: "m1")
            tx.replaceObject("o2", forKey: "k", inCollection: "c")
            tx.replaceObject("nope", forKey: "missing", inCollection: "c")
            tx.replaceMetadata("nope", forKey: "missing", inCollection: "c")
        }
        connection.read { tx in
            #expect(tx.object(forKey: "k", inCollection: "c") as? String == "o2")
            #expect(tx.metadata(forKey: "k", inCollection: "c") as? String == "m1", "replaceObject keeps metadata")
            #expect(!tx.hasObject(forKey: "missing", inCollection: "c"), "replace on a missing row is a no-op")
        }
        connection.readWrite { tx in tx.replaceMetadata("m2", forKey: "k", inCollection: "c") }
        connection.read { tx in
            #expect(tx.object(forKey: "k", inCollection: "c") as? String == "o2", "replaceMetadata keeps the object")
            #expect(tx.metadata(forKey: "k", inCollection: "c") as? String == "m2")
        }
        connection.readWrite { tx in tx.replaceMetadata(nil, forKey: "k", inCollection: "c") }
        connection.read { tx in #expect(tx.metadata(forKey: "k", inCollection: "c") == nil) }
    }

    @Test func bulkRemoveAndClears() throws {
        let fixture = try DatabaseFixture()
        let connection = fixture.database.newConnection()
        connection.readWrite { tx in
            for i in 0..<20 { tx.setObject("v\(i)", forKey: "k\(i)", inCollection: "a") }
            for i in 0..<5 { tx.setObject("v\(i)", forKey: "k\(i)", inCollection: "b") }
        }
        connection.readWrite { tx in tx.removeObjects(forKeys: (0..<10).map { "k\($0)" }, inCollection: "a") }
        connection.read { tx in
            #expect(tx.numberOfKeys(inCollection: "a") == 10)
            #expect(!tx.hasObject(forKey: "k3", inCollection: "a") && tx.hasObject(forKey: "k13", inCollection: "a"))
        }
        connection.readWrite { tx in tx.removeAllObjects(inCollection: "a") }
        connection.read { tx in
            #expect(tx.allCollections() == ["b"], "a collection exists only while it has a row")
            #expect(tx.numberOfKeysInAllCollections() == 5)
        }
        connection.readWrite { tx in tx.removeAllObjectsInAllCollections() }
        connection.read { tx in #expect(tx.numberOfKeysInAllCollections() == 0 && tx.numberOfCollections() == 0) }
        connection.readWrite { tx in tx.setObject(nil, forKey: "x", inCollection: "c") }
        connection.read { tx in #expect(!tx.hasObject(forKey: "x", inCollection: "c"), "setting nil removes") }
    }

    @Test func snapshotNumbersCountChangingTransactionsIncludingTouches() throws {
        let fixture = try DatabaseFixture()
        let database = fixture.database!
        let connection = database.newConnection()
        connection.readWrite { tx in tx.setObject("a", forKey: "k", inCollection: nil) }
        #expect(database.snapshot == 1 && connection.snapshot == 1)
        connection.readWrite { _ in }
        #expect(database.snapshot == 1, "an empty read-write changes nothing")
        connection.readWrite { tx in tx.removeObject(forKey: "missing", inCollection: nil) }
        #expect(database.snapshot == 1)
        connection.readWrite { tx in tx.touchObject(forKey: "k", inCollection: nil) }
        #expect(database.snapshot == 2, "touches count")
        connection.readWrite { tx in
            tx.setObject("b", forKey: "k", inCollection: nil)
            tx.rollback()
        }
        #expect(database.snapshot == 2, "a rollback does not bump the snapshot")
        try fixture.reopen()
        #expect(fixture.database.snapshot == 2, "persisted")
    }

    @Test func snapshotIsolation() throws {
        let fixture = try DatabaseFixture()
        let database = fixture.database!
        let reader = database.newConnection(), writer = database.newConnection()
        writer.readWrite { tx in tx.setObject("before", forKey: "k", inCollection: nil) }
        let started = DispatchSemaphore(value: 0), committed = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            started.wait()
            writer.readWrite { tx in tx.setObject("after", forKey: "k", inCollection: nil) }
            committed.signal()
        }
        reader.read { tx in
            #expect(tx.object(forKey: "k", inCollection: nil) as? String == "before")
            started.signal()
            committed.wait()
            #expect(tx.object(forKey: "k", inCollection: nil) as? String == "before", "a read begun before a commit never sees it")
            #expect(tx.numberOfKeys(inCollection: nil) == 1)
        }
        reader.read { tx in #expect(tx.object(forKey: "k", inCollection: nil) as? String == "after") }
    }

    @Test func rollbackAppliesNothingAndLeavesTheWritersCacheClean() throws {
        let fixture = try DatabaseFixture()
        let database = fixture.database!
        let connection = database.newConnection()
        let recorder = NotificationRecorder(database)
        connection.readWrite { tx in tx.setObject("kept", forKey: "k", inCollection: nil) }
        recorder.reset()
        connection.readWrite { tx in
            tx.setObject("discarded", forKey: "k", inCollection: nil)
            tx.setObject("new", forKey: "n", inCollection: nil)
            #expect(tx.object(forKey: "k", inCollection: nil) as? String == "discarded", "reads see the transaction's writes")
            tx.rollback()
        }
        struct Failure: Error {}
        #expect(throws: Failure.self) {
            try connection.readWrite { tx in
                tx.setObject("thrown", forKey: "k", inCollection: nil)
                throw Failure()
            }
        }
        connection.read { tx in
            #expect(tx.object(forKey: "k", inCollection: nil) as? String == "kept")
            #expect(!tx.hasObject(forKey: "n", inCollection: nil))
        }
        #expect(recorder.notifications.isEmpty, "no notification for a rollback")
        #expect(database.snapshot == 1)
    }

    @Test func reopenWithAllDataAndCodableRoundTripWithMetadata() throws {
        struct Note: Codable, Equatable { var title: String; var words: [String] }
        struct Stamp: Codable, Equatable { var version: Int }
        let configure: (YapDatabase) -> Void = { $0.registerCodableSerialization(Note.self, metadata: Stamp.self, forCollection: "notes") }
        let fixture = try DatabaseFixture(configure: configure)
        let connection = fixture.database.newConnection()
        connection.readWrite { tx in
            for i in 0..<100 {
                tx.setObject(Note(title: "n\(i)", words: ["a", "b"]), forKey: "\(i)", inCollection: "notes", withMetadata: Stamp(version: i))
            }
            tx.setObject(Data([1, 2, 3]), forKey: "blob", inCollection: "raw")
        }
        try fixture.reopen(configure: configure)
        let again = fixture.database.newConnection()
        again.read { tx in
            #expect(tx.numberOfKeys(inCollection: "notes") == 100)
            #expect(tx.object(forKey: "42", inCollection: "notes") as? Note == Note(title: "n42", words: ["a", "b"]))
            #expect(tx.metadata(forKey: "42", inCollection: "notes") as? Stamp == Stamp(version: 42))
            let row: (object: Note, metadata: Stamp?)? = tx.row(forKey: "7", inCollection: "notes")
            #expect(row?.object.title == "n7" && row?.metadata == Stamp(version: 7))
            #expect(tx.object(forKey: "blob", inCollection: "raw") as? Data == Data([1, 2, 3]))
        }
        #expect(try fixture.database.verify().isValid)
    }

    @Test func anUnencodableValueIsAnErrorNeverEmptyData() throws {
        final class NotCodable {}
        let fixture = try DatabaseFixture()
        let connection = fixture.database.newConnection()
        #expect { try connection.write { tx in tx.setObject(NotCodable(), forKey: "k", inCollection: "c") } } throws: { error in
            guard case YapDatabaseError.serialization(let collection, let key, _) = error else { return false }
            return collection == "c" && key == "k"
        }
        connection.read { tx in #expect(!tx.hasObject(forKey: "k", inCollection: "c")) }
        #expect(fixture.database.snapshot == 0)
    }

    @Test func iterationVisitsEveryRowAndStops() throws {
        let fixture = try DatabaseFixture()
        let connection = fixture.database.newConnection()
        connection.readWrite { tx in
            for i in 0..<50 { tx.setObject("o\(i)", forKey: "k\(i)", inCollection: "c", withMetadata: i % 2 == 0 ? "m\(i)" : nil) }
            tx.setObject(7, forKey: "int", inCollection: "c")
        }
        connection.read { tx in
            var keys: Set<String> = []
            tx.iterateKeys(inCollection: "c") { key, _ in keys.insert(key) }
            #expect(keys.count == 51)
            var strings = 0
            tx.iterateKeysAndObjects(inCollection: "c") { (key: String, object: String, _) in
                #expect(object == "o" + key.dropFirst())
                strings += 1
            }
            #expect(strings == 50, "objects of another type are passed over")
            var filtered = 0
            tx.iterateKeysAndObjects(inCollection: "c", filter: { $0.hasSuffix("7") }) { (_: String, _: String, _) in filtered += 1 }
            #expect(filtered == 5)
            var metadata = 0, metadataVisits = 0
            tx.iterateKeysAndMetadata(inCollection: "c") { (_: String, value: String?, _) in
                metadataVisits += 1
                if value != nil { metadata += 1 }
            }
            #expect(metadata == 25, "metadata of another type, or none, reads as nil")
            #expect(metadataVisits == 51, "every row is visited")
            var visited = 0
            tx.iterateRows(inCollection: "c") { (_: String, _: String, _: String?, stop: inout Bool) in
                visited += 1
                if visited == 10 { stop = true }
            }
            #expect(visited == 10)
            var all = 0
            tx.iterateRowsInAllCollections { _, _, _, _, _ in all += 1 }
            #expect(all == 51)
            var found: [Int: String] = [:]
            tx.enumerateObjects(forKeys: ["k1", "nope", "k2"], inCollection: "c") { index, object, _ in found[Int(index)] = object as? String ?? "nil" }
            #expect(found == [0: "o1", 1: "nil", 2: "o2"])
        }
        connection.readWrite { tx in
            // Writing inside an iteration is allowed when the block then stops.
            tx.iterateKeys(inCollection: "c") { key, stop in
                tx.removeObject(forKey: key, inCollection: "c")
                stop = true
            }
        }
        connection.read { tx in #expect(tx.numberOfKeys(inCollection: "c") == 50) }
    }
}
