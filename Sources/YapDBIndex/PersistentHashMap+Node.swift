// PersistentHashMap+Node: the trie node — one allocation holding its bitmaps, its inline
// entries and its sub-node references — hash slicing, and the slot-level primitives.

extension PersistentHashMap {
    /// An inline entry: the key's full hash (kept so that splitting a slot, validating and
    /// probing never hash a key again, and a probe compares keys only when hashes match),
    /// the key and its value.
    typealias Entry = (hash: UInt, key: Key, value: Value)

    /// A node's fixed fields, stored in front of its tail storage.
    struct NodeHeader {
        /// Slots holding an inline entry (zero in a collision node).
        var dataMap: UInt32
        /// Slots holding a sub-node (zero in a collision node).
        var nodeMap: UInt32
        /// Initialized entries and sub-nodes. In a bitmap node they equal the bitmaps'
        /// popcounts; a collision node has only entries.
        var entryCount: UInt32
        var childCount: UInt32
        /// Room for entries and sub-nodes in the tail storage.
        var entryCapacity: UInt32
        var childCapacity: UInt32
        /// Where the entries start in the tail storage, in entries (the sub-node slots come
        /// first).
        var entryOffset: UInt32
    }

    /// One trie node in a single heap allocation (`ManagedBuffer`): the header, then
    /// `childCapacity` sub-node references in slot order, then `entryCapacity` entries in slot
    /// order (see `withParts`). A lookup touches one allocation per level (the former layout, a class holding
    /// two arrays, touched three), and copying a node for a snapshot's path copy is one
    /// allocation with the elements copied by specialized code.
    ///
    /// A node at depth `shift >= hashBitCount` is a collision node: both bitmaps are zero and
    /// its entries are keys with equal full hashes, in no order.
    ///
    /// Not `Sendable` itself (`ManagedBuffer` makes that unavailable); the map holding it is,
    /// by the copy-on-write discipline described on `PersistentHashMap.root`.
    final class Node: ManagedBuffer<NodeHeader, Entry> {
        deinit {
            withParts { header, entries, childSlots in
                entries.deinitialize(count: Int(header.pointee.entryCount))
                childSlots.deinitialize(count: Int(header.pointee.childCount))
            }
        }

        // MARK: Allocation

        /// A node with room for `entries` entries and `children` sub-nodes, holding none yet.
        static func make(dataMap: UInt32, nodeMap: UInt32, entries: Int, children: Int) -> Node {
            let childUnits = (children * MemoryLayout<Node>.stride + MemoryLayout<Entry>.stride - 1) / MemoryLayout<Entry>.stride
            let buffer = Node.create(minimumCapacity: entries + childUnits) { _ in
                NodeHeader(dataMap: dataMap, nodeMap: nodeMap, entryCount: 0, childCount: 0,
                           entryCapacity: UInt32(entries), childCapacity: UInt32(children), entryOffset: UInt32(childUnits))
            }
            let node = unsafeDowncast(buffer, to: Node.self)
            node.withUnsafeMutablePointerToElements { tail in
                _ = UnsafeMutableRawPointer(tail).bindMemory(to: Node.self, capacity: children)
            }
            return node
        }

        /// Calls `body` with the header, the entries and the sub-node slots. The sub-node
        /// references come first in the tail storage, right after the header, so the slots a
        /// lookup follows at the upper levels share cache lines with the bitmaps; the entries
        /// follow them.
        @inline(__always)
        func withParts<R>(
            _ body: (UnsafeMutablePointer<NodeHeader>, UnsafeMutablePointer<Entry>, UnsafeMutablePointer<Node>) throws -> R
        ) rethrows -> R {
            try withUnsafeMutablePointers { header, tail in
                try body(header, tail + Int(header.pointee.entryOffset),
                         UnsafeMutableRawPointer(tail).assumingMemoryBound(to: Node.self))
            }
        }

        /// An empty root with room for a full level, so a root never needs to grow.
        static func makeRoot() -> Node { make(dataMap: 0, nodeMap: 0, entries: 32, children: 32) }

        /// A node holding the entries `a` and `b` (in that order) and no sub-nodes.
        static func leaf(dataMap: UInt32, _ a: Entry, _ b: Entry) -> Node {
            let node = make(dataMap: dataMap, nodeMap: 0, entries: 2, children: 0)
            node.withParts { header, elements, childSlots in
                elements.initialize(to: a)
                (elements + 1).initialize(to: b)
                header.pointee.entryCount = 2
            }
            return node
        }

        /// A node holding one sub-node in slot `bit`.
        static func branch(bit: UInt32, _ child: Node) -> Node {
            let node = make(dataMap: 0, nodeMap: bit, entries: 0, children: 2)
            node.withParts { header, elements, childSlots in
                childSlots.initialize(to: child)
                header.pointee.childCount = 1
            }
            return node
        }

        /// A copy with the same contents and capacities (the elements are retained, not
        /// copied deeply): what a writer mutates instead of a node another map shares.
        func copy() -> Node { resized(entries: 0, children: 0, moving: false) }

