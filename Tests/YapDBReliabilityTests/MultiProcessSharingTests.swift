#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization
import Testing
@testable import YapDB
import TestSupport

/// Several processes on one database with `enableMultiProcessSupport` (docs/format.md §14):
/// writers take turns, a process sees another's commit at its next transaction with its caches
/// emptied, `YapDatabaseModifiedExternally` is posted, and a writer killed inside its
/// transaction leaves the writer lock free and nothing of its transaction. Every child does a
/// bounded amount of work and is reaped (`ChildProcess.deinit` kills one a failed test left).
@Suite(.serialized) struct MultiProcessSharingTests {
    /// The database at `path`, opened in this process with `sharedOptions()`.
    static func openShared(_ path: String) throws -> YapDatabase {
        try YapDatabase.open(url: URL(fileURLWithPath: path), options: sharedOptions())
    }

    /// A child process (`YapDBCrashChild ARGUMENTS`) that has opened the database and said
    /// "ready" (expected within 60 s).
    static func readyChild(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> ChildProcess {
        let child = try ChildProcess(arguments)
        #expect(child.readLine(timeout: 60) == "ready", sourceLocation: sourceLocation)
        return child
    }

    static func sharedOptions() -> YapDatabaseOptions {
        let options = YapDatabaseOptions()
        options.enableMultiProcessSupport = true
        options.busyTimeout = 60
        return options
    }

    /// Two processes, both open before either writes, each run 100 read-modify-write
    /// transactions on one counter at the same time: the count ends at 200 only if every
    /// transaction read the other's last commit.
    @Test func twoProcessesWriteInTurnsAndNothingIsLost() throws {
        let directory = TemporaryDirectory("yapdb-mproc")
        defer { directory.remove() }
        let path = directory.file("db")
        let first = try Self.readyChild(["mpcount", path, "100"])
        let second = try Self.readyChild(["mpcount", path, "100"])
        first.send("go")
        second.send("go")
        #expect(first.readLine(timeout: 120)?.hasPrefix("done") == true)
        #expect(second.readLine(timeout: 120)?.hasPrefix("done") == true)
        #expect(first.waitForExit() == 0)
        #expect(second.waitForExit() == 0)
        // Opened alone, without the option: everything both committed is there.
        let database = try YapDatabase.open(url: URL(fileURLWithPath: path))
        let connection = database.newConnection()
        #expect(connection.read { $0.object(forKey: "n", inCollection: "count") as? String } == "200")
        #expect(connection.read { $0.numberOfKeys(inCollection: "rows") } == 200)
        #expect(database.snapshot == 200)
        #expect(try database.verify().isValid)
        try database.close()
    }

    /// This process reads (and caches) a row, another process changes it: the next read here
    /// sees the new value, not the cached one; and this process's commit is seen there.
    @Test func aCommitInAnotherProcessIsSeenAtTheNextTransactionAndTheCacheIsFlushed() throws {
        let directory = TemporaryDirectory("yapdb-mproc")
        defer { directory.remove() }
        let path = directory.file("db")
        let database = try Self.openShared(path)
        let connection = database.newConnection()
        try connection.write { tx in tx.setObject("one", forKey: "k", inCollection: "rows") }
        #expect(connection.read { $0.object(forKey: "k", inCollection: "rows") as? String } == "one")
        #expect(connection.isCached(key: "k", inCollection: "rows"))

        let other = try Self.readyChild(["mpserve", path])
        other.send("get k")
        #expect(other.readLine(timeout: 60) == "one")
        other.send("put k two")
        #expect(other.readLine(timeout: 60) == "put 2")

        // verify() catches up first: the state it compares with the log is the other's too.
        #expect(try database.verify().isValid)
        #expect(connection.read { $0.object(forKey: "k", inCollection: "rows") as? String } == "two")
        #expect(database.snapshot == 2)
        // A second connection, idle meanwhile, reads the new value too.
        #expect(database.newConnection().read { $0.object(forKey: "k", inCollection: "rows") as? String } == "two")

        try connection.write { tx in tx.setObject("three", forKey: "k", inCollection: "rows") }
        other.send("get k")
        #expect(other.readLine(timeout: 60) == "three")
        other.send("quit")
        #expect(other.waitForExit() == 0)
        try database.close()
    }

    /// With `YapDatabaseCrossProcessNotification` registered, another process's commit posts
    /// `YapDatabaseModifiedExternally` without any transaction here (the shared state is
    /// watched), once per catch-up.
    @Test func anotherProcessCommitPostsModifiedExternally() throws {
        let directory = TemporaryDirectory("yapdb-mproc")
        defer { directory.remove() }
        let path = directory.file("db")
        let database = try Self.openShared(path)
        #expect(database.register(YapDatabaseCrossProcessNotification(identifier: "test"), withName: "crossProcess"))
        let received = Mutex<[UInt64]>([])
        let observer = NotificationCenter.default.addObserver(forName: .YapDatabaseModifiedExternally, object: database,
                                                              queue: nil) { _ in
            received.withLock { $0.append(1) }
        }
        defer { NotificationCenter.default.removeObserver(observer) }

        let other = try Self.readyChild(["mpserve", path])
        other.send("put k external")
        #expect(other.readLine(timeout: 60)?.hasPrefix("put ") == true)
        let deadline = Date().addingTimeInterval(30)
        while received.withLock({ $0.isEmpty }) && Date() < deadline { usleep(10_000) }
        database.notificationQueue.sync {}
        #expect(received.withLock { $0.count } == 1)
        #expect(database.newConnection().read { $0.object(forKey: "k", inCollection: "rows") as? String } == "external")

        // This process's own commit posts nothing external.
        try database.newConnection().write { tx in tx.setObject("own", forKey: "k", inCollection: "rows") }
        usleep(300_000)
        database.notificationQueue.sync {}
        #expect(received.withLock { $0.count } == 1)
        other.send("quit")
        #expect(other.waitForExit() == 0)
        try database.close()
    }

    /// A writer SIGKILLed while its transaction has written records (but no commit record):
    /// the writer lock is free at once, and nothing of the transaction is visible, here or
    /// after a reopen.
    @Test func aWriterKilledInsideATransactionLeavesTheLockFreeAndNothingPartial() throws {
        let directory = TemporaryDirectory("yapdb-mproc")
        defer { directory.remove() }
        let path = directory.file("db")
        let options = Self.sharedOptions()
        options.busyTimeout = 0
        let database = try YapDatabase.open(url: URL(fileURLWithPath: path), options: options)
        let connection = database.newConnection()
        try connection.write { tx in tx.setObject("before", forKey: "k", inCollection: "rows") }

        let writer = try Self.readyChild(["mpserve", path])
        writer.send("hang partial")
        #expect(writer.readLine(timeout: 60) == "inside")
        // The transaction holds the writer lock: a write here fails at once (busy timeout 0).
        #expect(throws: YapDatabaseError.self) { try connection.write { tx in tx.setObject("x", forKey: "x", inCollection: "rows") } }
        writer.kill()

        try connection.write { tx in tx.setObject("after", forKey: "k", inCollection: "rows") }
        connection.read { tx in
            #expect(tx.object(forKey: "k", inCollection: "rows") as? String == "after")
            #expect(tx.object(forKey: "partial", inCollection: "rows") == nil)
            #expect(tx.numberOfKeys(inCollection: "blobs") == 0)
        }
        #expect(database.snapshot == 2)
        try database.close()

        let reopened = try YapDatabase.open(url: URL(fileURLWithPath: path))
        reopened.newConnection().read { tx in
            #expect(tx.object(forKey: "k", inCollection: "rows") as? String == "after")
            #expect(tx.object(forKey: "partial", inCollection: "rows") == nil)
            #expect(tx.numberOfKeys(inCollection: "blobs") == 0)
        }
        #expect(try reopened.verify().isValid)
        try reopened.close()
    }

    /// Checkpoints alternate between two processes: each one, before writing, reloads the
    /// other's newer checkpoint (so its own goes on appending where the index files end), and
    /// the database reopens alone with every row.
    @Test func checkpointsAlternateBetweenProcesses() throws {
        let directory = TemporaryDirectory("yapdb-mproc")
        defer { directory.remove() }
        let path = directory.file("db")
        let database = try Self.openShared(path)
        let connection = database.newConnection()
        try connection.write { tx in
            for i in 0..<50 { tx.setObject("v\(i)", forKey: "k\(i)", inCollection: "rows") }
        }
        let other = try Self.readyChild(["mpserve", path])
        func checkpointFile(_ number: Int) -> Bool {
            FileManager.default.fileExists(atPath: path + "-checkpoint-" + String(format: "%010d", number))
        }
        other.send("put a 1")
        #expect(other.readLine(timeout: 60) == "put 2")
        other.send("checkpoint")
        #expect(other.readLine(timeout: 60) == "checkpointed")
        #expect(checkpointFile(1))

        try connection.write { tx in tx.setObject("2", forKey: "b", inCollection: "rows") }
        try database.checkpoint()
        #expect(checkpointFile(2), "this process took in checkpoint 1, so it may write the next")

        other.send("put c 3")
        #expect(other.readLine(timeout: 60) == "put 4")
        other.send("checkpoint")
        #expect(other.readLine(timeout: 60) == "checkpointed")
        #expect(checkpointFile(3))
        other.send("get b")
        #expect(other.readLine(timeout: 60) == "2")

        connection.read { tx in
            #expect(tx.object(forKey: "a", inCollection: "rows") as? String == "1")
            #expect(tx.object(forKey: "c", inCollection: "rows") as? String == "3")
            #expect(tx.numberOfKeys(inCollection: "rows") == 53)
        }
        other.send("quit")
        #expect(other.waitForExit() == 0)
        try database.close()

        let reopened = try YapDatabase.open(url: URL(fileURLWithPath: path))
        #expect(reopened.newConnection().read { $0.numberOfKeys(inCollection: "rows") } == 53)
        #expect(reopened.snapshot == 4)
        #expect(try reopened.verify().isValid)
        try reopened.close()
    }

    /// Compaction removes segments only while no other process has the database open; a
    /// process killed while it had it open leaves a slot in the reader table that is
    /// reclaimed (its process is gone), and compaction then goes ahead.
    @Test func aKilledProcessSlotIsReclaimedAndCompactionRunsOnlyAlone() throws {
        let directory = TemporaryDirectory("yapdb-mproc")
        defer { directory.remove() }
        let path = directory.file("db")
        let database = try YapDatabase.open(path: path, options: Self.sharedOptions(), segmentLimit: 4096)
        let connection = database.newConnection()
        // Many versions of ten rows (values that do not compress) over many small segments:
        // the sealed ones are mostly dead.
        var random = SeededRandom(seed: 27)
        var last: [String] = []
        for _ in 0..<30 {
            last = (0..<10).map { _ in String((0..<200).map { _ in Character(UnicodeScalar(UInt8.random(in: 33...126, using: &random))) }) }
            try connection.write { tx in
                for i in 0..<10 { tx.setObject(last[i], forKey: "k\(i)", inCollection: "rows") }
            }
        }
        func segments() -> Int {
            ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.contains("-seg-") }.count
        }
        let before = segments()
        #expect(before > 3)

        let other = try Self.readyChild(["mpserve", path])
        try database.compact()
        #expect(segments() == before, "another process is open: nothing removed")

        other.kill()
        try database.compact()
        #expect(segments() < before, "the dead process's slot is reclaimed: compaction ran")
        #expect(connection.read { $0.object(forKey: "k3", inCollection: "rows") as? String } == last[3])
        try database.close()

        let reopened = try YapDatabase.open(url: URL(fileURLWithPath: path))
        #expect(reopened.newConnection().read { $0.numberOfKeys(inCollection: "rows") } == 10)
        #expect(try reopened.verify().isValid)
        try reopened.close()
    }

