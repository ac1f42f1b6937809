import Foundation
import Synchronization

/// What opening a damaged database does.
///
/// Raw values match YapDatabase's `YapDatabaseCorruptAction`. Unlike YapDatabase (whose
/// default is `.rename`), YapDB's default is ``fail``: a damaged file is reported, never replaced silently.
public enum YapDatabaseCorruptAction: Int, Sendable, Hashable, CaseIterable {
    /// Opening fails with `YapDatabaseError.corrupted(offset:reason:)` and nothing is changed. The default.
    case fail = 0
    /// The damaged files are renamed with a `.N.corrupt` suffix and a new, empty database starts
    /// (the empty lock file `NAME-lock` stays). Never in a read-only open, which reports the damage.
    case rename = 1
    /// The damaged files are deleted and a new, empty database starts (the lock file stays).
    /// Never in a read-only open.
    case delete = 2
}

/// When a commit's bytes reach stable storage.
///
/// Raw values match YapDatabase's `YapDatabasePragmaSynchronous` (off 0, normal 1, full 2), so
/// ``YapDatabasePragmaSynchronous`` is an alias of this type.
public enum YapDatabaseDurability: Int, Sendable, Hashable, CaseIterable {
    /// No sync at all; the operating system writes when it likes. A process crash loses nothing
    /// already written; a power cut may lose recent commits (never leaves a partial one).
    case off = 0
    /// No sync per commit (files are synced at checkpoints and on close). A process crash loses
    /// nothing; a power cut may lose the newest commits but never leaves a partial one.
    case normal = 1
    /// A commit returns only after its bytes are synced (`fdatasync`). The default.
    case full = 2
}

/// YapDatabase's name for the durability setting; `options.pragmaSynchronous = .normal` compiles
/// as it did against YapDatabase. Prefer ``YapDatabaseDurability`` in new code.
public typealias YapDatabasePragmaSynchronous = YapDatabaseDurability

/// How values are compressed on disk.
public enum YapDatabaseCompression: Int, Sendable, Hashable, CaseIterable {
    /// No compression.
    case none = 0
    /// LZ4, applied only where it pays (see docs/format.md). The default.
    case lz4 = 1
}

/// How the database reads its files: the pages of its index files and the values in its log
/// segments (docs/architecture.md, "Index files" and "Value reads").
///
/// The index — every collection's keys in order, with where each row's values are — lives in
/// checksummed pages in the database's index files, read on demand; each value is a
/// checksummed record in a log segment. The mode decides both how the pages and how the values
/// are read.
public enum YapDatabaseIndexReadMode: Sendable, Hashable {
    /// Through read-only memory maps: of what the newest index checkpoint published, and of
    /// the log segments (a finished segment whole, the one still appended to up to its synced
    /// length; a value past that is read with `pread`). A lookup makes no system call and a
    /// value is read where it lies, its record's checksum still checked on every read; the
    /// operating system's page cache holds the bytes (its memory is reclaimable, not the
    /// process's own). The default on macOS, Linux and other servers and desktops. The
    /// database maps only bytes that are synced or finished and never truncated, so its own
    /// writes never disturb a mapping.
    ///
    /// What a map cannot survive: a read of a mapped page whose bytes are gone — the file
    /// truncated by another program (a restore with `cp` over a live database, a tool), or an
    /// I/O error paging it in (a bad sector, a removed volume, a network file system) — raises
    /// `SIGBUS`, which stops the process; no Swift code can catch it. YapDB narrows the first
    /// case: before a transaction reads (at most every 50 ms) it compares each mapped file's
    /// size with its map, and a file found shorter is never read through its map again — its
    /// reads fail with ``YapDatabaseError/corrupted(offset:reason:)`` instead. A file
    /// truncated after that check and before a read touches it, and an I/O error under a map,
    /// still stop the process. Where that matters, or where other programs may change the
    /// files, use ``cached(pages:)``, which has no such window (it is the default on iOS,
    /// tvOS, watchOS and visionOS, as SQLite turns its memory maps off there).
    case memoryMapped
    /// With `pread`: index pages through a cache of at most `pages` pages (least recently used
    /// dropped first), each page's checksum checked when it is read, and every value with a
    /// `pread` of its record: for file systems where a memory map is unsafe or unsupported
    /// (network file systems, files other programs may change). Memory for the cache is about
    /// `pages` × the page size (4 KiB by default). Values below 1 act as 1. A lookup that
    /// misses the cache costs a system call per page of the tree's path, and each value read
    /// one more.
    case cached(pages: Int)

