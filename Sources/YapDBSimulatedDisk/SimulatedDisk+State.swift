import YapDBStorage
// The simulated disk's state: files (inodes) with durable and current images, directory
// entries, open handles, locks, the crash point, faults and the log. Every method here runs
// with `SimulatedDisk.state` locked.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension SimulatedDisk {
    /// One unsynced change to a file's data, in call order.
    enum DataOperation {
        case write(offset: Int, bytes: [UInt8])
        case truncate(size: Int)
    }

    /// One unsynced change to the directory tree, in call order.
    enum NameOperation {
        case create(path: String, inode: Int)
        case rename(from: String, to: String, inode: Int)
        case remove(path: String, inode: Int)

        /// The paths whose entries the operation changed.
        var paths: [String] {
            switch self {
            case .create(let path, _), .remove(let path, _): [path]
            case .rename(let from, let to, _): [from, to]
            }
        }
    }

    /// A file's contents, independent of the names it has.
    struct Inode {
        /// What survives a power cut if no pending operation does.
        var durable: [UInt8] = []
        /// What reads see.
        var current: [UInt8] = []
        /// Writes and truncates since the last successful sync, oldest first.
        var pending: [DataOperation] = []
    }

    /// Everything the disk knows. Guarded by `SimulatedDisk.state`.
    struct State {
        var random: SplitMix64
        var inodes: [Int: Inode] = [:]
        var nextInode = 1
        /// Path → inode, as lookups see it now.
        var currentEntries: [String: Int] = [:]
        /// Path → inode, as a power cut would leave it if no pending name operation persisted.
        var durableEntries: [String: Int] = [:]
        /// Directories exist durably from `mkdir` on; "/" and "." always exist.
        var directories: Set<String> = ["/", "."]
        var pendingNames: [NameOperation] = []
        /// Live handle id → inode. Handles of an earlier epoch are dead (power lost).
        var handles: [Int: Int] = [:]
        var nextHandle = 1
        var epoch = 0
        /// Locked path → token of the lock object holding it.
        var locks: [String: Int] = [:]
        /// Path → tokens of the shared lock objects holding it.
        var sharedLocks: [String: Set<Int>] = [:]
        var nextLockToken = 1
        var operationCount = 0
        /// Mutating calls left before the crash point, when armed.
        var crashBudget: Int?
        /// Set at the crash point; every call throws "power lost" until `powerCut`.
        var crashed = false
        var faults: [ArmedFault] = []
        /// How many calls of each kind reached the fault check (after the power check).
        var callCounts: [Fault.Call: Int] = [:]
        var capacity: Int?
        var maximumFileSize = 1 << 30
        var log: [String] = []
        var logLimit = 10_000

        init(seed: UInt64) { random = SplitMix64(seed: seed) }

        // MARK: - Log

        mutating func record(_ line: String) {
            guard logLimit > 0 else { return }
            // Trim in batches so appending stays amortised O(1); readers see the newest
            // `logLimit` lines (`recentLog`).
            if log.count >= 2 * logLimit { log.removeFirst(log.count - logLimit) }
            log.append(line)
        }

        /// The newest `logLimit` lines of the log.
        var recentLog: [String] { Array(log.suffix(max(0, logLimit))) }

        // MARK: - Gates

        /// Throws "power lost" once the crash point has passed.
        func checkPower(_ path: String) throws(IOFailure) {
            if crashed { throw IOFailure(errno: EIO, operation: "power lost", path: path) }
        }

        /// Counts a mutating call that is about to run; the crash point trips after the last
        /// call of the budget, which itself still runs.
        mutating func countMutation(_ operation: String, _ path: String) {
            operationCount += 1
            record("#\(operationCount) \(operation)(\(path))")
            guard let budget = crashBudget else { return }
            if budget <= 1 {
                crashBudget = nil
                crashed = true
                record("crash point reached after operation #\(operationCount): further calls fail")
            } else {
                crashBudget = budget - 1
            }
        }

        /// The inode behind a handle, or "power lost" for a handle from before a power cut, or
        /// `EBADF` for a closed one.
        func inode(ofHandle id: Int, epoch handleEpoch: Int, _ operation: String,
                   _ path: String) throws(IOFailure) -> Int {
            try checkPower(path)
            if let inode = handles[id] { return inode }
            if handleEpoch != epoch { throw IOFailure(errno: EIO, operation: "power lost", path: path) }
            throw IOFailure(errno: EBADF, operation: operation, path: path)
        }

        // MARK: - Space and garbage

        /// The sum of the current sizes of all files still held by a name or a handle.
        var usedBytes: Int { inodes.values.reduce(0) { $0 + $1.current.count } }

        /// Forgets an inode that no name (current or durable) and no handle refers to.
        mutating func collect(_ inode: Int) {
            if currentEntries.values.contains(inode) || durableEntries.values.contains(inode)
                || handles.values.contains(inode) {
                return
            }
            inodes[inode] = nil
        }

        /// A name for an inode, for the log.
        func name(of inode: Int) -> String {
            let names = currentEntries.filter { $0.value == inode }.keys.sorted()
                + durableEntries.filter { $0.value == inode }.keys.sorted()
            return names.first.map { "\($0) (inode \(inode))" } ?? "inode \(inode)"
        }

        /// The directory a path's entry lives in.
        static func parent(_ path: String) -> String { Paths.directory(of: path) }

        /// Whether `path` names a directory.
        func isDirectory(_ path: String) -> Bool { directories.contains(Self.trimmed(path)) }

        /// `path` without trailing slashes ("/" stays "/").
        static func trimmed(_ path: String) -> String {
            var result = Substring(path)
            while result.count > 1 && result.hasSuffix("/") { result = result.dropLast() }
            return String(result)
        }

        /// `ENOENT`/`ENOTDIR` unless the parent directory of `path` exists.
        func checkParent(of path: String, _ operation: String) throws(IOFailure) {
            let parent = Self.parent(path)
            if directories.contains(parent) { return }
            let code = currentEntries[parent] != nil ? ENOTDIR : ENOENT
            throw IOFailure(errno: code, operation: operation, path: path)
        }
    }
}

/// SplitMix64: the disk's deterministic source of choices (short-write lengths, power-cut
/// outcomes). The same seed gives the same sequence on every platform.
struct SplitMix64 {
    private(set) var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `0..<bound` (0 when `bound` ≤ 0).
    mutating func below(_ bound: Int) -> Int {
        bound <= 0 ? 0 : Int(next() % UInt64(bound))
    }

    /// A fair coin.
    mutating func coin() -> Bool { next() & 1 == 0 }
}
