// MappedPages+EdgeLeaves: the first and last leaf under a root page, remembered per table.

import Synchronization

extension MappedPages {
    /// The leaves at the edges of the trees read through one table: root page → first (or
    /// last) leaf page, found by a full descent once and remembered, so a later `MIN`/`MAX`
    /// (`withEdgeEntry(ofTree:last:_:)`) reads one page instead of the whole path.
    ///
    /// Sound because index pages are appended and never rewritten (docs/format.md §9) and a
    /// table's bytes do not change while it lives: the path under a root page is the same
    /// every time it is walked, whichever tree, snapshot or thread asks. A tree that changes
    /// gets a new root page (copy-on-write), so it is never found under an old one.
    ///
    /// Threading: readers take no lock. Each slot holds a key (the root page; the first
    /// edges and the last edges have slots of their own) and a leaf page; a writer clears the
    /// key, stores the leaf, then stores the key, under a flag (writes are rare: one per root
    /// and edge); a reader accepts a leaf only when it read the same key before and after it.
    /// A leaf read under a matching key is the leaf of that key: every write of a key stores
    /// that key's one leaf.
    package struct EdgeLeaves: @unchecked Sendable {
        /// Slots per table, half for first edges and half for last ones (a root maps to one
        /// slot of its half; a collision replaces the older root).
        static let slots = 64
        /// `[writer flag][keys × slots][leaves × slots]`, owned by the `MappedPages`.
        let words: UnsafeMutablePointer<Atomic<UInt64>>

        static func allocate() -> UnsafeMutablePointer<Atomic<UInt64>> {
            let count = 1 + 2 * slots
            let words = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: count)
            for i in 0..<count { (words + i).initialize(to: Atomic<UInt64>(0)) }
            return words
        }

        static func deallocate(_ words: UnsafeMutablePointer<Atomic<UInt64>>) {
            words.deinitialize(count: 1 + 2 * slots)
            words.deallocate()
        }

        /// The slot of `root`'s `last` (or first) edge: a multiplicative hash of the page id
        /// into its half.
        @inline(__always)
        private static func slot(_ root: PageID, _ last: Bool) -> Int {
            Int(truncatingIfNeeded: (root &* 0x9E37_79B9_7F4A_7C15) >> 59) + (last ? slots / 2 : 0)
        }

        /// The leaf remembered at the `last` (or first) edge under `root`, or nil.
        @inline(__always)
        package func leaf(under root: PageID, last: Bool) -> PageID? {
            // Page 0 is no root (an empty tree): it never matches, as an empty slot's key is 0.
            let slot = Self.slot(root, last)
            guard root != 0, words[1 + slot].load(ordering: .acquiring) == root else { return nil }
            let leaf = words[1 + Self.slots + slot].load(ordering: .acquiring)
            guard words[1 + slot].load(ordering: .acquiring) == root, leaf != 0 else { return nil }
            return leaf
        }

        /// Remembers `leaf` as the `last` (or first) edge leaf under `root`; skipped when another
        /// writer holds the flag (the next descent remembers it).
        package func remember(_ leaf: PageID, under root: PageID, last: Bool) {
            guard root != 0, words[0].compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged else { return }
            let slot = Self.slot(root, last)
            words[1 + slot].store(0, ordering: .releasing)
            words[1 + Self.slots + slot].store(leaf, ordering: .releasing)
            words[1 + slot].store(root, ordering: .releasing)
            words[0].store(0, ordering: .releasing)
        }
    }
}
