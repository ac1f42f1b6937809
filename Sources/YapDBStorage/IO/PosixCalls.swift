// The system calls PosixFileSystem and PosixFile make where a call can be interrupted or
// transfer less than asked: a seam so tests can script EINTR and short counts (SQLite's
// `xSetSystemCall` does the same for its unix VFS) without an LD_PRELOAD shim.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The system calls behind `PosixFileSystem`'s retry loops: each has the C function's shape
/// and contract (a negative result with `errno` set on failure). `system` is the real calls;
/// a test builds one whose calls fail with `EINTR`, or move fewer bytes than asked, before
/// passing on to the real ones, to exercise the loops that retry and continue them.
///
/// Threading: the closures are called from any thread, concurrently (as the calls they stand
/// for), so they must be `@Sendable`.
package struct PosixCalls: Sendable {
    /// `open(2)`: path, flags, mode → descriptor.
    package var open: @Sendable (String, Int32, mode_t) -> Int32
    /// `pread(2)`: descriptor, buffer, count, offset → bytes read (0 at the end of the file).
    package var pread: @Sendable (Int32, UnsafeMutableRawPointer, Int, off_t) -> Int
    /// `pwrite(2)`: descriptor, bytes, count, offset → bytes written.
    package var pwrite: @Sendable (Int32, UnsafeRawPointer, Int, off_t) -> Int
    /// The data sync of a file: `fdatasync(2)` (Linux) or `fsync(2)` (Darwin's fallback after
    /// `F_FULLFSYNC`, which is not part of the seam).
    package var fileSync: @Sendable (Int32) -> Int32
    /// `fsync(2)` of a directory's descriptor (`PosixFileSystem.syncDirectory`).
    package var directorySync: @Sendable (Int32) -> Int32

    package init(open: @escaping @Sendable (String, Int32, mode_t) -> Int32,
                 pread: @escaping @Sendable (Int32, UnsafeMutableRawPointer, Int, off_t) -> Int,
                 pwrite: @escaping @Sendable (Int32, UnsafeRawPointer, Int, off_t) -> Int,
                 fileSync: @escaping @Sendable (Int32) -> Int32,
                 directorySync: @escaping @Sendable (Int32) -> Int32) {
        self.open = open
        self.pread = pread
        self.pwrite = pwrite
        self.fileSync = fileSync
        self.directorySync = directorySync
    }

    /// The operating system's calls.
    package static let system = PosixCalls(
        open: { path, flags, mode in Posix.open(path, flags, mode) },
        pread: { descriptor, buffer, count, offset in Posix.pread(descriptor, buffer, count, offset) },
        pwrite: { descriptor, bytes, count, offset in Posix.pwrite(descriptor, bytes, count, offset) },
        fileSync: { descriptor in Posix.dataSync(descriptor) },
        directorySync: { descriptor in fsync(descriptor) })
}

extension Posix {
    #if canImport(Glibc)
    static func pread(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int, _ offset: off_t) -> Int {
        Glibc.pread(descriptor, buffer, count, offset)
    }
    static func pwrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int, _ offset: off_t) -> Int {
        Glibc.pwrite(descriptor, bytes, count, offset)
    }
    static func dataSync(_ descriptor: Int32) -> Int32 { fdatasync(descriptor) }
    #elseif canImport(Darwin)
    static func pread(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int, _ offset: off_t) -> Int {
        Darwin.pread(descriptor, buffer, count, offset)
    }
    static func pwrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int, _ offset: off_t) -> Int {
        Darwin.pwrite(descriptor, bytes, count, offset)
    }
    static func dataSync(_ descriptor: Int32) -> Int32 { fsync(descriptor) }
    #endif
}
