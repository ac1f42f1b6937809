import Foundation
import Testing
import TestSupport
@testable import YapDB
import YapDBIndex

/// Column entries keep the location of their row's object, and `iterateKeysAndObjects` in a
/// read-only transaction reads the object from there instead of looking the row up in the key
/// directory. The location must never give an object other than the row's current one: every
/// write of the object rewrites it, also when the handler's options do not re-index the row;
/// a record compaction moved is found through the key directory; `verify()` accepts such a
/// location and rejects one that reads as an older object.
@Suite struct SecondaryIndexObjectLocationTests {
    typealias Person = SecondaryIndexClientTests.Person

    static func person(_ i: Int, _ generation: Int) -> Person {
        Person(name: "n\(i) g\(generation)", age: i % 50, email: nil, salary: Double(generation))
    }

    /// An index on age whose handler runs again only for metadata changes: a new object keeps
    /// the row's indexed values.
    static func ageIndex(rerunsForObjects: Bool) -> YapDatabaseSecondaryIndex {
        let setup = YapDatabaseSecondaryIndexSetup()
        setup.addColumn("age", with: .integer)
        let options: YapDatabaseBlockInvoke = rerunsForObjects ? [.ifObjectModified, .ifMetadataModified] : [.ifMetadataModified]
        let handler = YapDatabaseSecondaryIndexHandler.withOptions(options) { _, dict, _, _, object in
            guard let person = object as? Person else { return }
            dict["age"] = person.age
        }
        return YapDatabaseSecondaryIndex(setup: setup, handler: handler, versionTag: "1")
    }

    static func register(_ database: YapDatabase, rerunsForObjects: Bool) throws {
        database.registerCodableSerialization(Person.self, forCollection: "people")
        try #require(database.register(ageIndex(rerunsForObjects: rerunsForObjects), withName: "idx"))
    }

    /// The objects `iterateKeysAndObjects` hands out for every row, by key, read on a
    /// connection without an object cache (every object comes from its record).
    static func objects(_ database: YapDatabase) -> [String: Person] {
        let connection = database.newConnection()
        connection.objectCacheEnabled = false
        var result: [String: Person] = [:]
        connection.read { tx in
            guard let idx = tx.ext("idx") as? YapDatabaseSecondaryIndexTransaction else {
                Issue.record("no index transaction")
                return
            }
            idx.iterateKeysAndObjects(matching: YapDatabaseQuery(string: "WHERE age >= 0 ORDER BY age")) { _, key, object, _ in
                result[key] = object as? Person
            }
        }
        return result
    }

