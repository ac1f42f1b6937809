// PersistentHashMap+Mutation: the recursive lookup, update, remove and modify steps.

extension PersistentHashMap.Node {
    typealias Entry = PersistentHashMap.Entry
    typealias Node = PersistentHashMap.Node

    // MARK: Reading (the receiver may be shared)

    /// The value for `key` in the subtree at depth `shift`, or nil. Walks down without
    /// retaining the nodes it passes (the caller's reference keeps the whole subtree alive).
    func find(_ key: Key, hash: UInt, shift start: Int) -> Value? {
        var node = Unmanaged.passUnretained(self)
        var shift = start
        while true {
            var found: Value?
            var next: Unmanaged<Node>?
            node._withUnsafeGuaranteedRef { current in
                current.withParts { header, elements, childSlots in
                    if shift >= Node.hashBitCount {
                        for i in 0..<Int(header.pointee.entryCount) where elements[i].hash == hash && elements[i].key == key {
                            found = elements[i].value
                            return
                        }
                        return
                    }
                    let bit = Node.bit(hash, shift)
                    if header.pointee.dataMap & bit != 0 {
                        let entry = elements + Node.index(header.pointee.dataMap, bit)
                        if entry.pointee.hash == hash && entry.pointee.key == key { found = entry.pointee.value }
                    } else if header.pointee.nodeMap & bit != 0 {
                        let slot = childSlots + Node.index(header.pointee.nodeMap, bit)
                        next = UnsafeMutableRawPointer(slot).load(as: Unmanaged<Node>.self)
                    }
                }
            }
            guard let next else { return found }
            node = next
            shift &+= Node.bitsPerLevel
        }
    }

    /// The entry index of `key` in this node (a slot's entry, or a collision node's), or nil.
    func entryIndex(of key: Key, hash: UInt, shift: Int) -> Int? {
        withParts { header, elements, childSlots in
            if shift >= Node.hashBitCount {
                for i in 0..<Int(header.pointee.entryCount) where elements[i].hash == hash && elements[i].key == key { return i }
                return nil
            }
            let bit = Node.bit(hash, shift)
            guard header.pointee.dataMap & bit != 0 else { return nil }
            let i = Node.index(header.pointee.dataMap, bit)
            return elements[i].hash == hash && elements[i].key == key ? i : nil
        }
    }

    /// Pre-order walk: this node's inline entries, then its sub-nodes. Returns false if stopped.
    func visit(_ body: (Key, Value) throws -> Bool) rethrows -> Bool {
        try withParts { header, elements, childSlots in
            for i in 0..<Int(header.pointee.entryCount) where try !body(elements[i].key, elements[i].value) { return false }
            let children = childSlots
            for j in 0..<Int(header.pointee.childCount) where try !children[j].visit(body) { return false }
            return true
        }
    }

    // MARK: Mutating (`node` is uniquely referenced; it may be replaced by a grown copy)

    /// Inserts or replaces; returns the old value.
    static func update(_ node: inout Node, _ key: Key, _ value: Value, hash: UInt, shift: Int) -> Value? {
        if let i = node.entryIndex(of: key, hash: hash, shift: shift) {
            return node.withParts { _, elements, _ in
                var old = value
                swap(&elements[i].value, &old)
                return old
            }
        }
        if shift >= hashBitCount {
            insertEntry((hash, key, value), at: node.entryCount, into: &node)
            return nil
        }
        let bit = Node.bit(hash, shift)
        if node.dataMap & bit != 0 {
            // Two keys now share this slot: push both into a new sub-node.
            let existing = node.removeEntry(at: Node.index(node.dataMap, bit))
            node.header.dataMap ^= bit
            let sub = merging(existing, (hash, key, value), shift: shift &+ bitsPerLevel)
            node.header.nodeMap |= bit
            insertChild(sub, at: Node.index(node.nodeMap, bit), into: &node)
            return nil
        }
        if node.nodeMap & bit != 0 {
            return node.withUniqueChild(Node.index(node.nodeMap, bit)) { child in
                update(&child, key, value, hash: hash, shift: shift &+ bitsPerLevel)
            }
        }
        node.header.dataMap |= bit
        insertEntry((hash, key, value), at: Node.index(node.dataMap, bit), into: &node)
        return nil
    }

    /// A new subtree at `shift` holding two entries with distinct keys.
    static func merging(_ a: Entry, _ b: Entry, shift: Int) -> Node {
        guard shift < hashBitCount else { return leaf(dataMap: 0, a, b) }
        let bitA = bit(a.hash, shift), bitB = bit(b.hash, shift)
        if bitA == bitB { return branch(bit: bitA, merging(a, b, shift: shift &+ bitsPerLevel)) }
        return bitA < bitB ? leaf(dataMap: bitA | bitB, a, b) : leaf(dataMap: bitA | bitB, b, a)
    }

