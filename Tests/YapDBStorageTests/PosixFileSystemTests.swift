#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
import TestSupport
@testable import YapDBStorage

@Suite struct PosixFileSystemTests {
    let fs = PosixFileSystem.shared

    @Test func roundTripOfEveryCall() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var random = SeededRandom(seed: 7)
        let data = random.bytes(10_000)

        let file = try fs.open(dir.file("a"), mode: .createNew)
        try file.write(data, at: 0)
        try file.write([1, 2, 3], at: 20_000)  // extends with a hole
        #expect(try file.size() == 20_003)
        #expect(try file.readExactly(10_000, at: 0) == data)
        #expect(try file.readExactly(10, at: 10_000) == [UInt8](repeating: 0, count: 10))
        #expect(try file.readExactly(3, at: 20_000) == [1, 2, 3])

        var buffer = [UInt8](repeating: 9, count: 100)
        let got = try buffer.withUnsafeMutableBytes { raw throws(IOFailure) in try file.read(into: raw, at: 19_950) }
        #expect(got == 53)  // short only at the end of the file
        #expect(failure { try file.readExactly(10, at: 20_000) } == IOFailure.shortRead(path: dir.file("a")))

        try file.truncate(to: 5)
        #expect(try file.size() == 5)
        #expect(try file.readExactly(5, at: 0) == Array(data.prefix(5)))
        try file.truncate(to: 8)
        #expect(try file.readExactly(8, at: 0) == Array(data.prefix(5)) + [0, 0, 0])
        try file.sync()
        file.close()
        file.close()  // harmless
        #expect(failure { try file.size() }?.errno == EBADF)

        try fs.rename(dir.file("a"), to: dir.file("b"))
        try fs.syncDirectory(dir.path)
        #expect(fs.kind(of: dir.file("a")) == .missing)
        #expect(fs.kind(of: dir.file("b")) == .file)
        #expect(fs.kind(of: dir.path) == .directory)
        #expect(fs.kind(of: "/dev/null") == .other)
        #expect(try fs.open(dir.file("b"), mode: .readOnly).readExactly(8, at: 0) == Array(data.prefix(5)) + [0, 0, 0])

        #expect(mkdir(dir.file("sub"), 0o700) == 0)
        _ = try fs.open(dir.file("c"), mode: .create)
        #expect(try fs.listDirectory(dir.path).sorted() == ["b", "c", "sub"])

