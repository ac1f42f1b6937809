import Foundation
import Testing
@testable import YapDB
import TestSupport

/// Changesets as a writer builds them for each kind of operation (see YapDatabaseChangeset's conventions).
enum Writes {
    static func ck(_ c: String, _ k: String) -> YapCollectionKey { YapCollectionKey(collection: c, key: k) }

    /// setObject of a new row.
    static func insert(_ c: String, _ k: String, snapshot: UInt64 = 1) -> YapDatabaseChangeset {
        YapDatabaseChangeset(snapshot: snapshot, objectChanges: [ck(c, k)], metadataChanges: [ck(c, k)], insertedKeys: [ck(c, k)])
    }
    /// setObject over an existing row.
    static func set(_ c: String, _ k: String, snapshot: UInt64 = 1) -> YapDatabaseChangeset {
        YapDatabaseChangeset(snapshot: snapshot, objectChanges: [ck(c, k)], metadataChanges: [ck(c, k)])
    }
    static func replaceObject(_ c: String, _ k: String) -> YapDatabaseChangeset {
        YapDatabaseChangeset(snapshot: 1, objectChanges: [ck(c, k)])
    }
    static func touchObject(_ c: String, _ k: String) -> YapDatabaseChangeset { replaceObject(c, k) }
    static func replaceMetadata(_ c: String, _ k: String) -> YapDatabaseChangeset {
        YapDatabaseChangeset(snapshot: 1, metadataChanges: [ck(c, k)])
    }
    static func touchMetadata(_ c: String, _ k: String) -> YapDatabaseChangeset { replaceMetadata(c, k) }
    static func touchRow(_ c: String, _ k: String) -> YapDatabaseChangeset { set(c, k) }
    static func remove(_ c: String, _ k: String) -> YapDatabaseChangeset {
        YapDatabaseChangeset(snapshot: 1, removedKeys: [ck(c, k)])
    }
    static func clear(_ c: String) -> YapDatabaseChangeset { YapDatabaseChangeset(snapshot: 1, removedCollections: [c]) }
    static func clearAll() -> YapDatabaseChangeset { YapDatabaseChangeset(snapshot: 1, allKeysRemoved: true) }

    static func note(_ c: YapDatabaseChangeset) -> Notification { c.notification(object: nil) }
}

@Suite struct ChangesetNotificationTests {
    final class FakeConnection {}

    @Test func roundTripsThroughUserInfo() throws {
        let changeset = YapDatabaseChangeset(
            snapshot: 42, objectChanges: [Writes.ck("a", "1")], metadataChanges: [Writes.ck("a", "2")],
            insertedKeys: [Writes.ck("b", "3")], removedKeys: [Writes.ck("", "4")], removedCollections: ["gone"],
            allKeysRemoved: true)
        let connection = FakeConnection()
        let note = changeset.notification(object: nil, connection: connection, custom: "custom!", extensions: ["view": [1, 2]])
        #expect(note.name == .YapDatabaseModified)
        let info = try #require(note.userInfo)
        #expect(info["snapshot"] as? UInt64 == 42)
        #expect(info["objectChanges"] as? Set<YapCollectionKey> == [Writes.ck("a", "1")])
        #expect(info["removedCollections"] as? Set<String> == ["gone"])
        #expect(info["allKeysRemoved"] as? Bool == true)
        #expect(info["custom"] as? String == "custom!")
        #expect(info["connection"] as AnyObject? === connection)
        #expect((info["extensions"] as? [String: Any])?["view"] as? [Int] == [1, 2])
        #expect(YapDatabaseChangeset(notification: note) == changeset)
    }

    @Test func emptySetsArePresentAndOptionalPartsAbsent() throws {
        let info = YapDatabaseChangeset(snapshot: 1).userInfo()
        #expect(info["insertedKeys"] as? Set<YapCollectionKey> == [])
        #expect(info["allKeysRemoved"] as? Bool == false)
        #expect(info["connection"] == nil && info["custom"] == nil && info["extensions"] == nil)
    }

    @Test func foreignNotificationsCarryNoChangeset() {
        #expect(YapDatabaseChangeset(notification: Notification(name: .init("other"))) == nil)
        #expect(YapDatabaseChangeset(userInfo: ["snapshot": NSNumber(value: 9)])?.snapshot == 9)
        #expect(YapDatabaseChangeset(userInfo: ["snapshot": "x"]) == nil)
    }
}

