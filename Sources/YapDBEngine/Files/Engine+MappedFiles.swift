#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
import YapDBStorage
import YapDBIndex

// Files that shrink under their memory maps (docs/reliability.md, "Files changed by other
// programs").
//
// A read of a page of a memory map past the end of its file is `SIGBUS`, which Swift cannot
// turn into an error. The engine never shrinks a mapped file itself (Engine+SegmentMaps.swift,
// IndexPageStore), but another program can: a restore with `cp` over a live segment, a tool
// that truncates. So before a transaction reads — at most once per `mappedFileCheckInterval`
// — the engine compares the size of every file its current snapshot maps with the length
// mapped (one `fstat` each). A file found shorter has its map revoked (`FileMapping.confirm`):
// no reader touches those bytes again; values are then read with `pread`, which reports the
// missing bytes as `corrupted`, and index pages of that file are `corrupted` too. What no
// check can close is the window between a check and a read: a file truncated after the last
// check, before a read touches it, still stops the process. The `.cached` read mode has no
// maps and no such window; it is the default on Apple's mobile platforms.

/// The CRC32C of `length` bytes at `address`, the page checksum, as a C function pointer for
/// `MappedPages`' checks of each page on its first visit (the storage layer's hardware CRC).
let pageChecksumFunction: PageChecksumFunction = { address, length in
    CRC32C.checksum(UnsafeRawBufferPointer(start: address, count: length))
}

/// When the engine next compares its mapped files' sizes with their maps: a deadline on the
/// monotonic clock, in nanoseconds, that one reader moves forward (compare-and-swap) before it
/// checks, so concurrent readers do not all check at once.
///
/// Threading: one atomic; any thread.
final class MappedFileCheckSchedule: Sendable {
    private let next = Atomic<UInt64>(0)
    let interval: UInt64

    init(interval: Duration) {
        let (seconds, attoseconds) = interval.components
        self.interval = UInt64(clamping: max(0, seconds)) &* 1_000_000_000 &+ UInt64(clamping: max(0, attoseconds) / 1_000_000_000)
    }

    /// Whether a check is due now; true for exactly one caller per interval.
    func claim() -> Bool {
        let now = Self.now()
        let due = next.load(ordering: .relaxed)
        guard now >= due else { return false }
        return next.compareExchange(expected: due, desired: now &+ interval, ordering: .relaxed).exchanged
    }

    /// The monotonic clock, in nanoseconds (a vDSO call on Linux: no system call).
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}

extension Engine {
    /// Compares the size of every file the current snapshot reads through a memory map — log
    /// segments and index files — with the bytes mapped (one `fstat` each), and revokes the
    /// map of any file found shorter, so that no read touches its missing pages (`SIGBUS`).
    /// Runs when a transaction starts, at most once per `EngineOptions.mappedFileCheckInterval`
    /// (`force`: now).
    ///
    /// - Returns: nil when every mapped file is intact (or no check was due); else the error
    ///   naming the first file that shrank (`corrupted`) or could not be sized (`io`). Reads of
    ///   that file then fail with typed errors of their own.
    @discardableResult
    package func confirmMappedFiles(force: Bool = false) -> EngineError? {
        guard force || mappedFileChecks.claim() else { return nil }
        var found: StorageError?
        let segments = published.withLock { $0.segments }
        for segment in segments.segments.values {
            guard let mapping = segment.mapping else { continue }
            do throws(IOFailure) {
                if let size = try mapping.confirm(segment.file), found == nil {
                    found = .corrupted(offset: size, reason: "\(Paths.fileName(of: segment.file.path)): the file is \(size) bytes, shorter than the \(mapping.count) bytes mapped (truncated by another program)")
                }
            } catch {
                if found == nil { found = .io(error) }
            }
        }
        do throws(IndexFileError) { try index.store.view().confirmMappings() } catch {
            if found == nil { found = error.storageError }
        }
        return found.map(EngineError.init)
    }
}
