// Read-only views of a file's bytes for the index page reader and the engine's value reads:
// a memory map on POSIX, a copy on the simulated disk. Part of the FileIO seam (FileIO.swift).

import CYapDBSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The first `count` bytes of a file, readable in place until the object is released.
///
/// Made by `StorageFile.map(length:)`. On POSIX it is a `mmap(PROT_READ, MAP_SHARED)` region,
/// unmapped in `deinit`; on the simulated disk (and the default implementation) it is a heap
/// copy of the file's bytes, freed in `deinit`. Whoever reads `bytes` must keep the object
/// alive for as long as it uses the pointer: reference counting is what keeps a mapping valid
/// while any snapshot can still reach it.
///
/// The caller must never shrink the file below `count` while the mapping lives (a read of a
/// truncated page of a real map is `SIGBUS`); the index keeps that rule by mapping a file only
/// up to the synced length a published root record vouches for, below which no writer ever
/// truncates (IndexPageStore), and the engine by mapping a log segment only whole once sealed
/// or up to its synced length while active (Engine+SegmentMaps.swift). The engine maps
/// segments only where `StorageFile.mapsInPlace` is true, never as a heap copy.
///
/// Sendable (`@unchecked`): every stored property is a `let` set in `init`; the memory is
/// never written through this object, so concurrent reads from any thread are safe.
package final class FileMapping: @unchecked Sendable {
    /// How the bytes are held, which decides how `deinit` releases them.
    package enum Backing: Sendable, Equatable {
        /// A `mmap` region: released with `munmap`.
        case memoryMap
        /// A heap copy: released with `deallocate`.
        case copy
    }

    /// The mapped bytes; valid while this object is alive.
    package let bytes: UnsafeRawBufferPointer
    /// How the bytes are held.
    package let backing: Backing
    /// The path of the file the bytes came from (for error messages).
    package let path: String
    /// Set once the file is found shorter than `count` (another program truncated it:
    /// `confirm(_:)`). Readers test it before touching the bytes and read with `pread`
    /// instead, which reports the missing bytes as a typed error rather than `SIGBUS`. One word
    /// that every reader of this mapping shares, read with a relaxed load; a heap copy (which
    /// cannot fault) has none, and points readers at `neverRevoked`.
    private let revokedWord: UnsafeMutablePointer<Atomic<Bool>>?

    /// Takes ownership of a `mmap` region (`bytes`) or of a heap allocation made with
    /// `UnsafeMutableRawPointer.allocate`.
    init(bytes: UnsafeRawBufferPointer, backing: Backing, path: String) {
        self.bytes = bytes
        self.backing = backing
        self.path = path
        if backing == .memoryMap {
            let word = UnsafeMutablePointer<Atomic<Bool>>.allocate(capacity: 1)
            word.initialize(to: Atomic(false))
            revokedWord = word
        } else {
            revokedWord = nil
        }
    }

    /// The flag of every mapping that cannot be revoked (heap copies): always false.
    /// `nonisolated(unsafe)`: written once, by its initializer; only ever read after.
    nonisolated(unsafe) private static let neverRevoked: UnsafeMutablePointer<Atomic<Bool>> = {
        let word = UnsafeMutablePointer<Atomic<Bool>>.allocate(capacity: 1)
        word.initialize(to: Atomic(false))
        return word
    }()

    /// Whether the mapping was revoked: its file shrank below `count`, so its bytes must not
    /// be touched (a read of a page past the end of a mapped file is `SIGBUS`).
    @inline(__always)
    package var isRevoked: Bool { revokedWord?[0].load(ordering: .relaxed) ?? false }

    /// The revocation flag itself, for a reader that keeps a plain pointer instead of this
    /// object (valid while this object lives).
    package var revocationFlag: UnsafePointer<Atomic<Bool>> { UnsafePointer(revokedWord ?? Self.neverRevoked) }

    /// Checks, with one `fstat`, that `file` (the file these bytes map) is still at least
    /// `count` bytes long; when it is not, revokes the mapping for every reader and returns
    /// the file's size. Nil: intact (or a heap copy, which cannot fault).
    /// - Throws: the `IOFailure` of sizing the file.
    package func confirm(_ file: any StorageFile) throws(IOFailure) -> Int64? {
        guard let revokedWord else { return nil }
        let size = try file.size()
        guard size < Int64(count) else { return nil }
        revokedWord[0].store(true, ordering: .relaxed)
        return size
    }

    /// Starts loading the `length` bytes at `offset` into the CPU caches (a hint for a read
    /// soon after; a range outside the bytes is ignored).
    package func prefetch(offset: Int, length: Int) {
        guard offset >= 0, length > 0, offset <= bytes.count, length <= bytes.count - offset,
              let start = bytes.baseAddress else { return }
        yapdb_prefetch(start + offset, length)
    }

    /// A heap copy of `source` (an empty one when `source` is empty).
    package static func copy(of source: UnsafeRawBufferPointer, path: String) -> FileMapping {
        let memory = UnsafeMutableRawPointer.allocate(byteCount: max(1, source.count), alignment: 16)
        if let base = source.baseAddress, source.count > 0 {
            memory.copyMemory(from: base, byteCount: source.count)
        }
        return FileMapping(bytes: UnsafeRawBufferPointer(start: memory, count: source.count), backing: .copy, path: path)
    }

    /// The number of bytes.
    package var count: Int { bytes.count }

    deinit {
        if let revokedWord {
            revokedWord.deinitialize(count: 1)
            revokedWord.deallocate()
        }
        guard let base = bytes.baseAddress else { return }
        switch backing {
        case .memoryMap: _ = munmap(UnsafeMutableRawPointer(mutating: base), bytes.count)
        case .copy: UnsafeMutableRawPointer(mutating: base).deallocate()
        }
    }
}

/// Asks the CPU to start loading the `length` bytes at an address into its caches, one hint
/// per 64-byte line: a hint that never faults and changes no result. A C function pointer, for
/// the layers that take a hint function (the index layer's `MemoryHint`) without importing C.
package let memoryPrefetchHint: @convention(c) (UnsafeRawPointer?, Int) -> Void = { address, length in
    if let address { yapdb_prefetch(address, length) }
}
