// The FileIO seam: the only place the engine touches the operating system.
//
// Everything above this file reads and writes through `FileSystem` and `StorageFile`, so the
// crash and fault tests can swap the real POSIX implementation (`PosixFileSystem`) for the
// in-memory `SimulatedDisk`, which can cut power or fail any call on purpose.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed I/O call: the `errno` it returned and the operation that returned it.
///
/// Failures are values, never traps. The engine maps them onto `YapDatabaseError`
/// (`ENOSPC` → disk full, `EWOULDBLOCK` from the lock → locked, others → `io`).
package struct IOFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// The `errno` value, e.g. `EIO`, `ENOSPC`, `ENOENT`.
    package var errno: Int32
    /// The system call or seam operation that failed: "open", "pread", "pwrite", "fdatasync", …
    package var operation: String
    /// The path the operation was about.
    package var path: String
    /// True when the file ended before the bytes a read needed (no system call failed):
    /// callers that know how long the data should be decide on this, never on the wording.
    package var isShortRead: Bool

    package init(errno: Int32, operation: String, path: String) {
        self.errno = errno
        self.operation = operation
        self.path = path
        self.isShortRead = false
    }

    /// The file ended before `path`'s read got the bytes it needed (reported as `EIO`).
    package static func shortRead(path: String) -> IOFailure {
        var failure = IOFailure(errno: EIO, operation: "short read", path: path)
        failure.isShortRead = true
        return failure
    }

    package var description: String {
        "\(operation)(\(path)) failed: errno \(errno) (\(String(cString: strerror(errno))))"
    }
}

/// How `FileSystem.open` treats a file that does or does not exist.
package enum OpenMode: Sendable, Equatable {
    /// Open an existing file for reading and writing; `ENOENT` if it is missing.
    case readWrite
    /// Open an existing file for reading only; `ENOENT` if it is missing.
    case readOnly
    /// Create the file (mode 0600) if it is missing, then open it for reading and writing.
    case create
    /// Create a new file (mode 0600); `EEXIST` if it is already there.
    case createNew
}

/// What a path names, if anything.
package enum FileKind: Sendable, Equatable {
    case missing
    case file
    case directory
    case other
}

/// One open file. All offsets are absolute; there is no file position.
///
/// Threading: `read` may be called from many threads at once; `write`, `sync` and `truncate`
/// are called by one thread at a time (the engine's writer), possibly concurrently with reads.
package protocol StorageFile: AnyObject, Sendable {
    /// The path the file was opened with.
    var path: String { get }

    /// Reads up to `buffer.count` bytes at `offset` into `buffer`. Returns the number of bytes
    /// read, which is less than `buffer.count` only at the end of the file. `EINTR` is retried.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(IOFailure) -> Int

    /// Writes every byte of `bytes` at `offset`, extending the file if needed. Short writes are
    /// continued; if the call throws, any prefix of `bytes` may have been written.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(IOFailure)

    /// Makes the file's data durable (`fdatasync`). A failure means the data written since the
    /// last successful sync may or may not be on disk, and a later successful sync proves nothing
    /// about it: the caller must treat the file as poisoned.
    func sync() throws(IOFailure)

    /// Sets the file's size to `size` bytes.
    func truncate(to size: Int64) throws(IOFailure)

    /// The file's current size in bytes.
    func size() throws(IOFailure) -> Int64

    /// Closes the file. Later calls fail with `EBADF`. Closing twice is harmless.
    func close()

    /// A read-only view of the file's first `length` bytes (`FileMapping`): a
    /// `mmap(PROT_READ, MAP_SHARED)` on POSIX, a copy of the current image on the simulated
    /// disk. The view outlives `close()`. The caller must not shrink the file below `length`
    /// while the view lives.
    ///
    /// - Throws: `IOFailure` — `EINVAL` (operation "mmap") when `length` is negative or passes
    ///   the file's size, the system's `mmap` errors (`ENOMEM`, `ENODEV`, …), `EBADF` after
    ///   `close()`, "power lost" `EIO` or an injected `.map` fault on the simulated disk.
    func map(length: Int) throws(IOFailure) -> FileMapping

    /// Whether `map(length:)` gives a real memory map of the file (read in place, backed by
    /// the operating system's page cache, not by the process's own memory): true on POSIX,
    /// false on the simulated disk, whose "map" is a heap copy. The engine maps log segments
    /// only where this is true and reads them with `pread` elsewhere, so that the memory of a
    /// copy never grows with the data.
    var mapsInPlace: Bool { get }

    /// Which file this handle reaches (device and inode), or nil where the file system has no
    /// such notion. A `DescriptorCache` compares it on every reopen, so a file replaced behind
    /// the database's back while its descriptor was closed is an error, never other bytes.
    /// - Throws: `IOFailure` from "fstat" (`EBADF` after `close()`, `EIO`).
    func identity() throws(IOFailure) -> FileIdentity?
}

