/// The registry's retained changesets: a queue in commit order (strictly increasing snapshot
/// numbers) that is appended at the back, dropped from the front, and searched by snapshot
/// number in O(log n).
///
/// Storage is one array with a moving start: dropping from the front only advances `start`
/// and clears the slots (so their changesets are released by the caller), and the array is
/// compacted once the dead prefix is at least half of it, which keeps every operation O(1)
/// amortized apart from the search. Not thread-safe: the registry's mutex guards it.
struct ChangesetQueue {
    private var storage: [Changeset?] = []
    private var start = 0

    /// How many changesets are held.
    var count: Int { storage.count - start }

    /// The newest changeset's snapshot number.
    var lastSnapshot: UInt64? { count == 0 ? nil : storage[storage.count - 1]!.snapshot }

    mutating func append(_ changeset: Changeset) { storage.append(changeset) }

    /// The position of the first changeset whose snapshot is greater than `snapshot`
    /// (`storage.count` when there is none): binary search over the live part.
    private func firstIndex(after snapshot: UInt64) -> Int {
        var low = start, high = storage.count
        while low < high {
            let mid = low + (high - low) / 2
            if storage[mid]!.snapshot > snapshot { high = mid } else { low = mid + 1 }
        }
        return low
    }

    /// The changesets with snapshot numbers in (`after`, `through`], in order.
    func range(after: UInt64, through: UInt64) -> [Changeset] {
        guard after < through else { return [] }
        let first = firstIndex(after: after)
        let end = firstIndex(after: through)
        guard first < end else { return [] }
        return storage[first..<end].map { $0! }
    }

    /// Drops every changeset with a snapshot number ≤ `snapshot`; returns them so the caller
    /// can release them outside its lock.
    mutating func removeThrough(snapshot: UInt64) -> [Changeset] {
        let end = firstIndex(after: snapshot)
        guard end > start else { return [] }
        var dropped: [Changeset] = []
        dropped.reserveCapacity(end - start)
        for index in start..<end {
            dropped.append(storage[index]!)
            storage[index] = nil
        }
        start = end
        if start == storage.count {
            storage.removeAll(keepingCapacity: true)
            start = 0
        } else if start >= storage.count / 2 {
            storage.removeFirst(start)
            start = 0
        }
        return dropped
    }

    /// Drops everything; returns what was held.
    mutating func removeAll() -> [Changeset] {
        let dropped = storage[start...].map { $0! }
        storage.removeAll()
        start = 0
        return dropped
    }
}
