#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
import TestSupport
import YapDBSimulatedDisk
@testable import YapDBStorage

/// Shared and exclusive locks on both file systems, and `LockFile.acquire` (docs/format.md §1).
@Suite struct LockFileTests {
    /// The two file systems, each with a directory to work in and its cleanup.
    static func fileSystems() throws -> [(fs: any FileSystem, directory: String, cleanup: () -> Void)] {
        let temporary = TemporaryDirectory()
        let disk = SimulatedDisk(seed: 1)
        try disk.mkdir("/db")
        return [(PosixFileSystem.shared, temporary.path, { temporary.remove() }), (disk, "/db", {})]
    }

    @Test func sharedLocksCoexistAndExcludeAnExclusiveOne() throws {
        for (fs, directory, cleanup) in try Self.fileSystems() {
            defer { cleanup() }
            let path = Paths.join(directory, "f")
            try fs.open(path, mode: .create).close()
            let first = try fs.lock(path, shared: true)
            let second = try fs.lock(path, shared: true)
            #expect(failure { try fs.lock(path, shared: false) }?.errno == EWOULDBLOCK, "\(fs)")
            first.unlock()
            #expect(failure { try fs.lock(path, shared: false) }?.errno == EWOULDBLOCK, "one reader is enough")
            second.unlock()
            let exclusive = try fs.lock(path, shared: false)
            #expect(failure { try fs.lock(path, shared: true) }?.errno == EWOULDBLOCK, "\(fs)")
            exclusive.unlock()
            try fs.lock(path, shared: true).unlock()
        }
    }

    @Test func acquireCreatesTheLockFileAndWaitsOnlyAsLongAsAsked() throws {
        for (fs, directory, cleanup) in try Self.fileSystems() {
            defer { cleanup() }
            let main = Paths.join(directory, "db")
            let lock = try #require(try LockFile.acquire(mainPath: main, fileSystem: fs, shared: false))
            #expect(fs.kind(of: main + "-lock") == .file)
            #expect(fs.kind(of: main) == .missing, "nothing but the lock file")
            #expect(throws: StorageError.locked(path: main)) {
                _ = try LockFile.acquire(mainPath: main, fileSystem: fs, shared: true, busyTimeout: .milliseconds(20))
            }
            lock.unlock()
            let readers = try (0..<2).map { _ in try #require(try LockFile.acquire(mainPath: main, fileSystem: fs, shared: true)) }
            #expect(throws: StorageError.locked(path: main)) { _ = try LockFile.acquire(mainPath: main, fileSystem: fs, shared: false) }
            for reader in readers { reader.unlock() }
        }
    }

    @Test func aSharedLockWhereNoLockFileCanBeCreatedIsNone() throws {
        let disk = SimulatedDisk(seed: 1)
        try disk.mkdir("/db")
        disk.inject(Fault(.open, persistent: true, pathContains: "-lock", effect: .error(EROFS)))
        #expect(try LockFile.acquire(mainPath: "/db/main", fileSystem: disk, shared: true) == nil)
        #expect(throws: StorageError.io(IOFailure(errno: EROFS, operation: "open", path: "/db/main-lock"))) {
            _ = try LockFile.acquire(mainPath: "/db/main", fileSystem: disk, shared: false)
        }
        // Something else under the lock file's name is never taken for it.
        try disk.mkdir("/db/other-lock")
        #expect(throws: StorageError.io(IOFailure(errno: EISDIR, operation: "open", path: "/db/other-lock"))) {
            _ = try LockFile.acquire(mainPath: "/db/other", fileSystem: disk, shared: true)
        }
    }
}
