#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TestSupport

/// Crash states from recorded system calls, ALICE's method (issue 25): the mutating calls a
/// workload made on the real file system (`RealPathFileSystem`'s trace) are replayed into a
/// model of what a disk under ext4 (`data=ordered`) may hold after a power cut at any point,
/// and each such state is written into a fresh directory with plain file operations.
///
/// The model, per crash point p (the first p calls happened):
/// - each file has a synced image (its bytes at its last `fdatasync`) and the writes and
///   truncates made since, in order; a power cut may keep any prefix of them, the first one
///   not kept torn at 4 KiB blocks, or (`reordered`) any subset of their blocks, the file's
///   size being one of the sizes it had since the sync (a block not kept reads as before, or
///   as zeros past the synced end);
/// - creates, renames and removes are durable once a directory sync follows them; the ones
///   not yet synced persist as a prefix, in order (a journal commits them in order), which
///   may be empty;
/// - nothing else is ever changed.
///
/// This is stricter than ext4, never laxer: ext4 also commits names with any later `fsync`
/// and writes back an append's blocks before the size that covers them.
struct RecordedTrace {
    let calls: [TraceCall]

    /// A file of the model.
    struct File {
        var synced: [UInt8] = []
        var current: [UInt8] = []
        /// Writes and truncates since the last sync, in order.
        var pending: [TraceCall] = []
    }

    enum Name { case create(String, Int), rename(String, String), remove(String) }

    /// The model after some prefix of the calls.
    struct Machine {
        var files: [Int: File] = [:]
        var names: [String: Int] = [:]
        var syncedNames: [String: Int] = [:]
        var pendingNames: [Name] = []

        mutating func apply(_ call: TraceCall) {
            switch call {
            case .create(let name, let inode):
                files[inode] = File()
                names[name] = inode
                pendingNames.append(.create(name, inode))
            case .write(let inode, _, _), .truncate(let inode, _):
                Self.change(&files[inode, default: File()].current, call)
                files[inode, default: File()].pending.append(call)
            case .sync(let inode):
                if var file = files[inode] {
                    file.synced = file.current
                    file.pending.removeAll()
                    files[inode] = file
                }
            case .rename(let from, let to):
                names[to] = names.removeValue(forKey: from)
                pendingNames.append(.rename(from, to))
            case .remove(let name):
                names[name] = nil
                pendingNames.append(.remove(name))
            case .syncDirectory:
                syncedNames = names
                pendingNames.removeAll()
            }
        }

        static func change(_ bytes: inout [UInt8], _ call: TraceCall) {
            switch call {
            case .write(_, let offset, let data):
                if bytes.count < offset + data.count { bytes += [UInt8](repeating: 0, count: offset + data.count - bytes.count) }
                bytes.withUnsafeMutableBytes { target in
                    data.withUnsafeBytes { source in
                        if source.count > 0 { (target.baseAddress! + offset).copyMemory(from: source.baseAddress!, byteCount: source.count) }
                    }
                }
            case .truncate(_, let size):
                if size < bytes.count { bytes.removeSubrange(size...) } else { bytes += [UInt8](repeating: 0, count: size - bytes.count) }
            default: break
            }
        }

        /// The names after the synced ones and the first `count` pending name operations.
        func names(keeping count: Int) -> [String: Int] {
            var result = syncedNames
            for operation in pendingNames.prefix(count) {
                switch operation {
                case .create(let name, let inode): result[name] = inode
                case .rename(let from, let to): result[to] = result.removeValue(forKey: from)
                case .remove(let name): result[name] = nil
                }
            }
            return result
        }
    }

    /// How a crash point is resolved.
    enum Resolution: CustomStringConvertible {
        /// Every call kept (a process crash: the page cache survives).
        case kept
        /// Only what was synced (files and names).
        case synced
        /// Per file a seeded prefix of the unsynced writes, the next one torn at blocks; a
        /// seeded prefix of the unsynced names.
        case prefixTorn(seed: UInt64)
        /// Per file any seeded subset of the unsynced writes' blocks and one of its sizes; a
        /// seeded prefix of the unsynced names.
        case reordered(seed: UInt64)

