import YapDBStorage
import YapDBIndex

/// Extension state whose trees live on index pages, written by the engine's index checkpoints
/// into the same index files as the key directory (docs/architecture.md, "Extension trees").
///
/// **How to use it.** Keep the state as a value of `PagedBTree`s / `PagedRowTree`s (and
/// whatever small fields go with them) in the engine's `extensions` dictionary, exactly like
/// any extension state: a write transaction replaces it (`WriteTransaction.extensions[name]`),
/// so it commits, rolls back and is versioned with the rows, and every snapshot holds its own
/// tree values. Conform the state to this protocol and the engine does the rest:
///
/// 1. **Checkpoint.** With the state captured under the writer lock, the checkpoint calls
///    `writePages(_:)` off the lock: flush each tree with `pages.flush(_:)` (children before
///    parents, only unwritten nodes) and return the bytes that name your roots
///    (`PagedTreeRoot.append(to:)` is the usual content) with every `PageFlush`. The pages go
///    into the index files with the key directory's, under the same sync; the root bytes go
///    into the index root record (docs/format.md §10, "Extension roots") under the state's
///    name, so they are published by the same rename.
/// 2. **Publish.** Once durable, the engine publishes your flushes and, under the writer lock,
///    replaces the writer's newest state of that name with `adopting(_:)` (release the
///    written nodes: `releasingFlushedNodes()`), then `reading(from:)` the newer page source.
///    Both are applied to a value that may have changed since the capture — even one replaced
///    by a state built anew (a rebuild, a remove-all): releasing and re-pointing are safe on
///    any tree, but a state that stores roots *inside* a tree (a catalog) must take the
///    written catalog only if it still derives from the captured one (views keep a lineage
///    token for this, `ViewState.Lineage`).
/// 3. **Index compaction.** `copyPages(_:)` instead: copy every tree with `pages.copy(_:)`
///    (trees whose values are roots stored inside another tree must be copied first and the
///    outer tree rewritten with the new roots); `adopting(_:)` then re-points the writer's
///    state at the copy (`remapping(to:)`). The old files are removed afterwards; snapshots
///    that still read them keep them open.
/// 4. **Open.** The recorded bytes wait in the engine until the extension claims them:
///    `Engine.claimExtensionRoots(name)` inside the registering write transaction gives the
///    bytes, a page source and format to open the trees with (`PagedTree(root:format:source:)`
///    reads nothing), and the rows changed since (`ExtensionCatchUp`) to re-place. Roots not
///    claimed by the next checkpoint are dropped (the extension rebuilds when it registers).
///
/// MVCC follows the key directory's: trees read clean pages through the `PageSource` they were
/// made with, which holds the index files it can reach open; nothing is ever overwritten, and
/// a replaced file is unlinked only after no root names it.
///
/// Threading: `writePages`/`copyPages` run on the checkpoint's thread while the writer may
/// change newer copies of the state (they must only read the captured value); `adopting` and
/// `reading` run under the writer lock.
package protocol PagedExtensionState: Sendable {
    /// Writes every tree's unwritten nodes through `pages`; returns what the root record
    /// carries for this state and the flushes to publish. Throws what `pages` throws.
    func writePages(_ pages: ExtensionPageWriter) throws(EngineError) -> ExtensionPagesWritten

    /// Writes a full copy of every tree through `pages` (index compaction). Throws what
    /// `pages` throws (a damaged page is reported, never copied).
    func copyPages(_ pages: ExtensionPageWriter) throws(EngineError) -> ExtensionPagesWritten

    /// This state — the one `written` came from, or a newer one derived from it — with what the
    /// published checkpoint wrote released (or, after a copy, re-pointed at the copy).
    func adopting(_ written: ExtensionPagesWritten) -> Self

    /// This state reading its clean pages from `source` (every tree's `reading(from:)`).
    func reading(from source: any PageSource) -> Self

    /// Checks every page of every tree (`validate()`) and whatever ties the trees together;
    /// `Engine.verify()` reports what it throws. The default checks nothing.
    func validatePages() throws(PageError)

    /// Nodes the next checkpoint would write (`Engine.stats()`). The default says 0.
    var unwrittenPageCount: Int { get }

    /// Written pages the state's trees reference (`Engine.stats()`'s live index bytes; see
    /// `PagedTree.writtenPageCount()`). The default says 0.
    func writtenPageCount() throws(PageError) -> Int
}

extension PagedExtensionState {
    package func validatePages() throws(PageError) {}
    package var unwrittenPageCount: Int { 0 }
    package func writtenPageCount() throws(PageError) -> Int { 0 }
}

