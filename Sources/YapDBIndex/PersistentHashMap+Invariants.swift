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
        let entries = (0..<entryCount).map(entry)
        try require(header.entryCount <= header.entryCapacity && header.childCount <= header.childCapacity,
                    "PersistentHashMap: node holds more than its capacity (shift \(shift))")
        for entry in entries {
            try require(entry.hash == Self.hash(of: entry.key), "PersistentHashMap: stored hash differs from the key's hash (shift \(shift))")
        }
        if shift >= Self.hashBitCount {
            try require(dataMap == 0 && nodeMap == 0, "PersistentHashMap: collision node with bitmaps set")
            try require(childCount == 0, "PersistentHashMap: collision node with sub-nodes")
            try require(entries.count >= 2, "PersistentHashMap: collision node with \(entries.count) entries")
            for (i, entry) in entries.enumerated() {
                try require(entry.hash == prefix, "PersistentHashMap: collision node entry with a different full hash")
                for other in entries[(i + 1)...] {
                    try require(other.key != entry.key, "PersistentHashMap: duplicate key in collision node")
                }
            }
            return entries.count
        }
        try require(dataMap & nodeMap == 0, "PersistentHashMap: a slot is both inline and a sub-node (shift \(shift))")
        try require(dataMap.nonzeroBitCount == entries.count,
                     "PersistentHashMap: dataMap popcount \(dataMap.nonzeroBitCount) != \(entries.count) entries (shift \(shift))")
        try require(nodeMap.nonzeroBitCount == childCount,
                     "PersistentHashMap: nodeMap popcount \(nodeMap.nonzeroBitCount) != \(childCount) children (shift \(shift))")
        if !isRoot {
            try require(!(entries.isEmpty && childCount == 0), "PersistentHashMap: empty sub-node (shift \(shift))")
        }
        var total = 0
        for entry in entries {
            try require(entry.hash & levelMask == prefix, "PersistentHashMap: entry under the wrong hash prefix (shift \(shift))")
            let bit = Self.bit(entry.hash, shift)
            try require(dataMap & bit != 0 && entries[Self.index(dataMap, bit)].key == entry.key,
                         "PersistentHashMap: entry not in the slot its hash selects (shift \(shift))")
            total += 1
        }
        var slot: UInt = 0, childIndex = 0
        while slot < 32 {
            let bit = UInt32(1) << UInt32(slot)
            if nodeMap & bit != 0 {
                let childTotal = try child(childIndex).validate(shift: shift + Self.bitsPerLevel,
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
