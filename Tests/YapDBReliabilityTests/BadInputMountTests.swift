#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
import YapDB
import TestSupport

/// A small tmpfs mounted on a temporary directory, for the disk-full and read-only rows of the
/// bad-input table. Mounting needs root (or CAP_SYS_ADMIN); without it those two tests are
/// skipped, and say so.
final class SmallFileSystem {
    let directory = TemporaryDirectory("yapdb-tmpfs")
    private var mounted = false

    init?(bytes: Int) {
        #if os(Linux)
        guard mount("tmpfs", directory.path, "tmpfs", 0, "size=\(bytes),mode=0700") == 0 else {
            directory.remove()
            return nil
        }
        mounted = true
        #else
        return nil
        #endif
    }

    func file(_ name: String) -> String { directory.file(name) }

    func remountReadOnly() -> Bool {
        #if os(Linux)
        return mount("tmpfs", directory.path, "tmpfs", UInt(MS_REMOUNT | MS_RDONLY), nil) == 0
        #else
        return false
        #endif
    }

    deinit {
        #if os(Linux)
        if mounted { umount2(directory.path, Int32(MNT_DETACH)) }
        #endif
        directory.remove()
    }

    /// Whether this process may mount a tmpfs.
    static let available: Bool = SmallFileSystem(bytes: 1 << 16) != nil
}

@Suite(.serialized) struct BadInputMountTests {
    /// Fills the file system with a filler file until a write fails for space.
    static func fill(_ fs: SmallFileSystem) {
        let descriptor = open(fs.file("filler"), O_WRONLY | O_CREAT, 0o600)
        defer { close(descriptor) }
        let chunk = [UInt8](repeating: 0xAB, count: 4096)
        while chunk.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) > 0 {}
    }

    static func files(in fs: SmallFileSystem) -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: fs.directory.path)) ?? [] {
            result[name] = FileManager.default.contents(atPath: fs.file(name)).map { [UInt8]($0) } ?? []
        }
        return result
    }

    @Test(.enabled(if: SmallFileSystem.available, "needs permission to mount a tmpfs"))
    func diskFull() throws {
        let fs = try #require(SmallFileSystem(bytes: 256 << 10))
        let url = URL(fileURLWithPath: fs.file("db"))
        // A commit that does not fit: diskFull, nothing applied, the database still usable.
        let database = try YapDatabase.open(url: url)
        let connection = database.newConnection()
        try connection.write { tx in tx.setObject(Data(repeating: 1, count: 100), forKey: "small", inCollection: nil) }
        Self.fill(fs)
        var rng = SeededRandom(seed: 5)
        let big = Data(rng.bytes(200 << 10))
        #expect(throws: YapDatabaseError.diskFull) {
            try connection.write { tx in tx.setObject(big, forKey: "big", inCollection: nil) }
        }
        #expect(database.snapshot == 1)
        try FileManager.default.removeItem(atPath: fs.file("filler"))
        try connection.write { tx in tx.setObject(Data([2]), forKey: "after", inCollection: nil) }
        try database.close()

        // Creating a database on a full disk: diskFull, and nothing left behind but the empty
        // lock file, taken before the creation and never deleted (docs/format.md §1).
        Self.fill(fs)
        var before = Self.files(in: fs)
        #expect(throws: YapDatabaseError.diskFull) { _ = try YapDatabase.open(url: URL(fileURLWithPath: fs.file("new"))) }
        before["new-lock"] = []
        #expect(Self.files(in: fs) == before, "the files are unchanged: \(Self.files(in: fs).keys.sorted()) vs \(before.keys.sorted())")
    }

    @Test(.enabled(if: SmallFileSystem.available, "needs permission to mount a tmpfs"))
    func readOnlyFile() throws {
        let fs = try #require(SmallFileSystem(bytes: 1 << 20))
        let url = URL(fileURLWithPath: fs.file("db"))
        do {
            // In a scope of its own: its files must be closed before the remount.
            let database = try YapDatabase.open(url: url)
            database.newConnection().readWrite { tx in tx.setObject("x", forKey: "k", inCollection: nil) }
            try database.close()
            // The commit's notification is posted asynchronously and holds the database (and
            // so its file handles) until it has run: let it run before remounting.
            database.notificationQueue.sync {}
        }
        #expect(fs.remountReadOnly(), "errno \(errno)")
        let before = Self.files(in: fs)
        #expect(throws: YapDatabaseError.readOnly) { _ = try YapDatabase.open(url: url) }
        #expect(Self.files(in: fs) == before, "the files are unchanged")
    }
}
