// Shared test support: a seeded random number generator and temporary directories.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small, fast, seedable generator (SplitMix64). The same seed gives the same sequence on
/// every platform, so a failing test's printed seed reproduces it.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    public private(set) var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` random bytes.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](); out.reserveCapacity(count)
        while out.count < count {
            var word = next()
            for _ in 0..<min(8, count - out.count) { out.append(UInt8(truncatingIfNeeded: word)); word >>= 8 }
        }
        return out
    }
}

/// A fresh temporary directory, removed (with its contents, subdirectories included) by `remove()`.
public struct TemporaryDirectory: Sendable {
    public let path: String

    public init(_ label: String = "yapdb-test") {
        var template = Array("/tmp/\(label)-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in mkdtemp(buffer.baseAddress!) }
        precondition(made != nil, "mkdtemp failed: errno \(errno)")
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `path` joined with `name`.
    public func file(_ name: String) -> String { path + "/" + name }

    /// Removes the directory and everything in it.
    public func remove() {
        guard let dir = opendir(path) else { return }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            let child = path + "/" + name
            if unlink(child) != 0 && (errno == EISDIR || errno == EPERM) {
                TemporaryDirectory(existing: child).remove()
            }
        }
        closedir(dir)
        rmdir(path)
    }

    /// Wraps a directory that already exists (used to remove subdirectories).
    private init(existing path: String) { self.path = path }
}