@Suite struct ChangesetQueriesTests {
    typealias Q = ChangesetQueries

    func notes(_ changesets: YapDatabaseChangeset...) -> [Notification] { changesets.map(Writes.note) }

    @Test func hasChangeForKey() {
        #expect(Q.hasChange(forKey: "k", inCollection: "c", in: notes(Writes.insert("c", "k"))))
        #expect(Q.hasChange(forKey: "k", inCollection: "c", in: notes(Writes.set("c", "k"))))
        #expect(Q.hasChange(forKey: "k", inCollection: "c", in: notes(Writes.touchObject("c", "k"))))
        #expect(Q.hasChange(forKey: "k", inCollection: "c", in: notes(Writes.touchMetadata("c", "k"))))
        #expect(Q.hasChange(forKey: "k", inCollection: "c", in: notes(Writes.remove("c", "k"))))
        #expect(Q.hasChange(forKey: "k", inCollection: "c", in: notes(Writes.clear("c"))))
        #expect(Q.hasChange(forKey: "k", inCollection: "c", in: notes(Writes.clearAll())))
        #expect(!Q.hasChange(forKey: "k", inCollection: "c", in: notes(Writes.set("c", "other"), Writes.set("d", "k"), Writes.clear("d"))))
        #expect(!Q.hasChange(forKey: "k", inCollection: "c", in: [Notification]()))
        // A later notification in the list counts.
        #expect(Q.hasChange(forKey: "k", inCollection: "c", in: notes(Writes.set("x", "y"), Writes.remove("c", "k"))))
        // nil collection means "".
        #expect(Q.hasChange(forKey: "k", inCollection: nil, in: notes(Writes.set("", "k"))))
    }

    @Test func objectAndMetadataHalves() {
        let touchObject = notes(Writes.touchObject("c", "k"))
        #expect(Q.hasObjectChange(forKey: "k", inCollection: "c", in: touchObject))
        #expect(!Q.hasMetadataChange(forKey: "k", inCollection: "c", in: touchObject))
        let touchMetadata = notes(Writes.touchMetadata("c", "k"))
        #expect(!Q.hasObjectChange(forKey: "k", inCollection: "c", in: touchMetadata))
        #expect(Q.hasMetadataChange(forKey: "k", inCollection: "c", in: touchMetadata))
        let row = notes(Writes.touchRow("c", "k"))
        #expect(Q.hasObjectChange(forKey: "k", inCollection: "c", in: row) && Q.hasMetadataChange(forKey: "k", inCollection: "c", in: row))
        for both in [notes(Writes.remove("c", "k")), notes(Writes.clear("c")), notes(Writes.clearAll()),
                     notes(YapDatabaseChangeset(snapshot: 1, insertedKeys: [Writes.ck("c", "k")]))] {
            #expect(Q.hasObjectChange(forKey: "k", inCollection: "c", in: both))
            #expect(Q.hasMetadataChange(forKey: "k", inCollection: "c", in: both))
        }
        #expect(!Q.hasObjectChange(forCollection: "c", in: touchMetadata))
        #expect(Q.hasMetadataChange(forCollection: "c", in: touchMetadata))
        #expect(Q.hasObjectChange(forCollection: "c", in: touchObject))
        #expect(!Q.hasMetadataChange(forCollection: "c", in: touchObject))
    }

    @Test func hasChangeForCollection() {
        #expect(Q.hasChange(forCollection: "c", in: notes(Writes.set("c", "a"))))
        #expect(Q.hasChange(forCollection: "c", in: notes(Writes.remove("c", "a"))))
        #expect(Q.hasChange(forCollection: "c", in: notes(Writes.clear("c"))))
        #expect(Q.hasChange(forCollection: "c", in: notes(Writes.clearAll())))
        #expect(!Q.hasChange(forCollection: "c", in: notes(Writes.set("d", "a"), Writes.clear("e"))))
    }

