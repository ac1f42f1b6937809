// The child process of the reliability tests (not a product):
//
//   YapDBCrashChild run PATH SEED [OPTIONS]
//                                   opens PATH (durability .full unless OPTIONS say otherwise)
//                                   and commits transactions snapshot+1, snapshot+2, … of
//                                   `CrashChildScript` for SEED, writing "N\n" to standard
//                                   output after commit N returned, until killed (or 120 s
//                                   pass). OPTIONS: comma-separated `durability=full|normal|off`,
//                                   `read=mapped|cached`, `checkpoint=BYTES`, `idle=SECONDS`
//                                   (0: off), `compression=lz4|none`, `multiprocess=1`
//                                   (`enableMultiProcessSupport`, busy timeout 60 s).
//   YapDBCrashChild serve PATH SEED mapped|cached [nobody]
//                                   (with "nobody", run by root: first drops to user and group
//                                   65534, so file permissions apply to it)
//                                   opens PATH, writes "ready", then answers one line per
//                                   command read from standard input: "commit K" (K more
//                                   transactions of the script → "committed SNAPSHOT" or
//                                   "error …"), "check" (reads every row and compares it with
//                                   the script's state, then `verify()` → "check rows=ok|differ
//                                   verify=ok|problems|error"), "reopen" (closes and opens
//                                   again → "reopened SNAPSHOT" or "error …"), "quit" (closes,
//                                   exits 0).
//   YapDBCrashChild fdlimit PATH SEED
//                                   for soft descriptor limits from 3 to the descriptors open
//                                   now plus 12: sets the limit, opens PATH, commits five
//                                   transactions and closes, writing "committed N" after each
//                                   commit and "limit L: ok" or "limit L: error TYPE …"; then
//                                   restores the limit and writes "done".
//   YapDBCrashChild fdcache PATH SEED
//                                   builds a database of many small segments at the normal
//                                   limit, then for each read mode ("mapped", "cached") lowers
//                                   the soft descriptor limit to the descriptors open now plus
//                                   12, opens it with a descriptor cache of 3, reads every row
//                                   and closes, writing "segments N", "MODE rows=ok|differ
//                                   open=D base=B after=A" (descriptors open before, while open
//                                   and after) or "MODE error TYPE …"; then "done".
//   YapDBCrashChild hold PATH       opens PATH, writes "ready\n", holds it open until standard
//                                   input closes.
//   YapDBCrashChild holdro PATH [nobody]
//                                   opens PATH read-only (`options.readOnly`; with "nobody", run
//                                   by root: first drops to user and group 65534), writes
//                                   "ready N\n" (N: the rows it reads) or "error E\n", holds it
//                                   open until standard input closes.
//   YapDBCrashChild mpcount PATH N   opens PATH with multi-process support (busy timeout 60 s),
//                                   writes "ready", waits for a line on standard input, then
//                                   runs N read-write transactions, each adding 1 to the count
//                                   in ("count", "n") and setting ("rows", "PID-I"); writes
//                                   "done SNAPSHOT", closes.
//   YapDBCrashChild mpserve PATH    opens PATH with multi-process support, writes "ready", then
//                                   answers one line per command: "put KEY VALUE" (one write
//                                   transaction → "put SNAPSHOT" or "error …"), "get KEY" (→ the
//                                   value or "nil"), "hang KEY" (a write transaction that sets
//                                   KEY and three 600 KB rows, writes "inside" and never ends:
//                                   the parent kills it), "checkpoint" (→ "checkpointed" or
//                                   "error …"), "longread" (begins a long-lived read
//                                   transaction → "reading SNAPSHOT"), "endlongread" (→
//                                   "ended"), "quit" (closes, exits 0).
//   YapDBCrashChild mpbank PATH N   opens PATH with multi-process support, creates ten accounts
//                                   ("bank", "0"…"9", 1,000 each) when missing, writes "ready",
//                                   then N transfers, one per read-write transaction (which also
//                                   rewrites 64 KB of random bytes in ("pad", "p")), writing
//                                   "transfers K" after every tenth; then "done", closes.
//   YapDBCrashChild mplatency PATH write|read N
//                                   a measurement, not a test: "write" waits for a line on
//                                   standard input, then commits N times ("lat", "t") = "I NS"
//                                   (NS: CLOCK_MONOTONIC nanoseconds taken inside the
//                                   transaction, so the figure includes the commit's sync),
//                                   2 ms apart; "read" writes
//                                   "ready", then reads ("lat", "t") in a loop until it saw N
//                                   new values (or 60 s pass) and writes "median US p90 US
//                                   max US reads R": commit-to-visible times in microseconds.
//
// Exit status: 0 normal end, 2 usage, 3 open failed, 4 commit failed (the error on stderr).
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import YapDB
import TestSupport

