#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
import TestSupport
@testable import YapDBStorage

/// Directory syncs on file systems that cannot do them (docs/reliability.md, "Directory
/// syncs"): ignored as SQLite ignores them; a real failure still throws.
@Suite struct PosixDirectorySyncTests {
    /// A file system whose directory `fsync` fails with `code`.
    static func failing(_ code: Int32) -> PosixFileSystem {
        PosixFileSystem(directoryFsync: { _ in errno = code; return -1 })
    }

    /// Bug: a file system without directory fsync (`EINVAL`) made every open fail.
    @Test(arguments: [EINVAL, ENOTSUP, EACCES, EPERM])
    func aDirectorySyncThatCannotWorkIsIgnored(code: Int32) throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let fs = Self.failing(code)
        try fs.syncDirectory(dir.path)
        let harness = LogHarness(path: dir.file("db"), fs: fs)
        let (opened, _) = try harness.open()
        try LogHarness.commit(opened.writer, [("k", [1, 2, 3])])
        opened.lock?.unlock()
        let (_, state) = try harness.open()
        #expect(state == ["k": [1, 2, 3]])
    }

    @Test func aFailedDirectorySyncStillThrows() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        #expect(throws: IOFailure(errno: EIO, operation: "fsync", path: dir.path)) { try Self.failing(EIO).syncDirectory(dir.path) }
    }
}
