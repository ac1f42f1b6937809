// LRUCache: a strict least-recently-used cache bounded by entry count.

/// A strict LRU cache bounded by entry count: a dictionary from key to slot index plus an
/// index-based doubly linked recency list threaded through a `ContiguousArray` of slots (no
/// object per entry). Freed slots go on a free list and are reused, so a warm cache allocates
/// nothing on get, set, replace or evict.
///
/// **Complexity.** `value(forKey:)` (promoting), `peek`, `setValue`, `removeValue`: O(1)
/// expected (one hash lookup). Lowering `limit`: O(number evicted). `removeAll`: O(n).
///
/// **Threading.** Not synchronized: meant for one connection's serial context. `Sendable` when
/// its keys and values are, so it can move between threads with its owner, but it must not be
/// used from two threads at once.
package struct LRUCache<Key: Hashable, Value> {
    /// One entry, or a free slot (key and value nil, `next` links the free list).
    @usableFromInline
    struct Slot {
        @usableFromInline var key: Key?
        @usableFromInline var value: Value?
        /// The more recently used neighbour, or -1 for the head.
        @usableFromInline var previous: Int32
        /// The less recently used neighbour (-1 for the tail); for a free slot, the next free slot.
        @usableFromInline var next: Int32

        @inlinable
        init(key: Key?, value: Value?, previous: Int32, next: Int32) {
            self.key = key
            self.value = value
            self.previous = previous
            self.next = next
        }
    }

    @usableFromInline var slots: ContiguousArray<Slot> = []
    @usableFromInline var index: [Key: Int32] = [:]
    /// Most recently used slot, or -1 when empty.
    @usableFromInline var head: Int32 = -1
    /// Least recently used slot, or -1 when empty.
    @usableFromInline var tail: Int32 = -1
    /// First free slot, or -1.
    @usableFromInline var freeList: Int32 = -1
    @usableFromInline var _limit: Int

    /// An empty cache holding at most `limit` entries (0 = unlimited).
    @inlinable
    package init(limit: Int = 0) {
        precondition(limit >= 0, "LRUCache: limit must not be negative, got \(limit)")
        _limit = limit
    }

    /// The number of entries. O(1).
    @inlinable package var count: Int { index.count }

    /// Whether the cache is empty. O(1).
    @inlinable package var isEmpty: Bool { index.isEmpty }

    /// The maximum number of entries; 0 means unlimited. Lowering it evicts the least recently
    /// used entries immediately (O(number evicted)).
    @inlinable
    package var limit: Int {
        get { _limit }
        set {
            precondition(newValue >= 0, "LRUCache: limit must not be negative, got \(newValue)")
            _limit = newValue
            if newValue > 0 { while index.count > newValue { evictTail() } }
        }
    }

    /// The value for `key`, marking it most recently used; nil on a miss. O(1).
    @inlinable
    package mutating func value(forKey key: Key) -> Value? {
        guard let i = index[key] else { return nil }
        moveToFront(i)
        return slots[Int(i)].value
    }

    /// The value for `key` without changing its recency; nil on a miss. O(1).
    @inlinable
    package func peek(_ key: Key) -> Value? {
        guard let i = index[key] else { return nil }
        return slots[Int(i)].value
    }

    /// Whether `key` is cached (does not change recency). O(1).
    @inlinable
    package func contains(_ key: Key) -> Bool { index[key] != nil }

    /// Stores `value` for `key` as the most recently used entry, evicting the least recently used
    /// entry if the cache is full. O(1).
    /// - Returns: the value previously stored for `key`, or nil.
    @inlinable @discardableResult
    package mutating func setValue(_ value: Value, forKey key: Key) -> Value? {
        if let i = index[key] {
            let old = slots[Int(i)].value
            slots[Int(i)].value = value
            moveToFront(i)
            return old
        }
        if _limit > 0 && index.count >= _limit { evictTail() }
        let i: Int32
        if freeList >= 0 {
            i = freeList
            freeList = slots[Int(i)].next
            slots[Int(i)] = Slot(key: key, value: value, previous: -1, next: head)
        } else {
            i = Int32(slots.count)
            slots.append(Slot(key: key, value: value, previous: -1, next: head))
        }
        if head >= 0 { slots[Int(head)].previous = i } else { tail = i }
        head = i
        index[key] = i
        return nil
    }

    /// Removes the entry for `key`. O(1).
    /// - Returns: the removed value, or nil if `key` was not cached.
    @inlinable @discardableResult
    package mutating func removeValue(forKey key: Key) -> Value? {
        guard let i = index.removeValue(forKey: key) else { return nil }
        unlink(i)
        return freeSlot(i)
    }

    /// Gets (promoting) or sets the value for `key`; setting nil removes the entry. O(1).
    @inlinable
    package subscript(key: Key) -> Value? {
        mutating get { value(forKey: key) }
        set {
            if let newValue { setValue(newValue, forKey: key) } else { removeValue(forKey: key) }
        }
    }

    /// Removes every entry, keeping the limit. O(n); releases the slot storage.
    @inlinable
    package mutating func removeAll() {
        slots = []
        index = [:]
        head = -1
        tail = -1
        freeList = -1
    }

    /// Calls `body` with each entry from most to least recently used, until it returns false.
    /// Does not change recency. O(n).
    @inlinable
    package func forEach(_ body: (Key, Value) throws -> Bool) rethrows {
        var i = head
        while i >= 0 {
            let slot = slots[Int(i)]
            if try !body(slot.key!, slot.value!) { return }
            i = slot.next
        }
    }
}

extension LRUCache: Sendable where Key: Sendable, Value: Sendable {}
extension LRUCache.Slot: Sendable where Key: Sendable, Value: Sendable {}

// MARK: - List surgery

extension LRUCache {
    /// Detaches slot `i` from the recency list.
    @inlinable @inline(__always)
    mutating func unlink(_ i: Int32) {
        let previous = slots[Int(i)].previous, next = slots[Int(i)].next
        if previous >= 0 { slots[Int(previous)].next = next } else { head = next }
        if next >= 0 { slots[Int(next)].previous = previous } else { tail = previous }
    }

    /// Makes slot `i` (on the list) the most recently used.
    @inlinable @inline(__always)
    mutating func moveToFront(_ i: Int32) {
        guard head != i else { return }
        unlink(i)
        slots[Int(i)].previous = -1
        slots[Int(i)].next = head
        slots[Int(head)].previous = i
        head = i
    }

    /// Clears slot `i` (already unlinked and unindexed), pushes it on the free list, and returns
    /// its value.
    @inlinable
    mutating func freeSlot(_ i: Int32) -> Value? {
        let value = slots[Int(i)].value.take()   // moved out: no retain and release of the value
        slots[Int(i)].key = nil
        slots[Int(i)].previous = -1
        slots[Int(i)].next = freeList
        freeList = i
        return value
    }

    /// Evicts the least recently used entry.
    @inlinable
    mutating func evictTail() {
        let i = tail
        guard i >= 0 else { return }
        unlink(i)
        index.removeValue(forKey: slots[Int(i)].key!)
        _ = freeSlot(i)
    }
}