        /// A node with the contents of this one and at least `entries`/`children` room (never
        /// less than this one's). With `moving`, the elements are moved out of this node, which
        /// is left empty (the caller drops it); otherwise they are copied (retained).
        func resized(entries: Int, children: Int, moving: Bool) -> Node {
            withParts { header, elements, childSlots in
                let h = header.pointee
                let fresh = Node.make(dataMap: h.dataMap, nodeMap: h.nodeMap,
                                      entries: Swift.max(entries, Int(h.entryCapacity)), children: Swift.max(children, Int(h.childCapacity)))
                fresh.withParts { newHeader, newElements, newChildSlots in
                    let entryCount = Int(h.entryCount), childCount = Int(h.childCount)
                    let oldChildren = childSlots, newChildren = newChildSlots
                    if moving {
                        newElements.moveInitialize(from: elements, count: entryCount)
                        newChildren.moveInitialize(from: oldChildren, count: childCount)
                        header.pointee.entryCount = 0
                        header.pointee.childCount = 0
                    } else {
                        for i in 0..<entryCount { (newElements + i).initialize(to: elements[i]) }
                        for i in 0..<childCount { (newChildren + i).initialize(to: oldChildren[i]) }
                    }
                    newHeader.pointee.entryCount = UInt32(entryCount)
                    newHeader.pointee.childCount = UInt32(childCount)
                }
                return fresh
            }
        }

        // MARK: Reading

        var dataMap: UInt32 { header.dataMap }
        var nodeMap: UInt32 { header.nodeMap }
        var entryCount: Int { Int(header.entryCount) }
        var childCount: Int { Int(header.childCount) }

        /// Whether this node folds into its parent's inline slot (one entry, no sub-nodes).
        var isSingleEntry: Bool { header.entryCount == 1 && header.childCount == 0 }

        /// The entry at index `i` (a copy).
        func entry(_ i: Int) -> Entry { withParts { _, elements, _ in elements[i] } }

        /// The sub-node at index `i`.
        func child(_ i: Int) -> Node {
            withParts { header, elements, childSlots in childSlots[i] }
        }

        /// The sub-nodes, in slot order (allocates; for tests and checks).
        var children: [Node] { (0..<childCount).map(child) }

        // MARK: Hash slicing

        /// Hash bits consumed per level (32-way nodes).
        @inline(__always) static var bitsPerLevel: Int { 5 }
        /// Hash bits available; a node at this shift or deeper is a collision node.
        @inline(__always) static var hashBitCount: Int { UInt.bitWidth }

        /// The full hash of `key` as an unsigned word.
        ///
        /// `UInt64` keys hash to themselves: the keydir's row ids are handed out by the engine
        /// in sequence (never chosen by users, so there is no flooding concern), and the
        /// identity spreads consecutive ids evenly over the slots at every level with no
        /// `Hasher` call (which cost as much as the rest of a row-id insert). Other keys use
        /// their randomly seeded `hashValue`. The branch folds away in specialized code.
        @inline(__always)
        static func hash(of key: Key) -> UInt {
            if Key.self == UInt64.self { return UInt(truncatingIfNeeded: unsafeBitCast(key, to: UInt64.self)) }
            return UInt(bitPattern: key.hashValue)
        }

        /// The one-bit mask selecting the slot of `hash` at level `shift`.
        @inline(__always)
        static func bit(_ hash: UInt, _ shift: Int) -> UInt32 {
            1 &<< UInt32(truncatingIfNeeded: (hash &>> UInt(truncatingIfNeeded: shift)) & 31)
        }

        /// The array index of the slot `bit` within a bitmap: the number of set bits below it.
        @inline(__always)
        static func index(_ map: UInt32, _ bit: UInt32) -> Int { (map & (bit &- 1)).nonzeroBitCount }

        // MARK: Slot primitives (the receiver is uniquely referenced; `node` may be replaced
        // by a larger copy when it is full)

        /// Inserts `entry` at entry index `i`, growing `node` if it is full.
        static func insertEntry(_ entry: Entry, at i: Int, into node: inout Node) {
            if node.header.entryCount == node.header.entryCapacity {
                node = node.resized(entries: Swift.max(2, Int(node.header.entryCapacity) * 2), children: 0, moving: true)
            }
            node.withParts { header, elements, childSlots in
                let count = Int(header.pointee.entryCount)
                (elements + i + 1).moveInitialize(from: elements + i, count: count - i)
                (elements + i).initialize(to: entry)
                header.pointee.entryCount += 1
            }
        }

        /// Removes and returns the entry at index `i`.
        func removeEntry(at i: Int) -> Entry {
            withParts { header, elements, childSlots in
                let count = Int(header.pointee.entryCount)
                let entry = (elements + i).move()
                (elements + i).moveInitialize(from: elements + i + 1, count: count - i - 1)
                header.pointee.entryCount -= 1
                return entry
            }
        }

        /// Inserts `child` at sub-node index `j`, growing `node` if it is full.
        static func insertChild(_ child: Node, at j: Int, into node: inout Node) {
            if node.header.childCount == node.header.childCapacity {
                node = node.resized(entries: 0, children: Swift.max(2, Int(node.header.childCapacity) * 2), moving: true)
            }
            node.withParts { header, elements, childSlots in
                let children = childSlots
                let count = Int(header.pointee.childCount)
                (children + j + 1).moveInitialize(from: children + j, count: count - j)
                (children + j).initialize(to: child)
                header.pointee.childCount += 1
            }
        }

        /// Removes and returns the sub-node at index `j`.
        func removeChild(at j: Int) -> Node {
            withParts { header, elements, childSlots in
                let children = childSlots
                let count = Int(header.pointee.childCount)
                let child = (children + j).move()
                (children + j).moveInitialize(from: children + j + 1, count: count - j - 1)
                header.pointee.childCount -= 1
                return child
            }
        }

        /// Runs `body` on sub-node `j` in place (it may replace it), first copying it if it is
        /// shared.
        @inline(__always)
        func withUniqueChild<R>(_ j: Int, _ body: (inout Node) -> R) -> R {
            withParts { header, elements, childSlots in
                let slot = childSlots + j
                if !isKnownUniquelyReferenced(&slot.pointee) { slot.pointee = slot.pointee.copy() }
                return body(&slot.pointee)
            }
        }
    }
}
