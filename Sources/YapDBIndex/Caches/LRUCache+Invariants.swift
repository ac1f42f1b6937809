// LRUCache+Invariants: the self-check used by tests.

extension LRUCache {
    /// Checks the cache and throws an `InvariantViolation` describing the first violation: the
    /// recency list is well linked both ways and holds exactly the indexed entries, each slot's key
    /// maps back to that slot, free slots are empty and every slot is either live or free, and
    /// `count` respects a nonzero `limit`. O(n + capacity).
    package func validate() throws {
        var forward = 0, i = head, previous: Int32 = -1
        while i >= 0 {
            try require(Int(i) < slots.count, "LRUCache: list link \(i) out of range")
            try require(forward < slots.count, "LRUCache: recency list has a cycle")
            let slot = slots[Int(i)]
            try require(slot.previous == previous, "LRUCache: slot \(i) has previous \(slot.previous), expected \(previous)")
            guard let key = slot.key else { throw InvariantViolation("LRUCache: listed slot \(i) has no key") }
            try require(slot.value != nil, "LRUCache: listed slot \(i) has no value")
            try require(index[key] == i, "LRUCache: slot \(i)'s key is indexed at \(String(describing: index[key]))")
            forward += 1
            previous = i
            i = slot.next
        }
        try require(tail == previous, "LRUCache: tail \(tail) but the list ends at \(previous)")
        try require(forward == index.count, "LRUCache: list holds \(forward) entries, index \(index.count)")
        var free = 0
        i = freeList
        while i >= 0 {
            try require(free < slots.count, "LRUCache: free list has a cycle")
            try require(slots[Int(i)].key == nil && slots[Int(i)].value == nil, "LRUCache: free slot \(i) is not empty")
            free += 1
            i = slots[Int(i)].next
        }
        try require(forward + free == slots.count,
                    "LRUCache: \(forward) live + \(free) free slots != \(slots.count) slots")
        try require(_limit == 0 || index.count <= _limit, "LRUCache: \(index.count) entries over limit \(_limit)")
    }

    /// `validate()`, trapping (`preconditionFailure`) with the violation's description.
    /// Tests call it after every mutation. O(n).
    package func checkInvariants() { trapOnViolation(validate) }
}