    /// The sum of all accounts, read in one transaction (nil when an account is missing).
    static func bankTotal(_ connection: YapDatabaseConnection) -> Int? {
        connection.read { tx in
            var total = 0
            for account in 0..<10 {
                guard let value = tx.object(forKey: "\(account)", inCollection: "bank") as? String, let amount = Int(value) else {
                    return nil
                }
                total += amount
            }
            return total
        }
    }

    /// A writer process makes transfers while this process reads: every read transaction sees
    /// the accounts sum to 10,000 and the snapshot never goes back. Then the writer is killed
    /// in the middle of its work: reads go on, a write here repairs what it left, and the
    /// database reopens alone with the same sum and passes verify().
    @Test func readersSeeWholeTransfersWhileAnotherProcessWritesAndIsKilled() throws {
        let directory = TemporaryDirectory("yapdb-mproc")
        defer { directory.remove() }
        let path = directory.file("db")
        let writer = try Self.readyChild(["mpbank", path, "100000"])
        let database = try Self.openShared(path)
        let connections = (0..<2).map { _ in database.newConnection() }
        var last: UInt64 = 0
        var reads = 0
        var wrong = 0
        var seen = Set<UInt64>()
        let deadline = Date().addingTimeInterval(1.5)
        while Date() < deadline {
            for connection in connections {
                if Self.bankTotal(connection) != 10_000 { wrong += 1 }
                let snapshot = connection.snapshot
                if snapshot < last { wrong += 1 }
                last = max(last, snapshot)
                seen.insert(snapshot)
                reads += 1
            }
        }
        #expect(wrong == 0, "\(wrong) of \(reads) reads saw a partial transfer or went back")
        #expect(seen.count > 3, "the reads saw the writer's commits as they came")
        // Killed while it writes (it never stops on its own before this).
        writer.kill()
        #expect(Self.bankTotal(connections[0]) == 10_000)
        try connections[1].write { tx in tx.setObject("here", forKey: "after", inCollection: "rows") }
        #expect(Self.bankTotal(connections[1]) == 10_000)
        let snapshot = database.snapshot
        try database.close()

        let reopened = try YapDatabase.open(url: URL(fileURLWithPath: path))
        #expect(Self.bankTotal(reopened.newConnection()) == 10_000)
        #expect(reopened.snapshot == snapshot)
        #expect(try reopened.verify().isValid)
        try reopened.close()
    }

