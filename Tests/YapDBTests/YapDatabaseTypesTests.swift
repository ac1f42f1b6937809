import Foundation
import Testing
@testable import YapDB

@Suite struct YapDatabaseTypesTests {
    @Test func collectionKey() {
        let a = YapCollectionKey(collection: "c", key: "k")
        #expect(a == YapCollectionKey(collection: "c", key: "k"))
        #expect(a != YapCollectionKey(collection: "k", key: "c"))
        #expect(YapCollectionKey(collection: nil, key: "k").collection == "")
        #expect(Set([a, a, YapCollectionKey(collection: "c", key: "j")]).count == 2)
        #expect(a.description == "c/k")
        #expect(YapCollectionKey(collection: "a", key: "z") < YapCollectionKey(collection: "b", key: "a"))
    }

    @Test func policyDefaultsAndRawValues() {
        #expect(YapDatabasePolicy.containment.rawValue == 0)
        #expect(YapDatabasePolicy.share.rawValue == 1)
        #expect(YapDatabasePolicy.copy.rawValue == 2)
        #expect(SerializationRegistry().snapshot.objectPolicy(forCollection: "x") == .containment)
    }

    @Test func permittedTransactionsCompose() {
        typealias P = YapDatabasePermittedTransactions
        #expect(P.anyRead == [.syncRead, .asyncRead])
        #expect(P.anyReadWrite == [.syncReadWrite, .asyncReadWrite])
        #expect(P.anySync == [.syncRead, .syncReadWrite])
        #expect(P.anyAsync == [.asyncRead, .asyncReadWrite])
        #expect(P.anyTransaction == [.anyRead, .anyReadWrite])
        #expect(!P.anyTransaction.contains(.mainThreadOnly))
        #expect(P.anyTransaction.rawValue == 0b1111 && P.mainThreadOnly.rawValue == 0b10000)
        let readOnly: P = [.anyRead, .mainThreadOnly]
        #expect(readOnly.contains(.asyncRead) && !readOnly.contains(.syncReadWrite))
    }

    @Test func flushMemoryFlags() {
        typealias F = YapDatabaseConnectionFlushMemoryFlags
        #expect(F.all.contains(.caches) && F.all.contains(.internal))
        #expect(F.caches.rawValue == 1 && F.internal.rawValue == 4)
        #expect(!F.caches.contains(.internal))
    }

    @Test func notificationNameAndKeys() {
        #expect(Notification.Name.YapDatabaseModified.rawValue == "YapDatabaseModifiedNotification")
        let pairs: [(String, String)] = [
            (YapDatabaseNotificationKey.snapshot, "snapshot"), (YapDatabaseNotificationKey.connection, "connection"),
            (YapDatabaseNotificationKey.custom, "custom"), (YapDatabaseNotificationKey.objectChanges, "objectChanges"),
            (YapDatabaseNotificationKey.metadataChanges, "metadataChanges"), (YapDatabaseNotificationKey.insertedKeys, "insertedKeys"),
            (YapDatabaseNotificationKey.removedKeys, "removedKeys"), (YapDatabaseNotificationKey.removedCollections, "removedCollections"),
            (YapDatabaseNotificationKey.allKeysRemoved, "allKeysRemoved"), (YapDatabaseNotificationKey.extensions, "extensions"),
            (YapDatabaseSnapshotKey, "snapshot"), (YapDatabaseObjectChangesKey, "objectChanges"),
            (YapDatabaseRemovedCollectionsKey, "removedCollections"), (YapDatabaseExtensionsKey, "extensions"),
        ]
        for (constant, value) in pairs { #expect(constant == value) }
    }
}
