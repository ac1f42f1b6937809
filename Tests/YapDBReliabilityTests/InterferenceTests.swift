#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
import YapDB
import TestSupport

/// What other programs do to a live database (issue 25, item 4): a child process
/// (`YapDBCrashChild serve`) holds the database open and commits; this process truncates,
/// deletes, replaces or locks out its files, then asks the child to read everything and verify.
/// The promises (docs/reliability.md, "External interference"): the process stays alive and
/// every read either returns the right value or is reported (a value reads as missing and
/// `verify()` says why, or a typed error); reopening afterwards gives the data or a typed
/// error, never silently less. Cases today's code fails are marked with the finding that fixes
/// them (`withKnownIssue("issue 25 F…")`), so they flip when the fix lands.
@Suite(.serialized) struct InterferenceTests {
    static let seed: UInt64 = 0xFACE

    /// A child serving a fresh database with `commits` transactions in it.
    struct Live {
        let directory = TemporaryDirectory("yapdb-interfere")
        let child: ChildProcess
        let committed: UInt64
        var path: String { directory.file("db") }

        /// - Parameter asNobody: when this process is root, the child drops to user 65534, so
        ///   that file permissions apply to it (the directory is handed to that user first).
        init(mode: String, commits: Int = 60, asNobody: Bool = false) throws {
            var arguments = ["serve", directory.file("db"), String(InterferenceTests.seed), mode]
            if asNobody && getuid() == 0 {
                chown(directory.path, 65534, 65534)
                arguments.append("nobody")
            }
            child = try ChildProcess(arguments)
            guard child.readLine(timeout: 30) == "ready" else { throw ChildFailed(what: "start") }
            child.send("commit \(commits)")
            guard let line = child.readLine(timeout: 60), line.hasPrefix("committed "), let snapshot = UInt64(line.dropFirst(10)) else {
                throw ChildFailed(what: "first commits")
            }
            committed = snapshot
        }

        /// The database's files whose names contain `part` ("-seg-", "-index-", …), sorted.
        func files(_ part: String) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
                .filter { $0.contains(part) && !$0.hasSuffix(".tmp") }.sorted().map { directory.file($0) }
        }

        /// Sends "check" and returns the answer, or nil when the child died (`signal` says how).
        func check() -> (answer: String?, signal: Int32) {
            child.send("check")
            if let line = child.readLine(timeout: 60) { return (line, 0) }
            let status = child.waitForExit()
            return (nil, status & 0x7F)
        }

