import YapDBStorage
import YapDBIndex

/// One keyed tree of an extension (an edge table, an index): byte keys in `memcmp` order, each
/// with a byte value, on the index pages beside the key directory. The engine's door for
/// extensions: every read and change throws `EngineError` (a damaged or unreadable page, an
/// entry too large for a page), so an extension built on it names no type of the index layer.
///
/// A value, like the rows' trees: keep it in the extension's state (an `ExtensionTreesState`)
/// in `WriteTransaction.extensions`, and a change copies only the touched path; every
/// snapshot reads its own tree. The index checkpoint writes its pages (`ExtensionTreesState`).
///
/// Threading: a value; reading one from several threads is safe, changing it is the owner's.
package struct ExtensionTree: Sendable {
    /// The tree itself (the engine's side of the door).
    @usableFromInline var base: PagedBTree

    /// The door around a tree of the index layer (for a probe that opens trees at page ids
    /// of its own choosing; extensions open theirs from a claim).
    package init(_ base: PagedBTree) { self.base = base }

    /// The tree of the index layer behind the door (for the same probe, which writes it as
    /// pages of its own).
    package var pagedTree: PagedBTree { base }

    /// An empty tree in the default page format, reading no page (until a checkpoint writes
    /// it, it lives in memory).
    package init() {
        base = PagedBTree(format: PageFormat(), source: EmptyPageSource())
    }

    /// An empty tree on the index pages `keydir` is on (the format its pages have).
    package init(emptyLike keydir: Keydir) {
        base = PagedBTree(format: keydir.rows.format, source: EmptyPageSource())
    }

    /// An empty tree on the pages of `claimed`'s index.
    package init(emptyIn claimed: ClaimedExtensionRoots) {
        base = PagedBTree(format: claimed.format, source: claimed.source)
    }

    /// The tree whose root `root` a claim handed back (reads no page).
    package init(root: ExtensionTreeRoot, in claimed: ClaimedExtensionRoots) {
        base = PagedBTree(root: root, format: claimed.format, source: claimed.source)
    }

    /// The number of entries. O(1).
    package var count: Int { base.count }

    /// The largest key plus value an entry may hold (bytes).
    package var maximumEntrySize: Int { base.format.maximumEntrySize }

    /// The size of the tree's pages (bytes).
    package var pageSize: Int { base.format.pageSize }

    // MARK: Reads

    /// Calls `body` with the value stored for `key`, if any (lent for the call), and says
    /// whether there was one. O(log n).
    @discardableResult
    package func withValue(forKey key: [UInt8], _ body: (UnsafeRawBufferPointer) -> Void) throws(EngineError) -> Bool {
        try mappingPageErrors { () throws(PageError) in try base.withValue(forKey: key, body) }
    }

    /// Calls `body` with each key and value (lent for the call) from the first key ≥ `lower`
    /// (nil: the first) up to, not including, `upperBound` (nil: to the end), in key order or
    /// `reversed`, until it returns false.
    /// - Throws: `EngineError` for a damaged or unreadable page (the entries before it were
    ///   handed to `body`).
    package func forEach(from lower: [UInt8]?, below upperBound: [UInt8]?, reversed: Bool = false,
                         _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool) throws(EngineError) {
        let from = lower.map { KeyBound($0) }
        let to = upperBound.map { KeyBound($0, inclusive: false) }
        try mappingPageErrors { () throws(PageError) in try base.forEachInKeyRange(from: from, to: to, reversed: reversed, body) }
    }

    /// The number of entries from the first key ≥ `lower` up to, not including, `upperBound`
    /// (nil: to the end). O(log n).
    package func count(from lower: [UInt8], below upperBound: [UInt8]?) throws(EngineError) -> Int {
        let to = upperBound.map { KeyBound($0, inclusive: false) }
        return try mappingPageErrors { () throws(PageError) in try base.positions(from: KeyBound(lower), to: to).count }
    }

    /// Calls `body` with every key and value in key order until it returns false.
    package func forEach(_ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool) throws(EngineError) {
        try forEach(from: nil, below: nil, body)
    }

    /// The value stored for `key` (a copy), or nil. O(log n).
    package func value(forKey key: [UInt8]) throws(EngineError) -> [UInt8]? {
        try mappingPageErrors { () throws(PageError) in try base.value(forKey: key) }
    }

    /// Whether `key` is stored. O(log n).
    package func contains(_ key: [UInt8]) throws(EngineError) -> Bool {
        try mappingPageErrors { () throws(PageError) in try base.contains(key) }
    }

    /// Calls `body` with each key and value (lent for the call) between `lower` and `upper`
    /// (each inclusive or not; nil: unbounded), in key order or `reversed`, until it returns
    /// false. One search, at the end the walk starts from: a walk that stops early costs that
    /// search plus the entries it visits.
    /// - Throws: `EngineError` for a damaged or unreadable page (the entries before it were
    ///   handed to `body`).
    @inlinable
    package func forEachInKeyRange(from lower: KeyBound?, to upper: KeyBound?, reversed: Bool = false,
                                   _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool) throws(EngineError) {
        do throws(PageError) { try base.forEachInKeyRange(from: lower, to: upper, reversed: reversed, body) } catch {
            throw EngineError(error)
        }
    }

    /// The positions (ranks in key order) of the keys between `lower` and `upper` (nil:
    /// unbounded); its count is the number of such entries. O(log n), from subtree counts.
    package func positions(from lower: KeyBound?, to upper: KeyBound?) throws(EngineError) -> Range<Int> {
        try mappingPageErrors { () throws(PageError) in try base.positions(from: lower, to: upper) }
    }

    /// The first entry in key order (copies), or nil when the tree is empty.
    package func firstEntry() throws(EngineError) -> (key: [UInt8], value: [UInt8])? {
        try mappingPageErrors { () throws(PageError) in try base.firstEntry() }
    }

    /// Calls `body` with the first entry in key order (the last when `last` is set), lent for
    /// the call, and says whether the tree had one. One descent along the tree's edge.
    @discardableResult
    package func withEdgeEntry(last: Bool, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Void) throws(EngineError) -> Bool {
        try mappingPageErrors { () throws(PageError) in try base.withEdgeEntry(last: last, body) }
    }

    // MARK: Changes

    /// Stores `value` for `key`; returns the value it replaced, if any.
    /// - Throws: `tooLarge` when the entry does not fit a page (nothing changed); a page's
    ///   failure (the tree may then be part-changed: discard it, as the transaction does).
    @discardableResult
    package mutating func upsert(_ key: [UInt8], _ value: [UInt8]) throws(EngineError) -> [UInt8]? {
        try mappingPageErrors { () throws(PageError) in try base.upsert(key, value) }
    }

    /// Removes `key`; returns its value, or nil when it was not stored.
    @discardableResult
    package mutating func remove(_ key: [UInt8]) throws(EngineError) -> [UInt8]? {
        try mappingPageErrors { () throws(PageError) in try base.remove(key) }
    }

    /// Removes `key`, just read from this tree (no existence walk first).
    @discardableResult
    package mutating func removeFound(_ key: [UInt8]) throws(EngineError) -> [UInt8]? {
        try mappingPageErrors { () throws(PageError) in try base.removeFound(key) }
    }

    /// Applies a batch of changes (a value stores it, nil removes the key) as if one at a time,
    /// in key order; the last change of a key wins. Throws as `upsert`.
    package mutating func apply(_ changes: [(key: [UInt8], value: [UInt8]?)]) throws(EngineError) {
        let batch = changes.map { PagedBTreeChange(key: $0.key, value: $0.value) }
        try mappingPageErrors { () throws(PageError) in try base.apply(batch) }
    }

    /// Removes every entry. O(1).
    package mutating func removeAll() { base.removeAll() }

    // MARK: Checks

    /// Checks every page of the tree (`Engine.verify()` reports what it throws).
    package func validate() throws(EngineError) {
        try mappingPageErrors { () throws(PageError) in try base.validate() }
    }
}

