import YapDBEngine

/// A sorted stream of candidate row ids, read by seeking: `seek(target)` gives the smallest
/// row id ≥ `target` (nil: none left). Targets never decrease, so each cursor only moves on.
class FullTextCursor {
    func seek(_ target: UInt64) throws(EngineError) -> UInt64? { nil }
}

/// One term's rows, read a block at a time from the postings tree. A seek past the current
/// block searches the tree for the block holding the target (the key is the block's last row
/// id), so the blocks in between are never read; only the row ids of a block are decoded.
final class FullTextTermCursor: FullTextCursor {
    let state: FullTextState
    let term: String
    /// The term's id (nil: not looked up yet; 0: the term is not indexed).
    private var id: UInt32?
    private var prefix: [UInt8] = []
    private var rowids: [UInt64] = []
    private var index = 0
    private var finished = false
    /// Blocks decoded (for tests of skipping).
    private(set) var blocksRead = 0

    init(_ state: FullTextState, term: String) {
        self.state = state
        self.term = term
    }

    override func seek(_ target: UInt64) throws(EngineError) -> UInt64? {
        if finished { return nil }
        if id == nil {
            // The first seek looks the term's id up (its postings are filed under it).
            id = try state.termID(term) ?? 0
            prefix = FullTextState.termPrefix(id ?? 0)
        }
        guard let id, id != 0 else {
            finished = true
            return nil
        }
        if index < rowids.count, let last = rowids.last, target <= last {
            // Within the current block: a short forward search.
            while rowids[index] < target { index += 1 }
            return rowids[index]
        }
        var bytes: [UInt8]?
        try state.postings.forEachInKeyRange(from: KeyBound(FullTextState.postingsKey(id, lastRowid: target)), to: nil) { key, value in
            if FullTextState.key(key, hasPrefix: prefix, tail: 8) { bytes = Array(value) }
            return false
        }
        guard let bytes else {
            finished = true
            return nil
        }
        rowids.removeAll(keepingCapacity: true)
        try bytes.withBytes { raw throws(EngineError) in try FullTextPostingBlock.rowids(of: raw, into: &rowids) }
        blocksRead += 1
        index = 0
        while index < rowids.count, rowids[index] < target { index += 1 }
        // A block filed under a last row id ≥ target holds one; if it lies, it is damage.
        guard index < rowids.count else { throw FullTextPostingBlock.damaged }
        return rowids[index]
    }
}

/// A fixed sorted list (a prefix with many terms, gathered once).
final class FullTextListCursor: FullTextCursor {
    private let rowids: [UInt64]
    private var index = 0

    init(_ rowids: [UInt64]) { self.rowids = rowids }

    override func seek(_ target: UInt64) throws(EngineError) -> UInt64? {
        while index < rowids.count, rowids[index] < target { index += 1 }
        return index < rowids.count ? rowids[index] : nil
    }
}

/// Every indexed row (the documents tree's first chunks).
final class FullTextAllCursor: FullTextCursor {
    private let documents: ExtensionTree
    init(_ state: FullTextState) { documents = state.documents }

    override func seek(_ target: UInt64) throws(EngineError) -> UInt64? {
        var found: UInt64?
        try documents.forEachInKeyRange(from: KeyBound(FullTextState.documentKey(target, chunk: 0)), to: nil) { key, _ in
            guard key.count == 9 else { return false }
            if key[8] != 0 { return true }
            found = FullTextState.lastRowid(ofKey: UnsafeRawBufferPointer(rebasing: key[0..<8]))
            return false
        }
        return found
    }
}

/// Rows in every child (leapfrog: each child seeks to the largest row id seen).
final class FullTextAndCursor: FullTextCursor {
    private let children: [FullTextCursor]
    init(_ children: [FullTextCursor]) { self.children = children }

    override func seek(_ target: UInt64) throws(EngineError) -> UInt64? {
        var candidate = target
        var agreed = 0, i = 0
        while agreed < children.count {
            guard let found = try children[i].seek(candidate) else { return nil }
            if found == candidate {
                agreed += 1
            } else {
                candidate = found
                agreed = 1
            }
            i = (i + 1) % children.count
        }
        return candidate
    }
}

/// Rows in any child.
final class FullTextOrCursor: FullTextCursor {
    private let children: [FullTextCursor]
    init(_ children: [FullTextCursor]) { self.children = children }

    override func seek(_ target: UInt64) throws(EngineError) -> UInt64? {
        var best: UInt64?
        for child in children {
            if let found = try child.seek(target), best.map({ found < $0 }) ?? true { best = found }
        }
        return best
    }
}

/// Rows of `base` that `excluded` does not hold (`excluded` must be exact).
final class FullTextNotCursor: FullTextCursor {
    private let base: FullTextCursor
    private let excluded: FullTextCursor
    init(_ base: FullTextCursor, excluding excluded: FullTextCursor) {
        self.base = base
        self.excluded = excluded
    }

    override func seek(_ target: UInt64) throws(EngineError) -> UInt64? {
        var target = target
        while let found = try base.seek(target) {
            guard try excluded.seek(found) == found else { return found }
            guard found < .max else { return nil }
            target = found + 1
        }
        return nil
    }
}