    @Test func hasChangeForAnyKeys() {
        let n = notes(Writes.set("c", "a"), Writes.remove("c", "b"))
        #expect(Q.hasChange(forAnyKeys: ["x", "a"], inCollection: "c", in: n))
        #expect(Q.hasChange(forAnyKeys: Set(["b"]), inCollection: "c", in: n))
        #expect(!Q.hasChange(forAnyKeys: ["x", "y"], inCollection: "c", in: n))
        #expect(!Q.hasChange(forAnyKeys: ["a"], inCollection: "d", in: n))
        #expect(!Q.hasChange(forAnyKeys: [String](), inCollection: "c", in: notes(Writes.clearAll())))
        #expect(Q.hasChange(forAnyKeys: ["zzz"], inCollection: "c", in: notes(Writes.clear("c"))))
        let many = (0..<100).map { "k\($0)" }
        #expect(Q.hasChange(forAnyKeys: many, inCollection: "c", in: notes(Writes.set("c", "k57"))))
        #expect(Q.hasObjectChange(forAnyKeys: ["a"], inCollection: "c", in: notes(Writes.touchObject("c", "a"))))
        #expect(!Q.hasMetadataChange(forAnyKeys: ["a"], inCollection: "c", in: notes(Writes.touchObject("c", "a"))))
    }

    @Test func clears() {
        #expect(Q.didClearCollection("c", in: notes(Writes.clear("c"))))
        #expect(Q.didClearCollection("c", in: notes(Writes.clearAll())))
        #expect(!Q.didClearCollection("c", in: notes(Writes.clear("d"), Writes.remove("c", "k"))))
        #expect(Q.didClearAllCollections(in: notes(Writes.set("a", "b"), Writes.clearAll())))
        #expect(!Q.didClearAllCollections(in: notes(Writes.clear("c"))))
    }

    @Test func enumerateChangedKeysListsEachKeyOnceAndStops() {
        let n = notes(Writes.set("c", "b"), Writes.touchMetadata("c", "a"), Writes.remove("c", "b"),
                      Writes.insert("c", "d"), Writes.set("other", "z"), Writes.clear("c"))
        var seen: [String] = []
        Q.enumerateChangedKeys(inCollection: "c", in: n) { key, _ in seen.append(key) }
        #expect(seen == ["b", "a", "d"])
        var first: [String] = []
        Q.enumerateChangedKeys(inCollection: "c", in: n) { key, stop in first.append(key); stop = true }
        #expect(first == ["b"])
        var none = 0
        Q.enumerateChangedKeys(inCollection: "empty", in: n) { _, _ in none += 1 }
        #expect(none == 0)
        var all: [YapCollectionKey] = []
        Q.enumerateChangedCollectionKeys(in: n) { ck, _ in all.append(ck) }
        #expect(Set(all) == [Writes.ck("c", "a"), Writes.ck("c", "b"), Writes.ck("c", "d"), Writes.ck("other", "z")])
        #expect(all.count == 4)
    }

    @Test func foreignNotificationsAreSkipped() {
        let n = [Notification(name: .init("x"), object: nil, userInfo: ["objectChanges": 1]), Writes.note(Writes.set("c", "k"))]
        #expect(Q.hasChange(forKey: "k", inCollection: "c", in: n))
        #expect(Q.changesets(in: n).count == 1)
    }

    @Test func changesetFormsAgree() {
        let cs = [Writes.set("c", "k"), Writes.clear("d")]
        #expect(Q.hasChange(forKey: "k", inCollection: "c", in: cs))
        #expect(Q.hasChange(forKey: "anything", inCollection: "d", in: cs))
        #expect(!Q.hasChange(forKey: "k", inCollection: "e", in: cs))
        #expect(!YapDatabaseChangeset(snapshot: 3).hasChange(forCollection: "c"))
        #expect(YapDatabaseChangeset(snapshot: 3).isEmpty && !Writes.touchObject("c", "k").isEmpty)
    }
}

/// A read-write transaction far larger than its write buffer (`writeBufferLimit`: the buffer is
/// applied to the trees many times before the commit) still lists every key it changed: in its
/// notification, in the changeset queries, and in what another connection's cache follows; the
/// rows it removed and the collection it cleared with them.
@Suite struct LargeTransactionChangesetTests {
    static func ck(_ collection: String, _ key: String) -> YapCollectionKey { YapCollectionKey(collection: collection, key: key) }

