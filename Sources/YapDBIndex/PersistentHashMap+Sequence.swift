// PersistentHashMap+Sequence: enumeration — forEach, keys/values, and Sequence conformance.

extension PersistentHashMap {
    /// Calls `body` for each entry until it returns false. O(n); no allocation.
    /// The order is unspecified (hash order) but the same for maps with equal contents
    /// within one process.
    package func forEach(_ body: (Key, Value) throws -> Bool) rethrows {
        _ = try root.visit(body)
    }

    /// All keys, in iteration order. O(n); allocates the array.
    package var keys: [Key] {
        var out = [Key](); out.reserveCapacity(_count)
        forEach { key, _ in out.append(key); return true }
        return out
    }

    /// All values, in iteration order. O(n); allocates the array.
    package var values: [Value] {
        var out = [Value](); out.reserveCapacity(_count)
        forEach { _, value in out.append(value); return true }
        return out
    }
}

extension PersistentHashMap: Sequence {
    /// Iterates the entries in the same order as `forEach`. Making the iterator allocates one
    /// small stack array; prefer `forEach` on hot paths.
    package struct Iterator: IteratorProtocol {
        var pending: ContiguousArray<Node>
        var current: Node?
        var index: Int

        init(root: Node) {
            pending = []
            current = root
            index = 0
        }

        /// The next entry, or nil at the end. Amortized O(1).
        package mutating func next() -> (key: Key, value: Value)? {
            while let node = current {
                if index < node.entryCount {
                    index &+= 1
                    let entry = node.entry(index &- 1)
                    return (entry.key, entry.value)
                }
                pending.append(contentsOf: node.children)
                current = pending.popLast()
                index = 0
            }
            return nil
        }
    }

    /// An iterator over the entries (a snapshot: later mutations of the map do not affect it).
    package func makeIterator() -> Iterator { Iterator(root: root) }

    /// The number of entries. O(1).
    package var underestimatedCount: Int { _count }
}