        func quit() {
            child.send("quit")
            _ = child.waitForExit()
        }
    }

    struct ChildFailed: Error { var what: String }

    /// Counts one interference case in the report (`interference cases`).
    static func counted(_ name: String) {
        var figures = Figures()
        figures.add("interference cases", 1)
        figures.write(to: "interference-\(name)")
    }

    /// A live check's answer is acceptable: the child is alive and either read everything
    /// right, or reported the damage (`verify` found problems or threw a typed error).
    static func expectAliveAndHonest(_ outcome: (answer: String?, signal: Int32), _ what: String) {
        guard let answer = outcome.answer else {
            Issue.record("\(what): the serving process died (signal \(outcome.signal))")
            return
        }
        #expect(answer == "check rows=ok verify=ok" || answer.contains("verify=problems") || answer.contains("verify=error:YapDatabaseError"),
                "\(what): \(answer)")
    }

    /// Reopens `path` here after the child quit: the data as committed, or a typed error.
    /// Returns false when the open silently shows less than was committed.
    static func reopenGivesTheDataOrATypedError(_ path: String, committed: UInt64, _ what: String) -> Bool {
        do {
            let database = try YapDatabase.open(url: URL(fileURLWithPath: path))
            defer { try? database.close() }
            let k = database.snapshot
            let same = ProcessKillTests.contents(database) == CrashChildScript.state(seed: seed, after: k)
            return k >= committed && same
        } catch {
            return true   // typed by signature (`throws(YapDatabaseError)`)
        }
    }

    @Test func aSegmentTruncatedUnderACachedReaderIsReported() throws {
        defer { Self.counted("aSegmentTruncatedUnderACachedReaderIsReported") }
        let live = try Live(mode: "cached")
        let segment = try #require(live.files("-seg-").last)
        #expect(truncate(segment, 64) == 0)
        Self.expectAliveAndHonest(live.check(), "cached reads, segment truncated")
        live.quit()
        withKnownIssue("issue 25 F4: an open that finds less than the database promised must fail") {
            #expect(Self.reopenGivesTheDataOrATypedError(live.path, committed: live.committed, "segment truncated"))
        }
        live.directory.remove()
    }

    @Test func aSegmentTruncatedUnderAMappedReaderDoesNotKillTheProcess() throws {
        defer { Self.counted("aSegmentTruncatedUnderAMappedReaderDoesNotKillTheProcess") }
        let live = try Live(mode: "mapped")
        let segment = try #require(live.files("-seg-").last)
        #expect(truncate(segment, 64) == 0)
        // The active segment is mapped only up to its synced length, and read by `pread` past
        // it: today this case is detected, not a signal.
        Self.expectAliveAndHonest(live.check(), "mapped reads, segment truncated")
        live.quit()
        live.directory.remove()
    }

    @Test func anIndexFileTruncatedUnderAMappedReaderDoesNotKillTheProcess() throws {
        defer { Self.counted("anIndexFileTruncatedUnderAMappedReaderDoesNotKillTheProcess") }
        let live = try Live(mode: "mapped", commits: 150)
        let index = try #require(live.files("-index-").last, "the commits wrote an index checkpoint")
        #expect(truncate(index, 0) == 0)
        // Since the F2 fix the shrink is usually caught before the bytes are touched; a map
        // taken before the check can still fault (the window docs/reliability.md documents).
        withKnownIssue("issue 25 F2: the remaining window, a mapped index page of a file shrunk under a live map", isIntermittent: true) {
            Self.expectAliveAndHonest(live.check(), "mapped reads, index file truncated")
        }
        live.quit()
        live.directory.remove()
    }

    @Test func aDeletedSegmentIsNotSilentlyForgotten() throws {
        defer { Self.counted("aDeletedSegmentIsNotSilentlyForgotten") }
        let live = try Live(mode: "mapped")
        let segment = try #require(live.files("-seg-").last)
        #expect(unlink(segment) == 0)
        // The open descriptor keeps the file's bytes: the live process reads them all
        // (`verify()`, which looks for the files by name, reports the missing one).
        let outcome = live.check()
        #expect(outcome.answer?.hasPrefix("check rows=ok") == true, "\(outcome)")
        Self.expectAliveAndHonest(outcome, "segment deleted")
        live.quit()
        #expect(Self.reopenGivesTheDataOrATypedError(live.path, committed: live.committed, "segment deleted"))
        live.directory.remove()
    }

    @Test func aReplacedSegmentIsNotTakenForTheDatabasesOwn() throws {
        defer { Self.counted("aReplacedSegmentIsNotTakenForTheDatabasesOwn") }
        let live = try Live(mode: "mapped")
        let segment = try #require(live.files("-seg-").last)
        // Another program writes a copy with one byte changed and renames it over the file.
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: segment)))
        bytes[bytes.count / 2] ^= 0x40
        try Data(bytes).write(to: URL(fileURLWithPath: segment + ".other"))
        #expect(rename(segment + ".other", segment) == 0)
        // The live process keeps its own descriptor and map of the old file.
        #expect(live.check().answer == "check rows=ok verify=ok")
        live.quit()
        #expect(Self.reopenGivesTheDataOrATypedError(live.path, committed: live.committed, "segment replaced"))
        live.directory.remove()
    }

    /// As root the serving child drops to user 65534 first (chmod does not stop root).
    @Test func anUnreadableSegmentGivesATypedError() throws {
        defer { Self.counted("anUnreadableSegmentGivesATypedError") }
        let live = try Live(mode: "cached", asNobody: true)
        let segment = try #require(live.files("-seg-").last)
        #expect(chmod(segment, 0) == 0)
        // The open descriptor still reads; a new open cannot.
        Self.expectAliveAndHonest(live.check(), "segment made unreadable")
        live.child.send("reopen")
        let answer = live.child.readLine(timeout: 60)
        #expect(answer?.hasPrefix("error YapDatabaseError") == true, "reopening an unreadable segment: \(answer ?? "the process died")")
        live.quit()
        chmod(segment, 0o600)
        #expect(Self.reopenGivesTheDataOrATypedError(live.path, committed: live.committed, "segment readable again"))
        live.directory.remove()
    }

    /// As root the serving child drops to user 65534 first (root ignores a directory's mode).
    @Test func aReadOnlyDirectoryUnderALiveDatabase() throws {
        defer { Self.counted("aReadOnlyDirectoryUnderALiveDatabase") }
        let live = try Live(mode: "mapped", asNobody: true)
        #expect(chmod(live.directory.path, 0o500) == 0)
        // Appends to the open segment work; a checkpoint (every 256 KiB) cannot create its file.
        live.child.send("commit 200")
        let answer = live.child.readLine(timeout: 120) ?? "the process died"
        #expect(answer.hasPrefix("committed") || answer.hasPrefix("error YapDatabaseError"), "\(answer)")
        let committed = answer.hasPrefix("committed") ? UInt64(answer.dropFirst(10)) ?? live.committed : live.committed
        Self.expectAliveAndHonest(live.check(), "read-only directory")
        live.quit()
        chmod(live.directory.path, 0o700)
        #expect(Self.reopenGivesTheDataOrATypedError(live.path, committed: committed, "directory writable again"))
        live.directory.remove()
    }

    @Test func aSymlinkedPathOpensTheSameDatabaseOrFails() throws {
        defer { Self.counted("aSymlinkedPathOpensTheSameDatabaseOrFails") }
        let live = try Live(mode: "mapped")
        live.quit()
        let other = TemporaryDirectory("yapdb-link")
        defer { other.remove(); live.directory.remove() }
        #expect(symlink(live.path, other.file("db")) == 0)
        #expect(Self.reopenGivesTheDataOrATypedError(other.file("db"), committed: live.committed, "symlinked path"))
    }

    @Test func theDescriptorLimitReachedGivesTypedErrorsAndLosesNothing() throws {
        let directory = TemporaryDirectory("yapdb-fdlimit")
        defer { directory.remove() }
        let path = directory.file("db")
        let child = try ChildProcess(["fdlimit", path, String(Self.seed)])
        var lines: [String] = []
        while let line = child.readLine(timeout: 120) {
            lines.append(line)
            if line == "done" { break }
        }
        let status = child.waitForExit()
        let limits = lines.filter { $0.hasPrefix("limit ") }
        let errors = limits.filter { $0.contains(": error ") }
        #expect(!errors.isEmpty, "the lowest limits must be reached: \(limits)")
        // The trap seen here (SIGILL at a limit of about 7) was Dispatch's: its timer loop,
        // started by the first idle-checkpoint timer, stops the process when it gets no
        // descriptor. The engine starts it when a database opens, and the child opens one at
        // the normal limit first, as an app does.
        #expect(lines.last == "done" && status == 0, "the process ended normally: status \(status), \(lines.suffix(3))")
        #expect(limits.contains { $0.hasSuffix(": ok") }, "the highest limits must suffice: \(limits)")
        for error in errors { #expect(error.contains("YapDatabaseError"), "typed: \(error)") }
        let committed = lines.compactMap { $0.hasPrefix("committed ") ? UInt64($0.dropFirst(10)) : nil }.max() ?? 0
        let database = try YapDatabase.open(url: URL(fileURLWithPath: path))
        #expect(database.snapshot >= committed)
        #expect(ProcessKillTests.contents(database) == CrashChildScript.state(seed: Self.seed, after: database.snapshot))
        #expect(try database.verify().isValid)
        try database.close()
        var figures = Figures()
        figures.add("interference cases", 1)
        figures.add("descriptor limits tried", limits.count)
        figures.add("untyped or unexpected errors", errors.filter { !$0.contains("YapDatabaseError") }.count)
        figures.write(to: "interference-fdlimit")
    }

    /// Reliability finding F14: a database of many segments, read whole with a descriptor
    /// cache of 3 under a soft descriptor limit of 12 above what the process holds: every row
    /// reads right, in both read modes, and the descriptors held while open stay far below the
    /// number of files (before the cache, one descriptor per segment made the open fail with
    /// EMFILE here).
    @Test func manySegmentsAreReadThroughABoundedSetOfDescriptors() throws {
        let directory = TemporaryDirectory("yapdb-fdcache")
        defer { directory.remove() }
        let child = try ChildProcess(["fdcache", directory.file("db"), String(Self.seed)])
        var lines: [String] = []
        while let line = child.readLine(timeout: 300) {
            lines.append(line)
            if line == "done" { break }
        }
        let status = child.waitForExit()
        #expect(lines.last == "done" && status == 0, "the process ended normally: status \(status), \(lines.suffix(3))")
        let segments = lines.first { $0.hasPrefix("segments ") }.flatMap { Int($0.dropFirst(9)) } ?? 0
        #expect(segments >= 30, "\(lines)")
        for mode in ["mapped", "cached"] {
            guard let line = lines.first(where: { $0.hasPrefix(mode + " ") }) else {
                Issue.record("no answer for \(mode): \(lines)")
                continue
            }
            let fields = Dictionary(line.split(separator: " ").dropFirst().compactMap { field -> (String, String)? in
                let parts = field.split(separator: "=", maxSplits: 1)
                return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
            }, uniquingKeysWith: { a, _ in a })
            #expect(fields["rows"] == "ok", "\(line)")
            if let open = fields["open"].flatMap(Int.init), let base = fields["base"].flatMap(Int.init),
               let after = fields["after"].flatMap(Int.init) {
                // The cache's 3, the lock, the main file, the active segment, the index writer.
                #expect(open - base <= 3 + 6, "\(line)")
                #expect(after <= base, "closing releases every descriptor: \(line)")
            } else {
                Issue.record("\(mode): \(line)")
            }
        }
        var figures = Figures()
        figures.add("interference cases", 1)
        figures.add("segments read through a descriptor cache of 3", segments)
        figures.write(to: "interference-fdcache")
    }
}
