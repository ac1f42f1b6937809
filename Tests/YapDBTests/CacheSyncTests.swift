import Foundation
import Testing
@testable import YapDB

/// A reader's caches follow another connection's commits key by key under `.containment` (the
/// default policy): exactly the keys a commit changed leave the cache that held them. The sync
/// skips a cache that is empty, so each case keeps one cache off and fills the other.
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
}