    /// Two processes open a database that does not exist yet at the same moment: one creates
    /// it, the other opens it, and both write.
    @Test func twoProcessesCreateTheDatabaseAtOnce() throws {
        for round in 0..<3 {
            let directory = TemporaryDirectory("yapdb-mproc")
            defer { directory.remove() }
            let path = directory.file("db")
            let first = try ChildProcess(["mpcount", path, "5"])
            let second = try ChildProcess(["mpcount", path, "5"])
            #expect(first.readLine(timeout: 60) == "ready", "round \(round)")
            #expect(second.readLine(timeout: 60) == "ready", "round \(round)")
            first.send("go")
            second.send("go")
            #expect(first.waitForExit() == 0)
            #expect(second.waitForExit() == 0)
            let database = try YapDatabase.open(url: URL(fileURLWithPath: path))
            #expect(database.newConnection().read { $0.object(forKey: "n", inCollection: "count") as? String } == "10")
            #expect(try database.verify().isValid)
            try database.close()
        }
    }

    /// A read-only process with the option follows a writer process's commits; its own writes
    /// are refused.
    @Test func aReadOnlyProcessFollowsAWriterProcess() throws {
        let directory = TemporaryDirectory("yapdb-mproc")
        defer { directory.remove() }
        let path = directory.file("db")
        let other = try Self.readyChild(["mpserve", path])
        other.send("put k one")
        #expect(other.readLine(timeout: 60) == "put 1")
        let options = Self.sharedOptions()
        options.readOnly = true
        let database = try YapDatabase.open(url: URL(fileURLWithPath: path), options: options)
        let connection = database.newConnection()
        #expect(connection.read { $0.object(forKey: "k", inCollection: "rows") as? String } == "one")
        other.send("put k two")
        #expect(other.readLine(timeout: 60) == "put 2")
        #expect(connection.read { $0.object(forKey: "k", inCollection: "rows") as? String } == "two")
        #expect(throws: YapDatabaseError.readOnly) { try connection.write { tx in tx.setObject("x", forKey: "k", inCollection: "rows") } }
        other.send("put k three")
        #expect(other.readLine(timeout: 60) == "put 3")
        #expect(connection.read { $0.object(forKey: "k", inCollection: "rows") as? String } == "three")
        try database.close()
        other.send("quit")
        #expect(other.waitForExit() == 0)
    }

