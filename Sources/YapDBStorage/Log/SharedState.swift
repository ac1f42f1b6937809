#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CYapDBSupport

/// What the writer of a database shared by several processes publishes for the others after
/// each commit (docs/format.md §13): where the log ends and which checkpoint is newest. A
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

/// The shared-memory file `NAME-shm` (docs/format.md §13): a `MAP_SHARED` mapping that every
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

    private var hasHeader: Bool {
        UnsafeRawBufferPointer(start: base, count: Self.magic.count).elementsEqual(Self.magic)
            && UInt32(littleEndian: base.loadUnaligned(fromByteOffset: Self.versionOffset, as: UInt32.self)) == Self.version
    }

    private func copy(_ index: Int) -> [UInt8] {
        Array(UnsafeRawBufferPointer(start: base + Self.copyOffsets[index], count: Self.copySize))
    }

    /// A copy's 64 bytes: UUID, generation, snapshot, log end, durable position, checkpoint,
    /// 8 reserved bytes, CRC32C of the first 60 bytes (docs/format.md §13).
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
