// The crash child's multi-process commands (`mpcount`, `mpserve`, `mpbank`; see main.swift).
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import YapDB
import TestSupport

/// Opens `path` with multi-process support (exit 3 when it cannot).
func openShared(_ path: String) -> YapDatabase {
    let options = YapDatabaseOptions()
    options.enableMultiProcessSupport = true
    options.busyTimeout = 60
    do {
        return try YapDatabase.open(url: URL(fileURLWithPath: path), options: options)
    } catch {
        report("open failed: \(error)", to: 2)
        exit(3)
    }
}

/// The `mpcount` command: read-modify-write transactions taking turns with another process.
func multiProcessCount(path: String, count: Int) {
    let database = openShared(path)
    let connection = database.newConnection()
    let pid = getpid()
    report("ready")
    _ = readLine()
    for i in 0..<count {
        do {
            try connection.write { tx in
                let current = Int(tx.object(forKey: "n", inCollection: "count") as? String ?? "0") ?? -1_000_000
                tx.setObject(String(current + 1), forKey: "n", inCollection: "count")
                tx.setObject("row \(i)", forKey: "\(pid)-\(i)", inCollection: "rows")
            }
        } catch {
            report("commit \(i) failed: \(error)", to: 2)
            exit(4)
        }
    }
    report("done \(database.snapshot)")
    try? database.close()
}

/// The `mpserve` command: a second process reading and writing beside the test.
func multiProcessServe(path: String) {
    let database = openShared(path)
    let connection = database.newConnection()
    report("ready")
    while let line = readLine() {
        let words = line.split(separator: " ").map(String.init)
        switch words.first {
        case "put" where words.count == 3:
            do {
                try connection.write { tx in tx.setObject(words[2], forKey: words[1], inCollection: "rows") }
                report("put \(database.snapshot)")
            } catch {
                report("error \(describe(error))")
            }
        case "get" where words.count == 2:
            report(connection.read { tx in tx.object(forKey: words[1], inCollection: "rows") as? String } ?? "nil")
        case "longread":
            connection.beginLongLivedReadTransaction()
            report("reading \(connection.snapshot)")
        case "endlongread":
            connection.endLongLivedReadTransaction()
            report("ended")
        case "hang" where words.count == 2:
            try? connection.write { tx in
                tx.setObject("partial", forKey: words[1], inCollection: "rows")
                // Bytes that do not compress, so the records reach the file before the commit.
                var random = SeededRandom(seed: 27)
                for i in 0..<3 {
                    let bytes = (0..<600_000).map { _ in UInt8.random(in: 0...255, using: &random) }
                    tx.setObject(Data(bytes), forKey: "big\(i)", inCollection: "blobs")
                }
                report("inside")
                while true { sleep(60) }
            }
        case "checkpoint":
            do {
                try database.checkpoint()
                report("checkpointed")
            } catch {
                report("error \(describe(error))")
            }
        case "quit":
            try? database.close()
            exit(0)
        default:
            report("error unknown command \(line)")
        }
    }
}

/// The `mpbank` command: transfers between ten accounts whose sum stays 10,000, for readers in
/// another process to check.
func multiProcessBank(path: String, transfers: Int) {
    let database = openShared(path)
    let connection = database.newConnection()
    var random = SeededRandom(seed: UInt64(getpid()))
    do {
        try connection.write { tx in
            guard tx.object(forKey: "0", inCollection: "bank") == nil else { return }
            for account in 0..<10 { tx.setObject("1000", forKey: "\(account)", inCollection: "bank") }
        }
    } catch {
        report("setup failed: \(error)", to: 2)
        exit(4)
    }
    report("ready")
    for number in 1...max(1, transfers) {
        let from = Int.random(in: 0..<10, using: &random), to = Int.random(in: 0..<10, using: &random)
        let amount = Int.random(in: 1...100, using: &random)
        let pad = Data((0..<65_536).map { _ in UInt8.random(in: 0...255, using: &random) })
        do {
            try connection.write { tx in
                let a = Int(tx.object(forKey: "\(from)", inCollection: "bank") as? String ?? "") ?? 0
                tx.setObject(String(a - amount), forKey: "\(from)", inCollection: "bank")
                let b = Int(tx.object(forKey: "\(to)", inCollection: "bank") as? String ?? "") ?? 0
                tx.setObject(String(b + amount), forKey: "\(to)", inCollection: "bank")
                tx.setObject(pad, forKey: "p", inCollection: "pad")
            }
        } catch {
            report("transfer \(number) failed: \(error)", to: 2)
            exit(4)
        }
        if number % 10 == 0 { report("transfers \(number)") }
    }
    report("done")
    try? database.close()
}

/// CLOCK_MONOTONIC in nanoseconds (one clock for every process of the host).
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// The `mplatency` command: how long after a commit returns in one process another process's
/// next read sees it.
func multiProcessLatency(path: String, role: String, samples: Int) {
    let database = openShared(path)
    let connection = database.newConnection()
    if role == "write" {
        report("ready")
        _ = readLine()
        for i in 1...max(1, samples) {
            do {
                // The time goes in the commit, so it is taken before: the figure includes the commit's sync.
                try connection.write { tx in tx.setObject("\(i) \(monotonicNanoseconds())", forKey: "t", inCollection: "lat") }
            } catch {
                report("commit failed: \(error)", to: 2)
                exit(4)
            }
            usleep(2_000)
        }
        report("done")
    } else {
        report("ready")
        var last = 0
        var delays: [UInt64] = []
        var reads = 0
        let started = monotonicNanoseconds()
        while delays.count < samples && monotonicNanoseconds() - started < 60_000_000_000 {
            let value = connection.read { tx in tx.object(forKey: "t", inCollection: "lat") as? String }
            let seen = monotonicNanoseconds()
            reads += 1
            guard let parts = value?.split(separator: " "), parts.count == 2, let i = Int(parts[0]), let sent = UInt64(parts[1]),
                  i != last else { continue }
            last = i
            delays.append((seen &- sent) / 1000)
        }
        delays.sort()
        guard !delays.isEmpty else { report("no samples"); exit(4) }
        report("median \(delays[delays.count / 2]) p90 \(delays[delays.count * 9 / 10]) max \(delays.last!) reads \(reads)")
    }
    try? database.close()
}
