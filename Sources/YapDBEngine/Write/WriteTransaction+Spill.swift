import YapDBStorage
import YapDBIndex

/// Where and how a write transaction spills its dirty index pages: the engine's index files,
/// the budget, and the page source extension trees read through.
struct SpillTarget {
    let index: IndexFiles
    /// `EngineOptions.dirtyPageBudget` (bytes of pages; > 0).
    let budget: Int
    let pageSize: Int
    /// The source extension trees read a view of the index files through (`Engine.extensionSource`).
    let extensionSource: (IndexPageSource) -> any PageSource
}

// The spill of a large write transaction (docs/architecture.md, "Dirty pages and spills"): when
// the index pages the transaction has changed pass `EngineOptions.dirtyPageBudget`, they are
// written to fresh places in the index files, synced, and dropped from memory; the trees then
// read them back like any written page (and copy them again if they change). No root record
// names them, so nothing durable depends on them: a rollback leaves them as garbage that index
// compaction (or, after a crash, the next open) reclaims, and readers never reach them — their
// snapshots' trees do not point at them until the transaction commits.
extension WriteTransaction {
    /// Notes `work` changes to the trees or extension states (counted toward the next count of
    /// dirty pages) and spills when the count passes the budget. A failed spill fails the
    /// transaction for good (its later writes and its commit throw the error).
    func checkDirtyPages(work: Int) throws(EngineError) {
        guard let spillTarget else { return }
        dirtyPages.note(work: work)
        guard dirtyPages.isCountDue else { return }
        dirtyPages.record(WriterState.dirtyPageCount(keydir: trees, extensions: extensions))
        guard dirtyPages.counted.multipliedReportingOverflow(by: spillTarget.pageSize).partialValue >= spillTarget.budget else { return }
        do throws(StorageError) { try spillDirtyPages(to: spillTarget) } catch {
            let failure = EngineError(error)
            applyFailure = failure
            throw failure
        }
    }

    /// `checkDirtyPages` for a change that cannot throw (an extension state replaced): a failed
    /// spill is kept as the transaction's failure.
    func noteDirtyWork(_ work: Int) {
        try? checkDirtyPages(work: work)
    }

    /// Spills now if the dirty pages pass the budget (counting them first), for callers that
    /// build large extension state outside `extensions` and store it at the end: store it,
    /// then call this. Throws the spill's failure (the transaction then fails).
    package func spillIfOverBudget() throws(EngineError) {
        if let applyFailure { throw applyFailure }
        guard spillTarget != nil else { return }
        dirtyPages.note(work: Int.max / 2)
        try checkDirtyPages(work: 0)
    }

    /// The spill target when applying the buffer is a merge rebuild whose new trees could pass
    /// the budget (each row takes at least about 16 bytes of leaf in each tree): the build then
    /// writes its finished leaves as it goes (`LeafSink`) instead of holding both new trees.
    func rebuildSpillTarget() -> SpillTarget? {
        guard let spillTarget, !state.indexCopyPending, trees.willRebuild(applying: buffer) else { return nil }
        let rows = trees.rows.count + buffer.count
        guard rows.multipliedReportingOverflow(by: 32).partialValue > spillTarget.budget else { return nil }
        return spillTarget
    }

    /// Applies the buffer by a merge rebuild whose leaves go to the index files as they are
    /// finished (at most half the budget of leaves held per tree), synced before the trees read
    /// them back.
    func applyRebuildingWithSpill(to target: SpillTarget) throws(StorageError) {
        let held = max(4, target.budget / target.pageSize / 2)
        let (_, source) = try target.index.spill(sequence: UInt64(state.checkpointNumber) + 1, { (pages) throws(StorageError) in
            let sink = LeafSink(heldLeaves: held) { (bytes) throws(PageError) -> PageID in
                do throws(StorageError) {
                    let id = try pages.allocate()
                    try pages.write(id, bytes)
                    return id
                } catch { throw .unreadable(page: .none, underlying: error) }
            }
            try mappingPageErrorsInternally { () throws(PageError) in try trees.apply(buffer, sink: sink) }
        }, published: { _ in })
        trees = trees.replacingSource(source)
        dirtyPages.noteSpill()
        returnFreeMemoryToSystem()
    }

    /// Writes every dirty node of the trees and the paged extension states as pages (synced),
    /// then replaces them by those pages. Skipped while an index compaction is between its
    /// capture and its install (the pages would be in none of the files it keeps).
    private func spillDirtyPages(to target: SpillTarget) throws(StorageError) {
        guard !state.indexCopyPending else { return }
        let paged = extensions.keys.sorted().compactMap { name in (extensions[name] as? any PagedExtensionState).map { (name, $0) } }
        let keydir = trees
        typealias Written = (keydir: (rows: PageFlush, rowids: PageFlush), extensions: [String: ExtensionPagesWritten])
        let (written, source) = try target.index.spill(sequence: UInt64(state.checkpointNumber) + 1, { (pages) throws(StorageError) -> Written in
            let flush = try keydir.flush(allocate: pages.allocate, write: pages.write)
            var states: [String: ExtensionPagesWritten] = [:]
            for (name, state) in paged {
                do throws(EngineError) { states[name] = try state.writePages(pages) } catch { throw StorageError(error) }
            }
            return (flush, states)
        }, published: { written in
            written.keydir.rows.publish()
            written.keydir.rowids.publish()
            for state in written.extensions.values { for flush in state.flushes { flush.publish() } }
        })
        trees = trees.releasingFlushedNodes().replacingSource(source)
        let extensionSource = target.extensionSource(source)
        isSpilling = true
        defer { isSpilling = false }
        for (name, state) in paged {
            let adopted = written.extensions[name].map { state.adopting($0) } ?? state
            extensions[name] = adopted.reading(from: extensionSource)
        }
        dirtyPages.noteSpill()
        dirtyPages.record(WriterState.dirtyPageCount(keydir: trees, extensions: extensions))
        returnFreeMemoryToSystem()
    }
}
