// PagedBTree+Mutation: upsert and remove, with splits, merges and redistribution. Every step
// works on dirty nodes the tree owns exclusively (ChildRef.makeDirty).

extension PagedBTree {
    /// Stores `value` for `key`, replacing any value it had. Returns the old value, or nil if the
    /// key is new. O(log n); copies the path's shared or clean nodes.
    /// - Throws: `.entryTooLarge` if `key.count + value.count > format.maximumEntrySize`
    ///   (nothing changed); `PageError` if a page on the path or a sibling cannot be read or is
    ///   damaged. Then the tree may hold part of the change: discard the value (a transaction
    ///   rolls back to the tree it started from, which shares no node this call mutated).
    @discardableResult
    package mutating func upsert(_ key: [UInt8], _ value: [UInt8]) throws(PageError) -> [UInt8]? {
        let size = key.count + value.count
        guard size <= format.maximumEntrySize else { throw .entryTooLarge(size: size, limit: format.maximumEntrySize) }
        guard height > 0 else {
            var entries = LeafEntries()
            entries.insert(key, value, at: 0)
            root = .dirty(KeyedNode(leaf: entries), count: 1)
            height = 1
            return nil
        }
        let node = try root.makeDirty(level: height - 1, format: format, pages: pages)
        let old = try withBytes(key) { target throws(PageError) -> [UInt8]? in
            try changeLeaf(under: node, key: target, fixesWhenAbsent: true) { leaf in
                let (index, found) = leaf.search(target)
                if found {
                    leaf.appendedLast = false
                    return (leaf.entries.replaceValue(at: index, with: value), 0)
                }
                leaf.appendedLast = index == leaf.entries.count
                leaf.entries.insert(key, value, at: index)
                return (nil, 1)
            }
        }
        if old == nil { root.count += 1 }
        if node.byteSize > format.pageSize {
            while let top = root.node, top.byteSize > format.pageSize { growRoot(top) }
        } else {
            shrinkRoot()  // a smaller value can make two children merge into one
        }
        return old
    }

    /// Removes `key`. Returns its old value, or nil if it was absent (then nothing is copied).
    /// O(log n).
    /// - Throws: `PageError` if a page on the path or a sibling cannot be read or is damaged;
    ///   then discard the tree value, as for `upsert`.
    @discardableResult
    package mutating func remove(_ key: [UInt8]) throws(PageError) -> [UInt8]? {
        guard try contains(key) else { return nil }
        return try removeFound(key)
    }

    /// `remove(_:)` for a key the caller knows is present (it just found it): no existence
    /// walk first. An absent key still returns nil and changes nothing, but the nodes on its
    /// path are copied (made dirty) on the way, so use `remove(_:)` when absence is likely.
    @discardableResult
    package mutating func removeFound(_ key: [UInt8]) throws(PageError) -> [UInt8]? {
        guard height > 0 else { return nil }
        let node = try root.makeDirty(level: height - 1, format: format, pages: pages)
        let old = try withBytes(key) { target throws(PageError) -> [UInt8]? in
            try changeLeaf(under: node, key: target, fixesWhenAbsent: false) { leaf in
                let (index, found) = leaf.search(target)
                guard found else { return (nil, 0) }
                return (leaf.entries.remove(at: index), -1)
            }
        }
        if old != nil { root.count -= 1 }
        shrinkRoot()
        return old
    }

    /// Splits an overflowing root under a new root branch (which may overflow in turn, when
    /// one change made the root need several pages).
    private mutating func growRoot(_ node: KeyedNode) {
        let pieces = node.split(format: format)
        var separators = ContiguousArray<[UInt8]>(), children = ContiguousArray<ChildRef<KeyedNode>>()
        var leftCount = root.count
        for piece in pieces {
            separators.append(piece.separator)
            children.append(.dirty(piece.right, count: piece.rightCount))
            leftCount -= piece.rightCount
        }
        children.insert(.dirty(node, count: leftCount), at: 0)
        root = .dirty(KeyedNode(level: height, separators: separators, children: children), count: root.count)
        height += 1
    }

    /// Drops root branches with a single child, and an empty root leaf.
    private mutating func shrinkRoot() {
        while let node = root.node, !node.isLeaf, node.children.count == 1 {
            root = node.children[0]
            height -= 1
        }
        if root.count == 0 { removeAll() }
    }
}

