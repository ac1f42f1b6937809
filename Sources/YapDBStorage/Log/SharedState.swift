#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CYapDBSupport

/// What the writer of a database shared by several processes publishes for the others after
/// each commit (docs/format.md §14): where the log ends and which checkpoint is newest. A
/// process compares it with its own state at the start of each transaction and catches up
/// from the log when another process committed.
package struct PublishedState: Sendable, Equatable {
    /// The database's UUID (main file header): a state of another database at the same path
    /// (deleted and created again) is ignored.
    package var uuid: [UInt8]
    /// Bumped by every publish, whoever makes it.
    package var generation: UInt64
    /// The snapshot number of the last commit.
    package var snapshot: UInt64
    /// The end of the last commit in the log.
    package var logEnd: LogPosition
    /// How far the log is known to be synced (`LogWriter.durableThrough`).
    package var durableThrough: LogPosition
    /// The newest checkpoint's number (0: none).
    package var checkpoint: UInt32

    package init(uuid: [UInt8], generation: UInt64, snapshot: UInt64, logEnd: LogPosition, durableThrough: LogPosition,
                 checkpoint: UInt32) {
        self.uuid = uuid
        self.generation = generation
        self.snapshot = snapshot
        self.logEnd = logEnd
        self.durableThrough = durableThrough
        self.checkpoint = checkpoint
    }
}