/// Writes `line` and a newline to descriptor `fd` in one `write` (unbuffered: a line the
/// parent reads was written before the kill, never lost in a buffer).
func report(_ line: String, to fd: Int32 = 1) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
}

func open(_ path: String, settings: String = "") -> YapDatabase {
    let options = YapDatabaseOptions()
    options.durability = .full
    options.checkpointThreshold = 256 << 10
    for setting in settings.split(separator: ",") {
        let parts = setting.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { continue }
        switch (parts[0], parts[1]) {
        case ("durability", "normal"): options.durability = .normal
        case ("durability", "off"): options.durability = .off
        case ("read", "cached"): options.indexReadMode = .cached(pages: 16)
        case ("checkpoint", let bytes): options.checkpointThreshold = Int(bytes) ?? options.checkpointThreshold
        case ("idle", let seconds): options.idleCheckpointDelay = Double(seconds) ?? options.idleCheckpointDelay
        case ("compression", "none"): options.compression = .none
        case ("multiprocess", "1"):
            options.enableMultiProcessSupport = true
            options.busyTimeout = 60
        default: break
        }
    }
    do {
        return try YapDatabase.open(url: URL(fileURLWithPath: path), options: options)
    } catch {
        report("open failed: \(error)", to: 2)
        exit(3)
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    report("usage: YapDBCrashChild run PATH SEED | hold PATH | holdro PATH | srvbadinit PATH | srvsetgrouping PATH", to: 2)
    exit(2)
}

switch arguments[1] {
case "run" where arguments.count == 4 || arguments.count == 5:
    guard let seed = UInt64(arguments[3]) else { exit(2) }
    let database = open(arguments[2], settings: arguments.count == 5 ? arguments[4] : "")
    let connection = database.newConnection()
    let started = Date()
    var number = database.snapshot + 1
    while Date().timeIntervalSince(started) < 120 {
        let operations = CrashChildScript.transaction(seed: seed, number: number)
        do {
            try connection.write { tx in
                for operation in operations {
                    switch operation {
                    case .set(let collection, let key, let value): tx.setObject(Data(value), forKey: key, inCollection: collection)
                    case .remove(let collection, let key): tx.removeObject(forKey: key, inCollection: collection)
                    case .removeCollection(let collection): tx.removeAllObjects(inCollection: collection)
                    }
                }
            }
            report("\(number)")
            if number % 40 == 0 { try database.compact() }
        } catch {
            report("commit \(number) failed: \(error)", to: 2)
            exit(4)
        }
        number += 1
    }
case "serve" where arguments.count == 5 || arguments.count == 6:
    guard let seed = UInt64(arguments[3]) else { exit(2) }
    if arguments.count == 6 && arguments[5] == "nobody" && getuid() == 0 {
        guard setgid(65534) == 0, setuid(65534) == 0 else {
            report("could not drop privileges: errno \(errno)", to: 2)
            exit(2)
        }
    }
    serve(path: arguments[2], seed: seed, settings: arguments[4] == "cached" ? "read=cached" : "")
case "fdlimit" where arguments.count == 4:
    guard let seed = UInt64(arguments[3]) else { exit(2) }
    descriptorLimits(path: arguments[2], seed: seed)
case "fdcache" where arguments.count == 4:
    guard let seed = UInt64(arguments[3]) else { exit(2) }
    descriptorCache(path: arguments[2], seed: seed)
case "mpcount" where arguments.count == 4:
    guard let count = Int(arguments[3]), count <= 10_000 else { exit(2) }
    multiProcessCount(path: arguments[2], count: count)
case "mpserve":
    multiProcessServe(path: arguments[2])
case "mplatency" where arguments.count == 5:
    guard let count = Int(arguments[4]), count <= 100_000 else { exit(2) }
    multiProcessLatency(path: arguments[2], role: arguments[3], samples: count)
case "mpbank" where arguments.count == 4:
    guard let count = Int(arguments[3]), count <= 100_000 else { exit(2) }
    multiProcessBank(path: arguments[2], transfers: count)
case "hold":
    let database = open(arguments[2])
    report("ready")
    while getchar() != EOF {}
    withExtendedLifetime(database) {}
case "holdro":
    if arguments.count == 4 && arguments[3] == "nobody" && getuid() == 0 {
        guard setgid(65534) == 0, setuid(65534) == 0 else {
            report("could not drop privileges: errno \(errno)", to: 2)
            exit(2)
        }
    }
    let options = YapDatabaseOptions()
    options.readOnly = true
    let database: YapDatabase
    do { database = try YapDatabase.open(url: URL(fileURLWithPath: arguments[2]), options: options) } catch {
        report("error \(error)")
        exit(3)
    }
    let rows = database.newConnection().read { tx in tx.numberOfKeysInAllCollections() }
    report("ready \(rows)")
    while getchar() != EOF {}
    withExtendedLifetime(database) {}
case "srvbadinit":
    // YapDatabase's test_badInit: the plain view initializer on a search results view.
    report("making")
    let view = YapDatabaseSearchResultsView(grouping: .withKeyBlock { _, _, _ in "" },
                                            sorting: .withKeyBlock { _, _, _, _, _, _ in .orderedSame }, versionTag: "1", options: nil)
    report("made \(view)")   // not reached
case "srvsetgrouping":
    // A new grouping on a search results view of a parent view (YapDatabase throws).
    let database = open(arguments[2])
    let handler = YapDatabaseFullTextSearchHandler.withObjectBlock { _, dict, _, _, object in dict["content"] = object }
    _ = database.register(YapDatabaseFullTextSearch(columnNames: ["content"], handler: handler), withName: "fts")
    let grouping = YapDatabaseViewGrouping.withKeyBlock { _, _, _ in "" }
    let sorting = YapDatabaseViewSorting.withKeyBlock { _, _, _, _, _, _ in .orderedSame }
    _ = database.register(YapDatabaseAutoView(grouping: grouping, sorting: sorting, versionTag: "1"), withName: "order")
    _ = database.register(YapDatabaseSearchResultsView(fullTextSearchName: "fts", parentViewName: "order", versionTag: "1", options: nil),
                          withName: "results")
    report("registered")
    database.newConnection().readWrite { tx in
        (tx.ext("results") as? YapDatabaseAutoViewTransaction)?.setGrouping(grouping, sorting: sorting, versionTag: "2")
    }
    report("regrouped")   // not reached
default:
    exit(2)
}

/// Commits transaction `number` of the script for `seed`.
func commit(_ connection: YapDatabaseConnection, seed: UInt64, number: UInt64) throws {
    let operations = CrashChildScript.transaction(seed: seed, number: number)
    try connection.write { tx in
        for operation in operations {
            switch operation {
            case .set(let collection, let key, let value): tx.setObject(Data(value), forKey: key, inCollection: collection)
            case .remove(let collection, let key): tx.removeObject(forKey: key, inCollection: collection)
            case .removeCollection(let collection): tx.removeAllObjects(inCollection: collection)
            }
        }
    }
}

/// The error's type and description on one line.
func describe(_ error: any Error) -> String {
    "\(type(of: error)) \(error)".replacingOccurrences(of: "\n", with: " ")
}

/// The `serve` command: a live database another process interferes with.
func serve(path: String, seed: UInt64, settings: String) {
    var database = open(path, settings: settings)
    var connection = database.newConnection()
    report("ready")
    while let line = readLine() {
        let words = line.split(separator: " ")
        switch words.first {
        case "commit":
            let count = words.count > 1 ? UInt64(words[1]) ?? 1 : 1
            do {
                for _ in 0..<count { try commit(connection, seed: seed, number: database.snapshot + 1) }
                report("committed \(database.snapshot)")
            } catch {
                report("error \(describe(error))")
            }
        case "check":
            var rows: [String: [String: [UInt8]]] = [:]
            let snapshot = connection.read { tx in
                for collection in tx.allCollections() {
                    for key in tx.allKeys(inCollection: collection) {
                        if let value = tx.object(forKey: key, inCollection: collection) as? Data {
                            rows[collection, default: [:]][key] = [UInt8](value)
                        }
                    }
                }
                return database.snapshot
            }
            let same = rows == CrashChildScript.state(seed: seed, after: snapshot)
            var verdict = "ok"
            do { verdict = try database.verify().isValid ? "ok" : "problems" } catch { verdict = "error:\(type(of: error))" }
            report("check rows=\(same ? "ok" : "differ") verify=\(verdict)")
        case "reopen":
            try? database.close()
            do {
                let options = YapDatabaseOptions()
                if settings.contains("cached") { options.indexReadMode = .cached(pages: 16) }
                database = try YapDatabase.open(url: URL(fileURLWithPath: path), options: options)
                connection = database.newConnection()
                report("reopened \(database.snapshot)")
            } catch {
                report("error \(describe(error))")
                report("quitting")
                exit(0)
            }
        case "quit":
            try? database.close()
            exit(0)
        default:
            report("error unknown command \(line)")
        }
    }
}

/// The number of descriptors open in this process now.
func openDescriptors() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 8
}