    /// The tool reads a database that a process with the option has open (its read-only open
    /// joins the processes), and sees that process's newest commit; `put`, which opens
    /// read-write without the option, waits for the lock and fails.
    @Test func theToolReadsBesideAProcessWithTheOption() throws {
        let directory = TemporaryDirectory("yapdb-mproc")
        defer { directory.remove() }
        let path = directory.file("db")
        let database = try Self.openShared(path)
        let connection = database.newConnection()
        try connection.write { tx in
            for key in ["a", "b", "c"] { tx.setObject("value \(key)", forKey: key, inCollection: "rows") }
        }
        let stats = try MultiProcessLockTests.tool(["stats", path])
        #expect(stats.status == 0)
        #expect(stats.output.contains("rows: 3 in 1 collection(s)"))
        #expect(try MultiProcessLockTests.tool(["get", path, "rows", "b"]).output == ["value b"])
        #expect(try MultiProcessLockTests.tool(["verify", path]).status == 0)
        #expect(try MultiProcessLockTests.tool(["put", "--busy-timeout", "0", path, "rows", "d", "value d"]).status == 5)
        // While the tool reads, this process goes on writing.
        try connection.write { tx in tx.setObject("value d", forKey: "d", inCollection: "rows") }
        #expect(try MultiProcessLockTests.tool(["get", path, "rows", "d"]).output == ["value d"])
        try database.close()
    }