extension StorageFile {
    /// No identity: replacement is not detected.
    package func identity() throws(IOFailure) -> FileIdentity? { nil }
}

/// A lock on a file (exclusive or shared), held while the database is open. Dropping it
/// releases it.
package protocol FileLock: AnyObject, Sendable {
    /// Releases the lock. Harmless to call twice.
    func unlock()
}

/// A directory tree of files: POSIX files or the simulated disk.
package protocol FileSystem: AnyObject, Sendable {
    /// Opens `path` as `mode` says. Files are created with mode 0600 and close-on-exec, and
    /// never receive a descriptor ≤ 2.
    func open(_ path: String, mode: OpenMode) throws(IOFailure) -> any StorageFile

    /// What `path` names right now.
    func kind(of path: String) -> FileKind

    /// The names (not paths) of the entries of directory `path`, in no particular order.
    func listDirectory(_ path: String) throws(IOFailure) -> [String]

    /// Atomically renames `from` to `to`, replacing `to`. Durable only after `syncDirectory`.
    func rename(_ from: String, to: String) throws(IOFailure)

    /// Removes the file at `path`. Durable only after `syncDirectory`.
    func remove(_ path: String) throws(IOFailure)

    /// Makes the directory's entries durable (creations, renames and removals in it).
    func syncDirectory(_ path: String) throws(IOFailure)

    /// Takes a non-blocking lock on `path` (which must exist): exclusive, or with `shared`
    /// one that any number of shared holders may hold at once but no exclusive one. Throws
    /// an `IOFailure` with errno `EWOULDBLOCK` when a holder that conflicts has it.
    func lock(_ path: String, shared: Bool) throws(IOFailure) -> any FileLock

    /// The identity and size of the file `path` names, without opening it (`stat`), or nil
    /// where the file system cannot tell (then callers open the file).
    /// - Throws: `IOFailure` from "stat" (`ENOENT` when nothing has the name, `EACCES`, …).
    func status(of path: String) throws(IOFailure) -> (identity: FileIdentity, size: Int64)?
}

extension FileSystem {
    /// Takes an exclusive, non-blocking lock on `path` (`lock(_:shared:)` with `shared` false).
    package func lock(_ path: String) throws(IOFailure) -> any FileLock {
        try lock(path, shared: false)
    }

    /// Cannot tell: callers open the file.
    package func status(of path: String) throws(IOFailure) -> (identity: FileIdentity, size: Int64)? { nil }
}

extension StorageFile {
    /// Reads exactly `count` bytes at `offset`, or throws `IOFailure` with errno `EIO`
    /// (operation "short read") when the file ends first. `count` must already be checked
    /// against the configured maximums by the caller.
    package func readExactly(_ count: Int, at offset: Int64) throws(IOFailure) -> [UInt8] {
        precondition(count >= 0, "negative read length")
        if count == 0 { return [] }
        var result = [UInt8](repeating: 0, count: count)
        var outcome: Result<Int, IOFailure> = .success(0)
        result.withUnsafeMutableBytes { buffer in
            do throws(IOFailure) { outcome = .success(try read(into: buffer, at: offset)) }
            catch { outcome = .failure(error) }
        }
        if try outcome.get() != count {
            throw IOFailure.shortRead(path: path)
        }
        return result
    }

    /// Writes all of `bytes` at `offset`.
    package func write(_ bytes: [UInt8], at offset: Int64) throws(IOFailure) {
        var failure: IOFailure?
        bytes.withUnsafeBytes { raw in
            do throws(IOFailure) { try write(raw, at: offset) } catch { failure = error }
        }
        if let failure { throw failure }
    }
}

/// Path helpers shared by the engine and the tools.
package enum Paths {
    /// The directory part of `path` ("." when there is none).
    package static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    /// The last component of `path`.
    package static func fileName(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// `directory` joined with `name`.
    package static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