    /// A cache of 1,024 pages (4 MiB with the default page size) for ``cached(pages:)``.
    public static let defaultCachedPages = 1024

    /// The default mode: ``cached(pages:)`` with ``defaultCachedPages`` on iOS, tvOS, watchOS
    /// and visionOS, where a process stopped by `SIGBUS` (a file truncated or unreadable
    /// under a map) is an app that crashes in the field; ``memoryMapped`` elsewhere.
    public static var platformDefault: YapDatabaseIndexReadMode {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        return .cached(pages: defaultCachedPages)
        #else
        return .memoryMapped
        #endif
    }
}

/// Options for opening a database (YapDatabase's `YapDatabaseOptions`).
///
/// `YapDatabaseOptions()` gives the defaults. The database keeps a copy when it opens, so
/// changing an options object afterwards has no effect on an open database.
///
/// Threading: every property is guarded by a `Mutex` (`storage`), so one options object may be
/// read and written from any thread; the class is `Sendable` (checked by the compiler, no
/// `@unchecked`).
public final class YapDatabaseOptions: Sendable {
    /// The plain values behind the properties; what the database stores as its copy.
    struct Values: Sendable, Equatable {
        var createIfMissing = true
        var corruptAction = YapDatabaseCorruptAction.fail
        var durability = YapDatabaseDurability.full
        var compression = YapDatabaseCompression.lz4
        var maxValueSize = YapDatabaseOptions.defaultMaxValueSize
        var checkpointThreshold = YapDatabaseOptions.defaultCheckpointThreshold
        var compactionThreshold = YapDatabaseOptions.defaultCompactionThreshold
        var indexReadMode = YapDatabaseIndexReadMode.platformDefault
        var idleCheckpointDelay = YapDatabaseOptions.defaultIdleCheckpointDelay
        var dirtyPageBudget = YapDatabaseOptions.defaultDirtyPageBudget
        var writeBufferLimit = YapDatabaseOptions.defaultWriteBufferLimit
        var readOnly = false
        var busyTimeout: TimeInterval = 0
        var enableMultiProcessSupport = false
        /// The cipher options (`YapDatabaseOptions+Cipher.swift`).
        var cipher = CipherValues()
    }

    /// Default of ``maxValueSize``: 1 GiB.
    public static let defaultMaxValueSize = 1 << 30
    /// Default of ``checkpointThreshold``: 64 MiB of log since the last checkpoint.
    public static let defaultCheckpointThreshold = 64 << 20
    /// Default of ``idleCheckpointDelay``: 5 seconds without a commit.
    public static let defaultIdleCheckpointDelay: TimeInterval = 5
    /// Default of ``dirtyPageBudget``: 32 MiB of changed index pages.
    public static let defaultDirtyPageBudget = 32 << 20
    /// Default of ``writeBufferLimit``: 32 MiB.
    public static let defaultWriteBufferLimit = 32 << 20
    /// Default of ``compactionThreshold``: half of a segment's bytes dead.
    public static let defaultCompactionThreshold = 0.5

    let storage: Mutex<Values>

    /// Options with every default: create if missing, fail on corruption, full durability,
    /// LZ4 compression, 1 GiB values, 64 MiB checkpoint threshold, 0.5 compaction threshold,
    /// index pages and values read through memory maps (with `pread` on iOS, tvOS, watchOS and
    /// visionOS: ``YapDatabaseIndexReadMode/platformDefault``).
    public init() { storage = Mutex(Values()) }

    /// Options holding `values` (used by the database to hand out its copy).
    init(values: Values) { storage = Mutex(values) }

    /// A snapshot of every property, taken under the lock.
    var values: Values { storage.withLock { $0 } }

