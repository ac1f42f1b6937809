import Foundation
import Testing
@testable import YapDB

/// `.share` and `.copy` update another connection's cache only for keys that cache already
/// holds; a commit never adds keys to it (issue 10, item 2; YapDatabase's rule).
@Suite struct CachePolicyTests {
    typealias Note = LateRegistrationTests.Note

    static func configure(_ policy: YapDatabasePolicy) -> (YapDatabase) -> Void {
        { database in
            database.registerSerializer(LateRegistrationTests.encodeNote, forCollection: "notes")
            database.registerDeserializer(LateRegistrationTests.decodeNote, forCollection: "notes")
            database.setObjectPolicy(policy, forCollection: "notes")
            database.setMetadataPolicy(policy, forCollection: "notes")
        }
    }

    @Test(arguments: [YapDatabasePolicy.share, .copy])
    func aCommitNeverAddsKeysToAnotherCache(policy: YapDatabasePolicy) throws {
        let fixture = try DatabaseFixture(configure: Self.configure(policy))
        let a = fixture.database.newConnection(), b = fixture.database.newConnection()
        try a.write { tx in tx.setObject(Note("seed"), forKey: "seed", inCollection: "notes") }
        #expect(b.read { tx in (tx.object(forKey: "seed", inCollection: "notes") as? Note)?.text } == "seed")
        try a.write { tx in
            tx.setObject(Note("o"), forKey: "k", inCollection: "notes", withMetadata: Note("m"))
            for i in 0..<20 { tx.setObject(Note("\(i)"), forKey: "n\(i)", inCollection: "notes") }
        }
        b.read { _ in }   // b catches up with a's commit without reading the keys
        #expect(b.snapshot == a.snapshot)
        #expect(!b.isCached(key: "k", inCollection: "notes"), "the object was not added to b's cache")
        #expect(!b.isCached(key: "k", inCollection: "notes", metadata: true), "nor the metadata")
        #expect(!b.isCached(key: "n7", inCollection: "notes"))
        #expect(b.isCached(key: "seed", inCollection: "notes"), "what b held stays")
        #expect(b.read { tx in (tx.object(forKey: "k", inCollection: "notes") as? Note)?.text } == "o")
    }

    @Test(arguments: [YapDatabasePolicy.share, .copy])
    func aHeldKeyTakesTheWritersInstanceOrACopy(policy: YapDatabasePolicy) throws {
        let fixture = try DatabaseFixture(configure: Self.configure(policy))
        let a = fixture.database.newConnection(), b = fixture.database.newConnection()
        try a.write { tx in tx.setObject(Note("v1"), forKey: "k", inCollection: "notes", withMetadata: Note("m1")) }
        b.read { tx in
            _ = tx.object(forKey: "k", inCollection: "notes")
            _ = tx.metadata(forKey: "k", inCollection: "notes")
        }
        let object = Note("v2"), metadata = Note("m2")
        try a.write { tx in tx.setObject(object, forKey: "k", inCollection: "notes", withMetadata: metadata) }
        b.read { _ in }
        #expect(b.isCached(key: "k", inCollection: "notes") && b.isCached(key: "k", inCollection: "notes", metadata: true))
        let (seen, seenMetadata) = b.read { tx in
            (tx.object(forKey: "k", inCollection: "notes") as? Note, tx.metadata(forKey: "k", inCollection: "notes") as? Note)
        }
        #expect(seen?.text == "v2" && seenMetadata?.text == "m2")
        if policy == .share {
            #expect(seen === object && seenMetadata === metadata, ".share: b holds a's instances")
        } else {
            #expect(seen !== object && seenMetadata !== metadata, ".copy: b holds copies")
            #expect(seen?.isCopy == true && seenMetadata?.isCopy == true, "made by NSCopying, not decoded again")
        }
    }
}
