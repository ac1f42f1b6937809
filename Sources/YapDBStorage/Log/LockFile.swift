#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The database's lock: a `flock` on the empty file `NAME-lock` beside the main file
/// (docs/format.md §1, docs/reliability.md "The lock file").
///
/// Every open takes it before it looks at, creates, repairs or removes any other file of the
/// database, and holds it until the database closes: exclusively to write, shared to read only.
/// The file is created when missing and never deleted, so every process locks the same inode
/// (deleting a lock file another process holds would let a third lock a new one).
package enum LockFile {
    /// Waits between attempts: the first, then doubling up to `longestWait`.
    static let firstWait: Duration = .milliseconds(1)
    static let longestWait: Duration = .milliseconds(50)

    /// Takes the lock of the database whose main file is `mainPath`.
    ///
    /// - Parameters:
    ///   - shared: a shared lock (a read-only open) instead of the exclusive one (a writer).
    ///   - busyTimeout: how long to keep trying while another process holds a lock that
    ///     conflicts; `.zero` tries once. Attempts are spaced 1 ms apart at first, doubling up
    ///     to 50 ms.
    /// - Returns: the lock; nil only for a shared lock whose file is missing and cannot be
    ///   created because the directory is read-only (`EROFS`, `EACCES`, `EPERM`): no writer can
    ///   create files there either, so a read-only open goes ahead without one.
    /// - Throws: `locked` when the wait ends with the lock still taken; `io` when the lock file
    ///   cannot be created (`EROFS` for a writer on a read-only volume, `ENOENT` for a missing
    ///   directory) or locked for another reason.
    package static func acquire(mainPath: String, fileSystem fs: any FileSystem, shared: Bool,
                                busyTimeout: Duration = .zero) throws(StorageError) -> (any FileLock)? {
        let path = DatabaseFiles(mainPath: mainPath).lockPath
        do throws(IOFailure) { try ensureExists(path, fs) } catch {
            if shared && cannotCreate(error.errno) { return nil }
            throw .io(error)
        }
        return try waitForLock(path, reporting: mainPath, fileSystem: fs, shared: shared, busyTimeout: busyTimeout)
    }

    /// Takes the writer lock of a database opened with multi-process support: an exclusive
    /// `flock` on its shared-state file `NAME-shm` (docs/format.md §14), which the caller has
    /// created. Held only while a process changes files (a read-write transaction, its open's
    /// recovery, a checkpoint), so processes take turns; the `NAME-lock` lock stays shared.
    /// - Throws: `locked` when `busyTimeout` passes with another process holding it; `io`.
    package static func acquireWriter(mainPath: String, fileSystem fs: any FileSystem,
                                      busyTimeout: Duration) throws(StorageError) -> any FileLock {
        try waitForLock(DatabaseFiles(mainPath: mainPath).sharedStatePath, reporting: mainPath, fileSystem: fs,
                        shared: false, busyTimeout: busyTimeout)
    }

    /// Tries to lock `path` until `busyTimeout` passes (1 ms between the first attempts,
    /// doubling up to 50 ms); `locked(path: reporting)` when it stays taken.
    static func waitForLock(_ path: String, reporting mainPath: String, fileSystem fs: any FileSystem, shared: Bool,
                            busyTimeout: Duration) throws(StorageError) -> any FileLock {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: max(.zero, busyTimeout))
        var wait = firstWait
        while true {
            do throws(IOFailure) {
                return try fs.lock(path, shared: shared)
            } catch {
                guard error.errno == EWOULDBLOCK || error.errno == EAGAIN else { throw .io(error) }
                let left = deadline - clock.now
                guard left > .zero else { throw .locked(path: mainPath) }
                sleep(for: min(wait, left))
                wait = min(wait * 2, longestWait)
            }
        }
    }

    /// Creates the lock file when it is missing (empty, mode 0600). Throws `EISDIR` when
    /// something other than a file has its name.
    static func ensureExists(_ path: String, _ fs: any FileSystem) throws(IOFailure) {
        switch fs.kind(of: path) {
        case .file: return
        case .directory, .other: throw IOFailure(errno: EISDIR, operation: "open", path: path)
        case .missing:
            // `.create` does not fail when another process created the file first.
            try fs.open(path, mode: .create).close()
            try fs.syncDirectory(Paths.directory(of: path))
        }
    }

    /// Errors that say the directory cannot take a new file here.
    static func cannotCreate(_ code: Int32) -> Bool {
        code == EROFS || code == EACCES || code == EPERM
    }

    /// Sleeps for `duration` (a blocking wait: open is synchronous).
    static func sleep(for duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}
