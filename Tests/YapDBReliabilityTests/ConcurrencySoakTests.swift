import Foundation
import Testing
import YapDB
import TestSupport

/// Concurrency soaks through the public API (issue 5, item 5): invariants every snapshot must
/// keep while a writer commits and readers read on other threads. `make reliability` also runs
/// these under ThreadSanitizer. Durations are sized by `YAPDB_SCALE`; they never decide a pass.
@Suite(.serialized) struct ConcurrencySoakTests {
    static let seconds = Scale.pick(small: 3.0, full: 45.0)

    /// A database in a temporary directory (durability `.normal`: the soaks are about
    /// concurrency, not syncs).
    final class Place {
        let directory = TemporaryDirectory("yapdb-soak")
        let database: YapDatabase
        init() throws {
            let options = YapDatabaseOptions()
            options.durability = .normal
            database = try YapDatabase.open(url: URL(fileURLWithPath: directory.file("db")), options: options)
        }
        deinit {
            try? database.close()
            directory.remove()
        }
    }

    static func finish(_ soak: Soak, _ name: String, seconds: Double) {
        for problem in soak.problems { Issue.record(Comment(rawValue: "\(name): \(problem)")) }
        #expect(soak.problems.isEmpty)
        #expect(soak.checks > 0, "\(name): the readers checked something")
        print("soak \(name): \(soak.checks) invariant checks in \(String(format: "%.1f", seconds)) s, \(soak.problems.count) violations")
        var figures = Figures()
        figures.add("soak seconds", Int(seconds.rounded()))
        figures.add("soak invariant checks", soak.checks)
        figures.add("soak invariant violations", soak.problems.count)
        figures.write(to: "soak-\(name)")
    }

    /// Bank transfers: money moves between accounts, one transfer per commit; every snapshot
    /// any reader sees holds the same total.
    @Test func bankTransfersKeepTheTotalInEverySnapshot() throws {
        let place = try Place()
        let accounts = 20, initial = 1_000
        place.database.newConnection().readWrite { tx in
            for a in 0..<accounts { tx.setObject(String(initial), forKey: "a\(a)", inCollection: "bank") }
        }
        let soak = Soak(seconds: Self.seconds)
        let database = place.database
        // `place` closes the database and removes its folder when released: keep it to the end.
        defer { withExtendedLifetime(place) {} }
        let seconds = soak.run(writer: {
            let connection = database.newConnection()
            var rng = SeededRandom(seed: 11)
            while !soak.isStopped {
                connection.readWrite { tx in
                    let from = "a\(rng.next() % UInt64(accounts))", to = "a\(rng.next() % UInt64(accounts))"
                    let amount = Int(rng.next() % 50)
                    let a = Int(tx.object(forKey: from, inCollection: "bank") as? String ?? "") ?? 0
                    let b = Int(tx.object(forKey: to, inCollection: "bank") as? String ?? "") ?? 0
                    guard from != to, a >= amount else { return }
                    tx.setObject(String(a - amount), forKey: from, inCollection: "bank")
                    tx.setObject(String(b + amount), forKey: to, inCollection: "bank")
                }
            }
        }, readers: (0..<3).map { index in {
            let connection = database.newConnection()
            connection.objectCacheLimit = [1, 16, 10_000][index]
            while !soak.isStopped {
                connection.read { tx in
                    var total = 0
                    tx.iterateKeysAndObjects(inCollection: "bank") { (_: String, value: String, _: inout Bool) in total += Int(value) ?? 0 }
                    soak.check(total == accounts * initial, "total \(total) at snapshot \(connection.snapshot)")
                }
            }
        } })
        Self.finish(soak, "bank", seconds: seconds)
    }

    /// A ring of pointers: the writer moves one node at a time (a → b → c → d becomes
    /// a → c → b → d); readers walk the ring from any node and must see every node exactly
    /// once before returning to the start.
    @Test func aRingRotatedByTheWriterIsWholeForEveryReader() throws {
        let place = try Place()
        let nodes = 64
        place.database.newConnection().readWrite { tx in
            for n in 0..<nodes { tx.setObject("n\((n + 1) % nodes)", forKey: "n\(n)", inCollection: "ring") }
        }
        let soak = Soak(seconds: Self.seconds)
        let database = place.database
        // `place` closes the database and removes its folder when released: keep it to the end.
        defer { withExtendedLifetime(place) {} }
        let seconds = soak.run(writer: {
            let connection = database.newConnection()
            var rng = SeededRandom(seed: 12)
            while !soak.isStopped {
                connection.readWrite { tx in
                    let a = "n\(rng.next() % UInt64(nodes))"
                    guard let b = tx.object(forKey: a, inCollection: "ring") as? String,
                          let c = tx.object(forKey: b, inCollection: "ring") as? String,
                          let d = tx.object(forKey: c, inCollection: "ring") as? String, d != a else { return }
                    tx.setObject(c, forKey: a, inCollection: "ring")
                    tx.setObject(b, forKey: c, inCollection: "ring")
                    tx.setObject(d, forKey: b, inCollection: "ring")
                }
            }
        }, readers: (0..<3).map { index in {
            let connection = database.newConnection()
            connection.objectCacheLimit = [1, 16, 10_000][index]
            var rng = SeededRandom(seed: UInt64(100 + index))
            while !soak.isStopped {
                connection.read { tx in
                    let start = "n\(rng.next() % UInt64(nodes))"
                    var seen: Set<String> = [start]
                    var node = start
                    for _ in 0..<nodes {
                        guard let next = tx.object(forKey: node, inCollection: "ring") as? String else { break }
                        node = next
                        if node == start { break }
                        seen.insert(node)
                    }
                    soak.check(node == start && seen.count == nodes, "walk from \(start) saw \(seen.count) nodes at snapshot \(connection.snapshot)")
                }
            }
        } })
        Self.finish(soak, "ring", seconds: seconds)
    }

