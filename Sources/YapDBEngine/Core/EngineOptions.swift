import YapDBStorage

/// What to do when the files at the path are damaged or are not a database at all.
package enum CorruptAction: Sendable, Equatable {
    /// Throw the error; touch nothing.
    case fail
    /// Rename the damaged files with a `.N.corrupt` suffix and start a new database.
    case rename
    /// Delete the damaged files and start a new database.
    case delete
}

/// How an engine is opened and behaves.
package struct EngineOptions: Sendable {
    package var createIfMissing = true
    package var corruptAction: CorruptAction = .fail
    package var syncMode: SyncMode = .full
    /// Compress values with LZ4 where it pays.
    package var compression = true
    /// Largest object or metadata value, in bytes.
    package var maxValueSize = EngineOptions.largestValueSize
    /// The largest `maxValueSize` the format allows.
    package static let largestValueSize = Format.maxValueSize
    /// Bytes of log written since the last checkpoint that trigger a new one (0 = never
    /// automatically; still on close).
    package var checkpointThreshold = 64 << 20
    /// Rows written since the last index checkpoint that trigger a new one (0 = no such
    /// limit). Each written row dirties at most one leaf page of the key directory (plus its
    /// path), so this bounds the memory the changes since the last checkpoint hold — about
    /// 7 KiB per dirty leaf of 4 KiB — and the log a crash leaves to replay.
    package var checkpointRowLimit = 4096
    /// Bytes of memory a write transaction's buffer of changed rows (`KeydirBuffer`) may hold
    /// before it is applied to the key directory's trees early (a spill), which bounds the
    /// memory of a large transaction beyond the trees' own changed nodes. Reads inside the
    /// transaction see the same rows either way. About 100 bytes per buffered row with
    /// 16-byte keys. The bound is on the memory the buffer holds (its arrays' capacities: it
    /// is applied before one would double past the limit), not only on what its rows use.
    /// Tests lower it to make transactions spill.
    package var writeBufferLimit = 32 << 20
    /// Bytes of memory the index pages changed since the last index checkpoint may hold (0 =
    /// no such limit): the key directory's dirty nodes are charged their heap bytes (whole
    /// keys and values, arrays with their spare capacity, the node objects:
    /// `Keydir.unwrittenNodes`), extension trees' dirty pages `indexPageSize` each. Between
    /// commits, passing it triggers an index checkpoint; inside one write transaction, passing
    /// it spills the transaction's dirty pages to unreferenced places in the index files
    /// (docs/architecture.md, "Dirty pages and spills"). The index changes of a transaction
    /// thus hold about this much, on top of `writeBufferLimit`.
    package var dirtyPageBudget = 32 << 20
    /// The least work (rows applied to the trees, extension states replaced) between two
    /// counts of the dirty pages (`DirtyPageGauge`); tests set 1 to count after every change.
    package var dirtyPageCountWork = 64
    /// Where the engine reports failures it does not throw to anyone (an automatic or idle
    /// checkpoint that failed and will be retried). The public layer logs them; nil: dropped.
    package var reportFailure: (@Sendable (String) -> Void)?
    /// How long commits must stop before a background checkpoint writes the index changes
    /// held in memory (nil = never; then only the thresholds above, `checkpoint()`,
    /// compaction and close write them). The public layer sets it; engine tests and the crash
    /// sweep leave it off so that no background I/O interleaves with their counted calls.
    package var idleCheckpointDelay: Duration?
    /// Dead-byte fraction of a sealed segment above which compaction rewrites it.
    package var compactionThreshold = 0.5
    /// Size at which log segments roll.
    package var segmentLimit = Format.defaultSegmentSize
    /// The page size of the index files (a power of two, `Format.indexMinimumPageSize` to
    /// `Format.indexMaximumPageSize`); fixed when the database is created. Tests use small
    /// pages so that the trees split early.
    package var indexPageSize = Format.indexDefaultPageSize
    /// How index pages are read: through a memory map of the written index files (default),
    /// or with `pread` and a bounded page cache, for file systems where a map is unsafe. It
    /// also decides how values are read (`mapsSegments`).
    package var indexReadMode: IndexReadMode = .mapped
    /// Whether values are read in place from memory maps of the log segments (sealed segments
    /// whole, the active one up to its synced length; Engine+SegmentMaps.swift) rather than
    /// with a `pread` each: in the `.mapped` index read mode, on files that map in place
    /// (`StorageFile.mapsInPlace`). The `.cached` mode reads every value with `pread`.
    package var mapsSegments: Bool { indexReadMode == .mapped }
    /// Size at which index files roll.
    package var indexFileSizeLimit = Format.indexDefaultFileSize
    /// Index compaction: a checkpoint writes a full copy of the key directory into a new index
    /// file (and removes the old files) instead of appending its changed pages when the index
    /// files hold more than twice the bytes the last full copy wrote plus this many bytes
    /// (`Int64.max`: only `compact()` copies). Tests lower it.
    package var indexCompactionSlack: Int64 = 8 << 20
    /// Count the pages extension trees read (`Engine.extensionPagesRead`): tests that prove a
    /// registration reads nothing. Off by default (a shared counter costs every page visit).
    package var countsExtensionPageReads = false
    /// How often, at most, a transaction's start compares the sizes of the files read through
    /// memory maps with their maps, revoking the map of a file another program shrank
    /// (`Engine.confirmMappedFiles`). Zero: at every transaction (tests).
    package var mappedFileCheckInterval: Duration = .milliseconds(50)
    /// The most descriptors kept open, idle, for sealed log segments and index files, which are
    /// opened on demand and closed least recently used first (`DescriptorCache`): the
    /// descriptors a database holds do not grow with its files. Tests lower it.
    package var descriptorCacheLimit = DescriptorCache.defaultLimit
    /// The files the engine uses: real files, or a simulated disk in tests.
    package var fileSystem: any FileSystem = PosixFileSystem.shared
    /// Open without changing any file (`Engine.open`): a shared lock on `NAME-lock`, no
    /// creation, repair or removal; writes, checkpoints and compactions throw `readOnly`.
    package var readOnly = false
    /// The key of an encrypted database (docs/format.md §12); nil for a plain one.
    package var cipherKey: CipherKeyOptions?
    /// Share the database with other processes (docs/format.md §14): `NAME-lock` held
    /// shared while open, the writer lock (on `NAME-shm`) only during a read-write transaction,
    /// open's recovery and a checkpoint, and each transaction catching up with the commits the
    /// others published. Needs the POSIX file system, on one host.
    package var multiProcess = false
    /// How long open waits for the lock while another process holds one that conflicts,
    /// before it throws `locked` (`LockFile.acquire`); zero: no wait.
    package var busyTimeout: Duration = .zero

    package init() {}
}