    /// A writer with the option SIGKILLed at random moments (opening, writing, compacting
    /// alone) while this process has the database open too: every reported commit is there,
    /// the state is the script's after some k, and the database passes verify(), read here
    /// (catching up) and after a lone reopen.
    @Test func aWriterWithTheOptionKilledAtRandomLosesNoReportedCommit() throws {
        let seed: UInt64 = 0x27
        var rng = SeededRandom(seed: seed)
        let directory = TemporaryDirectory("yapdb-mproc")
        defer { directory.remove() }
        let path = directory.file("db")
        var expected: UInt64 = 0
        for kill in 0..<Scale.pick(small: 12, full: 120) {
            let watcher = try Self.openShared(path)
            let child = try ChildProcess(["run", path, String(seed), "multiprocess=1,checkpoint=65536"])
            let deadline = Date().addingTimeInterval(Double(10 + rng.next() % 150) / 1000)
            var reported = expected
            while Date() < deadline, let line = child.readLine(timeout: deadline.timeIntervalSinceNow) {
                reported = max(reported, UInt64(line) ?? reported)
            }
            child.kill()
            for line in child.remainingLines() { reported = max(reported, UInt64(line) ?? reported) }
            // This process catches up with what the killed one published.
            let seen = watcher.snapshot
            #expect(seen >= reported, "kill \(kill): reported \(reported), seen \(seen)")
            #expect(ProcessKillTests.contents(watcher) == CrashChildScript.state(seed: seed, after: seen), "kill \(kill)")
            let watched = try watcher.verify()
            #expect(watched.isValid, "kill \(kill): \(watched.problems)")
            try watcher.close()

            let database = try YapDatabase.open(url: URL(fileURLWithPath: path))
            let k = database.snapshot
            #expect(k >= reported && k <= reported + 1, "kill \(kill): reported \(reported), recovered \(k)")
            #expect(ProcessKillTests.contents(database) == CrashChildScript.state(seed: seed, after: k), "kill \(kill)")
            #expect(try database.verify().isValid, "kill \(kill)")
            try database.close()
            expected = k
        }
        #expect(expected > 0, "the kills landed after commits")
    }