/// What `PagedExtensionState.writePages` / `copyPages` wrote.
package struct ExtensionPagesWritten: Sendable {
    /// The bytes the root record carries for the state (≤ `Format.rootExtensionMaximumBytes`),
    /// handed back by `Engine.claimExtensionRoots` after a reopen.
    package var rootBytes: [UInt8]
    /// Every flush (or copy's `flush`) made; the engine publishes them once durable.
    package var flushes: [PageFlush]
    /// Whatever `adopting` needs (e.g. the `PageCopy`s of a copy, by tree).
    package var detail: any Sendable

    package init(rootBytes: [UInt8], flushes: [PageFlush], detail: any Sendable = ()) {
        self.rootBytes = rootBytes
        self.flushes = flushes
        self.detail = detail
    }
}

/// Where an extension's checkpoint writes its pages: the index checkpoint's page writer
/// (pages get their ids as they are appended, so children go before parents).
package struct ExtensionPageWriter {
    let allocate: () throws(StorageError) -> PageID
    let write: (PageID, UnsafeRawBufferPointer) throws(StorageError) -> Void

    init(allocate: @escaping () throws(StorageError) -> PageID,
         write: @escaping (PageID, UnsafeRawBufferPointer) throws(StorageError) -> Void) {
        self.allocate = allocate
        self.write = write
    }

    /// Writes the tree's unwritten nodes; see `PagedBTree.flush`.
    package func flush(_ tree: PagedBTree) throws(EngineError) -> PageFlush {
        try engineBoundary { () throws(StorageError) in try tree.flush(allocate: allocate, write: write) }
    }

    /// Writes the tree's unwritten nodes; see `PagedRowTree.flush`.
    package func flush(_ tree: PagedRowTree) throws(EngineError) -> PageFlush {
        try engineBoundary { () throws(StorageError) in try tree.flush(allocate: allocate, write: write) }
    }

    /// Writes every node of the tree as a new page; see `PagedBTree.copyAll`.
    package func copy(_ tree: PagedBTree) throws(EngineError) -> PageCopy {
        try engineBoundary { () throws(StorageError) in
            try tree.copyAll(allocate: allocate, write: write, readFailed: { StorageError($0) })
        }
    }

    /// Writes every node of the tree as a new page; see `PagedRowTree.copyAll`.
    package func copy(_ tree: PagedRowTree) throws(EngineError) -> PageCopy {
        try engineBoundary { () throws(StorageError) in
            try tree.copyAll(allocate: allocate, write: write, readFailed: { StorageError($0) })
        }
    }
}

/// What changed in the rows since the checkpoint whose extension roots (or image) an extension
/// claims: it re-places these rows and drops the removed ones, and needs nothing else.
package struct ExtensionCatchUp: Sendable, Equatable {
    /// Keys set, touched or removed one by one since.
    package var changedKeys: Set<CollectionKeyPair> = []
    /// Row ids removed since (one by one or with their collection).
    package var removedRowids: Set<UInt64> = []
    /// Every row was removed since: no row the extension held still exists (rows set after
    /// that are in `changedKeys`).
    package var removedAll = false
    /// Rows changed since, but which ones is no longer known: a checkpoint carried the roots
    /// past those commits (`UnclaimedExtensions`). Treat every row as changed.
    /// `Engine.claimExtensionRoots(_:)` never hands such a catch-up out (the extension
    /// rebuilds); only a claim that accepts it (a relationship, whose manual edges cannot be
    /// rebuilt) sees it.
    package var rowChangesLost = false
    /// The extension's own extension data records (docs/format.md §3) of the commits since,
    /// in commit order: the payloads it queued with `WriteTransaction.appendExtensionData`.
    package var records: [[UInt8]] = []

    package init() {}

    /// Whether no row changed since (the extension's own records aside).
    package var rowsUnchanged: Bool { changedKeys.isEmpty && removedRowids.isEmpty && !removedAll && !rowChangesLost }

    /// Whether nothing changed since: no row, and no record of the extension's own.
    package var isEmpty: Bool { rowsUnchanged && records.isEmpty }

    /// Adds a commit's changes.
    mutating func record(_ changeset: Changeset) {
        if changeset.allKeysRemoved { removedAll = true }
        changeset.forEachChange { key, _ in changedKeys.insert(key) }
        removedRowids.formUnion(changeset.removedRowids)
    }
}

/// A claimed extension's roots: the bytes its last checkpoint recorded and how to read them.
package struct ClaimedExtensionRoots: Sendable {
    /// The bytes `writePages` returned as `rootBytes`.
    package var rootBytes: [UInt8]
    /// The rows changed since those roots were written.
    package var catchUp: ExtensionCatchUp
    /// The page format of the index.
    package var format: PageFormat
    /// A source that reads the pages the roots reach.
    package var source: any PageSource
}