    /// An independent copy: changing one does not change the other.
    public func copy() -> YapDatabaseOptions { YapDatabaseOptions(values: values) }

    /// Whether opening a missing file creates it (true, the default) or fails with
    /// `YapDatabaseError.fileNotFound` (false).
    public var createIfMissing: Bool {
        get { storage.withLock { $0.createIfMissing } }
        set { storage.withLock { $0.createIfMissing = newValue } }
    }

    /// What opening a damaged database does; default ``YapDatabaseCorruptAction/fail``.
    public var corruptAction: YapDatabaseCorruptAction {
        get { storage.withLock { $0.corruptAction } }
        set { storage.withLock { $0.corruptAction = newValue } }
    }

    /// When commits reach stable storage; default ``YapDatabaseDurability/full``.
    public var durability: YapDatabaseDurability {
        get { storage.withLock { $0.durability } }
        set { storage.withLock { $0.durability = newValue } }
    }

    /// YapDatabase's name for ``durability`` (same storage: setting one sets the other).
    /// Its type, ``YapDatabasePragmaSynchronous``, is an alias of ``YapDatabaseDurability``, so
    /// `.off`, `.normal` and `.full` mean what they meant for SQLite's `PRAGMA synchronous`.
    public var pragmaSynchronous: YapDatabasePragmaSynchronous {
        get { durability }
        set { durability = newValue }
    }

    /// How values are compressed; default ``YapDatabaseCompression/lz4``.
    public var compression: YapDatabaseCompression {
        get { storage.withLock { $0.compression } }
        set { storage.withLock { $0.compression = newValue } }
    }

    /// The largest serialized object or metadata value, in bytes; a larger one fails with
    /// `YapDatabaseError.valueTooLarge`. Default 1 GiB (`1 << 30`).
    public var maxValueSize: Int {
        get { storage.withLock { $0.maxValueSize } }
        set { storage.withLock { $0.maxValueSize = newValue } }
    }

    /// Bytes of log written since the last checkpoint after which a checkpoint is written.
    /// Default 64 MiB.
    public var checkpointThreshold: Int {
        get { storage.withLock { $0.checkpointThreshold } }
        set { storage.withLock { $0.checkpointThreshold = newValue } }
    }

    /// Seconds without a commit after which a background checkpoint writes the index changes
    /// held in memory (the pages that commits since the last checkpoint changed), so a quiet
    /// database holds no unwritten index pages and reopening after a crash replays nothing.
    /// Default 5 seconds; 0 or less turns it off (checkpoints then run only on
    /// ``checkpointThreshold``, every 4,096 rows written, at compaction and at `close()`).
    /// It runs on a background queue, never blocks readers, and holds the writer only to
    /// capture and to publish.
    public var idleCheckpointDelay: TimeInterval {
        get { storage.withLock { $0.idleCheckpointDelay } }
        set { storage.withLock { $0.idleCheckpointDelay = newValue } }
    }

    /// Bytes of index pages changed since the last checkpoint that the database holds in
    /// memory (default 32 MiB; 0 or less: no limit). A YapDB addition: it bounds the memory of
    /// the index changes, between transactions and inside one. When commits pass it, a
    /// checkpoint writes the changed pages; when one large read-write transaction (a bulk
    /// import, building an extension) passes it, the transaction writes its changed pages to
    /// free space in the index files and reads them back from there when it needs them, so
    /// its memory stays near this budget (the changed pages' memory as held, plus
    /// ``writeBufferLimit`` of buffered rows) however many rows it writes. Pages written that way by a transaction that rolls
    /// back are free space that compaction reclaims. Smaller budgets cost more index writes.
    public var dirtyPageBudget: Int {
        get { storage.withLock { $0.dirtyPageBudget } }
        set { storage.withLock { $0.dirtyPageBudget = newValue } }
    }