        var description: String {
            switch self {
            case .kept: "kept"
            case .synced: "synced only"
            case .prefixTorn(let seed): "prefix+torn (seed \(seed))"
            case .reordered(let seed): "reordered blocks (seed \(seed))"
            }
        }
    }

    static let block = 4096

    /// The directory's files (name → bytes) in the state `resolution` gives `machine`.
    static func state(of machine: Machine, _ resolution: Resolution) -> [String: [UInt8]] {
        var rng = SeededRandom(seed: 0)
        let names: [String: Int]
        switch resolution {
        case .kept:
            return machine.names.compactMapValues { machine.files[$0]?.current }
        case .synced:
            return machine.syncedNames.compactMapValues { machine.files[$0]?.synced }
        case .prefixTorn(let seed), .reordered(let seed):
            rng = SeededRandom(seed: seed)
            names = machine.names(keeping: Int(rng.next() % UInt64(machine.pendingNames.count + 1)))
        }
        var result: [String: [UInt8]] = [:]
        for (name, inode) in names.sorted(by: { $0.key < $1.key }) {
            guard let file = machine.files[inode] else { continue }
            var bytes = file.synced
            let kept = Int(rng.next() % UInt64(file.pending.count + 1))
            if case .reordered = resolution {
                // One of the sizes the file had since its sync, and any blocks of any write.
                var size = file.synced.count
                var sizes = [size]
                for call in file.pending {
                    var image = [UInt8](repeating: 0, count: size)
                    Machine.change(&image, call)
                    size = image.count
                    sizes.append(size)
                }
                for call in file.pending {
                    if case .write(_, let offset, let data) = call { tear(&bytes, offset: offset, data: data, &rng) }
                    else { Machine.change(&bytes, call) }
                }
                let chosen = sizes[Int(rng.next() % UInt64(sizes.count))]
                if chosen < bytes.count { bytes.removeSubrange(chosen...) } else { bytes += [UInt8](repeating: 0, count: chosen - bytes.count) }
            } else {
                for call in file.pending.prefix(kept) { Machine.change(&bytes, call) }
                if kept < file.pending.count, case .write(_, let offset, let data) = file.pending[kept] {
                    tear(&bytes, offset: offset, data: data, &rng)
                }
            }
            result[name] = bytes
        }
        return result
    }

    /// Applies a seeded subset of the 4 KiB blocks `data` covers at `offset` (blocks of the
    /// file, so a write's first and last blocks may be partial); the file grows to the end of
    /// the last block applied.
    static func tear(_ bytes: inout [UInt8], offset: Int, data: [UInt8], _ rng: inout SeededRandom) {
        var start = offset
        let end = offset + data.count
        while start < end {
            let stop = min(end, (start / block + 1) * block)
            if rng.next() % 2 == 0 {
                Machine.change(&bytes, .write(inode: 0, offset: start, bytes: Array(data[(start - offset)..<(stop - offset)])))
            }
            start = stop
        }
    }

    /// Writes `files` into the empty directory `directory` with plain `open`/`write`/`close`.
    static func materialize(_ files: [String: [UInt8]], in directory: String) -> Bool {
        for (name, bytes) in files {
            let fd = Glibc.open(directory + "/" + name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            var done = 0
            while done < bytes.count {
                let count = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + done, bytes.count - done) }
                guard count > 0 else { return false }
                done += count
            }
        }
        return true
    }

    /// A cheap fingerprint of a state, to count distinct states and skip repeats.
    static func fingerprint(_ files: [String: [UInt8]]) -> [String: Int] {
        files.mapValues { bytes in
            var hasher = Hasher()
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
            return hasher.finalize()
        }
    }
}