    /// Removes `key`; returns the old value. Folds a child left with one entry into this node.
    /// A miss copies no shared node below this one.
    static func remove(_ node: inout Node, _ key: Key, hash: UInt, shift: Int) -> Value? {
        if let i = node.entryIndex(of: key, hash: hash, shift: shift) {
            if shift < hashBitCount { node.header.dataMap ^= Node.bit(hash, shift) }
            return node.removeEntry(at: i).value
        }
        guard shift < hashBitCount else { return nil }
        let bit = Node.bit(hash, shift)
        guard node.nodeMap & bit != 0 else { return nil }
        let j = Node.index(node.nodeMap, bit)
        let childShift = shift &+ bitsPerLevel
        if !node.isChildUnique(j), node.child(j).find(key, hash: hash, shift: childShift) == nil { return nil }
        let old = node.withUniqueChild(j) { child in remove(&child, key, hash: hash, shift: childShift) }
        if old != nil && node.child(j).isSingleEntry { foldChild(j, bit: bit, into: &node) }
        return old
    }

    /// Whether sub-node `j` is referenced only by this node.
    func isChildUnique(_ j: Int) -> Bool {
        withParts { header, elements, childSlots in isKnownUniquelyReferenced(&childSlots[j]) }
    }

    /// Replaces sub-node `j` (in slot `bit`), which holds exactly one entry, by that entry inline.
    static func foldChild(_ j: Int, bit: UInt32, into node: inout Node) {
        let child = node.removeChild(at: j)
        let entry = child.entry(0)
        node.header.nodeMap ^= bit
        node.header.dataMap |= bit
        insertEntry(entry, at: Node.index(node.dataMap, bit), into: &node)
    }

    /// See `PersistentHashMap.modifyValue(forKey:_:)`. `delta` receives the change in count.
    static func modify<R>(_ node: inout Node, _ key: Key, hash: UInt, shift: Int, delta: inout Int,
                          _ body: (inout Value?) -> R) -> R {
        if let i = node.entryIndex(of: key, hash: hash, shift: shift) {
            // Move the entry out for the call, so a copy-on-write value stays uniquely referenced.
            let (h, k, v) = node.removeEntry(at: i)
            var slot: Value? = consume v
            let result = body(&slot)
            if let value = slot.take() {
                insertEntry((h, k, value), at: i, into: &node)
            } else {
                if shift < hashBitCount { node.header.dataMap ^= Node.bit(hash, shift) }
                delta = -1
            }
            return result
        }
        let bit = Node.bit(hash, shift)
        if shift < hashBitCount && node.nodeMap & bit != 0 {
            let j = Node.index(node.nodeMap, bit)
            let result = node.withUniqueChild(j) { child in
                modify(&child, key, hash: hash, shift: shift &+ bitsPerLevel, delta: &delta, body)
            }
            if delta < 0 && node.child(j).isSingleEntry { foldChild(j, bit: bit, into: &node) }
            return result
        }
        // Absent: call `body` with nil and insert what it leaves.
        var slot: Value? = nil
        let result = body(&slot)
        if let value = slot.take() {
            _ = update(&node, key, value, hash: hash, shift: shift)
            delta = 1
        }
        return result
    }

    /// Calls `body` on the stored value of `key` in place, or returns nil when it is absent.
    /// Copies the shared nodes on the path (even on a miss).
    static func modifyExisting<R>(_ node: inout Node, _ key: Key, hash: UInt, shift: Int, _ body: (inout Value) -> R) -> R? {
        if let i = node.entryIndex(of: key, hash: hash, shift: shift) {
            return node.withParts { _, elements, _ in body(&elements[i].value) }
        }
        let bit = Node.bit(hash, shift)
        guard shift < hashBitCount, node.nodeMap & bit != 0 else { return nil }
        return node.withUniqueChild(Node.index(node.nodeMap, bit)) { child in
            modifyExisting(&child, key, hash: hash, shift: shift &+ bitsPerLevel, body)
        }
    }
}

extension PersistentHashMap.Node {
    /// This subtree with every value for which `transform` returns a replacement replaced, or
    /// nil when it returns nil for all of them. Copies exactly the nodes holding a replaced
    /// value and their ancestors (shared or not); the rest stays shared. O(n).
    func replacingValues(_ transform: (Value) -> Value?) -> Node? {
        var fresh: Node?
        for i in 0..<entryCount {
            guard let value = transform(entry(i).value) else { continue }
            if fresh == nil { fresh = copy() }
            fresh!.withParts { _, elements, _ in elements[i].value = value }
        }
        for j in 0..<childCount {
            guard let replaced = child(j).replacingValues(transform) else { continue }
            if fresh == nil { fresh = copy() }
            fresh!.withParts { _, _, children in children[j] = replaced }
        }
        return fresh
    }
}

extension PersistentHashMap {
    /// Replaces, in one pass over the trie, every value for which `transform` returns a
    /// replacement (keys and count never change). Copies only the nodes on the paths to
    /// replaced values, so it suits changing many entries of a map shared with snapshots
    /// (compaction's relocation) better than a walk from the root per entry. O(n).
    /// - Returns: whether any value was replaced.
    @discardableResult
    package mutating func replaceValues(_ transform: (Value) -> Value?) -> Bool {
        guard let replaced = root.replacingValues(transform) else { return false }
        root = replaced
        return true
    }
}
