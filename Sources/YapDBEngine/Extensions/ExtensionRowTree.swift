import YapDBIndex

/// One positional tree of an extension: row ids in the extension's own order (a view's group,
/// in sort order), counted by position, on the index pages beside the key directory. The
/// engine's door for such trees, as `ExtensionTree` is for keyed ones: every read and change
/// throws `EngineError` (a damaged or unreadable page), so an extension built on it names no
/// type of the index layer.
///
/// **Positions are the truth.** The tree never compares row ids: the caller finds a position
/// with its own comparison (`insertionIndex`, `lowerBound`, `upperBound`, `findRange`,
/// `partitionIndex`) and inserts or removes there. A comparison `compare(existing)` says how
/// the row being searched for sorts against the stored row id `existing` (`RowComparison`).
/// Branches record each child's count and first row id, so positional reads and searches visit
/// O(log n) pages and call the comparison O(log n) times.
///
/// A value: keep it in the extension's state in `WriteTransaction.extensions`; a change copies
/// only the touched path, every snapshot reads its own tree, and the index checkpoint writes
/// its pages (`ExtensionPagedTree`, `ExtensionTreesState`). A change that throws may leave part
/// of itself in the value: discard it, as the transaction does.
///
/// Threading: a value; reading one from several threads is safe, changing it is the owner's.
package struct ExtensionRowTree: Sendable {
    /// The tree itself (the engine's side of the door).
    @usableFromInline var base: PagedRowTree

    @inlinable init(_ base: PagedRowTree) { self.base = base }

    /// An empty tree in the default page format, reading no page (until a checkpoint writes
    /// it, it lives in memory).
    package init() {
        base = PagedRowTree(format: PageFormat(), source: EmptyPageSource())
    }

    /// The number of row ids. O(1).
    @inlinable package var count: Int { base.count }

    /// Whether the tree holds no row id. O(1).
    @inlinable package var isEmpty: Bool { base.isEmpty }

    /// Levels of nodes: 0 when empty, 1 when the root is a leaf.
    package var height: Int { base.height }

    /// The root as the last checkpoint wrote it, or nil when the tree holds unwritten changes
    /// (an empty tree's root is `ExtensionTreeRoot.empty`).
    package var writtenRoot: ExtensionTreeRoot? { base.writtenRoot }

    // MARK: Positional reads

    /// The row id at `index`. O(log n).
    /// - Precondition: `0 <= index < count` (misuse stops the program).
    /// - Throws: `EngineError` for a damaged or unreadable page on the path.
    @inlinable package func element(at index: Int) throws(EngineError) -> UInt64 {
        do throws(PageError) { return try base.element(at: index) } catch { throw EngineError(error) }
    }

    /// The first row id, or nil when empty. O(1): the root knows it.
    @inlinable package var first: UInt64? { base.first }

    /// The last row id, or nil when empty. O(log n).
    @inlinable package func last() throws(EngineError) -> UInt64? {
        do throws(PageError) { return try base.last() } catch { throw EngineError(error) }
    }

    /// Calls `body` with each position and row id in `range` (clamped to `0..<count`), in order
    /// or `reversed`, until it returns false. O(log n + k) page visits.
    /// - Throws: `EngineError` for a damaged or unreadable page (the row ids before it were
    ///   handed to `body`).
    @inlinable package func forEach(in range: Range<Int>, reversed: Bool = false,
                                    _ body: (_ index: Int, _ rowid: UInt64) -> Bool) throws(EngineError) {
        do throws(PageError) { try base.forEach(in: range, reversed: reversed, body) } catch { throw EngineError(error) }
    }

    /// Every row id in order. O(n).
    package func rowids() throws(EngineError) -> [UInt64] {
        try mappingPageErrors { () throws(PageError) in try base.rowids() }
    }

    // MARK: Searches with the caller's comparison

    /// The number of leading row ids for which `isPastBoundary` is false, where it is false
    /// for a prefix of the row ids and true for the rest. O(log n) calls.
    @inlinable package func partitionIndex(_ isPastBoundary: (UInt64) -> Bool) throws(EngineError) -> Int {
        do throws(PageError) { return try base.partitionIndex(isPastBoundary) } catch { throw EngineError(error) }
    }

    /// The first position whose row is not before the target (`compare(row) != .orderedDescending`).
    @inlinable package func lowerBound(_ compare: (UInt64) -> RowComparison) throws(EngineError) -> Int {
        do throws(PageError) { return try base.lowerBound(compare) } catch { throw EngineError(error) }
    }

    /// The first position whose row sorts after the target (`compare(row) == .orderedAscending`).
    @inlinable package func upperBound(_ compare: (UInt64) -> RowComparison) throws(EngineError) -> Int {
        do throws(PageError) { return try base.upperBound(compare) } catch { throw EngineError(error) }
    }

    /// Where a new row goes so the rows stay sorted: after every row it compares equal to.
    /// Compares with the last row first, then the first, so appends and prepends cost one or
    /// two comparisons; otherwise an O(log n) search.
    @inlinable package func insertionIndex(_ compare: (UInt64) -> RowComparison) throws(EngineError) -> Int {
        do throws(PageError) { return try base.insertionIndex(compare) } catch { throw EngineError(error) }
    }

    /// The positions of the rows that compare `.orderedSame` to the target (empty, at the
    /// insertion point, when none). O(log n) comparisons.
    @inlinable package func findRange(_ compare: (UInt64) -> RowComparison) throws(EngineError) -> Range<Int> {
        do throws(PageError) { return try base.findRange(compare) } catch { throw EngineError(error) }
    }

    /// The position of `rowid`, searched in the run of rows that compare equal to it.
    /// O(log n + the run's length). Nil when absent (or the tree is not sorted by `compare`).
    @inlinable package func firstIndex(of rowid: UInt64, _ compare: (UInt64) -> RowComparison) throws(EngineError) -> Int? {
        do throws(PageError) { return try base.firstIndex(of: rowid, compare) } catch { throw EngineError(error) }
    }

    // MARK: Changes

    /// Inserts `rowid` at `index` (`0...count`). O(log n).
    /// - Precondition: `0 <= index <= count`.
    /// - Throws: `EngineError` for a damaged or unreadable page on the path.
    @inlinable package mutating func insert(_ rowid: UInt64, at index: Int) throws(EngineError) {
        do throws(PageError) { try base.insert(rowid, at: index) } catch { throw EngineError(error) }
    }

    /// Appends `rowid` after the last row id. O(log n).
    @inlinable package mutating func append(_ rowid: UInt64) throws(EngineError) {
        do throws(PageError) { try base.append(rowid) } catch { throw EngineError(error) }
    }

    /// Removes and returns the row id at `index`. O(log n).
    /// - Precondition: `0 <= index < count`.
    @discardableResult
    @inlinable package mutating func remove(at index: Int) throws(EngineError) -> UInt64 {
        do throws(PageError) { return try base.remove(at: index) } catch { throw EngineError(error) }
    }

    /// Replaces the row id at `index` by `rowid` (a remove and an insert at the same place);
    /// returns the one it replaced. O(log n).
    /// - Precondition: `0 <= index < count`.
    @discardableResult
    package mutating func replace(at index: Int, with rowid: UInt64) throws(EngineError) -> UInt64 {
        try mappingPageErrors { () throws(PageError) in
            let old = try base.remove(at: index)
            try base.insert(rowid, at: index)
            return old
        }
    }

    /// Removes every row id. O(1).
    package mutating func removeAll() { base.removeAll() }

    // MARK: Checks

    /// Checks every page of the tree: checksums, counts, fill and depth (`Engine.verify()`
    /// reports what it throws).
    package func validate() throws(EngineError) {
        try mappingPageErrors { () throws(PageError) in try base.validate() }
    }
}

/// How the row being searched for sorts against a stored row id: the answer of the
/// comparison an `ExtensionRowTree` search takes (a value of the index layer, named through the
/// engine; the same case names as Foundation's `ComparisonResult`).
package typealias RowComparison = YapDBIndex.RowComparison