/// The `fdlimit` command: the descriptor limit reached while opening, committing, closing.
func descriptorLimits(path: String, seed: UInt64) {
    // RLIMIT_NOFILE as the C functions take it (an enum in Glibc's headers, an Int32 in
    // Darwin's). A local: globals of main.swift are set in source order, after this runs.
    #if canImport(Glibc)
    let descriptorLimit = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    let descriptorLimit = RLIMIT_NOFILE
    #endif
    var original = rlimit()
    getrlimit(descriptorLimit, &original)
    // As in an app, a database opens at the normal limit first: that starts Dispatch's timer
    // loop, whose descriptors Dispatch cannot do without (it stops the process when it cannot
    // get them; docs/reliability.md).
    if let warm = try? YapDatabase.open(url: URL(fileURLWithPath: path + "-first"), options: YapDatabaseOptions()) {
        try? warm.close()
    }
    let base = openDescriptors()
    var number: UInt64 = 0
    for value in 3...(base + 12) {
        var limit = original
        limit.rlim_cur = rlim_t(value)
        if setrlimit(descriptorLimit, &limit) != 0 {
            report("limit \(value): setrlimit failed: errno \(errno)")
            continue
        }
        var database: YapDatabase?
        do {
            let options = YapDatabaseOptions()
            options.durability = .full
            let opened = try YapDatabase.open(url: URL(fileURLWithPath: path), options: options)
            database = opened
            let connection = opened.newConnection()
            for _ in 0..<5 {
                number = opened.snapshot + 1
                try commit(connection, seed: seed, number: number)
                report("committed \(number)")
            }
            try opened.close()
            report("limit \(value): ok")
        } catch {
            report("limit \(value): error \(describe(error))")
            try? database?.close()
        }
        setrlimit(descriptorLimit, &original)
    }
    report("done")
}

