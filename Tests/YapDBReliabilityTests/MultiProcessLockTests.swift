#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
import YapDB
import TestSupport

/// The lock file between real processes (docs/reliability.md, "The lock file"): a writer
/// excludes every other open, read-only opens share, the busy timeout waits for the holder,
/// and the `yapdb` tool reads beside another reader. Every child is ended by closing its
/// standard input (or killed when a test fails early: `ChildProcess.deinit`).
@Suite(.serialized) struct MultiProcessLockTests {
    /// A database of three rows at `path`, closed.
    static func make(_ path: String) throws {
        let database = try YapDatabase.open(url: URL(fileURLWithPath: path))
        try database.newConnection().write { tx in
            for key in ["a", "b", "c"] { tx.setObject("value \(key)", forKey: key, inCollection: "rows") }
        }
        try database.close()
        database.notificationQueue.sync {}
    }

    static func options(readOnly: Bool = false, busyTimeout: TimeInterval = 0) -> YapDatabaseOptions {
        let options = YapDatabaseOptions()
        options.readOnly = readOnly
        options.busyTimeout = busyTimeout
        return options
    }

    /// Runs the `yapdb` tool to its end; returns its exit status and standard output.
    static func tool(_ arguments: [String]) throws -> (status: Int32, output: [String]) {
        let child = try ChildProcess(arguments, executable: ChildProcess.builtProgram("yapdb"))
        let status = child.waitForExit()
        return ((status >> 8) & 0xFF, child.remainingLines())
    }

    @Test func aWriterInAnotherProcessExcludesEveryOpenUntilItCloses() throws {
        let directory = TemporaryDirectory("yapdb-lock")
        defer { directory.remove() }
        let path = directory.file("db")
        try Self.make(path)
        let writer = try ChildProcess(["hold", path])
        #expect(writer.readLine(timeout: 60) == "ready")
        let url = URL(fileURLWithPath: path)
        #expect(throws: YapDatabaseError.locked) { _ = try YapDatabase.open(url: url, options: Self.options(readOnly: true)) }
        #expect(throws: YapDatabaseError.locked) { _ = try YapDatabase.open(url: url, options: Self.options(busyTimeout: 0.05)) }
        #expect(try Self.tool(["stats", path]).status == 5, "yapdb stats: locked")
        // The writer closes while this open waits for it.
        writer.closeInput()
        let database = try YapDatabase.open(url: url, options: Self.options(busyTimeout: 60))
        #expect(database.newConnection().read { $0.object(forKey: "b", inCollection: "rows") as? String } == "value b")
        try database.close()
        writer.waitForExit()
    }

    @Test func readOnlyOpensInTwoProcessesAtOnceAndTheToolBesideThem() throws {
        let directory = TemporaryDirectory("yapdb-lock")
        defer { directory.remove() }
        let path = directory.file("db")
        try Self.make(path)
        let reader = try ChildProcess(["holdro", path])
        #expect(reader.readLine(timeout: 60) == "ready 3")
        let url = URL(fileURLWithPath: path)
        do {
            let database = try YapDatabase.open(url: url, options: Self.options(readOnly: true))
            #expect(database.newConnection().read { $0.numberOfKeysInAllCollections() } == 3)
            #expect(throws: YapDatabaseError.readOnly) {
                try database.newConnection().write { tx in tx.setObject("x", forKey: "x", inCollection: "rows") }
            }
            try database.close()
        }
        let stats = try Self.tool(["stats", path])
        #expect(stats.status == 0)
        #expect(stats.output.contains("rows: 3 in 1 collection(s)"))
        let get = try Self.tool(["get", path, "rows", "a"])
        #expect(get.status == 0 && get.output == ["value a"])
        #expect(try Self.tool(["verify", path]).status == 0)
        // A writer waits for the readers: at once it fails, and once they are gone it goes ahead.
        #expect(throws: YapDatabaseError.locked) { _ = try YapDatabase.open(url: url) }
        #expect(try Self.tool(["put", "--busy-timeout", "0", path, "rows", "d", "value d"]).status == 5)
        reader.closeInput()
        let put = try Self.tool(["put", "--busy-timeout", "60", path, "rows", "d", "value d"])
        #expect(put.status == 0)
        reader.waitForExit()
        #expect(try Self.tool(["get", path, "rows", "d"]).output == ["value d"])
        #expect(FileManager.default.fileExists(atPath: path + "-lock"), "the lock file stays")
    }

    /// A directory its user may not write (as root, the child drops to user nobody so the
    /// permissions apply): the read-only open works with the lock file there and without it.
    @Test func aReadOnlyOpenInADirectoryItMayNotWrite() throws {
        let directory = TemporaryDirectory("yapdb-rodir")
        defer { directory.remove() }
        try Self.make(directory.file("db"))
        try Self.make(directory.file("nolock"))
        try FileManager.default.removeItem(atPath: directory.file("nolock-lock"))
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            #expect(chmod(directory.file(name), 0o444) == 0)
        }
        #expect(chmod(directory.path, 0o555) == 0)
        let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        for name in ["db", "nolock"] {
            let reader = try ChildProcess(["holdro", directory.file(name), "nobody"])
            #expect(reader.readLine(timeout: 60) == "ready 3", "\(name)")
            reader.closeInput()
            #expect(reader.waitForExit() == 0)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == before)
        #expect(chmod(directory.path, 0o700) == 0)
    }

    @Test(.enabled(if: SmallFileSystem.available, "needs permission to mount a tmpfs"))
    func aReadOnlyOpenOnAReadOnlyVolume() throws {
        let fs = try #require(SmallFileSystem(bytes: 1 << 20))
        try Self.make(fs.file("db"))
        try Self.make(fs.file("nolock"))
        // A database copied without its lock file: there is none to lock on the read-only volume.
        try FileManager.default.removeItem(atPath: fs.file("nolock-lock"))
        #expect(fs.remountReadOnly(), "errno \(errno)")
        let before = BadInputMountTests.files(in: fs)
        for name in ["db", "nolock"] {
            let url = URL(fileURLWithPath: fs.file(name))
            let database = try YapDatabase.open(url: url, options: Self.options(readOnly: true))
            #expect(database.newConnection().read { $0.object(forKey: "c", inCollection: "rows") as? String } == "value c")
            #expect(throws: YapDatabaseError.readOnly) { try database.checkpoint() }
            try database.close()
            #expect(throws: YapDatabaseError.readOnly) { _ = try YapDatabase.open(url: url) }
        }
        #expect(try Self.tool(["dump", fs.file("db")]).output.count == 3)
        #expect(BadInputMountTests.files(in: fs) == before, "nothing changed")
    }
}