/// Where an extension tree's pages begin, as an extension's root bytes carry it
/// (`append(to:)`, `read(_:_:)`; docs/format.md §10).
package typealias ExtensionTreeRoot = PagedTreeRoot

/// A bound of a key range: a key, and whether the range includes it (a value helper of the
/// index layer, named through the engine).
package typealias KeyBound = YapDBIndex.KeyBound

/// The order-preserving byte encoding of SQL values and row ids that index keys are made of
/// (a value helper of the index layer, named through the engine).
package typealias OrderedKeyEncoding = YapDBIndex.OrderedKeyEncoding

/// Byte keys appended one after another into one buffer (a value helper of the index layer,
/// named through the engine).
package typealias KeyBatch = YapDBIndex.KeyBatch

extension ExtensionTreesState {
    /// The pages every tree occupies: those written (read from the pages) plus the unwritten
    /// nodes.
    /// - Throws: `EngineError` when a written page cannot be read.
    package func occupiedPageCount() throws(EngineError) -> Int {
        try mappingPageErrors { () throws(PageError) in try writtenPageCount() } + unwrittenPageCount
    }
}

extension Array where Element == ExtensionTree {
    /// `self[index].forEachInKeyRange(from:to:reversed:_:)`, on the tree in place: a call on
    /// `self[index]` copies the tree out of the array first, retaining and releasing each
    /// reference it holds, which a short walk (a query's range) notices. A written tree whose
    /// pages are mapped is read through a few plain fields instead.
    /// - Precondition: `index` is a valid index.
    package func forEachInKeyRange(
        ofTree index: Int, from lower: KeyBound?, to upper: KeyBound?, reversed: Bool = false,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool
    ) throws(EngineError) {
        precondition(index >= 0 && index < count, "forEachInKeyRange: tree \(index) of \(count)")
        try withBaseTree(index) { tree throws(EngineError) in
            try mappingPageErrors { () throws(PageError) in
                try PagedBTree.forEachInKeyRange(at: tree, from: lower, to: upper, reversed: reversed, body)
            }
        }
    }

