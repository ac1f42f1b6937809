// An in-memory disk for crash and fault tests: it remembers what is durable and what is not,
// and can cut power, stop at a crash point, or fail chosen calls on purpose.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import YapDBStorage
import Synchronization

/// An in-memory `FileSystem` that models durability, power cuts and faults.
///
/// **Model.** Each file has a *durable image* (what survives a power cut), a *current image*
/// (what reads see) and the list of writes and truncates not yet synced, in order; `sync()`
/// applies that list to the durable image. Directory entries are likewise current or durable:
/// a created, renamed or removed name becomes durable only on `syncDirectory` of its directory
/// (`Paths.directory(of:)`). `powerCut(seed:mode:)` resolves everything pending from the seed.
/// Directories exist from `mkdir` on (durably at once); "/" and "." always exist. Paths are
/// plain strings compared as written.
///
/// **Crash points and faults.** `crashAfter(operations:)` stops the disk after a number of
/// mutating calls (create/open with `.create` or `.createNew`, write, sync, syncDirectory,
/// truncate, rename, remove); `inject(_:)` fails chosen calls. Both are deterministic: the same
/// seeds and the same call sequence give the same disk, byte for byte, and the same `log`.
///
/// **Threading.** All state — files, entries, handles, locks, crash point, faults and log —
/// sits in one `State` value behind the `state` `Mutex`, which is what makes the type
/// `Sendable`. Every call takes the lock once and does all its work under it, so calls from
/// many threads are serialised and each is atomic. No callback runs under the lock.
///
/// Nothing here traps on any input: bad arguments get an `IOFailure`.
package final class SimulatedDisk: FileSystem {
    /// The disk's whole state; see the type's documentation.
    let state: Mutex<State>

    /// Creates an empty disk containing only the directories "/" and ".".
    ///
    /// - Parameter seed: drives the choices made outside power cuts (short-write lengths).
    package init(seed: UInt64 = 0) {
        state = Mutex(State(seed: seed))
    }

    // MARK: - FileSystem

    /// Opens `path`. A created file's name is durable only after `syncDirectory` of its
    /// directory. Counts as a mutating call for `.create` and `.createNew`.
    ///
    /// - Throws: `IOFailure` — `ENOENT` (missing file in `.readWrite`/`.readOnly`, or missing
    ///   parent), `ENOTDIR` (parent is a file), `EEXIST` (`.createNew` of an existing path),
    ///   `EISDIR` (a directory), "power lost" `EIO`, or an injected `.open` fault.
    package func open(_ path: String, mode: OpenMode) throws(IOFailure) -> any StorageFile {
        let (id, epoch) = try state.withLock { state throws(IOFailure) in try state.open(path, mode: mode) }
        return SimulatedFile(disk: self, path: path, id: id, epoch: epoch, writable: mode != .readOnly)
    }

    /// What `path` names in the current (not durable) state. Never throws, even after the
    /// crash point.
    package func kind(of path: String) -> FileKind {
        state.withLock { $0.kind(of: path) }
    }

    /// The names in directory `path`, current state, sorted.
    ///
    /// - Throws: `IOFailure` — `ENOENT`, `ENOTDIR`, "power lost" `EIO`, or an injected
    ///   `.listDirectory` fault.
    package func listDirectory(_ path: String) throws(IOFailure) -> [String] {
        try state.withLock { state throws(IOFailure) in try state.listDirectory(path) }
    }

    /// Renames the file `from` to `to`, replacing `to`; durable once either directory involved
    /// is synced. Directories cannot be renamed.
    ///
    /// - Throws: `IOFailure` — `ENOENT`, `ENOTDIR`, `EISDIR`, "power lost" `EIO`, or an
    ///   injected `.rename` fault (which changes nothing).
    package func rename(_ from: String, to: String) throws(IOFailure) {
        try state.withLock { state throws(IOFailure) in try state.rename(from, to: to) }
    }

    /// Removes the file at `path`; durable once its directory is synced.
    ///
    /// - Throws: `IOFailure` — `ENOENT`, `ENOTDIR`, `EISDIR`, "power lost" `EIO`, or an
    ///   injected `.remove` fault (which changes nothing).
    package func remove(_ path: String) throws(IOFailure) {
        try state.withLock { state throws(IOFailure) in try state.remove(path) }
    }

    /// Makes every entry of directory `path` durable as it is now.
    ///
    /// - Throws: `IOFailure` — `ENOENT`, `ENOTDIR`, "power lost" `EIO`, or an injected
    ///   `.syncDirectory` fault (which makes nothing durable).
    package func syncDirectory(_ path: String) throws(IOFailure) {
        try state.withLock { state throws(IOFailure) in try state.syncDirectory(path) }
    }

    /// Takes the disk-wide lock on the path string `path`, which must exist: exclusive, or
    /// with `shared` one that other shared locks may hold too. Released by `unlock()`, by
    /// dropping the lock object, or by a power cut.
    ///
    /// - Throws: `IOFailure` — `EWOULDBLOCK` ("flock") while another lock object holds a lock
    ///   that conflicts, `ENOENT`, "power lost" `EIO`, or an injected `.lock` fault.
    package func lock(_ path: String, shared: Bool) throws(IOFailure) -> any FileLock {
        let token = try state.withLock { state throws(IOFailure) in try state.lock(path, shared: shared) }
        return SimulatedLock(disk: self, path: path, token: token)
    }

    // MARK: - Test controls

    /// Creates directory `path` and any missing parents, durably at once. Not a counted call,
    /// never faulted. Does nothing if the directory exists.
    ///
    /// - Throws: `IOFailure` — `EEXIST` if a file has that path, `ENOTDIR` if a parent is a
    ///   file, `ENOENT` for an empty path.
    package func mkdir(_ path: String) throws(IOFailure) {
        try state.withLock { state throws(IOFailure) in try state.mkdir(path) }
    }

    /// Cuts the power: resolves every pending operation from `seed` as `mode` says, makes the
    /// result both the durable and the current state, kills every open handle (their calls
    /// throw "power lost" `EIO`), releases every lock and clears the crash point. Faults,
    /// `capacity` and `operationCount` are kept.
    ///
    /// - Returns: one human-readable line per decision, so a failing seed explains itself
    ///   (also appended to `log`).
    /// `names` says what happens to creates and renames whose directory was not synced: lost
    /// (`.needDirectorySync`, the default) or persisting by the seed (`.seeded`).
    @discardableResult
    package func powerCut(seed: UInt64, mode: PowerCutMode, names: UnsyncedNames = .needDirectorySync) -> [String] {
        state.withLock { $0.powerCut(seed: seed, mode: mode, names: names) }
    }

    /// An independent copy of the disk as it is now — files with their durable and current
    /// images and pending operations, names, crash point, faults, capacity, operation count —
    /// so a crash test can resolve one moment in several ways (`powerCut` on each copy). Open
    /// handles and locks stay with the original: the copy has none, as after a power cut.
    package func copy() -> SimulatedDisk {
        let copy = SimulatedDisk()
        let snapshot = state.withLock { state in
            var snapshot = state
            snapshot.handles.removeAll()
            snapshot.locks.removeAll()
            snapshot.sharedLocks.removeAll()
            snapshot.epoch += 1
            snapshot.log.removeAll()
            return snapshot
        }
        copy.state.withLock { $0 = snapshot }
        return copy
    }

    /// Arms a crash point: `n` more mutating calls run, then every call — reads included —
    /// throws `IOFailure(errno: EIO, operation: "power lost", …)` until `powerCut`. `n` ≤ 0
    /// stops the disk at once. Replaces any earlier crash point.
    package func crashAfter(operations n: Int) {
        state.withLock { state in
            state.record("crash point armed: \(max(0, n)) more mutating call(s)")
            if n <= 0 {
                state.crashBudget = nil
                state.crashed = true
            } else {
                state.crashBudget = n
            }
        }
    }

    /// Whether the crash point has passed (calls fail until `powerCut`).
    package var isStopped: Bool { state.withLock { $0.crashed } }

    /// The number of mutating calls run since creation or `resetOperationCount()`, including
    /// calls that then failed (with a fault or a bad argument), excluding calls refused after
    /// the crash point.
    package var operationCount: Int { state.withLock { $0.operationCount } }

    /// How many calls of kind `call` the disk has served since creation (reads, maps, opens,
    /// listings and locks included; calls refused after the crash point excluded), so a test
    /// can aim a `Fault` at each of them by its ordinal.
    package func callCount(_ call: Fault.Call) -> Int {
        state.withLock { $0.callCounts[call] ?? 0 }
    }

    /// Sets `operationCount` back to 0.
    package func resetOperationCount() {
        state.withLock { $0.operationCount = 0 }
    }

    /// Adds a fault; counting of its calls starts now.
    package func inject(_ fault: Fault) {
        state.withLock { state in
            state.record("injected \(fault)")
            state.faults.append(ArmedFault(fault: fault))
        }
    }

    /// Removes every injected fault.
    package func clearFaults() {
        state.withLock { state in
            state.record("cleared \(state.faults.count) fault(s)")
            state.faults.removeAll()
        }
    }

    /// The most bytes all files together may hold (current images); `nil` means unlimited.
    /// A write that would pass it throws `ENOSPC` having written nothing. Settable at any time;
    /// lowering it below the bytes in use makes only growing writes fail. Truncates are never
    /// refused for space.
    package var capacity: Int? {
        get { state.withLock { $0.capacity } }
        set { state.withLock { $0.capacity = newValue } }
    }

    /// The largest size a write or truncate may give a file (`EFBIG` beyond); 1 GiB by
    /// default, so hostile offsets cannot exhaust memory.
    package var maximumFileSize: Int {
        get { state.withLock { $0.maximumFileSize } }
        set { state.withLock { $0.maximumFileSize = max(0, newValue) } }
    }

    // MARK: - Introspection

    /// The bytes `path` would hold after a power cut in which no pending operation persists:
    /// the durable image of the file its durable entry names; `nil` when there is none.
    package func durableBytes(of path: String) -> [UInt8]? {
        state.withLock { state in state.durableEntries[path].flatMap { state.inodes[$0]?.durable } }
    }

    /// The bytes a read of `path` sees now; `nil` when no file has that name.
    package func currentBytes(of path: String) -> [UInt8]? {
        state.withLock { state in state.currentEntries[path].flatMap { state.inodes[$0]?.current } }
    }

    /// Overwrites both the current and the durable image of the file now named `path` and
    /// forgets its pending data operations — for corruption tests that flip bits on "disk".
    ///
    /// - Throws: `IOFailure` with `ENOENT` when no file has that name.
    package func setBytes(_ bytes: [UInt8], of path: String) throws(IOFailure) {
        try state.withLock { state throws(IOFailure) in
            guard let inode = state.currentEntries[path] else {
                throw IOFailure(errno: ENOENT, operation: "setBytes", path: path)
            }
            state.inodes[inode] = Inode(durable: bytes, current: bytes, pending: [])
            state.record("setBytes \(path): \(bytes.count) bytes, current and durable")
        }
    }

    /// The bytes all files hold now (what `capacity` limits).
    package var usedBytes: Int { state.withLock { $0.usedBytes } }

    /// The number of writes, truncates and name operations not yet made durable.
    package var pendingOperationCount: Int { state.withLock { $0.pendingOperationCount } }

    /// What the disk did, oldest first: calls, faults, crash points, power-cut decisions.
    /// Holds the newest `logLimit` lines.
    package var log: [String] { state.withLock { $0.recentLog } }

    /// How many log lines to keep (10,000 by default; 0 turns logging off).
    package var logLimit: Int {
        get { state.withLock { $0.logLimit } }
        set { state.withLock { $0.logLimit = max(0, newValue) } }
    }
}

/// A lock on a `SimulatedDisk` path.
///
/// Sendable: its properties are immutable; the lock table lives behind `SimulatedDisk.state`.
package final class SimulatedLock: FileLock {
    private let disk: SimulatedDisk
    private let path: String
    private let token: Int

    init(disk: SimulatedDisk, path: String, token: Int) {
        self.disk = disk
        self.path = path
        self.token = token
    }

    /// Releases the lock unless a power cut already did. Harmless to call twice; thread-safe.
    package func unlock() {
        disk.state.withLock { $0.unlock(path, token: token) }
    }

    deinit { unlock() }
}
