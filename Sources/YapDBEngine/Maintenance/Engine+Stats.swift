import YapDBStorage
import YapDBIndex

/// Sizes and counts of a database, per kind of file.
package struct EngineStats: Sendable, Equatable {
    /// Bytes of every file of the database (main file, segments, index files, checkpoints).
    package var fileBytes: Int64
    /// Log segments: bytes of the records the key directory points to.
    package var liveBytes: Int64
    /// Log segments: bytes that are not live (old versions, removals, commit records, headers).
    package var deadBytes: Int64
    package var rowCount: Int
    package var snapshot: UInt64
    package var recoveredTruncatedBytes: Int64
    package var segmentCount: Int
    /// Log segments: bytes of every segment (`liveBytes + deadBytes`).
    package var segmentBytes: Int64 = 0
    /// Bytes of the index files the newest checkpoint names (part of `fileBytes`).
    package var indexFileBytes: Int64 = 0
    /// The index files' page size.
    package var indexPageSize = 0
    /// Pages in the index files the newest checkpoint names, header pages included
    /// (`indexFileBytes / indexPageSize`).
    package var indexPages = 0
    /// Index files: bytes of the pages the current trees reference, plus each file's header
    /// page.
    package var indexLiveBytes: Int64 = 0
    /// Index files: bytes of pages no current tree references (older versions of pages,
    /// reclaimed by index compaction).
    package var indexDeadBytes: Int64 = 0
    /// Index pages changed since the last index checkpoint and held only in memory (dirty):
    /// what the next checkpoint would write.
    package var unwrittenIndexPages = 0
    /// Whether the directory has changes held only in memory (`unwrittenIndexPages > 0`).
    package var hasUnwrittenIndexChanges = false
    /// Checkpoint: bytes of the newest checkpoint file (all live).
    package var checkpointBytes: Int64 = 0
    /// Checkpoint: bytes of older checkpoint files still present (dead; removed by the next
    /// checkpoint or open).
    package var deadCheckpointBytes: Int64 = 0
}

extension Engine {
    /// Sizes and counts. Runs under the writer lock (writes wait; readers do not); reads the
    /// index's branch pages to count the live ones.
    ///
    /// - Throws: `closed`; `io` from sizing a file; `corrupted` from a damaged index page.
    package func stats() throws(EngineError) -> EngineStats {
        try engineBoundary { () throws(StorageError) in try statsOnStorage() }
    }

    private func statsOnStorage() throws(StorageError) -> EngineStats {
        try writer.withLock { (state: inout WriterState) throws(StorageError) -> EngineStats in
            if state.closed { throw .closed }
            var segmentBytes: Int64 = 0
            for file in state.segments.files.values {
                do throws(IOFailure) { segmentBytes += try file.size() } catch { throw .io(error) }
            }
            let published = index.published
            // Lengths the root record vouches for (each checked, their sum not): saturating.
            let indexBytes = Self.saturatingSum(published.map { UInt64(clamping: $0.length) })
            let pageSize = Int64(index.pageSize)
            let pagedExtensions = state.extensions.values.compactMap { $0 as? any PagedExtensionState }
            let written = try mappingPageErrorsInternally { () throws(PageError) -> Int in
                var total = try state.keydir.writtenPageCount()
                for ext in pagedExtensions { total += try ext.writtenPageCount() }
                return total
            }
            let (pagesBytes, overflow) = Int64(written + published.count).multipliedReportingOverflow(by: pageSize)
            let indexLive = min(indexBytes, overflow ? .max : pagesBytes)
            var checkpointBytes: Int64 = 0, deadCheckpointBytes: Int64 = 0
            if let listing = try? files.list(fileSystem) {
                for number in listing.checkpoints {
                    guard let file = try? fileSystem.open(files.checkpointPath(number), mode: .readOnly) else { continue }
                    let size = (try? file.size()) ?? 0
                    file.close()
                    if number == state.checkpointNumber { checkpointBytes = size } else { deadCheckpointBytes += size }
                }
            }
            let live = Self.saturatingSum(state.usage.values)
            let unwritten = state.keydir.unwrittenPageCount + pagedExtensions.reduce(0) { $0 + $1.unwrittenPageCount }
            var stats = EngineStats(fileBytes: Self.saturatingSum([Int64(Format.mainFileSize), segmentBytes, indexBytes, checkpointBytes, deadCheckpointBytes]
                                                                    .map { UInt64(clamping: $0) }),
                                    liveBytes: live, deadBytes: max(0, segmentBytes - live),
                                    rowCount: state.keydir.count, snapshot: state.snapshotNumber,
                                    recoveredTruncatedBytes: openReport.recoveredTruncatedBytes, segmentCount: state.segments.segments.count)
            stats.segmentBytes = segmentBytes
            stats.indexFileBytes = indexBytes
            stats.indexPageSize = Int(pageSize)
            stats.indexPages = Int(indexBytes / pageSize)
            stats.indexLiveBytes = indexLive
            stats.indexDeadBytes = indexBytes - indexLive
            stats.unwrittenIndexPages = unwritten
            stats.hasUnwrittenIndexChanges = state.keydir.hasUnwrittenChanges || pagedExtensions.contains { $0.unwrittenPageCount > 0 }
            stats.checkpointBytes = checkpointBytes
            stats.deadCheckpointBytes = deadCheckpointBytes
            return stats
        }
    }
}

extension Engine {
    /// The sum of `counts` as an `Int64`, `Int64.max` if it would pass it: counts that came from
    /// disk are bounded at open (`Format.maxSegmentUsage`), and a sum never traps even so.
    static func saturatingSum(_ counts: some Sequence<UInt64>) -> Int64 {
        var total: Int64 = 0
        for count in counts {
            let (sum, overflow) = total.addingReportingOverflow(Int64(clamping: count))
            if overflow { return .max }
            total = sum
        }
        return total
    }
}
