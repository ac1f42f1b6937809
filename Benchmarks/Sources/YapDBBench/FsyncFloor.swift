#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The raw cost of durable appends on this disk: `write` of the bytes to a plain file that grows
/// (as a log does), then `fdatasync`. Measured in the same run as the engines, because fsync
/// latency here swings by 10× with the machine's load.
enum FsyncFloor {
    /// Appends `commits` batches of `bytesPerCommit`, each followed by `fdatasync`; returns each
    /// commit's time in ns.
    static func commits(in folder: URL, count commits: Int, bytesPerCommit: Int) throws -> [Double] {
        try withFile(in: folder) { fd in
            let buffer = [UInt8](repeating: 0xA5, count: bytesPerCommit)
            var times: [Double] = []
            times.reserveCapacity(commits)
            for _ in 0..<commits {
                times.append(try timed {
                    try buffer.withUnsafeBytes { try writeAll(fd, $0) }
                    guard fdatasync(fd) == 0 else { throw BenchError("fdatasync failed: errno \(errno)") }
                })
            }
            return times
        }
    }

    /// Appends `bytes` in 1 MiB writes, then one `fdatasync`; returns the time in ns.
    static func bulk(in folder: URL, bytes: Int64) throws -> Double {
        try withFile(in: folder) { fd in
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
    }

    private static func withFile<R>(in folder: URL, _ body: (Int32) throws -> R) throws -> R {
        let path = folder.appendingPathComponent("floor.log").path
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o644)
        guard fd >= 0 else { throw BenchError("cannot create \(path): errno \(errno)") }
        defer { close(fd); unlink(path) }
        return try body(fd)
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