/// The `fdcache` command: a database of many segments read whole through a descriptor cache
/// of 3 under a soft descriptor limit far below its number of files.
func descriptorCache(path: String, seed: UInt64) {
    #if canImport(Glibc)
    let descriptorLimit = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    let descriptorLimit = RLIMIT_NOFILE
    #endif
    let directory = (path as NSString).deletingLastPathComponent
    func segments() -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.contains("-seg-") }.count
    }
    // Many small segments, written at the normal limit.
    var rounds = 0
    while segments() < 30 && rounds < 40 {
        rounds += 1
        do {
            let database = try YapDatabase.open(path: path, options: YapDatabaseOptions(), segmentLimit: 4096)
            let connection = database.newConnection()
            for _ in 0..<100 { try commit(connection, seed: seed, number: database.snapshot + 1) }
            try database.close()
        } catch {
            report("build error \(describe(error))")
            exit(4)
        }
    }
    report("segments \(segments())")
    var original = rlimit()
    getrlimit(descriptorLimit, &original)
    for mode in ["mapped", "cached"] {
        let base = openDescriptors()
        var limit = original
        limit.rlim_cur = rlim_t(base + 12)
        setrlimit(descriptorLimit, &limit)
        // In a function of its own, so that every reference to the database is gone before
        // the descriptors are counted again.
        func readAll() throws -> String {
            let options = YapDatabaseOptions()
            if mode == "cached" { options.indexReadMode = .cached(pages: 16) }
            let database = try YapDatabase.open(path: path, options: options, segmentLimit: 4096, descriptorCacheLimit: 3)
            var rows: [String: [String: [UInt8]]] = [:]
            let snapshot = database.newConnection().read { tx in
                for collection in tx.allCollections() {
                    for key in tx.allKeys(inCollection: collection) {
                        if let value = tx.object(forKey: key, inCollection: collection) as? Data {
                            rows[collection, default: [:]][key] = [UInt8](value)
                        }
                    }
                }
                return database.snapshot
            }
            let open = openDescriptors()
            let same = rows == CrashChildScript.state(seed: seed, after: snapshot)
            try database.close()
            return "\(mode) rows=\(same ? "ok" : "differ") open=\(open) base=\(base)"
        }
        do {
            let line = try readAll()
            report("\(line) after=\(openDescriptors())")
        } catch {
            report("\(mode) error \(describe(error))")
        }
        setrlimit(descriptorLimit, &original)
    }
    report("done")
}
