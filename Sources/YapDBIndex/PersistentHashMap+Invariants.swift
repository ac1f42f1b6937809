// PersistentHashMap+Invariants: the structural self-check used by tests.

extension PersistentHashMap {
    /// Checks the trie's structure and traps (`precondition`) with a description of the first
    /// violation: bitmap popcounts match the array sizes, inline and sub-node slots are disjoint,
    /// every entry sits in the slot its hash selects, no sub-node is empty or holds a single
    /// entry (canonical compaction), collision nodes appear only below the last hash bit with two
    /// or more keys of one full hash and no duplicates, and `count` equals the number of entries.
    /// O(n). For tests and debug checks; never on a hot path.
    package func checkInvariants() {
        let total = root.checkInvariants(shift: 0, prefix: 0, isRoot: true)
        precondition(total == _count, "PersistentHashMap: count \(_count) but the trie holds \(total) entries")
    }
}

extension PersistentHashMap.Node {
    /// Checks this subtree; `prefix` holds the hash bits that select it. Returns its entry count.
    func checkInvariants(shift: Int, prefix: UInt, isRoot: Bool) -> Int {
        let levelMask: UInt = shift == 0 ? 0 : (shift >= Self.hashBitCount ? ~0 : (1 << UInt(shift)) - 1)
        if shift >= Self.hashBitCount {
            precondition(dataMap == 0 && nodeMap == 0, "PersistentHashMap: collision node with bitmaps set")
            precondition(children.isEmpty, "PersistentHashMap: collision node with sub-nodes")
            precondition(items.count >= 2, "PersistentHashMap: collision node with \(items.count) entries")
            for (i, item) in items.enumerated() {
                precondition(Self.hash(of: item.key) == prefix,
                             "PersistentHashMap: collision node entry with a different full hash")
                for other in items[(i + 1)...] {
                    precondition(other.key != item.key, "PersistentHashMap: duplicate key in collision node")
                }
            }
            return items.count
        }
        precondition(dataMap & nodeMap == 0, "PersistentHashMap: a slot is both inline and a sub-node (shift \(shift))")
        precondition(dataMap.nonzeroBitCount == items.count,
                     "PersistentHashMap: dataMap popcount \(dataMap.nonzeroBitCount) != \(items.count) items (shift \(shift))")
        precondition(nodeMap.nonzeroBitCount == children.count,
                     "PersistentHashMap: nodeMap popcount \(nodeMap.nonzeroBitCount) != \(children.count) children (shift \(shift))")
        if !isRoot {
            precondition(!(items.isEmpty && children.isEmpty), "PersistentHashMap: empty sub-node (shift \(shift))")
        }
        var total = 0
        for item in items {
            let hash = Self.hash(of: item.key)
            precondition(hash & levelMask == prefix, "PersistentHashMap: entry under the wrong hash prefix (shift \(shift))")
            let bit = Self.bit(hash, shift)
            precondition(dataMap & bit != 0 && items[Self.index(dataMap, bit)].key == item.key,
                         "PersistentHashMap: entry not in the slot its hash selects (shift \(shift))")
            total += 1
        }
        var slot: UInt = 0, childIndex = 0
        while slot < 32 {
            let bit = UInt32(1) << UInt32(slot)
            if nodeMap & bit != 0 {
                let child = children[childIndex]
                let childTotal = child.checkInvariants(shift: shift + Self.bitsPerLevel,
                                                       prefix: prefix | (slot << UInt(shift)), isRoot: false)
                precondition(childTotal >= 2,
                             "PersistentHashMap: sub-node with \(childTotal) entries is not compacted (shift \(shift))")
                total += childTotal
                childIndex += 1
            }
            slot += 1
        }
        return total
    }
}
