#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
import TestSupport
@testable import YapDBStorage

/// The bounded descriptor cache (reliability finding F14): files read on demand are reopened
/// transparently, never more than the limit stay open idle, and a file replaced or removed
/// while its descriptor was closed is an error, never other bytes.
@Suite struct DescriptorCacheTests {
    /// `count` files of 4 KiB, file `i` filled with byte `i`.
    static func files(_ count: Int, in directory: TemporaryDirectory) throws -> [String] {
        try (0..<count).map { i in
            let path = directory.file("f\(i)")
            try write(UInt8(i), to: path)
            return path
        }
    }

    static func write(_ byte: UInt8, to path: String) throws {
        let file = try PosixFileSystem.shared.open(path, mode: .create)
        try file.write([UInt8](repeating: byte, count: 4096), at: 0)
        file.close()
    }

    @Test func manyFilesAreReadThroughAFewDescriptors() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let paths = try Self.files(40, in: directory)
        let cache = DescriptorCache(fileSystem: PosixFileSystem.shared, limit: 3)
        let files = try paths.map { try cache.open($0) }
        #expect(cache.counts.open <= 3)
        for round in 0..<3 {
            for (i, file) in files.enumerated() {
                #expect(try file.readExactly(16, at: Int64(round * 100)) == [UInt8](repeating: UInt8(i), count: 16))
                #expect(try file.size() == 4096)
            }
        }
        #expect(cache.counts.open <= 3 && cache.counts.reopens >= 100)
        for file in files { file.close() }
        #expect(cache.counts.open == 0)
        #expect(throws: IOFailure.self) { _ = try files[0].readExactly(1, at: 0) }
    }

    /// A map made through the cache stays readable after its descriptor is closed.
    @Test func aMapOutlivesItsDescriptor() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let paths = try Self.files(4, in: directory)
        let cache = DescriptorCache(fileSystem: PosixFileSystem.shared, limit: 1)
        let files = try paths.map { try cache.open($0) }
        let mapping = try files[0].map(length: 4096)
        for file in files.dropFirst() { _ = try file.readExactly(1, at: 0) }
        #expect(cache.counts.open == 1)
        #expect(mapping.bytes.allSatisfy { $0 == 0 })
        #expect(try mapping.confirm(files[0]) == nil, "the size check needs no descriptor")
    }

    @Test func aFileReplacedWhileClosedIsAnErrorNotOtherBytes() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let paths = try Self.files(3, in: directory)
        let cache = DescriptorCache(fileSystem: PosixFileSystem.shared, limit: 1)
        let files = try paths.map { try cache.open($0) }
        _ = try files[2].readExactly(1, at: 0)   // files[0] is closed now
        try Self.write(9, to: paths[0] + ".new")
        #expect(rename(paths[0] + ".new", paths[0]) == 0)
        #expect { _ = try files[0].readExactly(16, at: 0) } throws: { ($0 as? IOFailure)?.errno == ESTALE }
        #expect { _ = try files[0].size() } throws: { ($0 as? IOFailure)?.errno == ESTALE }
        // Removed while closed: the open's own error.
        #expect(unlink(paths[1]) == 0)
        #expect { _ = try files[1].readExactly(16, at: 0) } throws: { ($0 as? IOFailure)?.errno == ENOENT }
    }

    /// `keepOpen(path:)` before a removal keeps the file readable for those still holding it,
    /// however many other files are read meanwhile.
    @Test func aPinnedFileStaysReadableAfterItsRemoval() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let paths = try Self.files(6, in: directory)
        let cache = DescriptorCache(fileSystem: PosixFileSystem.shared, limit: 2)
        let files = try paths.map { try cache.open($0) }
        cache.keepOpen(path: paths[0])
        #expect(unlink(paths[0]) == 0)
        for file in files.dropFirst() { _ = try file.readExactly(1, at: 0) }
        #expect(try files[0].readExactly(16, at: 0) == [UInt8](repeating: 0, count: 16))
        files[0].close()
        #expect(cache.counts.open <= 2)
    }

    /// Many threads reading many files through a small cache: every read gets its own file's
    /// bytes, and no handle is closed under a read.
    @Test func concurrentReadsThroughASmallCache() async throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let paths = try Self.files(12, in: directory)
        let cache = DescriptorCache(fileSystem: PosixFileSystem.shared, limit: 2)
        let files = try paths.map { try cache.open($0) }
        let wrong = await withTaskGroup(of: Int.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    var wrong = 0
                    for step in 0..<300 {
                        let i = (step * 7 + worker) % files.count
                        if (try? files[i].readExactly(8, at: 0)) != [UInt8](repeating: UInt8(i), count: 8) { wrong += 1 }
                    }
                    return wrong
                }
            }
            return await group.reduce(0, +)
        }
        #expect(wrong == 0)
        #expect(cache.counts.open <= 2)
    }
}
