// PersistentHashMap+Node: the trie node, hash slicing, and the recursive update/remove/modify steps.
// (Methods live in the class body: Swift 6.3 rejects @inlinable members in an extension of a
// type nested in a `package` type when they touch its @usableFromInline members.)

extension PersistentHashMap {
    /// One trie node: inline entries for the slots in `dataMap` and sub-nodes for the slots in
    /// `nodeMap`, each stored in slot order. A node at depth `shift >= hashBitCount` is a
    /// collision node: both bitmaps are zero and `items` lists keys with equal full hashes.
    ///
    /// `@unchecked Sendable` is safe because of the copy-on-write discipline: a node is mutated
    /// only through a reference proven unique by `isKnownUniquelyReferenced` (from the root
    /// down), so a node reachable from two map values — the only way it can be seen by two
    /// threads — is never mutated, only copied.
    @usableFromInline
    final class Node: @unchecked Sendable {
        // `@exclusivity(unchecked)`: release builds otherwise pay a dynamic exclusivity check
        // (swift_beginAccess) per class-property access — measured 12x on B-tree appends. Safe
        // because these properties are only accessed by this module's code, which never holds
        // two overlapping accesses to one node (compile-time exclusivity checking still applies).
        @exclusivity(unchecked) @usableFromInline var dataMap: UInt32
        @exclusivity(unchecked) @usableFromInline var nodeMap: UInt32
        @exclusivity(unchecked) @usableFromInline var items: ContiguousArray<(key: Key, value: Value)>
        @exclusivity(unchecked) @usableFromInline var children: ContiguousArray<Node>

        @inlinable
        init(dataMap: UInt32, nodeMap: UInt32,
             items: ContiguousArray<(key: Key, value: Value)>, children: ContiguousArray<Node>) {
            self.dataMap = dataMap
            self.nodeMap = nodeMap
            self.items = items
            self.children = children
        }

        /// A shallow copy: the arrays are shared until one side mutates them.
        @inlinable
        func copy() -> Node { Node(dataMap: dataMap, nodeMap: nodeMap, items: items, children: children) }

        /// Whether this node folds into its parent's inline slot (one entry, no sub-nodes).
        @inlinable var isSingleEntry: Bool { items.count == 1 && children.isEmpty }

        // MARK: Hash slicing

        /// Hash bits consumed per level (32-way nodes).
        @inlinable @inline(__always) static var bitsPerLevel: Int { 5 }
        /// Hash bits available; a node at this shift or deeper is a collision node.
        @inlinable @inline(__always) static var hashBitCount: Int { UInt.bitWidth }

        /// The full hash of `key` as an unsigned word.
        ///
        /// `UInt64` keys hash to themselves: the keydir's row ids are handed out by the engine
        /// in sequence (never chosen by users, so there is no flooding concern), and the
        /// identity spreads consecutive ids evenly over the slots at every level with no
        /// `Hasher` call (which cost as much as the rest of a row-id insert). Other keys use
        /// their randomly seeded `hashValue`. The branch folds away in specialized code.
        @inlinable @inline(__always)
        static func hash(of key: Key) -> UInt {
            if Key.self == UInt64.self { return UInt(truncatingIfNeeded: unsafeBitCast(key, to: UInt64.self)) }
            return UInt(bitPattern: key.hashValue)
        }

        /// The one-bit mask selecting the slot of `hash` at level `shift`.
        @inlinable @inline(__always)
        static func bit(_ hash: UInt, _ shift: Int) -> UInt32 {
            1 &<< UInt32(truncatingIfNeeded: (hash &>> UInt(truncatingIfNeeded: shift)) & 31)
        }

        /// The array index of the slot `bit` within a bitmap: the number of set bits below it.
        @inlinable @inline(__always)
        static func index(_ map: UInt32, _ bit: UInt32) -> Int { (map & (bit &- 1)).nonzeroBitCount }

        // MARK: Recursive steps (the receiver is uniquely referenced unless noted)

        /// Whether the subtree holds `key`. Read-only; the receiver may be shared.
        @inlinable
        func contains(_ key: Key, hash: UInt, shift: Int) -> Bool {
            guard shift < Node.hashBitCount else { return items.contains { $0.key == key } }
            let bit = Node.bit(hash, shift)
            if dataMap & bit != 0 { return items[Node.index(dataMap, bit)].key == key }
            guard nodeMap & bit != 0 else { return false }
            return children[Node.index(nodeMap, bit)].contains(key, hash: hash, shift: shift &+ Node.bitsPerLevel)
        }

        /// Makes `children[i]` uniquely referenced, copying it if it is shared.
        @inlinable @inline(__always)
        func makeChildUnique(_ i: Int) {
            if !isKnownUniquelyReferenced(&children[i]) { children[i] = children[i].copy() }
        }

