// PagedBTree+Invariants: the full self-check — every node, dirty or written, is walked.

extension PagedBTree {
    /// Checks every node, dirty and clean: page checksums, key order within nodes and against
    /// the separators above, subtree counts, fill bounds (no node over a page; nodes other than
    /// the root at least an eighth full, counted before prefixes are shared; branches with two or more children), and all leaves at
    /// the same depth. Reads every page: O(n). This is `verify()`'s walk of one tree.
    /// - Throws: `PageError` naming the first bad page (`PageID.none` for a dirty node).
    package func validate() throws(PageError) {
        guard height > 0 else {
            guard root.count == 0, root.node == nil, root.page == .none else { throw .corrupt(page: root.page, reason: .unevenDepth) }
            return
        }
        try check(root, level: height - 1, lower: nil, upper: nil, isRoot: true)
    }

    /// Traps with the violation if `validate()` fails (tests; debug checks).
    package func checkInvariants() {
        do { try validate() } catch { preconditionFailure("PagedBTree: \(error)") }
    }

    private func check(_ ref: ChildRef<KeyedNode>, level: Int, lower: [UInt8]?, upper: [UInt8]?, isRoot: Bool) throws(PageError) {
        let id = ref.page
        let node = try KeyedNode.checked(ref, level: level, format: format, pages: pages)
        let byteSize = node.byteSize
        node.recomputeSize()
        guard node.byteSize == byteSize else { throw .corrupt(page: id, reason: .subtreeCountMismatch(expected: node.byteSize, found: byteSize)) }
        guard byteSize <= format.pageSize else { throw .corrupt(page: id, reason: .overfilled) }
        if isRoot {
            guard node.isLeaf ? !node.entries.isEmpty : node.children.count >= 2 else { throw .corrupt(page: id, reason: .underfilled) }
        } else {
            // Counted before prefixes are shared: a split's halves are balanced by what their
            // entries weigh, and a half whose keys share more than the whole's did comes out
            // smaller than that weight.
            guard node.unsharedPayload >= format.minimumKeyedPayload else { throw .corrupt(page: id, reason: .underfilled) }
        }
        guard node.subtreeCount == ref.count else { throw .corrupt(page: id, reason: .subtreeCountMismatch(expected: ref.count, found: node.subtreeCount)) }
        // Keys (a leaf's entries, a branch's separators) ascend, and lie in [lower, upper).
        let keys = node.isLeaf ? ContiguousArray((0..<node.entries.count).map { node.entries.key($0) }) : node.keys
        for (i, key) in keys.enumerated() {
            if i > 0 { try requireLess(keys[i - 1], key, slot: i, page: id) }
            if let lower, i == 0 { try requireLess(lower, key, slot: i, page: id, orEqual: true) }
            if let upper, i == keys.count - 1 { try requireLess(key, upper, slot: i, page: id) }
        }
        if node.isLeaf {
            guard node.keys.isEmpty, node.children.isEmpty else { throw .corrupt(page: id, reason: .badCount(node.keys.count)) }
            return
        }
        guard node.keys.count == node.children.count - 1, node.entries.isEmpty else { throw .corrupt(page: id, reason: .badCount(node.children.count)) }
        for (k, child) in node.children.enumerated() {
            try check(child, level: level - 1, lower: k == 0 ? lower : node.keys[k - 1],
                      upper: k == node.keys.count ? upper : node.keys[k], isRoot: false)
        }
    }

    private func requireLess(_ a: [UInt8], _ b: [UInt8], slot: Int, page: PageID, orEqual: Bool = false) throws(PageError) {
        let order = a.withUnsafeBytes { x in b.withUnsafeBytes { compareBytes(x, $0) } }
        guard order < 0 || (orEqual && order == 0) else { throw .corrupt(page: page, reason: .keysOutOfOrder(slot: slot)) }
    }
}