        try fs.remove(dir.file("b"))
        #expect(fs.kind(of: dir.file("b")) == .missing)
        #expect(try fs.listDirectory(dir.path).sorted() == ["c", "sub"])
    }

    @Test func renameReplacesTheTarget() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try fs.open(dir.file("old"), mode: .create).write([1], at: 0)
        try fs.open(dir.file("new"), mode: .create).write([2, 2], at: 0)
        try fs.rename(dir.file("new"), to: dir.file("old"))
        #expect(try fs.open(dir.file("old"), mode: .readOnly).readExactly(2, at: 0) == [2, 2])
        #expect(try fs.listDirectory(dir.path) == ["old"])
    }

    @Test func failuresAreTypedWithErrnoOperationAndPath() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let missing = dir.file("missing")
        #expect(failure { try fs.open(missing, mode: .readWrite) } == IOFailure(errno: ENOENT, operation: "open", path: missing))
        #expect(failure { try fs.open(missing, mode: .readOnly) }?.errno == ENOENT)
        #expect(failure { try fs.remove(missing) } == IOFailure(errno: ENOENT, operation: "unlink", path: missing))
        #expect(failure { try fs.rename(missing, to: dir.file("x")) }?.errno == ENOENT)
        #expect(failure { try fs.listDirectory(missing) }?.errno == ENOENT)
        #expect(failure { try fs.syncDirectory(missing) }?.errno == ENOENT)
        #expect(failure { try fs.lock(missing) }?.errno == ENOENT)

        _ = try fs.open(dir.file("f"), mode: .createNew)
        #expect(failure { try fs.open(dir.file("f"), mode: .createNew) }?.errno == EEXIST)
        #expect(failure { try fs.open(dir.path, mode: .readOnly) }?.errno == EISDIR)
        #expect(failure { try fs.open(dir.path, mode: .readWrite) }?.errno == EISDIR)
        #expect(failure { try fs.listDirectory(dir.file("f")) }?.errno == ENOTDIR)

        let readOnly = try fs.open(dir.file("f"), mode: .readOnly)
        #expect(failure { try readOnly.write([1], at: 0) }?.errno == EBADF)
        let writable = try fs.open(dir.file("f"), mode: .readWrite)
        #expect(failure { try writable.write([1], at: -1) }?.errno == EINVAL)
        #expect(failure { try writable.write([1, 2], at: Int64.max) }?.errno != nil)
        #expect(failure { try writable.truncate(to: -1) }?.errno == EINVAL)
        #expect(failure { try writable.readExactly(1, at: -5) }?.errno == EINVAL)
    }

    @Test func filesAreCreatedWithMode0600() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let saved = umask(0)
        defer { umask(saved) }
        _ = try fs.open(dir.file("f"), mode: .create)
        var status = stat()
        #expect(stat(dir.file("f"), &status) == 0)
        #expect(status.st_mode & 0o777 == 0o600)
    }

    @Test func descriptorsAreNeverStandardStreams() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.file("low")
        // With 0, 1 and 2 free, a plain open would return 0; the seam must move it above 2,
        // close-on-exec, and leave 0, 1 and 2 free.
        let outcome = withStandardDescriptorsClosed {
            do {
                let file = try PosixFileSystem.shared.open(path, mode: .create)
                try file.write([42], at: 0)
                let lowStillFree = (0...2).allSatisfy { fcntl($0, F_GETFD) == -1 }
                let descriptor = (file as? PosixFile)?.descriptor ?? -1
                let flags = fcntl(descriptor, F_GETFD)
                let roundTrip = try file.readExactly(1, at: 0) == [42]
                let lock = try PosixFileSystem.shared.lock(path)
                let lockAlsoHigh = (0...2).allSatisfy { fcntl($0, F_GETFD) == -1 }
                lock.unlock()
                file.close()
                return lowStillFree && descriptor > 2 && flags >= 0 && flags & FD_CLOEXEC != 0 && roundTrip && lockAlsoHigh
            } catch {
                return false
            }
        }
        if let outcome { #expect(outcome) }
    }

    @Test func lockIsExclusiveAcrossTwoOpensInOneProcess() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.file("db")
        _ = try fs.open(path, mode: .create)
        let first = try fs.lock(path)
        #expect(failure { try fs.lock(path) } == IOFailure(errno: EWOULDBLOCK, operation: "flock", path: path))
        // A different FileSystem instance is no way around it.
        #expect(failure { try PosixFileSystem().lock(path) }?.errno == EWOULDBLOCK)
        first.unlock()
        first.unlock()  // harmless
        var second: (any FileLock)? = try fs.lock(path)
        #expect(failure { try fs.lock(path) }?.errno == EWOULDBLOCK)
        second = nil  // dropping releases
        #expect(second == nil)
        try fs.lock(path).unlock()
    }

    /// A copy of the lock's descriptor elsewhere — what a child process holds between its fork
    /// and its exec — does not keep the lock after `unlock()`: the lock is released before the
    /// descriptor is closed.
    @Test func unlockReleasesTheLockWhileACopyOfItsDescriptorIsStillOpen() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.file("db")
        _ = try fs.open(path, mode: .create)
        /// This process's descriptors open on `path` (Linux's /proc/self/fd).
        func descriptors() -> Set<Int32> {
            var found: Set<Int32> = []
            for fd in Int32(0)..<Int32(4096) where fcntl(fd, F_GETFD) != -1 {
                var target = [CChar](repeating: 0, count: 4096)
                let n = readlink("/proc/self/fd/\(fd)", &target, target.count - 1)
                if n > 0, String(cString: target) == path { found.insert(fd) }
            }
            return found
        }
        let before = descriptors()
        let lock = try fs.lock(path)
        let lockDescriptors = descriptors().subtracting(before)
        try #require(lockDescriptors.count == 1, "the lock's own descriptor is found")
        let copy = dup(lockDescriptors.first!)
        try #require(copy >= 0)
        defer { close(copy) }
        lock.unlock()
        let again = try fs.lock(path)
        again.unlock()
    }

    @Test func concurrentReadsAndCloseNeverTouchAReusedDescriptor() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let file = try fs.open(dir.file("f"), mode: .create)
        try file.write([UInt8](repeating: 7, count: 4096), at: 0)
        await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<200 {
                        guard let bytes = try? file.readExactly(4096, at: 0) else { return true }
                        if bytes != [UInt8](repeating: 7, count: 4096) { return false }
                    }
                    return true
                }
            }
            group.addTask { file.close(); return true }
            for await ok in group { #expect(ok) }
        }
        #expect(failure { try file.readExactly(1, at: 0) }?.errno == EBADF)
    }
}
