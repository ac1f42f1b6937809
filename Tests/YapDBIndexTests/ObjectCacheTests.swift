// ObjectCache's hashed keys against its (collection, key) string forms.
import Testing
@testable import YapDBIndex

@Suite struct ObjectCacheTests {
    /// A key made once finds, replaces and evicts the same entry as the string forms, and
    /// entries stay findable while many removals shift the dictionary's clusters.
    @Test func hashedKeysAgreeWithTheStringFormsThroughManyRemovals() {
        var cache = ObjectCache(limit: 0)
        let collections = ["a", "b", "a collection name longer than fifteen bytes"]
        func name(_ i: Int) -> (collection: String, key: String) { (collections[i % 3], "key-\(i)") }
        for i in 0..<3_000 { cache.set(i, collection: name(i).collection, key: name(i).key) }
        #expect(cache.count == 3_000)
        for i in stride(from: 0, to: 3_000, by: 2) {
            let key = ObjectCache.Key(collection: name(i).collection, key: name(i).key)
            #expect(cache.contains(key))
            cache.remove(key)
        }
        for i in stride(from: 1, to: 3_000, by: 4) { cache.set(-i, ObjectCache.Key(collection: name(i).collection, key: name(i).key)) }
        #expect(cache.count == 1_500)
        for i in 0..<3_000 {
            let value = cache.value(collection: name(i).collection, key: name(i).key) as? Int
            #expect(value == (i % 2 == 0 ? nil : (i % 4 == 1 ? -i : i)), "entry \(i)")
        }
        #expect(cache.contains(collection: "b", key: "key-1") && !cache.contains(collection: "a", key: "key-1"),
                "the same key in another collection is another entry")
        var empty = ObjectCache(limit: 0)
        empty.remove(ObjectCache.Key(collection: "a", key: "x"))
        #expect(empty.count == 0 && !empty.contains(ObjectCache.Key(collection: "a", key: "x")))
    }
}
