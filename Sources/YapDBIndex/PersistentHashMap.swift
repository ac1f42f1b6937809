// PersistentHashMap: a persistent (structurally shared) hash map — a CHAMP hash trie.

/// A persistent hash map: a compressed hash-array-mapped prefix tree (CHAMP) with 32-way,
/// bitmap-indexed nodes and collision nodes below the last hash bit.
///
/// **Value semantics with structural sharing.** Copying a map is O(1) (it copies one reference),
/// so a copy is a snapshot. Mutating a map copies only the nodes on the path it touches that are
/// shared with another copy (`isKnownUniquelyReferenced`); nodes the map owns exclusively are
/// mutated in place, so a bulk load into one value allocates only what the trie itself needs.
///
/// **Shape.** Each node holds a `dataMap` (slots holding an inline entry: hash, key, value) and
/// a `nodeMap` (slots holding a sub-node); 5 hash bits select a slot per level. A node is one
/// allocation (`Node`, a `ManagedBuffer`). The trie is kept canonical: a sub-node always holds
/// at least two entries in its subtree (a slot with a single entry is inline), so the shape
/// depends only on the set of keys. Keys whose full hashes are equal meet in a collision node
/// (an unordered list) at the depth where the hash runs out.
///
/// **Complexity.** Lookup, insert, update and remove: O(log₃₂ n) expected (at most 14 levels
/// for a 64-bit hash), plus O(k) in a collision node of k keys. `count`: O(1). Iteration: O(n),
/// in an unspecified order that is stable for an unchanged map.
///
/// **Specialization.** Nothing here is `@inlinable`: with this toolchain other modules do not
/// specialize it anyway (docs/architecture.md), so hot users live in this module (`Keydir`)
/// and call it specialized; other modules call the generic entry points.
///
/// **Threading.** A value type: any number of threads may read copies concurrently; a given
/// variable must not be mutated concurrently with other accesses to that same variable (the usual
/// Swift exclusivity rule). Hash values are per-process (`Hasher` is randomly seeded; `UInt64`
/// keys hash to themselves, see `Node.hash(of:)`), so the trie's shape must never be persisted.
package struct PersistentHashMap<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// The root node. It may be empty and may hold a single entry; other nodes may not. It has
    /// room for a full level, so it is never replaced by a grown copy (only by a copy when shared).
    ///
    /// `nonisolated(unsafe)` (the nodes are not `Sendable`) is safe because of the copy-on-write
    /// discipline: a node is mutated only through a reference proven unique by
    /// `isKnownUniquelyReferenced` (from the root down), so a node reachable from two map
    /// values — the only way it can be seen by two threads — is never mutated, only copied.
    nonisolated(unsafe) var root: Node
    /// The number of key/value pairs.
    var _count: Int

    /// An empty map. Allocates one (empty) root node.
    package init() {
        root = Node.makeRoot()
        _count = 0
    }

    /// The number of key/value pairs. O(1).
    package var count: Int { _count }

    /// Whether the map has no entries. O(1).
    package var isEmpty: Bool { _count == 0 }

    /// The value stored for `key`, or nil. O(log₃₂ n); no allocation, no locking.
    package subscript(key: Key) -> Value? {
        root.find(key, hash: Node.hash(of: key), shift: 0)
    }

    /// Whether `key` has a value. O(log₃₂ n).
    package func contains(_ key: Key) -> Bool { self[key] != nil }

    /// Stores `value` for `key`, replacing any existing value.
    ///
    /// Copies the nodes on the path to `key` that are shared with another copy of the map;
    /// mutates uniquely owned nodes in place. O(log₃₂ n).
    /// - Returns: the value previously stored for `key`, or nil if the key was new.
    @discardableResult
    package mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
        if !isKnownUniquelyReferenced(&root) { root = root.copy() }
        let old = Node.update(&root, key, value, hash: Node.hash(of: key), shift: 0)
        if old == nil { _count &+= 1 }
        return old
    }

    /// Removes the value for `key`, keeping the trie canonical (a sub-node left with a single
    /// entry is folded into its parent). A miss copies nothing. O(log₃₂ n).
    /// - Returns: the removed value, or nil if `key` had none.
    @discardableResult
    package mutating func removeValue(forKey key: Key) -> Value? {
        let hash = Node.hash(of: key)
        if !isKnownUniquelyReferenced(&root) {
            guard root.find(key, hash: hash, shift: 0) != nil else { return nil }
            root = root.copy()
        }
        let old = Node.remove(&root, key, hash: hash, shift: 0)
        if old != nil { _count &-= 1 }
        return old
    }

    /// Calls `body` with the value for `key` (nil if absent) as an `inout` optional, in place:
    /// the value is moved out of the trie for the call, so a copy-on-write value stored in the
    /// map (for example a nested map) stays uniquely referenced and can be mutated without a copy.
    /// Setting the optional to nil removes the entry; setting it when absent inserts one.
    ///
    /// Copies the shared nodes on the path to `key` even when `body` changes nothing.
    /// O(log₃₂ n) plus the cost of `body`. `body` must not access this map.
    package mutating func modifyValue<R>(forKey key: Key, _ body: (inout Value?) -> R) -> R {
        if !isKnownUniquelyReferenced(&root) { root = root.copy() }
        var delta = 0
        let result = Node.modify(&root, key, hash: Node.hash(of: key), shift: 0, delta: &delta, body)
        _count &+= delta
        return result
    }

    /// Calls `body` with the stored value of `key` to change it in place; nil (without calling
    /// `body`) when `key` is absent. Cheaper than `modifyValue` for an existing key (nothing is
    /// moved), and never inserts or removes. Copies the shared nodes on the path to `key` even
    /// on a miss. O(log₃₂ n) plus the cost of `body`. `body` must not access this map.
    package mutating func modifyExisting<R>(forKey key: Key, _ body: (inout Value) -> R) -> R? {
        if !isKnownUniquelyReferenced(&root) { root = root.copy() }
        return Node.modifyExisting(&root, key, hash: Node.hash(of: key), shift: 0, body)
    }

    /// Removes every entry. O(1) for this value (shared nodes stay alive for other copies).
    package mutating func removeAll() { self = Self() }
}