    /// Cache coherence: commit j sets key j % 100 to j. Each connection (cache limits 1, 16,
    /// 10,000) must read exactly the state at its snapshot, with snapshots and values never
    /// going backwards.
    @Test func cachesAgreeWithTheCommitLogAtEverySnapshot() throws {
        let place = try Place()
        let keys = 100
        let soak = Soak(seconds: Self.seconds)
        let database = place.database
        // `place` closes the database and removes its folder when released: keep it to the end.
        defer { withExtendedLifetime(place) {} }
        let seconds = soak.run(writer: {
            let connection = database.newConnection()
            var j = 0
            while !soak.isStopped {
                j += 1
                let value = j
                connection.readWrite { tx in tx.setObject(String(value), forKey: "k\(value % keys)", inCollection: "log") }
            }
        }, readers: [1, 16, 10_000, 16].map { limit in {
            let connection = database.newConnection()
            connection.objectCacheLimit = UInt(limit)
            var lastSnapshot: UInt64 = 0
            var last = [Int](repeating: 0, count: keys)
            while !soak.isStopped {
                connection.read { tx in
                    let snapshot = Int(connection.snapshot)
                    var values = [Int](repeating: 0, count: keys)
                    for k in 0..<keys { values[k] = Int(tx.object(forKey: "k\(k)", inCollection: "log") as? String ?? "0") ?? -1 }
                    // The state after commits 1…s: key k holds the largest j ≤ s with j % keys == k.
                    let expected = (0..<keys).map { k in
                        let j = snapshot - ((snapshot - k) % keys + keys) % keys
                        return j > 0 ? j : 0
                    }
                    soak.check(values == expected, "cache limit \(limit): snapshot \(snapshot) reads a state that is not the commit log's: "
                               + (0..<keys).filter { values[$0] != expected[$0] }.prefix(4).map { "k\($0) = \(values[$0]), expected \(expected[$0])" }.joined(separator: ", "))
                    soak.check(UInt64(snapshot) >= lastSnapshot && zip(values, last).allSatisfy { $0 >= $1 },
                               "cache limit \(limit): went backwards at snapshot \(snapshot)")
                    lastSnapshot = UInt64(snapshot)
                    last = values
                }
            }
        } })
        Self.finish(soak, "caches", seconds: seconds)
    }

    /// A reader holds one snapshot (a long-lived read transaction) while the writer commits
    /// 10,000 times (2,000 at small scale); every read in it sees the state it began with.
    @Test func aLongLivedReaderKeepsItsSnapshotAcrossManyCommits() throws {
        let place = try Place()
        let commits = Scale.pick(small: 2_000, full: 10_000)
        let keys = 50
        place.database.newConnection().readWrite { tx in
            for k in 0..<keys { tx.setObject("initial \(k)", forKey: "k\(k)", inCollection: "c") }
        }
        let soak = Soak(seconds: 3_600)
        let database = place.database
        // `place` closes the database and removes its folder when released: keep it to the end.
        defer { withExtendedLifetime(place) {} }
        let held = database.newConnection()
        _ = held.beginLongLivedReadTransaction()
        let base = held.snapshot
        let written = SharedCounter()
        let seconds = soak.run(writer: {
            let connection = database.newConnection()
            for j in 1...commits {
                connection.readWrite { tx in
                    tx.setObject("commit \(j)", forKey: "k\(j % keys)", inCollection: "c")
                    if j % 7 == 0 { tx.removeObject(forKey: "k\((j * 3) % keys)", inCollection: "c") }
                }
                written.set(j)
            }
        }, readers: [{
            while !soak.isStopped {
                held.read { tx in
                    soak.check(held.snapshot == base, "the held snapshot moved to \(held.snapshot)")
                    for k in stride(from: 0, to: keys, by: 7) {
                        soak.check(tx.object(forKey: "k\(k)", inCollection: "c") as? String == "initial \(k)",
                                   "k\(k) changed under the held snapshot after \(written.value) commits")
                    }
                }
            }
        }])
        #expect(written.value == commits)
        #expect(database.snapshot == base + UInt64(commits))
        held.read { tx in soak.check(tx.object(forKey: "k1", inCollection: "c") as? String == "initial 1", "after the writer finished") }
        _ = held.endLongLivedReadTransaction()
        held.read { tx in #expect(tx.object(forKey: "k\(commits % keys)", inCollection: "c") as? String == "commit \(commits)") }
        Self.finish(soak, "long-lived-reader", seconds: seconds)
    }
}
