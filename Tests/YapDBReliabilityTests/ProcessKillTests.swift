#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
import YapDB
import TestSupport

/// Real process kills (issue 5, item 3): a child process commits seeded transactions through
/// the public API (durability `.full`) on real files and reports each commit on a pipe after
/// `write` returned; the parent SIGKILLs it at a random moment — while it opens, recovers,
/// writes, checkpoints or compacts — reopens, and checks that every reported commit is there
/// and that the state is exactly the state after some k ≥ the last reported commit.
///
/// Each kill's child opens with options drawn from a seeded generator (issue 25): durability
/// `.full`, `.normal` or `.off`, mapped or cached reads, a checkpoint threshold of 64 KiB to
/// 1 MiB, the idle checkpoint after 10 ms or off, LZ4 or no compression. A SIGKILL leaves the
/// page cache, so every durability makes the same promise here — nothing whose `write`
/// returned is lost (YapDatabaseDurability's documentation) — and the check is the same.
@Suite struct ProcessKillTests {
    /// Options for one kill's child (the `run` command's OPTIONS), drawn from `rng`.
    static func randomSettings(_ rng: inout SeededRandom) -> String {
        let durability = ["full", "normal", "off"][Int(rng.next() % 3)]
        let read = rng.next() % 2 == 0 ? "mapped" : "cached"
        let checkpoint = [64 << 10, 256 << 10, 1 << 20][Int(rng.next() % 3)]
        let idle = rng.next() % 2 == 0 ? "0.01" : "0"
        let compression = rng.next() % 4 == 0 ? "none" : "lz4"
        return "durability=\(durability),read=\(read),checkpoint=\(checkpoint),idle=\(idle),compression=\(compression)"
    }

    static let kills = Scale.pick(small: 60, full: 600)

    /// The rows of the database at `url`, read through the public API.
    static func contents(_ database: YapDatabase) -> [String: [String: [UInt8]]] {
        var rows: [String: [String: [UInt8]]] = [:]
        database.newConnection().read { tx in
            for collection in tx.allCollections() {
                for key in tx.allKeys(inCollection: collection) {
                    rows[collection, default: [:]][key] = (tx.object(forKey: key, inCollection: collection) as? Data).map { [UInt8]($0) }
                }
            }
        }
        return rows
    }

    @Test func everyReportedCommitSurvivesSIGKILL() throws {
        let seed: UInt64 = 0x5EED
        var rng = SeededRandom(seed: seed)
        var optionsRandom = SeededRandom(seed: seed &+ 1)
        let directory = TemporaryDirectory("yapdb-kill")
        defer { directory.remove() }
        var figures = Figures()
        var reportedTotal = 0, lost = 0, partial = 0, verifyFailures = 0
        var databaseIndex = 0
        var url = URL(fileURLWithPath: directory.file("db0"))
        var expectedSnapshot: UInt64 = 0   // the last snapshot seen by the parent
        for kill in 0..<Self.kills {
            // A fresh database every 100 kills keeps the files small.
            if kill > 0 && kill % 100 == 0 {
                databaseIndex += 1
                url = URL(fileURLWithPath: directory.file("db\(databaseIndex)"))
                expectedSnapshot = 0
            }
            let settings = Self.randomSettings(&optionsRandom)
            figures.add("SIGKILLs with durability \(settings.split(separator: ",")[0].dropFirst(11))", 1)
            let child = try ChildProcess(["run", url.path, String(seed), settings])
            // Kill at a random moment: often during start-up and recovery, mostly mid-stream.
            let delay = rng.next() % 4 == 0 ? Double(rng.next() % 40) : Double(20 + rng.next() % 180)
            var reported: UInt64 = expectedSnapshot
            let deadline = Date().addingTimeInterval(delay / 1000)
            while Date() < deadline, let line = child.readLine(timeout: deadline.timeIntervalSinceNow) {
                reported = max(reported, UInt64(line) ?? reported)
            }
            child.kill()
            for line in child.remainingLines() { reported = max(reported, UInt64(line) ?? reported) }
            figures.add("SIGKILLs", 1)

            let database: YapDatabase
            do {
                database = try YapDatabase.open(url: url)
            } catch {
                lost += 1
                Issue.record("kill \(kill) (seed \(seed), \(url.lastPathComponent), \(settings)): reopen failed: \(error)")
                continue
            }
            let k = database.snapshot
            reportedTotal += Int(reported)
            if k < reported {
                lost += Int(reported - k)
                Issue.record("kill \(kill) (\(settings)): the child reported commit \(reported), the database has snapshot \(k)")
            }
            if k > reported + 1 {
                partial += 1
                Issue.record("kill \(kill): snapshot \(k) is more than one past the last reported commit \(reported)")
            }
            if Self.contents(database) != CrashChildScript.state(seed: seed, after: k) {
                partial += 1
                Issue.record("kill \(kill): the state at snapshot \(k) is not the state after \(k) commits of seed \(seed)")
            }
            let report = try database.verify()
            if !report.isValid {
                verifyFailures += 1
                Issue.record("kill \(kill): verify: \(report.problems)")
            }
            try database.close()
            expectedSnapshot = k
        }
        print("process kills: \(Self.kills) SIGKILLs, \(reportedTotal) reported commits checked, lost \(lost), partial \(partial), verify failures \(verifyFailures)")
        #expect(lost == 0 && partial == 0 && verifyFailures == 0)
        #expect(reportedTotal > Self.kills, "the kills must land after some commits were reported")
        figures.add("acknowledged commits checked", reportedTotal)
        figures.add("lost acknowledged commits", lost)
        figures.add("partial commits visible", partial)
        figures.add("verify failures", verifyFailures)
        figures.write(to: "process-kills")
    }
}