    /// `self[index].withEdgeEntry(last:_:)`, on the tree in place (as `forEachInKeyRange(ofTree:…)`).
    /// - Precondition: `index` is a valid index.
    @discardableResult
    package func withEdgeEntry(
        ofTree index: Int, last: Bool, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Void
    ) throws(EngineError) -> Bool {
        precondition(index >= 0 && index < count, "withEdgeEntry: tree \(index) of \(count)")
        return try withBaseTree(index) { tree throws(EngineError) in
            try mappingPageErrors { () throws(PageError) in try PagedBTree.withEdgeEntry(at: tree, last: last, body) }
        }
    }

    /// Tree `index` as plain values, its fields read in place (no reference counted): nil when
    /// its root is not a written page or its pages are not mapped. Valid while the snapshot
    /// that holds the mapped pages lives.
    /// - Precondition: `index` is a valid index.
    package func mappedTree(ofTree index: Int) -> MappedExtensionTree? {
        precondition(index >= 0 && index < count, "mappedTree: tree \(index) of \(count)")
        return withBaseTree(index) { tree in PagedBTree.mappedTree(at: tree) }.map { MappedExtensionTree(base: $0) }
    }

    /// Calls `body` with a pointer to the tree that element `index` wraps, in place in the
    /// array's storage (no copy, so no reference counted). The pointer is valid only during the call.
    private func withBaseTree<R, E: Error>(_ index: Int, _ body: (UnsafePointer<PagedBTree>) throws(E) -> R) throws(E) -> R {
        try withUnsafeBufferPointer { trees throws(E) in
            try body(UnsafePointer(trees.baseAddress! + index).pointer(to: \.base)!)
        }
    }
}

/// A written extension tree whose pages are mapped, reduced to plain values
/// (`[ExtensionTree].mappedTree(ofTree:)`): reading it counts no reference, for a reader that
/// asks the same tree again and again within one snapshot. Valid while that snapshot lives.
package struct MappedExtensionTree: Sendable {
    @usableFromInline let base: MappedTree

    init(base: MappedTree) { self.base = base }

    /// Calls `body` with the first entry (the last when `last` is set), lent for the call;
    /// true (a written root has entries).
    @inlinable
    package func withEdgeEntry(last: Bool, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Void) throws(EngineError) -> Bool {
        do throws(PageError) { return try base.withEdgeEntry(last: last, body) } catch { throw EngineError(error) }
    }
}

extension EngineError {
    /// An extension's tree (or trees, together) whose entry count disagrees with the count the
    /// extension's own records promise (a secondary index's trees hold one entry per row, a
    /// view's row trees one row id per row): damage, as a page's wrong subtree count is.
    package static func extensionTreeCountMismatch(expected: Int, found: Int) -> EngineError {
        EngineError(PageError.corrupt(page: .none, reason: .subtreeCountMismatch(expected: expected, found: found)))
    }

    /// An entry of an extension's tree (or a record of its own) that does not decode: the same
    /// damage a page's undecodable entry is.
    package static let damagedExtensionEntry = EngineError(PageError.corrupt(page: .none, reason: .badEntry))
}
