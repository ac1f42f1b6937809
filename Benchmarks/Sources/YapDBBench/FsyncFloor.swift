#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The raw cost of durable writes on this disk, measured in the same run as the engines because
/// fsync latency here swings by 10× with the machine's load: `write` to a plain file that grows
/// (as a log does) then `fdatasync`; and overwriting a file written and synced before, then
/// `fdatasync` (no size or extent change, so the file system journals nothing: how SQLite's
/// reused WAL and LMDB's reused pages commit).
final class FsyncFloor {
    private let appendFD: Int32
    private let overwriteFD: Int32
    private let paths: [String]
    private let buffer: [UInt8]
    private var overwriteOffset: off_t = 0

    /// Creates the files; the overwrite file is written and synced with `overwriteCommits`
    /// slices of `bytesPerCommit` zeros (not timed).
    init(in folder: URL, bytesPerCommit: Int, overwriteCommits: Int = 0) throws {
        paths = ["floor-append.log", "floor-overwrite.dat"].map { folder.appendingPathComponent($0).path }
        appendFD = open(paths[0], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o644)
        overwriteFD = open(paths[1], O_RDWR | O_CREAT | O_TRUNC, 0o644)
        buffer = [UInt8](repeating: 0xA5, count: bytesPerCommit)
        guard appendFD >= 0, overwriteFD >= 0 else { throw BenchError("cannot create the floor files: errno \(errno)") }
        if overwriteCommits > 0 {
            let zeros = [UInt8](repeating: 0, count: overwriteCommits * bytesPerCommit)
            try zeros.withUnsafeBytes { try FsyncFloor.writeAll(overwriteFD, $0) }
            guard fsync(overwriteFD) == 0 else { throw BenchError("fsync failed: errno \(errno)") }
        }
    }

    deinit {
        close(appendFD)
        close(overwriteFD)
        paths.forEach { unlink($0) }
    }

    /// One appended commit: write, then `fdatasync`. Nanoseconds.
    func append() throws -> Double {
        try timed {
            try buffer.withUnsafeBytes { try FsyncFloor.writeAll(appendFD, $0) }
            guard fdatasync(appendFD) == 0 else { throw BenchError("fdatasync failed: errno \(errno)") }
        }
    }

    /// One overwriting commit over the next slice of the pre-written file. Nanoseconds.
    func overwrite() throws -> Double {
        try timed {
            let n = buffer.withUnsafeBytes { pwrite(overwriteFD, $0.baseAddress!, $0.count, overwriteOffset) }
            guard n == buffer.count else { throw BenchError("pwrite failed: errno \(errno)") }
            guard fdatasync(overwriteFD) == 0 else { throw BenchError("fdatasync failed: errno \(errno)") }
            overwriteOffset += off_t(n)
        }
    }

    /// Appends `bytes` in 1 MiB writes to a new file, then one `fdatasync`. Nanoseconds.
    static func bulk(in folder: URL, bytes: Int64) throws -> Double {
        let path = folder.appendingPathComponent("floor-bulk.log").path
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o644)
        guard fd >= 0 else { throw BenchError("cannot create \(path): errno \(errno)") }
        defer { close(fd); unlink(path) }
        let chunk = [UInt8](repeating: 0x5A, count: 1 << 20)
        return try timed {
            var left = bytes
            while left > 0 {
                let n = Int(min(left, Int64(chunk.count)))
                try chunk.withUnsafeBytes { try writeAll(fd, UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
                left -= Int64(n)
            }
            guard fdatasync(fd) == 0 else { throw BenchError("fdatasync failed: errno \(errno)") }
        }
    }

    private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            guard n > 0 else { throw BenchError("write failed: errno \(errno)") }
            offset += n
        }
    }
}
