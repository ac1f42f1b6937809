import YapDBStorage
// Power cuts on the simulated disk: resolving everything not yet synced from a seed.

/// How a power cut treats the operations that were not yet synced.
package enum PowerCutMode: String, Sendable, Equatable, CaseIterable {
    /// Each unsynced write and truncate persists or not, independently (seeded): a later write
    /// may persist while an earlier one does not, and holes read as zeros. Created and renamed
    /// names persist only if their directory was synced; unsynced removes may or may not.
    case drop
    /// As `.drop`, but each 4 KiB page an unsynced persisting write touches keeps only a
    /// seeded prefix (0 to 8) of its 512-byte sectors.
    case torn
    /// As `.drop`, but the bytes of each unsynced persisting write are replaced by seeded
    /// garbage (one time in four by zeros).
    case garble
    /// Every pending operation persists: a process crash rather than a power cut.
    case keepAll
}


/// What a power cut does with name operations (creates, renames, removes) whose directory was
/// not synced.
package enum UnsyncedNames: String, Sendable, Equatable, CaseIterable {
    /// Creates and renames are lost; each remove persists or not (seeded). What POSIX promises
    /// at the least, and the default.
    case needDirectorySync
    /// Each create, rename and remove persists or not, independently (seeded), applied in call
    /// order: real file systems often commit name operations without a directory sync (ext4
    /// and XFS journal them on their own schedule), so a crash may keep any of them.
    case seeded
}

extension SimulatedDisk {
    /// The size of a page and of a sector, for `.torn`.
    static let pageSize = 4096
    static let sectorSize = 512
}

extension SimulatedDisk.State {
    /// Resolves every pending operation from `seed`, makes the result both the durable and
    /// the current state, kills every handle, releases every lock and clears the crash point.
    /// Returns what it decided, one line per decision.
    mutating func powerCut(seed: UInt64, mode: PowerCutMode, names: UnsyncedNames = .needDirectorySync) -> [String] {
        var random = SplitMix64(seed: seed)
        var lines = ["power cut, seed \(seed), mode \(mode.rawValue), names \(names.rawValue): \(pendingOperationCount) pending operation(s)"]
        let entries = resolveNames(mode: mode, names: names, random: &random, lines: &lines)

        var survivors: [Int: SimulatedDisk.Inode] = [:]
        for inode in Set(entries.values).sorted() {
            guard let file = inodes[inode] else { continue }
            let image = mode == .keepAll
                ? file.current
                : resolveData(of: file, named: name(of: inode), mode: mode, random: &random, lines: &lines)
            survivors[inode] = SimulatedDisk.Inode(durable: image, current: image, pending: [])
        }
        for inode in inodes.keys.sorted() where survivors[inode] == nil {
            lines.append("\(name(of: inode)) has no name left: discarded")
        }

        inodes = survivors
        currentEntries = entries
        durableEntries = entries
        pendingNames.removeAll()
        if !handles.isEmpty { lines.append("\(handles.count) open handle(s) now dead") }
        handles.removeAll()
        epoch += 1
        let held = Set(locks.keys).union(sharedLocks.keys)
        if !held.isEmpty { lines.append("released lock(s): \(held.sorted().joined(separator: ", "))") }
        locks.removeAll()
        sharedLocks.removeAll()
        crashed = false
        crashBudget = nil
        for line in lines { record(line) }
        return lines
    }

    /// The number of writes, truncates and name operations not yet synced.
    var pendingOperationCount: Int {
        inodes.values.reduce(pendingNames.count) { $0 + $1.pending.count }
    }

    /// The directory entries after the cut.
    private func resolveNames(mode: PowerCutMode, names: UnsyncedNames, random: inout SplitMix64,
                              lines: inout [String]) -> [String: Int] {
        if mode == .keepAll {
            if !pendingNames.isEmpty { lines.append("all \(pendingNames.count) name operation(s) persist") }
            return currentEntries
        }
        var entries = durableEntries
        for operation in pendingNames {
            switch operation {
            case .create(let path, let inode):
                if names == .seeded && random.coin() {
                    entries[path] = inode
                    lines.append("create of \(path) (inode \(inode)) persists without a directory sync")
                } else {
                    lines.append("create of \(path) (inode \(inode)) lost: directory not synced")
                }
            case .rename(let from, let to, let inode):
                if names == .seeded && random.coin() {
                    entries[to] = inode
                    if entries[from] == inode { entries[from] = nil }
                    lines.append("rename \(from) -> \(to) (inode \(inode)) persists without a directory sync")
                } else {
                    lines.append("rename \(from) -> \(to) undone: directory not synced")
                }
            case .remove(let path, let inode):
                guard random.coin() else {
                    lines.append("remove of \(path) undone")
                    continue
                }
                if entries[path] == inode {
                    entries[path] = nil
                    lines.append("remove of \(path) persists")
                } else {
                    lines.append("remove of \(path) persists, but the durable name is another file: kept")
                }
            }
        }
        return entries
    }

    /// A file's bytes after the cut: its durable image plus the seeded subset of its pending
    /// operations, transformed as `mode` says.
    private func resolveData(of file: SimulatedDisk.Inode, named name: String, mode: PowerCutMode,
                             random: inout SplitMix64, lines: inout [String]) -> [UInt8] {
        var image = file.durable
        for (index, operation) in file.pending.enumerated() {
            let persists = random.coin()
            switch operation {
            case .truncate(let size):
                lines.append("\(name): unsynced truncate #\(index) to \(size) \(persists ? "persists" : "lost")")
                if persists { Self.resize(&image, to: size) }
            case .write(let offset, let bytes):
                let what = "\(name): unsynced write #\(index) (\(bytes.count) bytes at \(offset))"
                guard persists else {
                    lines.append("\(what) lost")
                    continue
                }
                switch mode {
                case .drop, .keepAll:
                    lines.append("\(what) persists")
                    Self.apply(bytes[...], at: offset, to: &image)
                case .torn:
                    let kept = Self.applyTorn(bytes, at: offset, to: &image, random: &random)
                    lines.append("\(what) persists torn, sectors kept per page: \(kept)")
                case .garble:
                    let zeros = random.below(4) == 0
                    let garbage = zeros ? [UInt8](repeating: 0, count: bytes.count) : Self.garbage(bytes.count, &random)
                    lines.append("\(what) persists as \(zeros ? "zeros" : "garbage")")
                    Self.apply(garbage[...], at: offset, to: &image)
                }
            }
        }
        return image
    }

    /// Applies, for each 4 KiB page the write touches, only the part inside a seeded prefix of
    /// the page's sectors. Returns the number of sectors kept per page, for the log.
    private static func applyTorn(_ bytes: [UInt8], at offset: Int, to image: inout [UInt8],
                                  random: inout SplitMix64) -> [Int] {
        var kept: [Int] = []
        let end = offset + bytes.count
        var page = offset - offset % SimulatedDisk.pageSize
        while page < end {
            let sectors = random.below(SimulatedDisk.pageSize / SimulatedDisk.sectorSize + 1)
            kept.append(sectors)
            let start = max(offset, page)
            let stop = min(end, page + sectors * SimulatedDisk.sectorSize)
            if start < stop { apply(bytes[(start - offset)..<(stop - offset)], at: start, to: &image) }
            page += SimulatedDisk.pageSize
        }
        return kept
    }

    private static func garbage(_ count: Int, _ random: inout SplitMix64) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(count)
        while bytes.count < count {
            var word = random.next()
            for _ in 0..<min(8, count - bytes.count) {
                bytes.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return bytes
    }
}