extension PagedBTree {
    /// The descent of a change: from `top`, the root node (dirty, owned by this tree alone), by
    /// `key` to the leaf that holds or would hold it, making each node on the way dirty and owned
    /// (`ChildRef.makeDirty`) and keeping the path as cursor frames on the stack. `change` then
    /// changes the leaf and returns its result and how the leaf's entry count changed; each
    /// branch on the path, from the bottom up, takes that change into its count of the child
    /// and splits or merges the child as its size now needs (`KeyedNode.fixChild`). A nil result
    /// with `fixesWhenAbsent` false (a removal of an absent key) leaves the path as it is.
    private func changeLeaf<R>(
        under top: KeyedNode, key: UnsafeRawBufferPointer, fixesWhenAbsent: Bool,
        _ change: (KeyedNode) -> (result: R?, delta: Int)
    ) throws(PageError) -> R? {
        try withPathRoom(height: height) { path throws(PageError) -> R? in
            var depth = 0
            // Held unretained (the tree owns every node on the path), so a merge below can find
            // a sibling uniquely referenced and change it in place.
            var node = Unmanaged.passUnretained(top)
            while true {
                let branch = node.takeUnretainedValue()
                guard !branch.isLeaf else { break }
                var frame = KeyedFrame(dirty: branch)
                frame.slot = branch.childIndex(key)
                path[depth] = frame
                depth &+= 1
                node = Unmanaged.passUnretained(try branch.children[frame.slot].makeDirty(level: branch.level &- 1, format: format, pages: pages))
            }
            let (result, delta) = change(node.takeUnretainedValue())
            guard result != nil || fixesWhenAbsent else { return nil }
            while depth > 0 {
                depth &-= 1
                let frame = path[depth]
                let branch = frame.node.unsafelyUnwrapped.takeUnretainedValue()
                branch.children[frame.slot].count &+= delta
                try branch.fixChild(frame.slot, self)
            }
            return result
        }
    }
}

extension KeyedNode {
    /// After child `k` (dirty) changed: splits it if it overflows a page, or merges it with a
    /// sibling (and splits the result again if that overflows) if it fell below the fill bound.
    func fixChild(_ k: Int, _ tree: PagedBTree) throws(PageError) {
        let size = children[k].node.unsafelyUnwrapped.byteSize
        appendedLast = false
        if size > tree.format.pageSize {
            let pieces = adoptSplit(of: k, format: tree.format)
            appendedLast = k + 1 + pieces == children.count && children[k + pieces].node.unsafelyUnwrapped.appendedLast
        } else if size - PageLayout.headerSize < tree.format.minimumKeyedPayload && children.count > 1 {
            let left = k > 0 ? k - 1 : k
            let leftNode = try children[left].makeDirty(level: level - 1, format: tree.format, pages: tree.pages)
            let rightNode = try children[left + 1].makeDirty(level: level - 1, format: tree.format, pages: tree.pages)
            if leftNode.isLeaf {
                leftNode.entries.append(contentsOf: rightNode.entries)
            } else {
                leftNode.keys.append(keys[left])
                leftNode.keys += rightNode.keys
                leftNode.children += rightNode.children
            }
            leftNode.recomputeSize()
            children[left].count += children[left + 1].count
            branchBytes -= PageLayout.keyedChildSize + Self.separatorBytes(keys[left])
            children.remove(at: left + 1)
            keys.remove(at: left)
            leftNode.appendedLast = false
            if leftNode.byteSize > tree.format.pageSize { adoptSplit(of: left, format: tree.format) }
        }
    }

    /// Splits child `k` (dirty, overflowing) and inserts the new pieces after it; returns how
    /// many were added.
    @discardableResult
    private func adoptSplit(of k: Int, format: PageFormat) -> Int {
        let pieces = children[k].node.unsafelyUnwrapped.split(format: format)
        for (offset, piece) in pieces.enumerated() {
            children[k].count -= piece.rightCount
            children.insert(.dirty(piece.right, count: piece.rightCount), at: k + 1 + offset)
            keys.insert(piece.separator, at: k + offset)
            branchBytes += PageLayout.keyedChildSize + Self.separatorBytes(piece.separator)
        }
        return pieces.count
    }

