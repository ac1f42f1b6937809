/// A connection's cache of decoded objects (or metadata) by (collection, key): a strict LRU by
/// count. A concrete, non-generic type on purpose: `LRUCache` is generic, and generic
/// `package` code is not specialized in other modules, so the public API layer calls these
/// methods, which are compiled (and specialized) here.
///
/// **Hashing.** Entries are indexed by `ObjectCache.Key`, which carries the hash of its
/// (collection, key) strings, computed once when the key is made. Hashing two strings is most
/// of the cost of a cache operation, and a dictionary removal hashes the entries it shifts
/// back as well; with the hash stored, those rehashes cost a multiply each. A caller that
/// touches both caches for one key (the cache sync, a removal) makes the key once and passes
/// it to both.
///
/// Threading: not thread-safe; a connection uses it from its own serial queue only.
package struct ObjectCache {
    /// A (collection, key) with its string hash computed once.
    package struct Key: Hashable {
        package let pair: CollectionKeyPair
        /// `pair`'s hash (the process's seeded `Hasher` over both strings).
        @usableFromInline let hash: Int

        @inlinable
        package init(_ pair: CollectionKeyPair) {
            self.pair = pair
            hash = pair.hashValue
        }

        @inlinable
        package init(collection: String, key: String) { self.init(CollectionKeyPair(collection: collection, key: key)) }

        @inlinable
        package static func == (lhs: Key, rhs: Key) -> Bool { lhs.hash == rhs.hash && lhs.pair == rhs.pair }

        @inlinable
        package func hash(into hasher: inout Hasher) { hasher.combine(hash) }

        /// What the dictionary hashes with (the standard library's customization point for
        /// `Hashable`): the stored hash is already a seeded `Hasher` output, so it is mixed with
        /// the dictionary's own seed by one multiply and rotate instead of a second `Hasher` run
        /// (a cache hit would otherwise hash twice).
        @inlinable
        package func _rawHashValue(seed: Int) -> Int {
            let mixed = UInt64(UInt(bitPattern: hash ^ seed)) &* 0x9E37_79B9_7F4A_7C15
            return Int(truncatingIfNeeded: mixed >> 32 | mixed << 32)
        }
    }

    @usableFromInline var lru: LRUCache<Key, Any>

    /// A cache holding at most `limit` entries (0 = unlimited).
    package init(limit: Int) { lru = LRUCache(limit: limit) }

    /// The cached value, made the most recently used; nil on a miss.
    package mutating func value(collection: String, key: String) -> Any? {
        lru.value(forKey: Key(collection: collection, key: key))
    }

    /// Caches `value`, evicting the least recently used entry when full.
    package mutating func set(_ value: Any, collection: String, key: String) {
        set(value, Key(collection: collection, key: key))
    }

    /// Caches `value` under a key made once by the caller.
    package mutating func set(_ value: Any, _ key: Key) {
        _ = lru.setValue(value, forKey: key)
    }

    /// Caches `value` only if the key is already cached (keeps the cache's working set).
    package mutating func replaceIfPresent(_ value: Any, collection: String, key: String) {
        let key = Key(collection: collection, key: key)
        if lru.contains(key) { _ = lru.setValue(value, forKey: key) }
    }

    /// Evicts one key. Hashes nothing when the cache is empty.
    package mutating func remove(collection: String, key: String) {
        guard !lru.isEmpty else { return }
        remove(Key(collection: collection, key: key))
    }

    /// Evicts one key made once by the caller. Makes no dictionary probe when the cache is empty.
    package mutating func remove(_ key: Key) {
        guard !lru.isEmpty else { return }
        _ = lru.removeValue(forKey: key)
    }

    /// Evicts every key of `collection`.
    package mutating func removeCollection(_ collection: String) {
        var doomed: [Key] = []
        lru.forEach { key, _ in
            if key.pair.collection == collection { doomed.append(key) }
            return true
        }
        for key in doomed { _ = lru.removeValue(forKey: key) }
    }

    /// Evicts everything.
    package mutating func removeAll() { lru.removeAll() }

    /// Whether the key is cached (does not change the order).
    package func contains(collection: String, key: String) -> Bool {
        contains(Key(collection: collection, key: key))
    }

    /// Whether a key made once by the caller is cached (does not change the order).
    package func contains(_ key: Key) -> Bool { !lru.isEmpty && lru.contains(key) }

    /// Every cached key, most recently used first (a copy: the cache may change while it is
    /// walked). O(count).
    package var keys: [Key] {
        var keys: [Key] = []
        keys.reserveCapacity(count)
        lru.forEach { key, _ in
            keys.append(key)
            return true
        }
        return keys
    }

    /// The most entries kept (0 = unlimited); lowering it evicts at once.
    package var limit: Int {
        get { lru.limit }
        set { lru.limit = newValue }
    }

    package var count: Int { lru.count }
}
