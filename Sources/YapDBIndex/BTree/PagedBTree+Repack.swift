// PagedBTree+Repack: index compaction's copy of a keyed tree — its live entries written again
// into full pages in key order, leaves first, then each level of branches — and carrying the
// changes a newer tree made since onto that copy.

extension PagedBTree {
    /// Writes the tree's entries again as a new tree of full pages: the leaves in key order, each
    /// filled to 15/16 of a page (the last two evened out so both meet the fill bound), then each
    /// level of branches over the one below (`keyedBranches`), then the root. Every page is
    /// written once, children before parents, and the result is clean: open it with
    /// `PagedBTree(root:format:source:)` over a source that holds the new pages.
    ///
    /// Unlike a node-for-node copy, pages that deletions left half empty come out full, so the
    /// copy takes about the live entries' bytes.
    ///
    /// Clean pages are read with their checksums verified (a damaged page is reported, never
    /// copied under a fresh checksum). Memory: one decoded page per level of the source, the
    /// leaf being filled and the one before it, and a page id and first key per node of the
    /// level being built — never the whole tree.
    ///
    /// - Throws: whatever `allocate` or `write` throw, or `readFailed` of a page error.
    /// - Threading: never mutates a node; may run while other copies of the tree are read or
    ///   changed.
    package func repackAll<E: Error>(
        allocate: () throws(E) -> PageID, write: (PageID, UnsafeRawBufferPointer) throws(E) -> Void,
        readFailed: (PageError) -> E
    ) throws(E) -> PagedTreeRoot {
        guard height > 0 else { return .empty }
        var packer = LeafPacker(format: format)
        let format = self.format, pages = self.pages
        func visit(_ ref: ChildRef<KeyedNode>, level: Int) throws(E) {
            let node: KeyedNode
            if let dirty = ref.node {
                node = dirty
            } else {
                do throws(PageError) {
                    node = try KeyedNode.load(ref.page, level: level, count: ref.count, format: format, pages: pages, verifyChecksum: true)
                } catch { throw readFailed(error) }
            }
            guard node.isLeaf else {
                for child in node.children { try visit(child, level: level - 1) }
                return
            }
            for i in 0..<node.entries.count {
                try packer.add(node.entries, i, allocate: allocate, write: write)
            }
        }
        try visit(root, level: height - 1)
        var level = try packer.finish(allocate: allocate, write: write)
        var levelHeight = 1
        var pageWriter = PageWriter(format: format)
        while level.count > 1 {
            let built = keyedBranches(over: level, at: levelHeight, format: format, fill: LeafPacker.fill(format))
            level = []
            level.reserveCapacity(built.count)
            for (ref, first) in built {
                let node = ref.node.unsafelyUnwrapped
                let id = try pageWriter.emitCopy(allocate: allocate, write: write) {
                    node.encode(into: $0, childPages: node.children.map(\.page))
                }
                level.append((.clean(id, count: ref.count), first))
            }
            levelHeight += 1
        }
        return PagedTreeRoot(page: level[0].ref.page, count: level[0].ref.count, height: levelHeight, first: 0)
    }
}

/// Fills leaves with entries given in key order and writes each one as a page. The leaf before
/// the one being filled is held back, so the last two can be evened out at the end.
private struct LeafPacker: ~Copyable {
    let format: PageFormat
    private var writer: PageWriter
    /// The written leaves, each with the separator before it (the first leaf's first key).
    private(set) var level: [(ref: ChildRef<KeyedNode>, first: [UInt8])] = []
    /// A full leaf not written yet.
    private var held: LeafEntries?
    private var current = LeafEntries()
    /// The last key of the last leaf written.
    private var lastKey: [UInt8] = []

    /// Payload bytes a node is filled to before the next one is started (as `PagedBTreeBuilder`).
    static func fill(_ format: PageFormat) -> Int { format.payloadSize - format.payloadSize / 16 }

    init(format: PageFormat) {
        self.format = format
        writer = PageWriter(format: format)
    }

    /// Adds entry `i` of `entries` after every entry added so far.
    mutating func add<E: Error>(_ entries: LeafEntries, _ i: Int, allocate: () throws(E) -> PageID,
                                write: (PageID, UnsafeRawBufferPointer) throws(E) -> Void) throws(E) {
        let full = current.count > 0 && entries.read(i) { key, value in
            current.encodedSize(appending: key, value) - PageLayout.headerSize > Self.fill(format)
        }
        if full {
            if let held { try emit(held, allocate: allocate, write: write) }
            held = current
            current = LeafEntries()
        }
        entries.read(i) { key, value in current.append(key, value) }
    }