    /// A long-lived read transaction in another process keeps reading its snapshot while this
    /// process overwrites every row many times over small segments, checkpoints and compacts
    /// (which does nothing while that process is open); once it ends, it reads the newest rows.
    @Test func aLongLivedReaderInAnotherProcessKeepsItsSnapshotThroughCheckpointsAndCompaction() throws {
        let directory = TemporaryDirectory("yapdb-mproc")
        defer { directory.remove() }
        let path = directory.file("db")
        let database = try YapDatabase.open(path: path, options: Self.sharedOptions(), segmentLimit: 4096)
        let connection = database.newConnection()
        try connection.write { tx in tx.setObject("old", forKey: "k", inCollection: "rows") }
        let reader = try Self.readyChild(["mpserve", path])
        reader.send("longread")
        #expect(reader.readLine(timeout: 60) == "reading 1")
        var random = SeededRandom(seed: 5)
        for round in 0..<40 {
            let filler = String((0..<300).map { _ in Character(UnicodeScalar(UInt8.random(in: 33...126, using: &random))) })
            try connection.write { tx in
                tx.setObject("new \(round)", forKey: "k", inCollection: "rows")
                tx.setObject(filler, forKey: "filler", inCollection: "rows")
            }
            if round % 10 == 9 {
                try database.checkpoint()
                try database.compact()
            }
        }
        reader.send("get k")
        #expect(reader.readLine(timeout: 60) == "old", "the long-lived snapshot still reads its rows")
        reader.send("endlongread")
        #expect(reader.readLine(timeout: 60) == "ended")
        reader.send("get k")
        #expect(reader.readLine(timeout: 60) == "new 39")
        reader.send("quit")
        #expect(reader.waitForExit() == 0)
        try database.close()
        let reopened = try YapDatabase.open(url: URL(fileURLWithPath: path))
        #expect(try reopened.verify().isValid)
        try reopened.close()
    }

    /// Without the option a database is still one process's: a process with it gets `locked`,
    /// and the other way round.
    @Test func anOpenWithoutTheOptionExcludesProcessesWithIt() throws {
        let directory = TemporaryDirectory("yapdb-mproc")
        defer { directory.remove() }
        let path = directory.file("db")
        let shared = try Self.openShared(path)
        let holder = try ChildProcess(["hold", path])
        #expect(holder.readLine(timeout: 60) == nil, "the exclusive open fails while a shared one is open")
        #expect(holder.waitForExit() >> 8 & 0xFF == 3)
        try shared.close()

        // The other way round: a process without the option has it, one with it gets `locked`.
        let exclusive = try Self.readyChild(["hold", path])
        let options = Self.sharedOptions()
        options.busyTimeout = 0
        #expect(throws: YapDatabaseError.locked) { _ = try YapDatabase.open(url: URL(fileURLWithPath: path), options: options) }
        exclusive.closeInput()
        #expect(exclusive.waitForExit() == 0)
    }
}
