// PersistentHashMap+Build: building a whole map at once from distinct keys (checkpoint load).

extension PersistentHashMap {
    /// A key that appears twice in the input of `init(distinct:)`.
    package struct DuplicateKey: Error {
        package let key: Key
        /// The values given with it, in input order.
        package let first: Value
        package let second: Value
    }

    /// A map of `entries`, whose keys must be distinct, built bottom-up in one pass: the
    /// entries are sorted by their path through the trie (5 hash bits per level, the first
    /// level's most significant) and every node is allocated once at its final size. That
    /// avoids a descent from the root, a uniqueness check per level and the regrowth of nodes
    /// per entry that `updateValue` pays. O(n log n) for the sort; the shape is the canonical
    /// one `updateValue` would produce.
    /// - Throws: `DuplicateKey` naming a key given twice.
    package init(distinct entries: [(key: Key, value: Value)]) throws(DuplicateKey) {
        var order = [(path: UInt64, hash: UInt, index: Int)]()
        order.reserveCapacity(entries.count)
        for (index, entry) in entries.enumerated() {
            let hash = Node.hash(of: entry.key)
            order.append((Self.path(of: hash), hash, index))
        }
        order.sort { $0.path < $1.path }
        root = try Node.build(entries, order, order.startIndex..<order.endIndex, shift: 0, isRoot: true)
        _count = entries.count
    }

    /// The hash with its 5-bit level digits reversed, so that ascending order is trie order:
    /// level 0's digit (hash bits 0–4) in the top bits, …, level 12's four bits at the bottom.
    static func path(of hash: UInt) -> UInt64 {
        let h = UInt64(truncatingIfNeeded: hash)
        var path: UInt64 = 0
        for level in 0..<12 { path |= ((h >> UInt64(5 * level)) & 31) << UInt64(59 - 5 * level) }
        return path | (h >> 60)
    }
}

extension PersistentHashMap.Node {
    /// The node for the sorted run `range` of `order` (all sharing the digits above `shift`).
    static func build(_ entries: [(key: Key, value: Value)], _ order: [(path: UInt64, hash: UInt, index: Int)],
                      _ range: Range<Int>, shift: Int, isRoot: Bool) throws(PersistentHashMap.DuplicateKey) -> Node {
        if shift >= hashBitCount {
            // Equal full hashes: a collision node, unless two keys are equal.
            let node = make(dataMap: 0, nodeMap: 0, entries: range.count, children: 0)
            for i in range {
                let entry = entries[order[i].index]
                for j in range.lowerBound..<i where entries[order[j].index].key == entry.key {
                    throw .init(key: entry.key, first: entries[order[j].index].value, second: entry.value)
                }
                node.withParts { header, elements, _ in
                    (elements + (i - range.lowerBound)).initialize(to: (order[i].hash, entry.key, entry.value))
                    header.pointee.entryCount += 1
                }
            }
            return node
        }
        // Split the run into groups by this level's digit: singletons inline, the rest below.
        var groups: [(bit: UInt32, range: Range<Int>)] = []
        var start = range.lowerBound
        while start < range.upperBound {
            let digit = bit(order[start].hash, shift)
            var end = start + 1
            while end < range.upperBound && bit(order[end].hash, shift) == digit { end += 1 }
            groups.append((digit, start..<end))
            start = end
        }
        var dataMap: UInt32 = 0, nodeMap: UInt32 = 0
        for group in groups { if group.range.count == 1 { dataMap |= group.bit } else { nodeMap |= group.bit } }
        let node = isRoot ? makeRoot() : make(dataMap: 0, nodeMap: 0, entries: dataMap.nonzeroBitCount, children: nodeMap.nonzeroBitCount)
        node.header.dataMap = dataMap
        node.header.nodeMap = nodeMap
        var entryIndex = 0, childIndex = 0
        for group in groups {
            if group.range.count == 1 {
                let i = group.range.lowerBound
                let entry = entries[order[i].index]
                node.withParts { header, elements, _ in
                    (elements + entryIndex).initialize(to: (order[i].hash, entry.key, entry.value))
                    header.pointee.entryCount += 1
                }
                entryIndex += 1
            } else {
                let child = try build(entries, order, group.range, shift: shift &+ bitsPerLevel, isRoot: false)
                node.withParts { header, _, children in
                    (children + childIndex).initialize(to: child)
                    header.pointee.childCount += 1
                }
                childIndex += 1
            }
        }
        return node
    }
}