        /// Inserts or replaces; returns the old value.
        @inlinable
        func update(_ key: Key, _ value: Value, hash: UInt, shift: Int) -> Value? {
            guard shift < Node.hashBitCount else {
                if let i = items.firstIndex(where: { $0.key == key }) {
                    let old = items[i].value
                    items[i].value = value
                    return old
                }
                items.append((key, value))
                return nil
            }
            let bit = Node.bit(hash, shift)
            if dataMap & bit != 0 {
                let i = Node.index(dataMap, bit)
                if items[i].key == key {
                    let old = items[i].value
                    items[i].value = value
                    return old
                }
                // Two keys now share this slot: push both into a new sub-node.
                let existing = items.remove(at: i)
                dataMap ^= bit
                let sub = Self.merging(existing, Node.hash(of: existing.key), (key, value), hash,
                                       shift: shift &+ Node.bitsPerLevel)
                nodeMap |= bit
                children.insert(sub, at: Node.index(nodeMap, bit))
                return nil
            }
            if nodeMap & bit != 0 {
                let j = Node.index(nodeMap, bit)
                makeChildUnique(j)
                return children[j].update(key, value, hash: hash, shift: shift &+ Node.bitsPerLevel)
            }
            dataMap |= bit
            items.insert((key, value), at: Node.index(dataMap, bit))
            return nil
        }

        /// A new subtree at `shift` holding two distinct keys.
        @inlinable
        static func merging(_ a: (key: Key, value: Value), _ hashA: UInt,
                            _ b: (key: Key, value: Value), _ hashB: UInt, shift: Int) -> Node {
            guard shift < Node.hashBitCount else {
                return Node(dataMap: 0, nodeMap: 0, items: [a, b], children: [])
            }
            let bitA = Node.bit(hashA, shift), bitB = Node.bit(hashB, shift)
            if bitA == bitB {
                let sub = merging(a, hashA, b, hashB, shift: shift &+ Node.bitsPerLevel)
                return Node(dataMap: 0, nodeMap: bitA, items: [], children: [sub])
            }
            return Node(dataMap: bitA | bitB, nodeMap: 0, items: bitA < bitB ? [a, b] : [b, a], children: [])
        }

        /// Removes `key`; returns the old value. Folds a child left with one entry into this node.
        @inlinable
        func remove(_ key: Key, hash: UInt, shift: Int) -> Value? {
            guard shift < Node.hashBitCount else {
                guard let i = items.firstIndex(where: { $0.key == key }) else { return nil }
                return items.remove(at: i).value
            }
            let bit = Node.bit(hash, shift)
            if dataMap & bit != 0 {
                let i = Node.index(dataMap, bit)
                guard items[i].key == key else { return nil }
                dataMap ^= bit
                return items.remove(at: i).value
            }
            guard nodeMap & bit != 0 else { return nil }
            let j = Node.index(nodeMap, bit)
            let childShift = shift &+ Node.bitsPerLevel
            if !isKnownUniquelyReferenced(&children[j]) {
                guard children[j].contains(key, hash: hash, shift: childShift) else { return nil }
                children[j] = children[j].copy()
            }
            let old = children[j].remove(key, hash: hash, shift: childShift)
            if old != nil && children[j].isSingleEntry { foldChild(j, bit: bit) }
            return old
        }

        /// Replaces sub-node `j` (in slot `bit`), which holds exactly one entry, by that entry inline.
        @inlinable
        func foldChild(_ j: Int, bit: UInt32) {
            let entry = children.remove(at: j).items[0]
            nodeMap ^= bit
            dataMap |= bit
            items.insert(entry, at: Node.index(dataMap, bit))
        }

        /// See `PersistentHashNode.modifyValue(forKey:_:)`. `delta` receives the change in count.
        @inlinable
        func modify<R>(_ key: Key, hash: UInt, shift: Int, delta: inout Int,
                       _ body: (inout Value?) -> R) -> R {
            guard shift < Node.hashBitCount else {
                if let i = items.firstIndex(where: { $0.key == key }) {
                    let (k, v) = items.remove(at: i)
                    var slot: Value? = consume v
                    let result = body(&slot)
                    if let value = slot { items.insert((k, value), at: i) } else { delta = -1 }
                    return result
                }
                return insertIfSet(key, hash: hash, shift: shift, delta: &delta, body)
            }
            let bit = Node.bit(hash, shift)
            if dataMap & bit != 0 {
                let i = Node.index(dataMap, bit)
                guard items[i].key == key else { return insertIfSet(key, hash: hash, shift: shift, delta: &delta, body) }
                let (k, v) = items.remove(at: i)
                var slot: Value? = consume v
                let result = body(&slot)
                if let value = slot { items.insert((k, value), at: i) } else { dataMap ^= bit; delta = -1 }
                return result
            }
            guard nodeMap & bit != 0 else { return insertIfSet(key, hash: hash, shift: shift, delta: &delta, body) }
            let j = Node.index(nodeMap, bit)
            makeChildUnique(j)
            let result = children[j].modify(key, hash: hash, shift: shift &+ Node.bitsPerLevel, delta: &delta, body)
            if delta < 0 && children[j].isSingleEntry { foldChild(j, bit: bit) }
            return result
        }

        /// The absent-key case of `modify`: calls `body` with nil and inserts what it leaves.
        @inlinable
        func insertIfSet<R>(_ key: Key, hash: UInt, shift: Int, delta: inout Int,
                            _ body: (inout Value?) -> R) -> R {
            var slot: Value? = nil
            let result = body(&slot)
            if let value = slot {
                _ = update(key, value, hash: hash, shift: shift)
                delta = 1
            }
            return result
        }

        /// Pre-order walk: this node's inline entries, then its sub-nodes. Returns false if stopped.
        @inlinable
        func visit(_ body: (Key, Value) throws -> Bool) rethrows -> Bool {
            for item in items where try !body(item.key, item.value) { return false }
            for child in children where try !child.visit(body) { return false }
            return true
        }
    }
}