    /// Writes what is left (evening out the last two leaves when the last is under the fill
    /// bound) and returns every leaf written, in key order.
    mutating func finish<E: Error>(allocate: () throws(E) -> PageID,
                                   write: (PageID, UnsafeRawBufferPointer) throws(E) -> Void) throws(E) -> [(ref: ChildRef<KeyedNode>, first: [UInt8])] {
        defer { held = nil }
        if var held {
            if current.count > 0 && current.encodedSize - PageLayout.headerSize < format.minimumKeyedPayload {
                held.append(contentsOf: current)
                let all = held
                let shared = all.sharedPerEntry
                let m = balancedSplit(pieces: all.count) { all.pageBytes($0) - shared }
                try emit(all.slice(0..<m), allocate: allocate, write: write)
                try emit(all.slice(m..<all.count), allocate: allocate, write: write)
            } else {
                try emit(held, allocate: allocate, write: write)
                if current.count > 0 { try emit(current, allocate: allocate, write: write) }
            }
        } else if current.count > 0 {
            try emit(current, allocate: allocate, write: write)
        }
        return level
    }

    private mutating func emit<E: Error>(_ entries: LeafEntries, allocate: () throws(E) -> PageID,
                                         write: (PageID, UnsafeRawBufferPointer) throws(E) -> Void) throws(E) {
        let node = KeyedNode(leaf: entries)
        let id = try writer.emitCopy(allocate: allocate, write: write) { node.encode(into: $0, childPages: []) }
        let separator = level.isEmpty ? entries.key(0)
            : lastKey.withUnsafeBytes { last in entries.read(0) { first, _ in shortestSeparator(after: last, upTo: first) } }
        level.append((.clean(id, count: entries.count), separator))
        lastKey = entries.key(entries.count - 1)
    }
}

// MARK: - Carrying newer changes onto a copy

/// A node of a tree, by what makes it the same node in two tree values: its page, or the
/// in-memory node object.
private enum NodeIdentity: Hashable {
    case page(PageID)
    case node(ObjectIdentifier)

    init(_ ref: ChildRef<KeyedNode>) {
        if let node = ref.node { self = .node(ObjectIdentifier(node)) } else { self = .page(ref.page) }
    }
}

extension PagedBTree {
    /// This tree — `base` or a value derived from it by mutations — as the tree `copy` (a
    /// repacked copy of `base`, `repackAll`) with the same changes made to it: the result holds
    /// exactly this tree's entries, on the copy's pages plus dirty nodes for what changed since
    /// `base`. When nothing changed it is `copy` itself.
    ///
    /// The changes are found without reading either tree whole: a node both values share
    /// (the same page, or the same node object, which copy-on-write never changes while
    /// shared) holds the same entries in both, so only entries in leaves that are not shared
    /// can differ. Reads the branch pages of both trees and the unshared leaves.
    ///
    /// - Throws: `PageError` from reading a page of either tree or of `copy`.
    package func rebasing(from base: PagedBTree, onto copy: PagedBTree) throws(PageError) -> PagedBTree {
        if NodeIdentity(root) == NodeIdentity(base.root) && count == base.count && height == base.height { return copy }
        let mine = try nodeIdentities(), theirs = try base.nodeIdentities()
        var before: [[UInt8]: [UInt8]] = [:]
        try base.forEachUnsharedEntry(skipping: mine) { key, value in before[Array(key)] = Array(value) }
        var result = copy
        var kept = Set<[UInt8]>()
        try forEachUnsharedEntry(skipping: theirs) { (key, value) throws(PageError) in
            let k = Array(key)
            if let old = before[k] {
                kept.insert(k)
                if old.elementsEqual(value) { return }
            }
            try result.upsert(k, Array(value))
        }
        for key in before.keys where !kept.contains(key) { try result.remove(key) }
        return result
    }

    /// The dirty node of `ref`, or its page decoded.
    private static func node(_ ref: ChildRef<KeyedNode>, level: Int, format: PageFormat, pages: PageReader) throws(PageError) -> KeyedNode {
        if let node = ref.node { return node }
        return try KeyedNode.load(ref.page, level: level, count: ref.count, format: format, pages: pages)
    }

    /// Every node of the tree: dirty nodes and the pages branches name (leaf pages are not read).
    private func nodeIdentities() throws(PageError) -> Set<NodeIdentity> {
        var ids = Set<NodeIdentity>()
        let format = self.format, pages = self.pages
        func visit(_ ref: ChildRef<KeyedNode>, level: Int) throws(PageError) {
            ids.insert(NodeIdentity(ref))
            guard level > 0 else { return }
            let node = try Self.node(ref, level: level, format: format, pages: pages)
            for child in node.children { try visit(child, level: level - 1) }
        }
        if height > 0 { try visit(root, level: height - 1) }
        return ids
    }

    /// Calls `body` with each entry of the leaves under nodes not in `shared`, in key order.
    private func forEachUnsharedEntry(
        skipping shared: Set<NodeIdentity>, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(PageError) -> Void
    ) throws(PageError) {
        let format = self.format, pages = self.pages
        func visit(_ ref: ChildRef<KeyedNode>, level: Int) throws(PageError) {
            guard !shared.contains(NodeIdentity(ref)) else { return }
            let node = try Self.node(ref, level: level, format: format, pages: pages)
            guard node.isLeaf else {
                for child in node.children { try visit(child, level: level - 1) }
                return
            }
            for i in 0..<node.entries.count { try node.entries.withEntry(i, body) }
        }
        if height > 0 { try visit(root, level: height - 1) }
    }
}
