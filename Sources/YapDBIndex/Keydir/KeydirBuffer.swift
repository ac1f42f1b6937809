// KeydirBuffer: a write transaction's changes to the key directory, held flat until they are
// applied to the trees in key order (`Keydir.apply`).

/// The rows a write transaction changed, by row key (`RowKey.encode`): each one's entry as the
/// transaction leaves it (nil: removed) and the row id it had in the trees when it was first
/// buffered. Applying them (`Keydir.apply(_:)`) sorts them once and changes each tree once per
/// row in key order, or builds an empty tree bottom-up, instead of one copy-on-write descent of
/// each tree per write.
///
/// **Layout.** The row keys are packed in one byte array; each row is one `Slot` (its key's
/// place, entry, old row id and hash), found again through an open-addressing table of slot
/// numbers (linear probing, at most half full) keyed by a fast 64-bit hash of the row key, so
/// recording a write allocates nothing once the arrays have grown.
///
/// **Threading.** A value owned by one write transaction (one thread).
package struct KeydirBuffer: Sendable {
    /// One buffered row.
    struct Slot: Sendable {
        var keyStart: UInt32
        var keyLength: UInt32
        /// The row's entry as the transaction leaves it; nil when it removed the row.
        var entry: KeydirEntry?
        /// The row id the row had in the trees when it was buffered (nil: it was absent).
        var base: UInt64?
    }

    private var keys: [UInt8] = []
    private var slots: [Slot] = []
    /// Slot number + 1 per bucket (0: empty); a power-of-two count.
    private var table: [UInt32] = []
    /// Per-process hash seed: row keys come from the app, but a fixed seed would let a crafted
    /// key set make every write probe the whole table.
    private static let seed = UInt64.random(in: 1...UInt64.max)

    package init() {}

    /// The number of buffered rows.
    package var count: Int { slots.count }
    package var isEmpty: Bool { slots.isEmpty }

    /// About how many bytes of memory the buffer holds: what the write buffer limit
    /// (`EngineOptions.writeBufferLimit`) is compared with.
    /// Counts what the buffered rows use (their keys, slots and, at the table's load, its
    /// buckets), not the capacity kept after `removeAll` (that is `allocatedBytes`).
    package var byteSize: Int {
        keys.count + slots.count * (MemoryLayout<Slot>.stride + 2 * MemoryLayout<UInt32>.stride)
    }

    /// Bytes the buffer's arrays have allocated: their capacities, which `removeAll` keeps for
    /// the next rows. This, not `byteSize`, is the memory the buffer holds (an array that
    /// fills doubles, so it can be up to twice `byteSize`).
    package var allocatedBytes: Int {
        keys.capacity + slots.capacity * MemoryLayout<Slot>.stride + table.count * MemoryLayout<UInt32>.stride
    }

    /// `allocatedBytes` after one more row whose key has `keyLength` bytes is buffered: a full
    /// array doubles (the standard library's growth for appends), and the table doubles when
    /// it would be more than half full. A write transaction applies the buffer before a
    /// growth would take it past its limit.
    package func allocatedBytes(afterInsertingKeyOf keyLength: Int) -> Int {
        var keyCapacity = keys.capacity
        if keys.count + keyLength > keyCapacity { keyCapacity = max(keys.count + keyLength, keyCapacity * 2) }
        var slotCapacity = slots.capacity
        if slots.count + 1 > slotCapacity { slotCapacity = max(slots.count + 1, slotCapacity * 2) }
        var buckets = table.count
        if (slots.count + 1) * 2 > buckets { buckets = max(64, buckets * 2) }
        return keyCapacity + slotCapacity * MemoryLayout<Slot>.stride + buckets * MemoryLayout<UInt32>.stride
    }

    /// The hash of a row key (seeded per process).
    @inline(__always)
    package static func hash(_ key: UnsafeRawBufferPointer) -> UInt64 {
        var h = seed ^ (UInt64(truncatingIfNeeded: key.count) &* 0x9E37_79B9_7F4A_7C15)
        var i = 0
        while i &+ 8 <= key.count {
            h = (h ^ key.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
            h ^= h &>> 32
            i &+= 8
        }
        var tail: UInt64 = 0, shift: UInt64 = 0
        while i < key.count {
            tail |= UInt64(key[i]) &<< shift
            shift &+= 8
            i &+= 1
        }
        h = (h ^ tail) &* 0xC4CE_B9FE_1A85_EC53
        return h ^ (h &>> 29)
    }

    /// The slot of `key` (whose hash is `hash`), or nil when it is not buffered.
    package func slot(for key: UnsafeRawBufferPointer, hash: UInt64) -> Int? {
        guard !slots.isEmpty else { return nil }
        return table.withUnsafeBufferPointer { table in
            keys.withUnsafeBytes { keys in
                slots.withUnsafeBufferPointer { slots in
                    let mask = table.count &- 1
                    var bucket = Int(truncatingIfNeeded: hash) & mask
                    while true {
                        let number = table[bucket]
                        if number == 0 { return nil }
                        let slot = slots[Int(number) &- 1]
                        if Int(slot.keyLength) == key.count,
                           compareBytes(UnsafeRawBufferPointer(rebasing: keys[Int(slot.keyStart)..<(Int(slot.keyStart) &+ Int(slot.keyLength))]), key) == 0 {
                            return Int(number) &- 1
                        }
                        bucket = (bucket &+ 1) & mask
                    }
                }
            }
        }
    }

    /// The entry buffered in `slot` (nil: the transaction removed the row).
    package func entry(at slot: Int) -> KeydirEntry? { slots[slot].entry }

    /// The row id the row of `slot` had in the trees when it was buffered (nil: absent).
    package func base(at slot: Int) -> UInt64? { slots[slot].base }

    /// Replaces the entry of `slot` (nil: the row is removed).
    package mutating func set(_ entry: KeydirEntry?, at slot: Int) { slots[slot].entry = entry }

    /// Buffers a row not yet buffered: its row key (hash `hash`), its new entry (nil: removed)
    /// and the row id it has in the trees (nil: absent).
    package mutating func insert(_ key: UnsafeRawBufferPointer, hash: UInt64, entry: KeydirEntry?, base: UInt64?) {
        if (slots.count &+ 1) &* 2 > table.count { grow() }
        let number = slots.count
        slots.append(Slot(keyStart: UInt32(truncatingIfNeeded: keys.count), keyLength: UInt32(truncatingIfNeeded: key.count),
                          entry: entry, base: base))
        keys.append(contentsOf: key)
        place(number, hash: hash)
    }

    /// Puts slot `number` in the first free bucket of its probe sequence.
    private mutating func place(_ number: Int, hash: UInt64) {
        table.withUnsafeMutableBufferPointer { table in
            let mask = table.count &- 1
            var bucket = Int(truncatingIfNeeded: hash) & mask
            while table[bucket] != 0 { bucket = (bucket &+ 1) & mask }
            table[bucket] = UInt32(truncatingIfNeeded: number &+ 1)
        }
    }

    /// Doubles the table (at least 64 buckets) and places every slot again.
    private mutating func grow() {
        table = [UInt32](repeating: 0, count: max(64, table.count * 2))
        for number in 0..<slots.count {
            let hash = withKey(number) { Self.hash($0) }
            place(number, hash: hash)
        }
    }

    /// Calls `body` with the row key of `slot`.
    package func withKey<R>(_ slot: Int, _ body: (UnsafeRawBufferPointer) throws(PageError) -> R) throws(PageError) -> R {
        let s = slots[slot]
        let result: Result<R, PageError> = keys.withUnsafeBytes { keys in
            Result { () throws(PageError) in
                try body(UnsafeRawBufferPointer(rebasing: keys[Int(s.keyStart)..<(Int(s.keyStart) + Int(s.keyLength))]))
            }
        }
        return try result.get()
    }

    private func withKey<R>(_ slot: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let s = slots[slot]
        return keys.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[Int(s.keyStart)..<(Int(s.keyStart) + Int(s.keyLength))])) }
    }

    /// The slot numbers in ascending row-key order. O(n log n) comparisons of the keys' bytes.
    package func sortedSlots() -> [Int] {
        var order = Array(0..<slots.count)
        keys.withUnsafeBytes { keys in
            slots.withUnsafeBufferPointer { slots in
                order.sort { a, b in
                    let x = slots[a], y = slots[b]
                    return compareBytes(UnsafeRawBufferPointer(rebasing: keys[Int(x.keyStart)..<(Int(x.keyStart) &+ Int(x.keyLength))]),
                                        UnsafeRawBufferPointer(rebasing: keys[Int(y.keyStart)..<(Int(y.keyStart) &+ Int(y.keyLength))])) < 0
                }
            }
        }
        return order
    }

    /// Forgets every buffered row, keeping the memory for the next ones.
    package mutating func removeAll() {
        keys.removeAll(keepingCapacity: true)
        slots.removeAll(keepingCapacity: true)
        if !table.isEmpty { table.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
    }
}