    /// How many matches' kept locations still hold their row's object, and how many do not
    /// (or come with their key-directory entry: their batch held a moved record).
    static func keptLocations(_ database: YapDatabase) throws -> (held: Int, moved: Int) {
        var held = 0, moved = 0
        var failure: (any Error)?
        database.newConnection().read { tx in
            guard let idx = tx.ext("idx") as? YapDatabaseSecondaryIndexTransaction, tx.readsSnapshot else { return }
            let segments = tx.reader
            do {
                try idx.forEachMatch(idx.index.bind(YapDatabaseQuery(string: "WHERE age >= 0")), entries: true, objects: true, located: true) {
                    _, _, rowid, _, entry, object, _ in
                    // A batch holding a moved record comes with entries looked up instead.
                    if let object, segments.readObject(at: object, ofRowid: rowid, { _ in }) { held += 1 }
                    else if object != nil || entry != nil { moved += 1 }
                }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return (held, moved)
    }

    /// `replaceObject` and `setObject` write a new record; a handler whose options leave the
    /// row's values alone still has its entries pointed at the new record, so a query hands
    /// out the new object, in the same transaction's snapshot and after a reopen.
    @Test(arguments: [false, true])
    func aNewObjectIsWhatAQueryReadsWhetherOrNotTheHandlerRuns(rerunsForObjects: Bool) throws {
        let fixture = try DatabaseFixture()
        try Self.register(fixture.database, rerunsForObjects: rerunsForObjects)
        let writer = fixture.database.newConnection()
        try writer.write { tx in
            for i in 0..<40 { tx.setObject(Self.person(i, 0), forKey: "p\(i)", inCollection: "people") }
        }
        try fixture.database.checkpoint()
        try writer.write { tx in
            for i in stride(from: 0, to: 40, by: 2) { tx.replace(Self.person(i, 1), forKey: "p\(i)", inCollection: "people") }
            for i in stride(from: 1, to: 40, by: 4) {
                tx.setObject(Self.person(i, 2), forKey: "p\(i)", inCollection: "people", withMetadata: i)
            }
        }
        func generation(_ i: Int) -> Int { i % 2 == 0 ? 1 : (i % 4 == 1 ? 2 : 0) }
        let expected = Dictionary(uniqueKeysWithValues: (0..<40).map { ("p\($0)", Self.person($0, generation($0))) })
        #expect(Self.objects(fixture.database) == expected)
        #expect(try Self.keptLocations(fixture.database) == (40, 0))
        #expect(try fixture.database.verify().isValid)
        try fixture.reopen { database in try? Self.register(database, rerunsForObjects: rerunsForObjects) }
        #expect(Self.objects(fixture.database) == expected)
        #expect(try fixture.database.verify().isValid)
    }

    /// Compaction copies live records into new segments without rewriting the index: the
    /// locations the column entries keep then name segments that are gone, and the objects are
    /// found through the key directory — before and after a reopen, and while a reader that
    /// began before the compaction still reads its own snapshot.
    @Test func objectsMovedByCompactionAreFoundThroughTheKeyDirectory() throws {
        let directory = TemporaryDirectory("yapdb-located")
        let path = directory.file("moved.yapdb")
        let options = DatabaseFixture.fastOptions()
        var database = try YapDatabase.open(path: path, options: options, segmentLimit: 4096)
        try Self.register(database, rerunsForObjects: true)
        let writer = database.newConnection()
        for batch in 0..<4 {
            try writer.write { tx in
                for i in (batch * 50)..<(batch * 50 + 50) { tx.setObject(Self.person(i, 0), forKey: "p\(i)", inCollection: "people") }
            }
        }
        // Half the records dead: the even rows written again.
        try writer.write { tx in
            for i in stride(from: 0, to: 200, by: 2) { tx.setObject(Self.person(i, 1), forKey: "p\(i)", inCollection: "people") }
        }
        try database.checkpoint()
        let expected = Dictionary(uniqueKeysWithValues: (0..<200).map { ("p\($0)", Self.person($0, $0 % 2 == 0 ? 1 : 0)) })
        let reader = database.newConnection()
        reader.objectCacheEnabled = false
        _ = reader.beginLongLivedReadTransaction()
        try database.compact()
        let (held, moved) = try Self.keptLocations(database)
        #expect(held + moved == 200)
        #expect(Self.objects(database) == expected)
        #expect(try database.verify().isValid)
        // The reader from before the compaction.
        var old: [String: Person] = [:]
        reader.read { tx in
            (tx.ext("idx") as? YapDatabaseSecondaryIndexTransaction)?.iterateKeysAndObjects(matching: YapDatabaseQuery(string: "")) {
                _, key, object, _ in old[key] = object as? Person
            }
        }
        #expect(old == expected)
        reader.endLongLivedReadTransaction()
        try database.compact()
        #expect(try Self.keptLocations(database).moved > 0, "compaction moved no record: the test lost its premise")
        #expect(Self.objects(database) == expected)
        #expect(try database.verify().isValid)
        try database.close()
        database = try YapDatabase.open(path: path, options: options, segmentLimit: 4096)
        try Self.register(database, rerunsForObjects: true)
        #expect(Self.objects(database) == expected)
        #expect(try database.verify().isValid)
        try database.close()
    }

    /// `verify()` reports a kept location that reads as an older object of its row.
    @Test func verifyReportsALocationThatGivesAnOlderObject() throws {
        let fixture = try DatabaseFixture()
        try Self.register(fixture.database, rerunsForObjects: true)
        let writer = fixture.database.newConnection()
        try writer.write { tx in tx.setObject(Self.person(1, 0), forKey: "p1", inCollection: "people") }
        let first = try #require(writer.read { $0.entry(collection: "people", key: "p1") })
        try writer.write { tx in tx.setObject(Self.person(1, 1), forKey: "p1", inCollection: "people") }
        #expect(try fixture.database.verify().isValid)
        // Point the row's entries back at its first record, behind the index's back.
        try writer.write { tx in
            let key = YapDatabaseSecondaryIndex.stateKey("idx")
            guard var state = tx.extensionState(key) as? SecondaryIndexState else {
                Issue.record("no state")
                return
            }
            try state.moveObject(ofRow: first.rowid, rowKey: RowKey.encode(collection: "people", key: "p1"), to: first.object)
            tx.setExtensionState(state, forKey: key)
            tx.engineTransaction.markChanged()
        }
        let report = try fixture.database.verify()
        #expect(!report.isValid)
        #expect(report.problems.contains { $0.contains("secondary index idx") && $0.contains("column 0 entries differ") })
        #expect(Self.objects(fixture.database)["p1"] == Self.person(1, 0), "the damaged index gives the old object")
    }
}