/// The shared-memory file `NAME-shm` (docs/format.md §14): a `MAP_SHARED` mapping that every
/// process of a database opened with multi-process support maps, holding the published state
/// as a seqlock (a sequence number, odd while a publish is under way, and two copies of the
/// state, each with its CRC32C). Same host only: a network file system does not share the
/// mapping between machines.
///
/// Readers never lock: `read()` copies the state between two loads of the sequence number and
/// retries when they differ. Only the holder of the writer lock (`LockFile.acquireWriter`, an
/// exclusive `flock` on this same file) calls `publish(_:)`. A writer that dies in the middle
/// of a publish leaves the sequence number odd; readers then take whichever copy checks out
/// (each was a published state), and the next publish makes the number even again.
///
/// `@unchecked Sendable`: the mapping is shared memory that other processes change anyway; every
/// access to it is an atomic load or store of the sequence number or a copy that the seqlock
/// (readers) or the writer lock (`publish`) makes consistent.
package final class SharedStateFile: @unchecked Sendable {
    package let path: String
    private let base: UnsafeMutableRawPointer
    private let descriptor: Int32

    /// Bytes mapped (and the file's least size): the header, two copies, the reserved rest.
    package static let size = 4096
    static let magic: [UInt8] = Array("YapDBshm".utf8)
    static let version: UInt32 = 1
    static let versionOffset = 8
    static let sequenceOffset = 16
    static let copyOffsets = [24, 88]
    static let copySize = 64
    /// The bytes of a copy its CRC32C covers; the checksum follows them.
    static let checksummed = 60

    private init(path: String, base: UnsafeMutableRawPointer, descriptor: Int32) {
        self.path = path
        self.base = base
        self.descriptor = descriptor
    }

    deinit {
        munmap(base, Self.size)
        _ = Posix.close(descriptor)
    }

    /// Opens (creating it, mode 0600, when missing) and maps the shared-state file at `path`.
    /// A shorter file is extended with zeros (which read as "nothing published yet").
    /// - Throws: `IOFailure` from "open", "fstat", "ftruncate" or "mmap".
    package static func open(path: String) throws(IOFailure) -> SharedStateFile {
        let descriptor = try Posix.openDescriptor(path, flags: O_RDWR | O_CREAT | O_CLOEXEC, operation: "open",
                                                  calls: PosixFileSystem.shared.calls)
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let code = errno
            _ = Posix.close(descriptor)
            throw IOFailure(errno: code, operation: "fstat", path: path)
        }
        if Int(status.st_size) < size {
            // Growing only: two processes extending it at once both leave `size` zero bytes.
            guard Posix.retrying({ ftruncate(descriptor, off_t(size)) }) == 0 else {
                let code = errno
                _ = Posix.close(descriptor)
                throw IOFailure(errno: code, operation: "ftruncate", path: path)
            }
        }
        guard let mapped = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0), mapped != MAP_FAILED else {
            let code = errno
            _ = Posix.close(descriptor)
            throw IOFailure(errno: code, operation: "mmap", path: path)
        }
        return SharedStateFile(path: path, base: mapped, descriptor: descriptor)
    }

    /// The sequence number: it changes with every publish (one atomic load; no system call).
    package var sequence: UInt64 { yapdb_shared_load_acquire(base + Self.sequenceOffset) }

    /// The newest published state, or nil when none was ever published (or the bytes are not
    /// a state of this format: zeros, another program's bytes, a damaged file).
    package func read() -> PublishedState? {
        guard hasHeader else { return nil }
        for attempt in 0..<256 {
            let before = yapdb_shared_load_acquire(base + Self.sequenceOffset)
            if before & 1 == 0 {
                let first = copy(0), second = copy(1)
                yapdb_fence_acquire()
                if yapdb_shared_load_relaxed(base + Self.sequenceOffset) == before {
                    return Self.decode(first) ?? Self.decode(second)
                }
            }
            if attempt >= 16 { sched_yield() }
        }
        // Still odd: the last publisher died half-way. Each copy that checks out was published.
        let states = [Self.decode(copy(0)), Self.decode(copy(1))].compactMap { $0 }
        return states.max { $0.generation < $1.generation }
    }

    /// Publishes `state` (call only with the writer lock held): the sequence number goes odd,
    /// both copies are written, and it goes even again.
    package func publish(_ state: PublishedState) {
        if !hasHeader {
            Self.magic.withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            base.storeBytes(of: Self.version.littleEndian, toByteOffset: Self.versionOffset, as: UInt32.self)
        }
        let current = yapdb_shared_load_relaxed(base + Self.sequenceOffset)
        // Odd, and different from any number a reader may have seen.
        let begun = current & 1 == 0 ? current &+ 1 : current &+ 2
        yapdb_shared_store_relaxed(base + Self.sequenceOffset, begun)
        yapdb_fence_release()
        let bytes = Self.encode(state)
        for offset in Self.copyOffsets {
            bytes.withUnsafeBytes { (base + offset).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        }
        yapdb_shared_store_release(base + Self.sequenceOffset, begun &+ 1)
    }

    // MARK: The reader table

    /// Slots of the reader table (docs/format.md §14): one per process that has the database
    /// open with multi-process support.
    package static let slotCount = 64
    static let slotsOffset = 512
    static let slotSize = 32

    /// A process in the reader table: its id and its start time (`ProcessIdentity.startTime`;
    /// 0 where the system cannot tell), which tells a live process from a new one that reuses
    /// a dead one's id.
    package struct Slot: Sendable, Equatable {
        package var pid: Int32
        package var start: UInt64
        package init(pid: Int32, start: UInt64) {
            self.pid = pid
            self.start = start
        }
    }

    /// The slot at `index`, nil when it is free.
    package func slot(_ index: Int) -> Slot? {
        precondition(index >= 0 && index < Self.slotCount, "reader slot \(index) out of range")
        let at = Self.slotsOffset + index * Self.slotSize
        let pid = Int32(bitPattern: UInt32(littleEndian: base.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
        guard pid > 0 else { return nil }
        return Slot(pid: pid, start: UInt64(littleEndian: base.loadUnaligned(fromByteOffset: at + 8, as: UInt64.self)))
    }

    /// Frees every slot whose process is gone (`isLive` false), then takes the first free one
    /// for `slot` (call with the writer lock held). Returns its index; nil when every slot
    /// holds a live process.
    package func claimSlot(_ slot: Slot, isLive: (Slot) -> Bool) -> Int? {
        _ = reclaimStaleSlots(isLive: isLive)
        for index in 0..<Self.slotCount where self.slot(index) == nil {
            let at = Self.slotsOffset + index * Self.slotSize
            base.storeBytes(of: slot.start.littleEndian, toByteOffset: at + 8, as: UInt64.self)
            base.storeBytes(of: UInt64(0), toByteOffset: at + 16, as: UInt64.self)
            base.storeBytes(of: UInt64(0), toByteOffset: at + 24, as: UInt64.self)
            base.storeBytes(of: UInt32(0), toByteOffset: at + 4, as: UInt32.self)
            base.storeBytes(of: UInt32(bitPattern: slot.pid).littleEndian, toByteOffset: at, as: UInt32.self)
            return index
        }
        return nil
    }

    /// Frees slot `index` if it still holds `slot` (a process letting go of its own slot; no
    /// lock needed: nobody else writes a live process's slot).
    package func releaseSlot(_ index: Int, holding slot: Slot) {
        guard self.slot(index) == slot else { return }
        base.storeBytes(of: UInt32(0), toByteOffset: Self.slotsOffset + index * Self.slotSize, as: UInt32.self)
    }

    /// Frees the slots of processes that are gone (call with the writer lock held); returns
    /// the live ones, by index.
    package func reclaimStaleSlots(isLive: (Slot) -> Bool) -> [Int: Slot] {
        var live: [Int: Slot] = [:]
        for index in 0..<Self.slotCount {
            guard let slot = slot(index) else { continue }
            if isLive(slot) {
                live[index] = slot
            } else {
                base.storeBytes(of: UInt32(0), toByteOffset: Self.slotsOffset + index * Self.slotSize, as: UInt32.self)
            }
        }
        return live
    }

    private var hasHeader: Bool {
        UnsafeRawBufferPointer(start: base, count: Self.magic.count).elementsEqual(Self.magic)
            && UInt32(littleEndian: base.loadUnaligned(fromByteOffset: Self.versionOffset, as: UInt32.self)) == Self.version
    }

    private func copy(_ index: Int) -> [UInt8] {
        Array(UnsafeRawBufferPointer(start: base + Self.copyOffsets[index], count: Self.copySize))
    }

    /// A copy's 64 bytes: UUID, generation, snapshot, log end, durable position, checkpoint,
    /// 8 reserved bytes, CRC32C of the first 60 bytes (docs/format.md §14).
    static func encode(_ state: PublishedState) -> [UInt8] {
        var bytes: [UInt8] = state.uuid.count == 16 ? state.uuid : [UInt8](repeating: 0, count: 16)
        bytes.appendLE(state.generation)
        bytes.appendLE(state.snapshot)
        bytes.appendLE(state.logEnd.segment)
        bytes.appendLE(state.logEnd.offset)
        bytes.appendLE(state.durableThrough.segment)
        bytes.appendLE(state.durableThrough.offset)
        bytes.appendLE(state.checkpoint)
        bytes.append(contentsOf: [UInt8](repeating: 0, count: 8))   // reserved
        bytes.appendLE(CRC32C.checksum(bytes))
        return bytes
    }

    /// The state a copy holds, or nil when its checksum fails.
    static func decode(_ bytes: [UInt8]) -> PublishedState? {
        guard bytes.count == copySize else { return nil }
        let stored = bytes[checksummed..<copySize].withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) }
        guard stored == CRC32C.checksum(Array(bytes[0..<checksummed])) else { return nil }
        func u64(_ at: Int) -> UInt64 { bytes[at..<(at + 8)].withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) } }
        func u32(_ at: Int) -> UInt32 { bytes[at..<(at + 4)].withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) } }
        return PublishedState(uuid: Array(bytes[0..<16]), generation: u64(16), snapshot: u64(24),
                              logEnd: LogPosition(segment: u32(32), offset: u32(36)),
                              durableThrough: LogPosition(segment: u32(40), offset: u32(44)), checkpoint: u32(48))
    }
}