    /// Splits this overflowing node into pieces that each fit a page, keeps the first and
    /// returns the others in order, each with the separator before it and its entry count.
    /// Usually that is one split in two (`splitInTwo`); a change that shortened the shared
    /// prefixes of a node can make it need more pages, and then the halves split again.
    func split(format: PageFormat) -> [(separator: [UInt8], right: KeyedNode, rightCount: Int)] {
        let half = splitInTwo(format: format)
        var pieces: [(separator: [UInt8], right: KeyedNode, rightCount: Int)] = []
        if byteSize > format.pageSize { pieces += split(format: format) }
        guard half.right.byteSize > format.pageSize else { return pieces + [half] }
        let further = half.right.split(format: format)
        let moved = further.reduce(0) { $0 + $1.rightCount }
        return pieces + [(half.separator, half.right, half.rightCount - moved)] + further
    }

    /// Splits this node into two halves of about equal bytes — or, after an append, into a left
    /// node as full as it was and a right node just past the fill bound — keeps the left part
    /// and returns the separator for the parent, the right part and its entry count.
    private func splitInTwo(format: PageFormat) -> (separator: [UInt8], right: KeyedNode, rightCount: Int) {
        let appending = appendedLast
        appendedLast = false
        let choose = { (pieces: Int, bytes: (Int) -> Int) -> Int in
            appending ? appendSplit(pieces: pieces, minimum: format.minimumKeyedPayload, bytes: bytes)
                : balancedSplit(pieces: pieces, bytes: bytes)
        }
        // Pieces weigh their bytes less what the node's shared prefixes save them (either
        // half shares at least those prefixes).
        let shared = sharedPerPiece
        if isLeaf {
            let m = choose(entries.count) { entries.pageBytes($0) - shared }
            let right = KeyedNode(leaf: entries.slice(m..<entries.count))
            right.appendedLast = appending
            entries = entries.slice(0..<m)
            let separator = entries.read(m - 1) { last, _ in right.entries.read(0) { first, _ in shortestSeparator(after: last, upTo: first) } }
            return (separator, right, right.entries.count)
        }
        // Child i weighs its entry plus the separator after it; separator m - 1 moves up.
        let m = choose(children.count) { i in
            PageLayout.keyedChildSize + (i < keys.count ? Self.separatorBytes(keys[i]) - shared : 0)
        }
        let separator = keys[m - 1]
        let right = KeyedNode(level: level, separators: ContiguousArray(keys[m...]), children: ContiguousArray(children[m...]))
        right.appendedLast = appending
        keys.removeSubrange((m - 1)...)
        children.removeSubrange(m...)
        recomputeSize()
        return (separator, right, right.subtreeCount)
    }
}

/// The shortest byte string that is greater than `last` and not greater than `first` (given
/// `last < first`): the first bytes of `first` up to and including the first byte where the two
/// differ. As a separator it sends `last` left and `first` right, and a branch stores fewer bytes
/// than the whole of `first`.
func shortestSeparator(after last: UnsafeRawBufferPointer, upTo first: UnsafeRawBufferPointer) -> [UInt8] {
    guard let a = last.baseAddress, let b = first.baseAddress else { return Array(first.prefix(1)) }
    let shared = commonPrefixLength(a, last.count, b, first.count)
    return Array(first.prefix(shared + 1))
}

/// The split point `m` (1 ≤ m < pieces) that makes the bytes of pieces `0..<m` closest to half
/// of the total, given each piece's bytes.
func balancedSplit(pieces: Int, bytes: (Int) -> Int) -> Int {
    var total = 0
    for i in 0..<pieces { total += bytes(i) }
    var left = 0, best = 1, bestImbalance = Int.max
    for m in 1..<pieces {
        left += bytes(m - 1)
        let imbalance = abs(2 * left - total)
        if imbalance < bestImbalance { best = m; bestImbalance = imbalance } else { break }
    }
    return best
}

/// The split point after an append: the smallest right part (taken from the end) whose bytes
/// reach `minimum`, so the left part keeps everything it held before the append.
func appendSplit(pieces: Int, minimum: Int, bytes: (Int) -> Int) -> Int {
    var m = pieces, right = 0
    while m > 1 && right < minimum {
        m -= 1
        right += bytes(m)
    }
    return m
}
