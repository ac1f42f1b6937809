import Testing
import YapDBIndex
@testable import YapDBEngine
import TestSupport

/// The recording rules as four plain sets (the representation `Changeset` had before it
/// recorded each key once): the reference its computed sets must match.
private struct ReferenceChangeset {
    var objectChanges: Set<CollectionKeyPair> = []
    var metadataChanges: Set<CollectionKeyPair> = []
    var insertedKeys: Set<CollectionKeyPair> = []
    var removedKeys: Set<CollectionKeyPair> = []
    var removedCollections: Set<String> = []
    var allKeysRemoved = false

    mutating func recordSet(_ key: CollectionKeyPair, inserted: Bool, objectChanged: Bool, metadataChanged: Bool) {
        if inserted && !removedKeys.contains(key) { insertedKeys.insert(key) }
        if objectChanged { objectChanges.insert(key) }
        if metadataChanged { metadataChanges.insert(key) }
    }

    mutating func recordRemove(_ key: CollectionKeyPair) {
        objectChanges.remove(key)
        metadataChanges.remove(key)
        if insertedKeys.remove(key) == nil { removedKeys.insert(key) }
    }

    mutating func recordRemoveCollection(_ collection: String) {
        objectChanges = objectChanges.filter { $0.collection != collection }
        metadataChanges = metadataChanges.filter { $0.collection != collection }
        insertedKeys = insertedKeys.filter { $0.collection != collection }
        removedKeys = removedKeys.filter { $0.collection != collection }
        removedCollections.insert(collection)
    }

    mutating func recordRemoveAll() {
        self = ReferenceChangeset()
        allKeysRemoved = true
    }
}

@Suite struct ChangesetTests {
    /// Random transactions against a set of live keys: inserts of new rows (the unhashed fast
    /// path), sets and touches of existing ones, removals, collection and full clears.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func recordingMatchesTheFourSetRules(seed: UInt64) {
        var rng = SeededRandom(seed: seed)
        var changeset = Changeset(snapshot: 1)
        var reference = ReferenceChangeset()
        var live: Set<CollectionKeyPair> = []
        for step in 0..<400 {
            let key = CollectionKeyPair(collection: "c\(rng.next() % 3)", key: "k\(rng.next() % 12)")
            switch rng.next() % 20 {
            case 0..<9:
                let inserted = !live.contains(key)
                let metadata = rng.next() % 2 == 0
                live.insert(key)
                changeset.recordSet(key, inserted: inserted, objectChanged: true, metadataChanged: metadata)
                reference.recordSet(key, inserted: inserted, objectChanged: true, metadataChanged: metadata)
            case 9..<12 where live.contains(key):
                let object = rng.next() % 2 == 0, metadata = rng.next() % 2 == 0
                changeset.recordSet(key, inserted: false, objectChanged: object, metadataChanged: metadata)
                reference.recordSet(key, inserted: false, objectChanged: object, metadataChanged: metadata)
            case 12..<17 where live.contains(key):
                live.remove(key)
                changeset.recordRemove(key)
                reference.recordRemove(key)
            case 17:
                live = live.filter { $0.collection != key.collection }
                changeset.recordRemoveCollection(key.collection)
                reference.recordRemoveCollection(key.collection)
            case 18 where rng.next() % 8 == 0:
                live.removeAll()
                changeset.recordRemoveAll()
                reference.recordRemoveAll()
            default:
                continue
            }
            let context = "seed \(seed) step \(step)"
            #expect(changeset.objectChanges == reference.objectChanges, "\(context)")
            #expect(changeset.metadataChanges == reference.metadataChanges, "\(context)")
            #expect(changeset.insertedKeys == reference.insertedKeys, "\(context)")
            #expect(changeset.removedKeys == reference.removedKeys, "\(context)")
            #expect(changeset.removedCollections == reference.removedCollections, "\(context)")
            #expect(changeset.allKeysRemoved == reference.allKeysRemoved, "\(context)")
        }
    }
}