/// Telling a live process from a dead one, or from a new one that reuses its id (the reader
/// table's slots, `SharedStateFile.Slot`).
package enum ProcessIdentity {
    /// This process's slot.
    package static func current() -> SharedStateFile.Slot {
        let pid = getpid()
        return SharedStateFile.Slot(pid: pid, start: startTime(of: pid) ?? 0)
    }

    /// Whether the process `slot` names still runs: its id answers `kill(pid, 0)` and, where
    /// the system tells start times (Linux: `/proc/PID/stat`), it started when the slot says.
    package static func isLive(_ slot: SharedStateFile.Slot) -> Bool {
        guard kill(slot.pid, 0) == 0 || errno == EPERM else { return false }
        guard slot.start != 0, let start = startTime(of: slot.pid) else { return true }
        return start == slot.start
    }

    /// The process's start time in clock ticks since boot (field 22 of `/proc/PID/stat`), or
    /// nil where there is no such file.
    static func startTime(of pid: Int32) -> UInt64? {
        #if os(Linux)
        let descriptor = Glibc.open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { _ = Glibc.close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 1024)
        let count = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        // The command name (field 2) is in parentheses and may hold spaces: count after its end.
        guard let close = bytes[..<count].lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = bytes[(close + 1)..<count].split(separator: UInt8(ascii: " "))
        // fields[0] is field 3 (state), so field 22 is fields[19].
        guard fields.count > 19 else { return nil }
        return UInt64(String(decoding: fields[19], as: UTF8.self))
        #else
        return nil
        #endif
    }
}
