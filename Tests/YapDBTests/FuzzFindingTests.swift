import Foundation
import Testing
import YapDB

/// Regression tests for bugs the fuzz harness found (Fuzz/Crashes/ holds the inputs; the
/// corpus replay tests in YapDBFuzzEntryTests replay them too). Each says which input.
@Suite struct FuzzFindingTests {
    /// Fuzz/Crashes/operations/touch-after-write-stale-cache: a transaction that wrote a row
    /// and then touched it marked the row "touched only" under the default (containment)
    /// policy, so another connection kept serving the old object and metadata from its cache.
    @Test(arguments: [YapDatabasePolicy.containment, .share, .copy])
    func writeThenTouchInOneTransactionReachesOtherCaches(policy: YapDatabasePolicy) throws {
        let fixture = try DatabaseFixture { database in
            database.setObjectPolicy(policy, forCollection: "c")
            database.setMetadataPolicy(policy, forCollection: "c")
        }
        let writer = fixture.database.newConnection(), reader = fixture.database.newConnection()
        writer.readWrite { tx in tx.setObject(Data("old".utf8), forKey: "k", inCollection: "c", withMetadata: Data("m1".utf8)) }
        let cached = reader.read { tx in (tx.object(forKey: "k", inCollection: "c") as? Data, tx.metadata(forKey: "k", inCollection: "c") as? Data) }
        #expect(cached.0 == Data("old".utf8) && cached.1 == Data("m1".utf8))

        writer.readWrite { tx in
            tx.replaceObject(Data("new".utf8), forKey: "k", inCollection: "c")
            tx.replaceMetadata(Data("m2".utf8), forKey: "k", inCollection: "c")
            tx.touchRow(forKey: "k", inCollection: "c")
        }
        let seen = reader.read { tx in (tx.object(forKey: "k", inCollection: "c") as? Data, tx.metadata(forKey: "k", inCollection: "c") as? Data) }
        #expect(seen.0 == Data("new".utf8), "the reader's cache must not keep the object the writer replaced")
        #expect(seen.1 == Data("m2".utf8), "the reader's cache must not keep the metadata the writer replaced")
    }
}
