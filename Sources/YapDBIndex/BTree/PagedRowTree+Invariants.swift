// PagedRowTree+Invariants: the full self-check of a row tree, dirty and written nodes alike.

extension PagedRowTree {
    /// Checks every node: page checksums, subtree counts, first row ids, fill bounds (at most a
    /// page; nodes other than the root at least a quarter full and branches with two or more
    /// children) and all leaves at the same depth. Reads every page: O(n).
    /// - Throws: `PageError` naming the first bad page (`PageID.none` for a dirty node).
    package func validate() throws(PageError) {
        guard height > 0 else {
            guard root.count == 0, root.node == nil, root.page == .none else { throw .corrupt(page: root.page, reason: .unevenDepth) }
            return
        }
        try check(root, level: height - 1, isRoot: true)
    }

    /// Traps with the violation if `validate()` fails (tests; debug checks).
    package func checkInvariants() {
        do { try validate() } catch { preconditionFailure("PagedRowTree: \(error)") }
    }

    private func check(_ ref: ChildRef<RowNode>, level: Int, isRoot: Bool) throws(PageError) {
        let id = ref.page
        let node = try RowNode.checked(ref, level: level, format: format, pages: pages)
        let capacity = node.capacity(format)
        guard node.width <= capacity else { throw .corrupt(page: id, reason: .overfilled) }
        guard node.width >= (isRoot ? (node.isLeaf ? 1 : 2) : node.minimumWidth(format)) else { throw .corrupt(page: id, reason: .underfilled) }
        guard node.subtreeCount == ref.count else { throw .corrupt(page: id, reason: .subtreeCountMismatch(expected: ref.count, found: node.subtreeCount)) }
        guard node.first == ref.first else { throw .corrupt(page: id, reason: .firstRowMismatch(slot: 0)) }
        guard node.isLeaf ? node.children.isEmpty : node.rowids.isEmpty else { throw .corrupt(page: id, reason: .badCount(node.width)) }
        for child in node.children { try check(child, level: level - 1, isRoot: false) }
    }
}
