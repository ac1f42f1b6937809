// PersistentHashMap+Invariants: the structural self-check used by tests.

extension PersistentHashMap {
    /// `validate()`, trapping (`preconditionFailure`) with the violation's description.
    /// Tests call it after every mutation. O(n).
    package func checkInvariants() { trapOnViolation(validate) }

    /// Checks the trie's structure and throws an `InvariantViolation` describing the first
    /// violation: bitmap popcounts match the array sizes, inline and sub-node slots are disjoint,
    /// every entry sits in the slot its hash selects, no sub-node is empty or holds a single
    /// entry (canonical compaction), collision nodes appear only below the last hash bit with two
    /// or more keys of one full hash and no duplicates, and `count` equals the number of entries.
    /// O(n). For tests and debug checks; never on a hot path.
    package func validate() throws {
        let total = try root.validate(shift: 0, prefix: 0, isRoot: true)
        try require(total == _count, "PersistentHashMap: count \(_count) but the trie holds \(total) entries")
    }
}

extension PersistentHashMap.Node {
    /// Checks this subtree; `prefix` holds the hash bits that select it. Returns its entry count.
    func validate(shift: Int, prefix: UInt, isRoot: Bool) throws(InvariantViolation) -> Int {
        let levelMask: UInt = shift == 0 ? 0 : (shift >= Self.hashBitCount ? ~0 : (1 << UInt(shift)) - 1)
        if shift >= Self.hashBitCount {
            try require(dataMap == 0 && nodeMap == 0, "PersistentHashMap: collision node with bitmaps set")
            try require(children.isEmpty, "PersistentHashMap: collision node with sub-nodes")
            try require(items.count >= 2, "PersistentHashMap: collision node with \(items.count) entries")
            for (i, item) in items.enumerated() {
                try require(Self.hash(of: item.key) == prefix,
                             "PersistentHashMap: collision node entry with a different full hash")
                for other in items[(i + 1)...] {
                    try require(other.key != item.key, "PersistentHashMap: duplicate key in collision node")
                }
            }
            return items.count
        }
        try require(dataMap & nodeMap == 0, "PersistentHashMap: a slot is both inline and a sub-node (shift \(shift))")
        try require(dataMap.nonzeroBitCount == items.count,
                     "PersistentHashMap: dataMap popcount \(dataMap.nonzeroBitCount) != \(items.count) items (shift \(shift))")
        try require(nodeMap.nonzeroBitCount == children.count,
                     "PersistentHashMap: nodeMap popcount \(nodeMap.nonzeroBitCount) != \(children.count) children (shift \(shift))")
        if !isRoot {
            try require(!(items.isEmpty && children.isEmpty), "PersistentHashMap: empty sub-node (shift \(shift))")
        }
        var total = 0
        for item in items {
            let hash = Self.hash(of: item.key)
            try require(hash & levelMask == prefix, "PersistentHashMap: entry under the wrong hash prefix (shift \(shift))")
            let bit = Self.bit(hash, shift)
            try require(dataMap & bit != 0 && items[Self.index(dataMap, bit)].key == item.key,
                         "PersistentHashMap: entry not in the slot its hash selects (shift \(shift))")
            total += 1
        }
        var slot: UInt = 0, childIndex = 0
        while slot < 32 {
            let bit = UInt32(1) << UInt32(slot)
            if nodeMap & bit != 0 {
                let child = children[childIndex]
                let childTotal = try child.validate(shift: shift + Self.bitsPerLevel,
                                                       prefix: prefix | (slot << UInt(shift)), isRoot: false)
                try require(childTotal >= 2,
                             "PersistentHashMap: sub-node with \(childTotal) entries is not compacted (shift \(shift))")
                total += childTotal
                childIndex += 1
            }
            slot += 1
        }
        return total
    }
}