    @Test func everyKeyIsListedAfterManyBufferApplies() throws {
        let directory = TemporaryDirectory("yapdb-large-changeset")
        defer { directory.remove() }
        let options = YapDatabaseOptions()
        options.durability = .off
        options.writeBufferLimit = 16 << 10
        let database = try YapDatabase.open(url: URL(fileURLWithPath: directory.file("t.yapdb")), options: options)
        defer { try? database.close() }
        let writer = database.newConnection()
        writer.readWrite { tx in
            for i in 0..<100 { tx.setObject("g\(i)", forKey: "g\(i)", inCollection: "gone") }
            for i in 0..<200 { tx.setObject("old", forKey: "r\(i)", inCollection: "rows") }
        }
        let observer = database.newConnection()
        observer.beginLongLivedReadTransaction()
        observer.read { tx in
            #expect(tx.object(forKey: "r60", inCollection: "rows") as? String == "old")
            #expect(tx.object(forKey: "r10", inCollection: "rows") as? String == "old")
        }
        let count = 12_000
        writer.readWrite { tx in
            for i in 0..<count { tx.setObject("n", forKey: "n\(i)", inCollection: "rows") }
            for i in 0..<50 { tx.removeObject(forKey: "r\(i)", inCollection: "rows") }
            tx.setObject("new", forKey: "r60", inCollection: "rows")
            tx.removeAllObjects(inCollection: "gone")
            for i in count..<(count + 3_000) { tx.setObject("n", forKey: "n\(i)", inCollection: "rows") }
        }
        let notes = observer.beginLongLivedReadTransaction()
        #expect(notes.count == 1)
        let info = try #require(notes.first?.userInfo)
        let inserted = Set((0..<(count + 3_000)).map { Self.ck("rows", "n\($0)") })
        #expect(info["insertedKeys"] as? Set<YapCollectionKey> == inserted)
        #expect(info["objectChanges"] as? Set<YapCollectionKey> == inserted.union([Self.ck("rows", "r60")]))
        #expect(info["metadataChanges"] as? Set<YapCollectionKey> == inserted.union([Self.ck("rows", "r60")]))
        #expect(info["removedKeys"] as? Set<YapCollectionKey> == Set((0..<50).map { Self.ck("rows", "r\($0)") }))
        #expect(info["removedCollections"] as? Set<String> == ["gone"])
        #expect(info["allKeysRemoved"] as? Bool == false)
        #expect(observer.hasChange(forKey: "n14999", inCollection: "rows", in: notes))
        #expect(observer.hasObjectChange(forKey: "r60", inCollection: "rows", in: notes))
        #expect(observer.hasChange(forKey: "r10", inCollection: "rows", in: notes))
        #expect(!observer.hasChange(forKey: "r70", inCollection: "rows", in: notes))
        #expect(observer.didClearCollection("gone", in: notes))
        observer.read { tx in
            #expect(tx.object(forKey: "r60", inCollection: "rows") as? String == "new", "the cache followed the commit")
            #expect(tx.object(forKey: "r10", inCollection: "rows") == nil)
            #expect(tx.numberOfKeys(inCollection: "rows") == UInt(count + 3_000 + 150))
            #expect(tx.numberOfKeys(inCollection: "gone") == 0)
        }
    }

    /// A rollback of a transaction that wrote more rows than the connection tracks one by one
    /// for its caches leaves the caches holding nothing it wrote.
    @Test func aLargeRollbackLeavesTheCacheClean() throws {
        let directory = TemporaryDirectory("yapdb-large-rollback")
        defer { directory.remove() }
        let options = YapDatabaseOptions()
        options.durability = .off
        let database = try YapDatabase.open(url: URL(fileURLWithPath: directory.file("t.yapdb")), options: options)
        defer { try? database.close() }
        let connection = database.newConnection()
        connection.readWrite { tx in tx.setObject("kept", forKey: "k0", inCollection: "c") }
        let rows = YapDatabaseReadWriteTransaction.trackedKeyLimit + 10
        connection.readWrite { tx in
            for i in 1..<rows { tx.setObject("written", forKey: "k\(i)", inCollection: "c") }
            tx.setObject("written", forKey: "k0", inCollection: "c")
            #expect(connection.objectCacheLimit > 0 && tx.object(forKey: "k\(rows - 1)", inCollection: "c") as? String == "written")
            tx.rollback()
        }
        for i in [0, 1, rows / 2, rows - 1] { #expect(!connection.isCached(key: "k\(i)", inCollection: "c")) }
        connection.read { tx in
            #expect(tx.object(forKey: "k0", inCollection: "c") as? String == "kept")
            #expect(tx.object(forKey: "k\(rows - 1)", inCollection: "c") == nil)
        }
    }
}
