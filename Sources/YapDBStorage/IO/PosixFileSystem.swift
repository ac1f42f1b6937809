// The real FileIO seam: POSIX system calls on Linux (Glibc) and Darwin.
//
// Every call retries EINTR, every failure is an `IOFailure` carrying errno, the system call
// and the path, and nothing here traps on an I/O error.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The operating system's file system.
///
/// Stateless apart from its immutable table of system calls (`PosixCalls`, the real ones
/// except in tests): every call goes straight to the kernel, so one instance (`shared`) serves
/// the whole process. Threading: every method may be called from any thread at any time.
package final class PosixFileSystem: FileSystem {
    /// The process-wide instance.
    package static let shared = PosixFileSystem()

    /// The system calls that can be interrupted or transfer less than asked (`PosixCalls`):
    /// the real ones except in tests, which script `EINTR` and short counts through them.
    let calls: PosixCalls

    /// - Parameter calls: the system calls to make; `.system` except in tests.
    package init(calls: PosixCalls = .system) {
        self.calls = calls
    }

    /// A file system whose directory syncs call `directoryFsync` on the directory's
    /// descriptor (tests substitute a failing one to reach the error policy of
    /// `syncDirectory`); every other call is the system's.
    package convenience init(directoryFsync: @escaping @Sendable (Int32) -> Int32) {
        var calls = PosixCalls.system
        calls.directorySync = directoryFsync
        self.init(calls: calls)
    }

    /// Where `syncDirectory` reports the errors it ignores (the YapDB layer logs them).
    static let ignoredErrorLog = Mutex<(@Sendable (IOFailure) -> Void)?>(nil)

    /// Sets where `syncDirectory` reports the errors it ignores, unless a log is set already.
    package static func reportIgnoredErrors(to log: @escaping @Sendable (IOFailure) -> Void) {
        ignoredErrorLog.withLock { current in
            if current == nil { current = log }
        }
    }

    /// Opens `path` with `O_CLOEXEC` (mode 0600 when it creates) and returns a descriptor > 2.
    ///
    /// - Throws: `IOFailure` from "open" (`ENOENT` for a missing file in `.readWrite` or
    ///   `.readOnly`, `EEXIST` for an existing one in `.createNew`, `EISDIR` for a directory,
    ///   `EACCES`, …), from "fstat", or from "fcntl" when moving a low descriptor fails.
    package func open(_ path: String, mode: OpenMode) throws(IOFailure) -> any StorageFile {
        var flags = O_CLOEXEC
        switch mode {
        case .readWrite: flags |= O_RDWR
        case .readOnly: flags |= O_RDONLY
        case .create: flags |= O_RDWR | O_CREAT
        case .createNew: flags |= O_RDWR | O_CREAT | O_EXCL
        }
        let descriptor = try Posix.openDescriptor(path, flags: flags, operation: "open", calls: calls)
        // O_RDONLY opens a directory without complaint; the seam only hands out regular files.
        var status = stat()
        var failure: IOFailure?
        if Posix.retrying({ fstat(descriptor, &status) }) != 0 {
            failure = IOFailure(errno: errno, operation: "fstat", path: path)
        } else if status.st_mode & S_IFMT == S_IFDIR {
            failure = IOFailure(errno: EISDIR, operation: "open", path: path)
        }
        if let failure {
            _ = Posix.close(descriptor)
            throw failure
        }
        return PosixFile(path: path, descriptor: descriptor, calls: calls)
    }

    /// What `path` names, by `stat` (following symbolic links). A path that `stat` cannot
    /// examine for a reason other than `ENOENT`/`ENOTDIR` (e.g. `EACCES`) reports `.other`,
    /// so a caller never mistakes it for a free name.
    package func kind(of path: String) -> FileKind {
        var status = stat()
        if Posix.retrying({ stat(path, &status) }) != 0 {
            return errno == ENOENT || errno == ENOTDIR ? .missing : .other
        }
        switch status.st_mode & S_IFMT {
        case S_IFREG: return .file
        case S_IFDIR: return .directory
        default: return .other
        }
    }

    /// The entry names of directory `path` (without "." and ".."), via `opendir`/`readdir`.
    ///
    /// - Throws: `IOFailure` from "opendir" (`ENOENT`, `ENOTDIR`, `EACCES`, …) or "readdir".
    package func listDirectory(_ path: String) throws(IOFailure) -> [String] {
        // opendir sets close-on-exec on its descriptor on both glibc and Darwin. (Its pointer
        // type differs between the two, hence the inference.)
        var handle = opendir(path)
        while handle == nil && errno == EINTR { handle = opendir(path) }
        guard let directory = handle else {
            throw IOFailure(errno: errno, operation: "opendir", path: path)
        }
        defer { closedir(directory) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(directory) else {
                if errno != 0 { throw IOFailure(errno: errno, operation: "readdir", path: path) }
                return names
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
    }

    /// Atomically renames `from` to `to` with `rename(2)`, replacing `to`.
    ///
    /// - Throws: `IOFailure` from "rename" (`ENOENT`, `EXDEV`, `EISDIR`, …) whose `path` is
    ///   "from -> to".
    package func rename(_ from: String, to: String) throws(IOFailure) {
        if Posix.retrying({ Posix.rename(from, to) }) != 0 {
            throw IOFailure(errno: errno, operation: "rename", path: from + " -> " + to)
        }
    }

    /// Removes the file at `path` with `unlink(2)`.
    ///
    /// - Throws: `IOFailure` from "unlink" (`ENOENT`, `EISDIR`, `EACCES`, …).
    package func remove(_ path: String) throws(IOFailure) {
        if Posix.retrying({ unlink(path) }) != 0 {
            throw IOFailure(errno: errno, operation: "unlink", path: path)
        }
    }

    /// Opens the directory `O_RDONLY|O_DIRECTORY`, `fsync`s it and closes it.
    ///
    /// Some file systems cannot sync a directory (`EINVAL`, `ENOTSUP`/`EOPNOTSUPP`), and a
    /// directory the process may write but not read cannot be opened for one (`EACCES`,
    /// `EPERM`). Those errors are reported to `ignoredErrorLog` and otherwise ignored, as
    /// SQLite's unix VFS does: the names may then not survive a power cut, which is all such a
    /// file system offers.
    ///
    /// - Throws: `IOFailure` from "open" (`ENOENT`, `ENOTDIR`, …) or "fsync" (`EIO`, …).
    package func syncDirectory(_ path: String) throws(IOFailure) {
        let descriptor: Int32
        do throws(IOFailure) {
            descriptor = try Posix.openDescriptor(path, flags: O_RDONLY | O_DIRECTORY | O_CLOEXEC, operation: "open", calls: calls)
        } catch {
            if Self.directorySyncCannotWork(error.errno) { return Self.reportIgnored(error) }
            throw error
        }
        defer { _ = Posix.close(descriptor) }
        let sync = calls.directorySync
        if Posix.retrying({ sync(descriptor) }) != 0 {
            let failure = IOFailure(errno: errno, operation: "fsync", path: path)
            if Self.directorySyncCannotWork(failure.errno) { return Self.reportIgnored(failure) }
            throw failure
        }
    }

    /// Errors that say a directory sync is impossible here, not that it failed.
    static func directorySyncCannotWork(_ code: Int32) -> Bool {
        code == EINVAL || code == ENOTSUP || code == EOPNOTSUPP || code == EACCES || code == EPERM
    }

    private static func reportIgnored(_ failure: IOFailure) {
        let log = ignoredErrorLog.withLock { $0 }
        log?(failure)
    }

    /// The device, inode and size `stat(2)` reports for `path` (following symbolic links).
    ///
    /// - Throws: `IOFailure` from "stat" (`ENOENT`, `ENOTDIR`, `EACCES`, …).
    package func status(of path: String) throws(IOFailure) -> (identity: FileIdentity, size: Int64)? {
        var status = stat()
        if Posix.retrying({ stat(path, &status) }) != 0 {
            throw IOFailure(errno: errno, operation: "stat", path: path)
        }
        return (Posix.identity(status), Int64(status.st_size))
    }

    /// Opens a descriptor of its own on `path` (which must exist; read-only, so a file on a
    /// read-only volume or in a read-only directory can be locked) and takes
    /// `flock(LOCK_EX|LOCK_NB)` on it, or `flock(LOCK_SH|LOCK_NB)` with `shared`. Two locks on
    /// the same file conflict even inside one process, because each has its own open file
    /// description.
    ///
    /// - Throws: `IOFailure(errno: EWOULDBLOCK, operation: "flock", path:)` when someone else
    ///   holds a lock that conflicts; other `IOFailure`s from "open" or "flock".
    package func lock(_ path: String, shared: Bool) throws(IOFailure) -> any FileLock {
        let descriptor = try Posix.openDescriptor(path, flags: O_RDONLY | O_CLOEXEC, operation: "open", calls: calls)
        if Posix.retrying({ flock(descriptor, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) }) != 0 {
            let code = errno
            _ = Posix.close(descriptor)
            throw IOFailure(errno: code == EAGAIN ? EWOULDBLOCK : code, operation: "flock", path: path)
        }
        return PosixFileLock(descriptor: descriptor)
    }
}

/// A lock held by an open descriptor, released with `LOCK_UN` and the descriptor closed.
///
/// Sendable: the only state is the descriptor in an `Atomic`, swapped to -1 exactly once.
package final class PosixFileLock: FileLock {
    private let descriptor: Atomic<Int32>

    init(descriptor: Int32) { self.descriptor = Atomic(descriptor) }

    /// Releases the lock, then closes the descriptor. Harmless to call twice; thread-safe.
    /// The explicit `LOCK_UN` matters: a `flock` belongs to the open file description, and a
    /// child process this process is starting holds a copy of every descriptor until its
    /// `exec` closes the `O_CLOEXEC` ones — closing ours alone would leave the lock held for
    /// that moment, and a reopen right after `close()` would find it taken.
    package func unlock() {
        let old = descriptor.exchange(-1, ordering: .acquiringAndReleasing)
        if old >= 0 {
            _ = Posix.retrying { flock(old, LOCK_UN) }
            _ = Posix.close(old)
        }
    }

    deinit { unlock() }
}

/// Small wrappers shared by the POSIX types.
enum Posix {
    /// Runs `call` until it stops failing with `EINTR`; returns its last result.
    @inline(__always)
    static func retrying<T: BinaryInteger>(_ call: () -> T) -> T {
        while true {
            let result = call()
            if result >= 0 || errno != EINTR { return result }
        }
    }

    /// `open(2)` with EINTR retried and the result moved above 2 with `F_DUPFD_CLOEXEC`,
    /// so a stray write to stdout or stderr can never land in a database file.
    static func openDescriptor(_ path: String, flags: Int32, operation: String, calls: PosixCalls) throws(IOFailure) -> Int32 {
        let descriptor = retrying { calls.open(path, flags, 0o600) }
        if descriptor < 0 { throw IOFailure(errno: errno, operation: operation, path: path) }
        if descriptor > 2 { return descriptor }
        let moved = retrying { fcntl(descriptor, F_DUPFD_CLOEXEC, Int32(3)) }
        let code = errno
        _ = Posix.close(descriptor)
        if moved < 0 { throw IOFailure(errno: code, operation: "fcntl(F_DUPFD_CLOEXEC)", path: path) }
        return moved
    }

    /// The device and inode of a `stat` result.
    static func identity(_ status: stat) -> FileIdentity {
        FileIdentity(device: UInt64(truncatingIfNeeded: status.st_dev), inode: UInt64(truncatingIfNeeded: status.st_ino))
    }

    // Module-qualified forwards: inside types that declare `open`, `close` or `rename` methods,
    // the bare C names resolve to those methods.
    #if canImport(Glibc)
    static func open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { Glibc.open(path, flags, mode) }
    static func close(_ descriptor: Int32) -> Int32 { Glibc.close(descriptor) }
    static func rename(_ from: String, _ to: String) -> Int32 { Glibc.rename(from, to) }
    #elseif canImport(Darwin)
    static func open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { Darwin.open(path, flags, mode) }
    static func close(_ descriptor: Int32) -> Int32 { Darwin.close(descriptor) }
    static func rename(_ from: String, _ to: String) -> Int32 { Darwin.rename(from, to) }
    #endif
}

/// One open POSIX file: a descriptor > 2, opened with `O_CLOEXEC`.
///
/// Sendable: `descriptor` and `path` never change after `init`. The only mutable state is
/// `state`, an `Atomic` holding the number of calls in flight plus a "closing" and a "closed"
/// bit, so `close()` never closes the descriptor under a call that is still using it (the
/// descriptor is closed by whichever of `close()` and the last call in flight finishes last,
/// and never reused by a later call, which sees "closing" and throws `EBADF`).
///
/// Threading: as `StorageFile` says — concurrent reads, one writer at a time alongside them.
package final class PosixFile: StorageFile {
    package let path: String
    /// The descriptor (internal so tests can check it is above 2 and close-on-exec).
    let descriptor: Int32
    /// The system calls `read`, `write` and `sync` make (`PosixCalls`).
    private let calls: PosixCalls
    private let state = Atomic<UInt64>(0)

    private static let closing: UInt64 = 1 << 63
    private static let closed: UInt64 = 1 << 62

    init(path: String, descriptor: Int32, calls: PosixCalls = .system) {
        self.path = path
        self.descriptor = descriptor
        self.calls = calls
    }

    deinit {
        if state.load(ordering: .acquiring) & Self.closed == 0 { _ = Posix.close(descriptor) }
    }

    /// Reads with `pread` until `buffer` is full or the file ends (a `pread` that returns 0:
    /// the result is then shorter than `buffer`); `EINTR` is retried and a short count is
    /// continued from where it stopped.
    ///
    /// - Throws: `IOFailure` from "pread" (`EIO`, `EINVAL` for a negative or overflowing
    ///   offset, `EBADF` after `close()`).
    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(IOFailure) -> Int {
        try enter("pread")
        defer { leave() }
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        var done = 0
        while done < buffer.count {
            let position = try self.position(offset, plus: done, operation: "pread")
            let count = calls.pread(descriptor, base + done, buffer.count - done, position)
            if count < 0 {
                if errno == EINTR { continue }
                throw IOFailure(errno: errno, operation: "pread", path: path)
            }
            if count == 0 { break }
            done += count
        }
        return done
    }

    /// Writes all of `bytes` with `pwrite`, continuing short writes; `EINTR` is retried.
    ///
    /// - Throws: `IOFailure` from "pwrite" (`ENOSPC`, `EFBIG`, `EIO`, `EIO` when `pwrite`
    ///   returns 0, `EBADF` on a read-only file or after `close()`). Any prefix may have landed.
    package func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(IOFailure) {
        try enter("pwrite")
        defer { leave() }
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        var done = 0
        while done < bytes.count {
            let position = try self.position(offset, plus: done, operation: "pwrite")
            let count = calls.pwrite(descriptor, base + done, bytes.count - done, position)
            if count < 0 {
                if errno == EINTR { continue }
                throw IOFailure(errno: errno, operation: "pwrite", path: path)
            }
            if count == 0 { throw IOFailure(errno: EIO, operation: "pwrite", path: path) }
            done += count
        }
    }

    /// `fdatasync` (on Darwin `fcntl(F_FULLFSYNC)`, falling back to `fsync` where the file
    /// system does not support it).
    ///
    /// - Throws: `IOFailure` from "fdatasync"/"fsync" (`EIO`, `ENOSPC`, …). Never retry a
    ///   failed sync as proof of anything (see `StorageFile.sync`).
    package func sync() throws(IOFailure) {
        try enter("fdatasync")
        defer { leave() }
        #if canImport(Darwin)
        if Posix.retrying({ fcntl(descriptor, F_FULLFSYNC) }) == 0 { return }
        let sync = calls.fileSync
        if Posix.retrying({ sync(descriptor) }) != 0 {
            throw IOFailure(errno: errno, operation: "fsync", path: path)
        }
        #else
        let sync = calls.fileSync
        if Posix.retrying({ sync(descriptor) }) != 0 {
            throw IOFailure(errno: errno, operation: "fdatasync", path: path)
        }
        #endif
    }

    /// `ftruncate` to `size`.
    ///
    /// - Throws: `IOFailure` from "ftruncate" (`EINVAL` for a negative size, `EFBIG`, `EIO`,
    ///   `EBADF`).
    package func truncate(to size: Int64) throws(IOFailure) {
        try enter("ftruncate")
        defer { leave() }
        guard size >= 0, let length = off_t(exactly: size) else {
            throw IOFailure(errno: EINVAL, operation: "ftruncate", path: path)
        }
        if Posix.retrying({ ftruncate(descriptor, length) }) != 0 {
            throw IOFailure(errno: errno, operation: "ftruncate", path: path)
        }
    }

    /// The size reported by `fstat`.
    ///
    /// - Throws: `IOFailure` from "fstat" (`EIO`, `EBADF` after `close()`).
    package func size() throws(IOFailure) -> Int64 {
        try enter("fstat")
        defer { leave() }
        var status = stat()
        if Posix.retrying({ fstat(descriptor, &status) }) != 0 {
            throw IOFailure(errno: errno, operation: "fstat", path: path)
        }
        return Int64(status.st_size)
    }

    /// Closes the descriptor (once the calls in flight finish). Later calls throw `EBADF`.
    /// Harmless to call twice; `EINTR` from `close` is not retried (the descriptor is gone).
    package func close() {
        let old = state.bitwiseOr(Self.closing, ordering: .acquiringAndReleasing).oldValue
        if old & Self.closing == 0 && old & ~(Self.closing | Self.closed) == 0 { finishClose() }
    }

    /// The device and inode `fstat` reports.
    ///
    /// - Throws: `IOFailure` from "fstat" (`EIO`, `EBADF` after `close()`).
    package func identity() throws(IOFailure) -> FileIdentity? {
        try enter("fstat")
        defer { leave() }
        var status = stat()
        if Posix.retrying({ fstat(descriptor, &status) }) != 0 {
            throw IOFailure(errno: errno, operation: "fstat", path: path)
        }
        return Posix.identity(status)
    }

    /// True: `map(length:)` is a real `mmap`.
    package var mapsInPlace: Bool { true }

    /// Maps the first `length` bytes with `mmap(PROT_READ, MAP_SHARED)` and advises the kernel
    /// that reads are random (`MADV_RANDOM`: index pages are visited by tree walks and values
    /// by point reads, not in order, so read-ahead would only waste memory). A zero `length` gives an empty view
    /// without a system call. The map keeps its own reference to the file, so it stays valid
    /// after `close()`.
    ///
    /// - Throws: `IOFailure` — `EINVAL` ("mmap") for a negative length or one past the file's
    ///   size (a map past the end would fault on access), errors of "fstat", and of "mmap"
    ///   (`ENOMEM`, `ENODEV` on a file system that cannot map, `EACCES`, `EBADF` after
    ///   `close()`).
    package func map(length: Int) throws(IOFailure) -> FileMapping {
        try enter("mmap")
        defer { leave() }
        var status = stat()
        if Posix.retrying({ fstat(descriptor, &status) }) != 0 {
            throw IOFailure(errno: errno, operation: "fstat", path: path)
        }
        guard length >= 0, Int64(length) <= Int64(status.st_size) else {
            throw IOFailure(errno: EINVAL, operation: "mmap", path: path)
        }
        if length == 0 { return FileMapping.copy(of: UnsafeRawBufferPointer(start: nil, count: 0), path: path) }
        guard let base = mmap(nil, length, PROT_READ, MAP_SHARED, descriptor, 0), base != MAP_FAILED else {
            throw IOFailure(errno: errno, operation: "mmap", path: path)
        }
        _ = madvise(base, length, MADV_RANDOM)
        return FileMapping(bytes: UnsafeRawBufferPointer(start: base, count: length), backing: .memoryMap, path: path)
    }

    // MARK: - Calls in flight

    private func enter(_ operation: String) throws(IOFailure) {
        var current = state.load(ordering: .relaxed)
        while true {
            if current & Self.closing != 0 { throw IOFailure(errno: EBADF, operation: operation, path: path) }
            let (exchanged, original) = state.compareExchange(
                expected: current, desired: current + 1, ordering: .acquiringAndReleasing)
            if exchanged { return }
            current = original
        }
    }

    private func leave() {
        if state.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == Self.closing { finishClose() }
    }

    private func finishClose() {
        let won = state.compareExchange(
            expected: Self.closing, desired: Self.closing | Self.closed, ordering: .acquiringAndReleasing).exchanged
        if won { _ = Posix.close(descriptor) }
    }

    /// `offset + done` as an `off_t`, or `EINVAL` when negative or overflowing.
    private func position(_ offset: Int64, plus done: Int, operation: String) throws(IOFailure) -> off_t {
        let (sum, overflow) = offset.addingReportingOverflow(Int64(done))
        guard offset >= 0, !overflow, let position = off_t(exactly: sum) else {
            throw IOFailure(errno: EINVAL, operation: operation, path: path)
        }
        return position
    }
}
