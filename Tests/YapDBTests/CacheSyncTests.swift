import Foundation
import Testing
@testable import YapDB

/// A reader's caches follow another connection's commits key by key: exactly the keys a commit
/// changed leave (or, under `.share`, are replaced in) the cache that held them. The sync skips a
/// cache that is empty, and walks the cache instead of the changes when it holds fewer keys than
/// the commit changed; each path has its case.
@Suite struct CacheSyncTests {
    typealias Note = LateRegistrationTests.Note

    @Test(arguments: [false, true])
    func exactlyTheChangedKeysLeaveTheCacheInUse(metadataCache: Bool) throws {
        let fixture = try DatabaseFixture(configure: CachePolicyTests.configure(.containment))
        let a = fixture.database.newConnection(), b = fixture.database.newConnection()
        try a.write { tx in
            for i in 0..<300 { tx.setObject(Note("v\(i)"), forKey: "k\(i)", inCollection: "notes", withMetadata: Note("m\(i)")) }
        }
        b.objectCacheLimit = 0
        b.metadataCacheLimit = 0
        if metadataCache { b.objectCacheEnabled = false } else { b.metadataCacheEnabled = false }
        b.read { tx in
            for i in 0..<300 {
                _ = metadataCache ? tx.metadata(forKey: "k\(i)", inCollection: "notes") : tx.object(forKey: "k\(i)", inCollection: "notes")
            }
        }
        func cached(_ i: Int) -> Bool { b.isCached(key: "k\(i)", inCollection: "notes", metadata: metadataCache) }
        #expect((0..<300).allSatisfy(cached), "b holds every key before a's commit")
        #expect(!(0..<300).contains { b.isCached(key: "k\($0)", inCollection: "notes", metadata: !metadataCache) },
                "the other cache is off and empty")

        try a.write { tx in
            for i in 0..<100 { tx.setObject(Note("w\(i)"), forKey: "k\(i)", inCollection: "notes", withMetadata: Note("n\(i)")) }
            for i in 100..<150 { tx.replaceMetadata(Note("n\(i)"), forKey: "k\(i)", inCollection: "notes") }
            for i in 150..<160 { tx.removeObject(forKey: "k\(i)", inCollection: "notes") }
        }
        b.read { _ in }
        #expect(b.snapshot == a.snapshot)
        #expect(!(0..<100).contains(where: cached), "set keys are evicted")
        #expect((100..<150).allSatisfy { cached($0) != metadataCache }, "a metadata-only change evicts the metadata alone")
        #expect(!(150..<160).contains(where: cached), "removed keys are evicted")
        #expect((160..<300).allSatisfy(cached), "unchanged keys stay")

        b.read { tx in
            #expect((tx.object(forKey: "k7", inCollection: "notes") as? Note)?.text == "w7")
            #expect((tx.metadata(forKey: "k120", inCollection: "notes") as? Note)?.text == "n120")
            #expect(tx.object(forKey: "k155", inCollection: "notes") == nil)
            #expect((tx.object(forKey: "k200", inCollection: "notes") as? Note)?.text == "v200")
        }
    }

    /// Ten cached entries (limit 5 per cache) and a commit of 4 changes (the sync walks the
    /// changes) or 54 (it walks the cached keys): the same outcome.
    @Test(arguments: [YapDatabasePolicy.containment, .share], [0, 50])
    func aSmallCacheEndsTheSameWhicheverSideIsWalked(policy: YapDatabasePolicy, inserts: Int) throws {
        let fixture = try DatabaseFixture(configure: CachePolicyTests.configure(policy))
        let a = fixture.database.newConnection(), b = fixture.database.newConnection()
        try a.write { tx in
            for i in 0..<10 { tx.setObject(Note("v\(i)"), forKey: "k\(i)", inCollection: "notes", withMetadata: Note("m\(i)")) }
        }
        b.objectCacheLimit = 5
        b.metadataCacheLimit = 5
        b.read { tx in
            for i in 0..<5 {
                _ = tx.object(forKey: "k\(i)", inCollection: "notes")
                _ = tx.metadata(forKey: "k\(i)", inCollection: "notes")
            }
        }
        let written = Note("w1")
        try a.write { tx in
            tx.setObject(written, forKey: "k1", inCollection: "notes")
            tx.replaceMetadata(Note("n2"), forKey: "k2", inCollection: "notes")
            tx.removeObject(forKey: "k3", inCollection: "notes")
            tx.setObject(Note("w7"), forKey: "k7", inCollection: "notes")
            for i in 0..<inserts { tx.setObject(Note("new \(i)"), forKey: "new\(i)", inCollection: "notes") }
        }
        b.read { _ in }
        func cached(_ key: String, metadata: Bool = false) -> Bool { b.isCached(key: key, inCollection: "notes", metadata: metadata) }
        #expect(cached("k0") && cached("k0", metadata: true) && cached("k4") && cached("k4", metadata: true), "unchanged keys stay")
        #expect(cached("k1") == (policy == .share), "a set object is evicted, or replaced under .share")
        #expect(cached("k1", metadata: true) == (policy == .share), "setObject cleared k1's metadata: evicted, or replaced")
        #expect(cached("k2") && cached("k2", metadata: true) == (policy == .share), "a metadata-only change leaves the object")
        #expect(!cached("k3") && !cached("k3", metadata: true), "a removed key is evicted")
        #expect(!cached("k7") && !cached("new0"), "a commit adds no keys")
        b.read { tx in
            let object = tx.object(forKey: "k1", inCollection: "notes") as? Note
            #expect(object?.text == "w1")
            if policy == .share { #expect(object === written, "the writer's instance") }
            #expect(tx.metadata(forKey: "k1", inCollection: "notes") == nil)
            #expect((tx.metadata(forKey: "k2", inCollection: "notes") as? Note)?.text == "n2")
            #expect(tx.object(forKey: "k3", inCollection: "notes") == nil)
            #expect((tx.object(forKey: "k4", inCollection: "notes") as? Note)?.text == "v4")
        }
    }
}
