/// A connection's cache of decoded objects (or metadata) by (collection, key): a strict LRU by
/// count. A concrete, non-generic type on purpose: `LRUCache` is generic, and generic
/// `package` code is not specialized in other modules, so the public API layer calls these
/// methods, which are compiled (and specialized) here.
///
/// Threading: not thread-safe; a connection uses it from its own serial queue only.
package struct ObjectCache {
    @usableFromInline var lru: LRUCache<CollectionKeyPair, Any>

    /// A cache holding at most `limit` entries (0 = unlimited).
    package init(limit: Int) { lru = LRUCache(limit: limit) }

    /// The cached value, made the most recently used; nil on a miss.
    package mutating func value(collection: String, key: String) -> Any? {
        lru.value(forKey: CollectionKeyPair(collection: collection, key: key))
    }

    /// Caches `value`, evicting the least recently used entry when full.
    package mutating func set(_ value: Any, collection: String, key: String) {
        _ = lru.setValue(value, forKey: CollectionKeyPair(collection: collection, key: key))
    }

    /// Caches `value` only if the key is already cached (keeps the cache's working set).
    package mutating func replaceIfPresent(_ value: Any, collection: String, key: String) {
        let pair = CollectionKeyPair(collection: collection, key: key)
        if lru.contains(pair) { _ = lru.setValue(value, forKey: pair) }
    }

    /// Evicts one key.
    package mutating func remove(collection: String, key: String) {
        _ = lru.removeValue(forKey: CollectionKeyPair(collection: collection, key: key))
    }

    /// Evicts every key of `collection`.
    package mutating func removeCollection(_ collection: String) {
        var doomed: [CollectionKeyPair] = []
        lru.forEach { pair, _ in
            if pair.collection == collection { doomed.append(pair) }
            return true
        }
        for pair in doomed { _ = lru.removeValue(forKey: pair) }
    }

    /// Evicts everything.
    package mutating func removeAll() { lru.removeAll() }

    /// Whether the key is cached (does not change the order).
    package func contains(collection: String, key: String) -> Bool {
        lru.contains(CollectionKeyPair(collection: collection, key: key))
    }

    /// The most entries kept (0 = unlimited); lowering it evicts at once.
    package var limit: Int {
        get { lru.limit }
        set { lru.limit = newValue }
    }

    package var count: Int { lru.count }
}