    /// Bytes of memory a read-write transaction's buffer of written rows may hold (default
    /// 32 MiB; values under 4 KiB count as 4 KiB). A YapDB addition beside
    /// ``dirtyPageBudget``: a transaction keeps the key of each row it writes, with where its
    /// values went, in a buffer that joins the database's index in key order at the commit,
    /// or earlier when the buffer is full. Reads inside the transaction see the same rows
    /// either way. About 100 bytes a row with 16-byte keys: the default holds about 300,000
    /// rows. A smaller buffer bounds a bulk import's memory more tightly and costs more index
    /// work (each early join rewrites the index pages it touches); a larger one speeds very
    /// large imports into a large database.
    public var writeBufferLimit: Int {
        get { storage.withLock { $0.writeBufferLimit } }
        set { storage.withLock { $0.writeBufferLimit = newValue } }
    }

    /// Fraction (0...1) of a segment's bytes that must be dead before compaction rewrites it.
    /// Default 0.5. 0 rewrites every sealed segment that has any dead bytes at all; a segment
    /// with none is never rewritten, whatever the threshold.
    ///
    /// Setting a value outside 0...1, or NaN, stops the program with a message naming the
    /// value (a programming error, like an out-of-range index): NaN would turn compaction off
    /// silently and a negative fraction would rewrite every segment on every `compact()`.
    public var compactionThreshold: Double {
        get { storage.withLock { $0.compactionThreshold } }
        set {
            precondition(Self.isValidCompactionThreshold(newValue),
                         "YapDatabaseOptions.compactionThreshold must be a fraction in 0...1, got \(newValue)")
            storage.withLock { $0.compactionThreshold = newValue }
        }
    }

    /// Open the database without changing any of its files (a YapDB addition; YapDatabase
    /// has no read-only open). Default false.
    ///
    /// A read-only open takes a shared lock on the database's lock file (`NAME-lock`), so any
    /// number of processes may open one database read-only at once — `yapdb stats` beside
    /// `yapdb dump`, say — and it works on a read-only volume, in a read-only directory or in
    /// an app bundle. It creates, repairs and removes nothing: a missing database is
    /// ``YapDatabaseError/fileNotFound`` whatever ``createIfMissing`` says; a torn tail left
    /// by a crash is not read (and stays for the next read-write open to cut); damage is
    /// reported, never handled by ``corruptAction``; no checkpoint is written, at close or
    /// otherwise. The one file it may create is the empty lock file, when it is missing and
    /// the directory takes new files.
    ///
    /// On such a database a read-write transaction's block runs with every write refused:
    /// `write(_:)` then throws ``YapDatabaseError/readOnly``, and `readWrite(_:)` reports the
    /// refusal to the log handler, as it does on a read-only volume; `checkpoint()` and
    /// `compact()` throw `readOnly`. An extension registers when the database holds its trees
    /// as the last read-write close left them (same `versionTag`, no rows changed since the last
    /// checkpoint): a persistent view, a secondary index, a full-text index opens over them. One
    /// that would have to build or catch up fails to register (it returns false), after the work
    /// of trying.
    ///
    /// A writer and a read-only open exclude each other: while one process has the database
    /// open read-write, a read-only open elsewhere waits up to ``busyTimeout`` and then fails
    /// with ``YapDatabaseError/locked``, and the other way round. A read-only open sees the
    /// database as it was when it opened, unless processes with ``enableMultiProcessSupport``
    /// use the database (it has a `NAME-shm` file): then it opens beside them as one of them
    /// (whether or not it sets the option) and follows their commits.
    public var readOnly: Bool {
        get { storage.withLock { $0.readOnly } }
        set { storage.withLock { $0.readOnly = newValue } }
    }

    /// Seconds that opening waits for the database's lock while another process holds it,
    /// before failing with ``YapDatabaseError/locked`` (a YapDB addition, like SQLite's busy
    /// timeout; YapDatabase had none). Default 0: fail at once. The wait retries every few
    /// milliseconds (1 ms at first, doubling up to 50 ms); it applies to read-write opens
    /// waiting for a writer or readers to close, and to read-only opens waiting for a writer.
    /// With ``enableMultiProcessSupport`` it is also how long a read-write transaction (and
    /// `checkpoint()`, `compact()`) waits for another process's transaction to end.
    /// Negative values and NaN act as 0; values above a day act as a day.
    public var busyTimeout: TimeInterval {
        get { storage.withLock { $0.busyTimeout } }
        set { storage.withLock { $0.busyTimeout = newValue } }
    }

