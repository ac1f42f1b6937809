import Foundation
import Testing
@testable import YapDB
import TestSupport

/// The lending reads (`withSerializedObject`, `withSerializedMetadata`,
/// `iterateKeysAndSerializedObjects`): the same bytes as the copying forms, in read-only and
/// read-write transactions, across checkpoints and compaction, and a typed error for damage.
@Suite struct LendingReadTests {
    /// A value no two rows share, not compressible (so it is stored as it is when compression is off).
    static func value(_ i: Int, version: Int = 0) -> Data {
        var generator = SeededRandom(seed: UInt64(i * 7919 + version * 104_729 + 1))
        return Data((0..<(40 + i % 37)).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    static func key(_ i: Int) -> String { String(format: "key-%05d", i) }

    /// Stores `Data` as it is (the built-in format would add a type tag), so the stored bytes
    /// are the values themselves.
    static func storeRawBytes(_ database: YapDatabase) {
        database.registerDefaultSerializer { _, _, object in object as! Data }
        database.registerDefaultDeserializer { _, _, data in data }
    }

    /// Every row of `collection` read by the copying forms.
    static func copied(_ tx: YapDatabaseReadTransaction, _ collection: String) -> [(String, Data, Data?)] {
        tx.allKeys(inCollection: collection).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }.map {
            ($0, tx.serializedObject(forKey: $0, inCollection: collection)!, tx.serializedMetadata(forKey: $0, inCollection: collection))
        }
    }

    /// Every row of `collection` read by the lending forms.
    static func lent(_ tx: YapDatabaseReadTransaction, _ collection: String) throws -> [(String, Data, Data?)] {
        var rows: [(String, Data, Data?)] = []
        try tx.iterateKeysAndSerializedObjects(inCollection: collection) { key, object, _ in
            rows.append((String(decoding: key, as: UTF8.self), Data(object), nil))
        }
        for i in rows.indices {
            let key = rows[i].0
            let object = try tx.withSerializedObject(forKey: key, inCollection: collection) { Data($0) }
            #expect(object == rows[i].1, "the point read and the iteration lend the same bytes for \(key)")
            rows[i].2 = try tx.withSerializedMetadata(forKey: key, inCollection: collection) { Data($0) }
        }
        return rows
    }

    static func expectSame(_ a: [(String, Data, Data?)], _ b: [(String, Data, Data?)], _ comment: Comment) {
        #expect(a.count == b.count, comment)
        for (x, y) in zip(a, b) {
            #expect(x.0 == y.0 && x.1 == y.1 && x.2 == y.2, comment)
        }
    }

    static func fill(_ tx: YapDatabaseReadWriteTransaction, _ range: Range<Int>, version: Int = 0) {
        for i in range {
            if i % 3 == 0 {
                tx.setObject(value(i, version: version), forKey: key(i), inCollection: "c", withMetadata: value(i + 1000, version: version))
            } else {
                tx.setObject(value(i, version: version), forKey: key(i), inCollection: "c")
            }
        }
    }

    @Test func lendingFormsGiveTheCopyingFormsBytes() throws {
        let fixture = try DatabaseFixture(configure: Self.storeRawBytes)
        let connection = fixture.database.newConnection()
        connection.readWrite { tx in
            Self.fill(tx, 0..<300)
            tx.setObject(Data(), forKey: "empty", inCollection: "c")
            tx.setObject(Self.value(1), forKey: "other", inCollection: "d")
        }
        try connection.read { tx in
            let lent = try Self.lent(tx, "c")
            Self.expectSame(lent, Self.copied(tx, "c"), "read-only: lending = copying")
            #expect(lent.count == 301)
            #expect(lent.filter { $0.2 != nil }.count == 100, "rows without metadata lend none")
            var called = false
            #expect(try tx.withSerializedObject(forKey: "missing", inCollection: "c") { _ in called = true } == nil)
            #expect(try tx.withSerializedMetadata(forKey: Self.key(1), inCollection: "c") { _ in called = true } == nil)
            #expect(!called, "no row (or no metadata): the body is not called")
            #expect(try tx.withSerializedObject(forKey: "empty", inCollection: "c") { $0.count } == 0)
            #expect(try tx.withSerializedObject(forKey: "other", inCollection: "d") { Data($0) } == Self.value(1))

            // A range, reversed, and a stop.
            var keys: [String] = []
            try tx.iterateKeysAndSerializedObjects(inCollection: "c", from: Self.key(10), through: Self.key(19), reversed: true) { key, object, _ in
                keys.append(String(decoding: key, as: UTF8.self))
                #expect(Data(object) == tx.serializedObject(forKey: keys.last!, inCollection: "c"))
            }
            #expect(keys == (10...19).reversed().map(Self.key))
            var visited = 0
            try tx.iterateKeysAndSerializedObjects(inCollection: "c") { _, _, stop in
                visited += 1
                if visited == 12 { stop = true }
            }
            #expect(visited == 12, "stop ends the walk, read-ahead rows are not handed out")
            var none = 0
            try tx.iterateKeysAndSerializedObjects(inCollection: "nothing") { _, _, _ in none += 1 }
            #expect(none == 0)
        }
    }

    @Test func aReadWriteTransactionLendsItsOwnWrites() throws {
        let fixture = try DatabaseFixture(configure: Self.storeRawBytes)
        let connection = fixture.database.newConnection()
        connection.readWrite { tx in Self.fill(tx, 0..<100) }
        try connection.readWrite { tx in
            Self.fill(tx, 50..<150, version: 1)
            tx.removeObject(forKey: Self.key(3), inCollection: "c")
            let lent = try Self.lent(tx, "c")
            Self.expectSame(lent, Self.copied(tx, "c"), "read-write: lending = copying, own writes included")
            #expect(lent.count == 149)
            #expect(try tx.withSerializedObject(forKey: Self.key(60), inCollection: "c") { Data($0) } == Self.value(60, version: 1))
            #expect(try tx.withSerializedObject(forKey: Self.key(10), inCollection: "c") { Data($0) } == Self.value(10))
            #expect(try tx.withSerializedObject(forKey: Self.key(3), inCollection: "c") { _ in 1 } == nil, "a removed row lends nothing")
            // A write inside the iteration is allowed when the block then stops.
            var visits = 0
            try tx.iterateKeysAndSerializedObjects(inCollection: "c") { _, _, stop in
                visits += 1
                tx.setObject(Data([1]), forKey: "written-during", inCollection: "c")
                stop = true
            }
            #expect(visits == 1)
            #expect(try tx.withSerializedObject(forKey: "written-during", inCollection: "c") { Data($0) } == Data([1]))
        }
    }

    @Test func lentBytesSurviveCheckpointsCompactionAndReopen() throws {
        let directory = TemporaryDirectory("yapdb-lending")
        defer { directory.remove() }
        let path = directory.file("test.yapdb")
        let options = DatabaseFixture.fastOptions()
        var database: YapDatabase? = try YapDatabase.open(path: path, options: options, segmentLimit: 4096)
        Self.storeRawBytes(database!)
        let connection = database!.newConnection()
        connection.readWrite { tx in Self.fill(tx, 0..<400) }
        connection.readWrite { tx in
            Self.fill(tx, 0..<200, version: 2)
            for i in stride(from: 200, to: 400, by: 2) { tx.removeObject(forKey: Self.key(i), inCollection: "c") }
        }
        let expected = try connection.read { tx in try Self.lent(tx, "c") }
        connection.read { tx in Self.expectSame(expected, Self.copied(tx, "c"), "before maintenance") }

        // A read transaction that began before a rewrite and a compaction keeps lending the
        // bytes of its snapshot.
        let writer = database!.newConnection()
        try connection.read { tx in
            writer.readWrite { tx in Self.fill(tx, 0..<100, version: 3) }
            try database!.checkpoint()
            try database!.compact()
            Self.expectSame(try Self.lent(tx, "c"), expected, "an open snapshot after checkpoint and compaction")
        }
        let rewritten = try connection.read { tx in try Self.lent(tx, "c") }
        #expect(rewritten.first?.1 == Self.value(0, version: 3))
        connection.read { tx in Self.expectSame(rewritten, Self.copied(tx, "c"), "after checkpoint and compaction") }

        try database!.close()
        database = try YapDatabase.open(path: path, options: options, segmentLimit: 4096)
        try database!.newConnection().read { tx in Self.expectSame(try Self.lent(tx, "c"), rewritten, "after reopening") }
        try database!.close()
        database = nil
    }

    @Test func damagedBytesThrowATypedError() throws {
        let options = DatabaseFixture.fastOptions()
        options.compression = .none
        let fixture = try DatabaseFixture(options: options, configure: Self.storeRawBytes)
        let connection = fixture.database.newConnection()
        let target = Self.value(5)
        connection.readWrite { tx in
            for i in 0..<10 { tx.setObject(Self.value(i), forKey: Self.key(i), inCollection: "c") }
        }
        // Flip one byte of row 5's stored value where it lies in its log segment.
        let folder = URL(fileURLWithPath: fixture.url.deletingLastPathComponent().path)
        var flipped = false
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.contains("-seg-") {
            let file = folder.appendingPathComponent(name)
            var bytes = try Data(contentsOf: file)
            guard let range = bytes.range(of: target) else { continue }
            bytes[range.lowerBound + 3] ^= 0x5A
            let handle = try FileHandle(forWritingTo: file)
            try handle.seek(toOffset: UInt64(range.lowerBound + 3))
            try handle.write(contentsOf: Data([bytes[range.lowerBound + 3]]))
            try handle.close()
            flipped = true
        }
        #expect(flipped, "the value was found in a segment file")
        try connection.read { (tx) throws in
            #expect(throws: YapDatabaseError.self) { _ = try tx.withSerializedObject(forKey: Self.key(5), inCollection: "c") { Data($0) } }
            do throws(YapDatabaseError) {
                _ = try tx.withSerializedObject(forKey: Self.key(5), inCollection: "c") { Data($0) }
                Issue.record("the damaged row read without an error")
            } catch {
                guard case .corrupted = error else { Issue.record("expected corrupted, got \(error)"); return }
            }
            #expect(tx.serializedObject(forKey: Self.key(5), inCollection: "c") == nil, "the copying form answers nil for damage")
            #expect(try tx.withSerializedObject(forKey: Self.key(4), inCollection: "c") { Data($0) } == Self.value(4), "other rows still read")
            var handedOut: [String] = []
            #expect(throws: YapDatabaseError.self) {
                try tx.iterateKeysAndSerializedObjects(inCollection: "c") { key, _, _ in handedOut.append(String(decoding: key, as: UTF8.self)) }
            }
            #expect(handedOut == (0..<5).map(Self.key), "the rows before the damaged one were handed out, in order")
        }
    }
}
