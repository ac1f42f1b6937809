// PagedRowTree+Mutation: positional insert and remove, with splits and merges.

extension PagedRowTree {
    /// Inserts `rowid` at position `index`, shifting later rows up by one. O(log n); copies the
    /// path's shared or clean nodes.
    /// - Precondition: `0 <= index <= count`.
    /// - Throws: `PageError` if a page on the path or a sibling cannot be read or is damaged;
    ///   then discard the tree value (see `PagedBTree.upsert`).
    package mutating func insert(_ rowid: UInt64, at index: Int) throws(PageError) {
        precondition(index >= 0 && index <= count, "PagedRowTree: insert index \(index) out of range 0...\(count)")
        guard height > 0 else {
            root = .dirty(RowNode(level: 0, rowids: [rowid], children: []), count: 1, first: rowid)
            height = 1
            return
        }
        let node = try root.makeDirty(level: height - 1, format: format, pages: pages)
        try changeLeaf(under: node, at: index, inserting: true) { leaf, i in
            leaf.appendedLast = i == leaf.rowids.count
            leaf.rowids.insert(rowid, at: i)
        }
        root.count += 1
        root.first = node.first
        if node.width > node.capacity(format) {
            let (right, rightCount) = node.split(format)
            let left = ChildRef.dirty(node, count: root.count - rightCount, first: node.first)
            let children: ContiguousArray = [left, .dirty(right, count: rightCount, first: right.first)]
            root = .dirty(RowNode(level: height, rowids: [], children: children), count: root.count, first: node.first)
            height += 1
        }
    }

    /// Appends `rowid` after the last row. O(log n).
    package mutating func append(_ rowid: UInt64) throws(PageError) { try insert(rowid, at: count) }

    /// Removes and returns the row id at `index`. O(log n).
    /// - Precondition: `0 <= index < count`.
    /// - Throws: `PageError` as for `insert`.
    @discardableResult
    package mutating func remove(at index: Int) throws(PageError) -> UInt64 {
        precondition(index >= 0 && index < count, "PagedRowTree: remove index \(index) out of range 0..<\(count)")
        let node = try root.makeDirty(level: height - 1, format: format, pages: pages)
        let removed = try changeLeaf(under: node, at: index, inserting: false) { leaf, i in leaf.rowids.remove(at: i) }
        root.count -= 1
        if root.count == 0 {
            removeAll()
            return removed
        }
        root.first = node.first
        while let top = root.node, !top.isLeaf, top.children.count == 1 {
            root = top.children[0]
            height -= 1
        }
        return removed
    }
}

extension PagedRowTree {
    /// The descent of a change: from `top`, the root node (dirty, owned by this tree alone), by
    /// position to the leaf that holds position `index` — for an insert, the leaf a row at
    /// `index` goes into: the end of a child rather than the start of the next — making each
    /// node on the way dirty and owned (`ChildRef.makeDirty`) and keeping the path as cursor
    /// frames on the stack. `change` then changes the leaf at the position within it (adding
    /// a row when `inserting`, else removing one); each branch on the path, from the bottom up,
    /// takes the change into its count and first row id of the child, and splits or merges the
    /// child as its width now needs (`RowNode.fixChild`).
    private func changeLeaf<R>(
        under top: RowNode, at index: Int, inserting: Bool, _ change: (RowNode, Int) -> R
    ) throws(PageError) -> R {
        try withFrames(RowNode.self, height: height) { path throws(PageError) -> R in
            var depth = 0, i = index
            // Held unretained (the tree owns every node on the path), so a merge below can find
            // a sibling uniquely referenced and change it in place.
            var node = Unmanaged.passUnretained(top)
            while true {
                let branch = node.takeUnretainedValue()
                guard !branch.isLeaf else { break }
                var k = 0
                if inserting {
                    while i > branch.children[k].count { i -= branch.children[k].count; k += 1 }
                } else {
                    while i >= branch.children[k].count { i -= branch.children[k].count; k += 1 }
                }
                var frame = RowFrame(dirty: branch)
                frame.slot = k
                path[depth] = frame
                depth &+= 1
                node = Unmanaged.passUnretained(try branch.children[k].makeDirty(level: branch.level &- 1, format: format, pages: pages))
            }
            let result = change(node.takeUnretainedValue(), i)
            let delta = inserting ? 1 : -1
            while depth > 0 {
                depth &-= 1
                let frame = path[depth]
                let branch = frame.node.unsafelyUnwrapped.takeUnretainedValue()
                branch.children[frame.slot].count += delta
                branch.children[frame.slot].first = branch.children[frame.slot].node.unsafelyUnwrapped.first
                try branch.fixChild(frame.slot, self)
            }
            return result
        }
    }
}

extension RowNode {
    /// After child `k` (dirty) changed: splits it if over capacity, or merges it with a sibling
    /// (splitting the result again if over capacity) if below the minimum width.
    func fixChild(_ k: Int, _ tree: PagedRowTree) throws(PageError) {
        let (width, capacity, minimum) = { (node: RowNode) in
            (node.width, node.capacity(tree.format), node.minimumWidth(tree.format))
        }(children[k].node.unsafelyUnwrapped)
        appendedLast = false
        if width > capacity {
            adoptSplit(of: k, tree.format)
            appendedLast = k + 2 == children.count && children[k + 1].node.unsafelyUnwrapped.appendedLast
        } else if width < minimum && children.count > 1 {
            let left = k > 0 ? k - 1 : k
            let leftNode = try children[left].makeDirty(level: level - 1, format: tree.format, pages: tree.pages)
            let rightNode = try children[left + 1].makeDirty(level: level - 1, format: tree.format, pages: tree.pages)
            leftNode.rowids += rightNode.rowids
            leftNode.children += rightNode.children
            children[left].count += children[left + 1].count
            children.remove(at: left + 1)
            leftNode.appendedLast = false
            if leftNode.width > capacity { adoptSplit(of: left, tree.format) }
        }
    }

    /// Splits child `k` and inserts the right half after it.
    private func adoptSplit(of k: Int, _ format: PageFormat) {
        let (right, rightCount) = children[k].node.unsafelyUnwrapped.split(format)
        children[k].count -= rightCount
        children.insert(.dirty(right, count: rightCount, first: right.first), at: k + 1)
    }

    /// Keeps the lower half of this node — or, after an append, all but the minimum width —
    /// and returns the rest and its entry count.
    func split(_ format: PageFormat) -> (right: RowNode, count: Int) {
        let appending = appendedLast
        appendedLast = false
        let m = appending ? width - minimumWidth(format) : width / 2
        let right = RowNode(level: level, rowids: isLeaf ? ContiguousArray(rowids[m...]) : [],
                            children: isLeaf ? [] : ContiguousArray(children[m...]))
        right.appendedLast = appending
        if isLeaf { rowids.removeSubrange(m...) } else { children.removeSubrange(m...) }
        return (right, right.subtreeCount)
    }
}