    /// Lets several processes open the database at once and read and write it (YapDatabase's
    /// option of the same name; default false). Every process that opens the database must set
    /// it, and must register the same extensions.
    ///
    /// What YapDB does:
    /// - The lock file `NAME-lock` is held shared while the database is open, so a process
    ///   without this option (which takes it exclusively) gets ``YapDatabaseError/locked``.
    /// - A read-write transaction takes the writer lock shared by the processes (an exclusive
    ///   lock on `NAME-shm`) for its duration only: processes take turns, a transaction waits
    ///   up to ``busyTimeout`` for another process's and then fails with `locked`
    ///   (`readWrite(_:)` reports it to the log handler). Nothing is locked for writing while a
    ///   process sits idle.
    /// - Each commit's end is published in the shared-memory file `NAME-shm` after it is synced.
    ///   At the start of each transaction a process compares it with its own state and, when
    ///   another process committed, replays those commits from the log; every connection then
    ///   empties its object and metadata caches (YapDatabase's rule: other processes' changes
    ///   carry no key list). With a ``YapDatabaseCrossProcessNotification`` registered,
    ///   `Notification.Name.YapDatabaseModifiedExternally` is posted on
    ///   ``YapDatabase/notificationQueue``.
    /// - Checkpoints run only at ``YapDatabase/checkpoint()`` and close (not automatically), under
    ///   the writer lock; a process that finds another's newer checkpoint reloads from it first.
    ///   ``YapDatabase/compact()`` and the removal of old log segments happen only in a process
    ///   that is the only one with the database open (a table of live processes in `NAME-shm`,
    ///   from which a killed process's entry is reclaimed); otherwise they do nothing.
    /// - Same host only (a shared memory map); the real file system only.
    ///
    /// Not yet: extensions whose state lives on index pages (views, secondary indexes, full-text
    /// search, relationships) do not see rows another process committed.
    public var enableMultiProcessSupport: Bool {
        get { storage.withLock { $0.enableMultiProcessSupport } }
        set { storage.withLock { $0.enableMultiProcessSupport = newValue } }
    }

    /// `seconds` as the engine's wait: 0 for negative or NaN values, at most a day.
    static func busyTimeoutDuration(_ seconds: TimeInterval) -> Duration {
        guard seconds > 0 else { return .zero }
        return .milliseconds(Int64(min(seconds, 86_400) * 1000))
    }

    /// Whether `value` may be a ``compactionThreshold``: a number in 0...1 (NaN is not).
    static func isValidCompactionThreshold(_ value: Double) -> Bool { value >= 0 && value <= 1 }

    /// How index pages and values are read: through memory maps
    /// (``YapDatabaseIndexReadMode/memoryMapped``, the default on macOS and Linux; see there
    /// for what a map cannot survive) or with `pread`, index pages
    /// through a bounded page cache (``YapDatabaseIndexReadMode/cached(pages:)``), for file
    /// systems where a memory map is unsafe. A YapDB addition (YapDatabase has no index
    /// files). Both modes read the same files with the same checks; a database may be opened
    /// in either. The default is ``YapDatabaseIndexReadMode/platformDefault``: `.cached` on
    /// iOS, tvOS, watchOS and visionOS. An encrypted database (``cipherKey``) is always read
    /// with `pread` (ciphertext cannot be read in place): `.memoryMapped` then reads index
    /// pages through a cache of 4,096 pages, each opened once as it enters it.
    ///
    /// ```swift
    /// let options = YapDatabaseOptions()
    /// options.indexReadMode = .cached(pages: YapDatabaseIndexReadMode.defaultCachedPages)
    /// let database = try YapDatabase.open(url: url, options: options)
    /// ```
    public var indexReadMode: YapDatabaseIndexReadMode {
        get { storage.withLock { $0.indexReadMode } }
        set { storage.withLock { $0.indexReadMode = newValue } }
    }
}
