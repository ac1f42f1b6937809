import CSQLite
import Foundation
import YapDB
#if canImport(Glibc)
import Glibc
#endif

// W15 (issue 27): two processes on one database. YapDB with `enableMultiProcessSupport`, SQLite
// in WAL mode (its shared-memory index is how two processes share a database), each opened by
// this process and by a child (`yapdb-bench child-xp`):
// - commit-to-visible: this process commits a row holding CLOCK_MONOTONIC (taken inside the
//   transaction, so the commit and its sync are counted), 2 ms apart; the child reads the row in
//   a loop, a read transaction each time, and reports how long after each value was taken it
//   first saw it (the clock is the same for every process of the machine);
// - point reads in this process while the child reads other rows in a loop, against the same
//   reads with no other process, and (YapDB) with the option off.

/// W15's own rows: 16-byte keys `r000000000000042`, 100-byte values; row `lat` holds the clock.
enum CrossProcess {
    static let rows = 50_000
    static let reads = 100_000
    static let commits = 200
    static let latKey = "lat0000000000000"
    static func key(_ i: Int) -> String { "r" + String(repeating: "0", count: 15 - String(i).count) + String(i) }
    static func value(_ i: Int) -> [UInt8] { (0..<100).map { UInt8(truncatingIfNeeded: $0 &+ i &* 31) } }
    /// `count` row numbers in a seeded random order.
    static func readOrder(seed: UInt64, count: Int = reads) -> [Int] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(rows))
        }
    }
}

/// One engine's side of W15, in either process.
protocol CrossProcessStore: AnyObject {
    /// Rows 0..<CrossProcess.rows in one transaction.
    func load() throws
    /// Stores the clock, read inside the transaction just before it commits, in row `lat`.
    func putClock() throws
    /// The clock row `lat` holds, read in a read transaction of its own (0 when missing).
    func readClock() throws -> UInt64
    /// The rows of `order`, in one read transaction; a checksum of their values.
    func readRows(_ order: [Int]) throws -> UInt64
    func close() throws
}

/// YapDB: the public API, caches off, `Data` stored as it is.
final class YapCrossProcessStore: CrossProcessStore {
    let database: YapDatabase
    let writer: YapDatabaseConnection
    let reader: YapDatabaseConnection

    init(folder: URL, durable: Bool, shared: Bool = true) throws {
        let options = YapDatabaseOptions()
        options.durability = durable ? .full : .normal
        options.enableMultiProcessSupport = shared
        options.busyTimeout = 30
        database = try YapDatabase.open(url: YapStore.fileURL(in: folder), options: options)
        YapStore.registerRawBytes(database)
        writer = database.newConnection()
        reader = database.newConnection()
        for connection in [writer, reader] {
            connection.objectCacheEnabled = false
            connection.metadataCacheEnabled = false
        }
    }

    func load() throws {
        try writer.write { tx in
            for i in 0..<CrossProcess.rows {
                tx.setObject(Data(CrossProcess.value(i)), forKey: CrossProcess.key(i), inCollection: Dataset.collection)
            }
        }
    }

    func putClock() throws {
        try writer.write { tx in
            var now = nowNanoseconds()
            tx.setObject(Data(bytes: &now, count: 8), forKey: CrossProcess.latKey, inCollection: Dataset.collection)
        }
    }

    func readClock() throws -> UInt64 {
        reader.read { tx in
            guard let data = tx.serializedObject(forKey: CrossProcess.latKey, inCollection: Dataset.collection), data.count == 8 else { return 0 }
            return data.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        }
    }

    func readRows(_ order: [Int]) throws -> UInt64 {
        let keys = order.map(CrossProcess.key)
        return try reader.read { tx in
            var sum: UInt64 = 0
            for key in keys {
                guard let value = tx.serializedObject(forKey: key, inCollection: Dataset.collection) else {
                    throw BenchError("YapDB W15: \(key) is missing")
                }
                sum &+= value.withUnsafeBytes { checksum($0) }
            }
            return sum
        }
    }

    func close() throws { try database.close() }
}

/// SQLite in WAL mode, YapDatabase's table (`SQLiteStore`'s), statements prepared once.
final class SQLiteCrossProcessStore: CrossProcessStore {
    let connection: SQLiteConnection
    private let upsert: OpaquePointer
    private let select: OpaquePointer
    private let begin: OpaquePointer
    private let beginImmediate: OpaquePointer
    private let commit: OpaquePointer

    init(folder: URL, synchronous: String) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // The table and index as SQLiteStore makes them.
        try SQLiteStore(folder: folder, synchronous: synchronous).close()
        connection = try SQLiteConnection(path: SQLiteStore.fileURL(in: folder).path, synchronous: synchronous)
        try connection.execute("PRAGMA busy_timeout = 30000;")
        upsert = try connection.prepare("""
            INSERT INTO "database2" ("collection", "key", "data", "metadata") VALUES (?, ?, ?, NULL)
              ON CONFLICT ("collection", "key") DO UPDATE SET "data" = excluded."data", "metadata" = NULL
            """)
        select = try connection.prepare(#"SELECT "data" FROM "database2" WHERE "collection" = ? AND "key" = ?"#)
        begin = try connection.prepare("BEGIN")
        beginImmediate = try connection.prepare("BEGIN IMMEDIATE")
        commit = try connection.prepare("COMMIT")
    }

    private func put(_ key: String, _ value: UnsafeRawBufferPointer) throws {
        try Array(key.utf8).withUnsafeBytes { keyBytes in
            connection.bindCollectionAndKey(upsert, keyBytes.baseAddress!)
            sqlite3_bind_blob(upsert, 3, value.baseAddress, Int32(value.count), nil)
            try connection.stepDone(upsert)
        }
    }

    func load() throws {
        try connection.stepDone(beginImmediate)
        for i in 0..<CrossProcess.rows { try CrossProcess.value(i).withUnsafeBytes { try put(CrossProcess.key(i), $0) } }
        try connection.stepDone(commit)
    }

    func putClock() throws {
        try connection.stepDone(beginImmediate)
        var now = nowNanoseconds()
        try withUnsafeBytes(of: &now) { try put(CrossProcess.latKey, UnsafeRawBufferPointer($0)) }
        try connection.stepDone(commit)
    }

    /// The value of `key` given to `body`, in the transaction the caller holds (or autocommit).
    private func withValue<T>(_ key: String, _ body: (UnsafeRawBufferPointer?) throws -> T) throws -> T {
        try Array(key.utf8).withUnsafeBytes { keyBytes in
            connection.bindCollectionAndKey(select, keyBytes.baseAddress!)
            defer { sqlite3_reset(select) }
            guard sqlite3_step(select) == SQLITE_ROW else { return try body(nil) }
            return try body(SQLiteConnection.blob(select, column: 0))
        }
    }

    func readClock() throws -> UInt64 {
        try withValue(CrossProcess.latKey) { value in
            guard let value, value.count == 8 else { return 0 }
            return value.loadUnaligned(as: UInt64.self)
        }
    }

    func readRows(_ order: [Int]) throws -> UInt64 {
        try connection.stepDone(begin)
        defer { _ = try? connection.stepDone(commit) }
        var sum: UInt64 = 0
        for i in order {
            sum &+= try withValue(CrossProcess.key(i)) { value in
                guard let value else { throw BenchError("SQLite W15: row \(i) is missing") }
                return checksum(value)
            }
        }
        return sum
    }

    func close() throws {
        for statement in [upsert, select, begin, beginImmediate, commit] { sqlite3_finalize(statement) }
        try connection.close()
    }
}

/// Opens W15's store of `engine` at `folder` (`durable`: YapDB `.full`, SQLite `FULL`).
func openCrossProcessStore(_ engine: Engine, folder: URL, shared: Bool = true) throws -> any CrossProcessStore {
    switch engine {
    case .yapdb: return try YapCrossProcessStore(folder: folder, durable: true, shared: shared)
    case .sqliteFull: return try SQLiteCrossProcessStore(folder: folder, synchronous: "FULL")
    case .sqliteNormal: return try SQLiteCrossProcessStore(folder: folder, synchronous: "NORMAL")
    default: throw BenchError("W15 has no \(engine.rawValue)")
    }
}

/// `yapdb-bench child-xp ENGINE DURABLE FOLDER ROLE`: W15's other process. Writes `ready` once
/// open, then ROLE `follow` reads row `lat` in a loop until it saw `CrossProcess.commits` new
/// values (or 60 s passed) and writes `median=NS p90=NS seen=N`; ROLE `reads` reads random rows
/// in read transactions of 1,000 until it is terminated.
func childCrossProcess(engine name: String, durable: Bool, folder: String, role: String) throws -> Never {
    guard let engine = Engine(rawValue: name) else { throw BenchError("unknown engine \(name)") }
    let url = URL(fileURLWithPath: folder)
    let store: any CrossProcessStore = engine == .yapdb
        ? try YapCrossProcessStore(folder: url, durable: durable)
        : try SQLiteCrossProcessStore(folder: url, synchronous: durable ? "FULL" : "NORMAL")
    func say(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
    }
    switch role {
    case "follow":
        var last = try store.readClock()
        var latencies: [Double] = []
        say("ready")
        let deadline = nowNanoseconds() + 60_000_000_000
        while latencies.count < CrossProcess.commits && nowNanoseconds() < deadline {
            let clock = try store.readClock()
            if clock != last {
                let now = nowNanoseconds()
                if clock > last && now >= clock { latencies.append(Double(now - clock)) }
                last = clock
            }
        }
        try store.close()
        guard !latencies.isEmpty else { throw BenchError("W15: the child saw no commit") }
        let sorted = latencies.sorted()
        say("median=\(median(latencies)) p90=\(sorted[Int(Double(sorted.count - 1) * 0.9)]) seen=\(latencies.count)")
        exit(0)
    case "reads":
        say("ready")
        var seed: UInt64 = 7
        while true {
            seed &+= 1
            _ = try store.readRows(CrossProcess.readOrder(seed: seed, count: 1_000))
        }
    default:
        throw BenchError("W15: unknown role \(role)")
    }
}

/// A child process of W15, started and waited for its `ready` line.
final class CrossProcessChild {
    let process = Process()
    private let output = Pipe()
    private var buffered = Data()

    init(_ arguments: [String]) throws {
        process.executableURL = selfExecutable()
        process.arguments = arguments
        process.standardOutput = output
        try process.run()
        guard try line() == "ready" else { throw BenchError("W15: the child did not start") }
    }

    /// The next line the child writes (nil at its end).
    func line() throws -> String? {
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let text = String(decoding: buffered[..<newline], as: UTF8.self)
                buffered.removeSubrange(...newline)
                return text
            }
            let more = output.fileHandleForReading.availableData
            if more.isEmpty { return nil }
            buffered.append(more)
        }
    }

    /// Terminates the child if it still runs after `seconds` (then its pipe closes and `line()`
    /// returns nil), so a stuck child fails the workload instead of stopping the run.
    func watch(seconds: Double) {
        let process = process
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { if process.isRunning { process.terminate() } }
    }

    /// Ends a child that runs until told (SIGTERM) and reaps it.
    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

extension Runner {
    /// W15: two processes on one database (issue 27); see the file's head.
    func runW15() throws {
        // A failure here (another process that would not start, say) is noted, not fatal: W15
        // runs last, and the run's other workloads keep their rows.
        do { try runW15Latency() } catch { note("W15: the commit-to-visible part failed: \(error)") }
        do { try runW15Reads() } catch { note("W15: the reads part failed: \(error)") }
    }

    private func runW15Latency() throws {
        for durable in [true, false] {
            let peer: Engine = durable ? .sqliteFull : .sqliteNormal
            let figures = try interleave([.yapdb, peer], reps: settings.reps) { engine, rep in
                let folder = try freshFolder("W15-latency-\(engine)-\(durable)-\(rep)")
                defer { remove(folder) }
                let store: any CrossProcessStore = engine == .yapdb
                    ? try YapCrossProcessStore(folder: folder, durable: durable)
                    : try SQLiteCrossProcessStore(folder: folder, synchronous: durable ? "FULL" : "NORMAL")
                try store.putClock()
                let child = try CrossProcessChild(["child-xp", engine == .yapdb ? Engine.yapdb.rawValue : peer.rawValue,
                                                   durable ? "1" : "0", folder.path, "follow"])
                for _ in 0..<CrossProcess.commits {
                    try store.putClock()
                    usleep(2_000)
                }
                child.watch(seconds: 90)
                let result = try child.line() ?? "(the child was stopped after 90 s)"
                child.process.waitUntilExit()
                try store.close()
                var out: [String: Double] = [:]
                for pair in result.split(separator: " ") {
                    let parts = pair.split(separator: "=")
                    if parts.count == 2, let value = Double(parts[1]) { out[String(parts[0])] = value }
                }
                guard out["median"] != nil else {
                    // A follower that saw nothing (or was stopped) leaves this run out, with a note.
                    note("W15: \(engine.rawValue) run \(rep), \(durable ? "durable" : "non-durable"): the other process reported \"\(result)\"; run left out")
                    return [:]
                }
                return out
            }
            let kind = durable ? "durable commits (YapDB .full, SQLite WAL FULL)" : "non-durable commits (YapDB .normal, SQLite WAL NORMAL)"
            add("W15", "commit-to-visible in another process, \(kind), median of \(CrossProcess.commits)", .time, figures, "median",
                note: "from the clock read inside the writer's transaction to the first read that sees it in the other process (which reads in a loop)")
            add("W15", "commit-to-visible in another process, \(kind), p90 of \(CrossProcess.commits)", .time, figures, "p90", charted: false)
        }
    }

    private func runW15Reads() throws {
        let order = CrossProcess.readOrder(seed: 42)
        var expected: UInt64 = 0
        for i in order { expected &+= CrossProcess.value(i).withUnsafeBytes { checksum($0) } }
        var stores: [Engine: (folder: URL, store: any CrossProcessStore)] = [:]
        defer { for (_, entry) in stores { try? entry.store.close(); remove(entry.folder) } }
        for engine in [Engine.yapdb, .sqliteNormal] where settings.wants(engine) {
            let folder = try freshFolder("W15-reads-\(engine)")
            let store = try openCrossProcessStore(engine, folder: folder)
            try store.load()
            stores[engine] = (folder, store)
        }
        let figures = try interleave([.yapdb, .sqliteNormal], reps: settings.reps) { engine, _ in
            guard let entry = stores[engine] else { return [:] }
            let (folder, store) = entry
            var sum: UInt64 = 0
            let alone = try timed { sum = try store.readRows(order) }
            try expectChecksum(sum, expected, engine, "W15 reads")
            let child = try CrossProcessChild(["child-xp", engine.rawValue, "0", folder.path, "reads"])
            let shared = try timed { sum = try store.readRows(order) }
            child.stop()
            try expectChecksum(sum, expected, engine, "W15 reads beside another process")
            var out = ["alone": alone / Double(order.count), "shared": shared / Double(order.count)]
            if engine == .yapdb {
                // The same reads on the same files, opened without multi-process support.
                try store.close()
                let plain = try YapCrossProcessStore(folder: folder, durable: true, shared: false)
                let off = try timed { sum = try plain.readRows(order) }
                try plain.close()
                try expectChecksum(sum, expected, engine, "W15 reads without the option")
                stores[engine] = (folder, try openCrossProcessStore(.yapdb, folder: folder))
                out["off"] = off / Double(order.count)
            }
            return out
        }
        let n = order.count.formatted()
        add("W15", "\(n) random point reads in one read transaction, per read, multi-process support on, no other process", .time,
            figures, "alone", note: "\(CrossProcess.rows.formatted()) rows; SQLite in WAL mode")
        add("W15", "\(n) random point reads in one read transaction, per read, with another process reading", .time, figures, "shared",
            note: "the other process reads random rows in read transactions of 1,000 throughout")
        addYapVariant("W15", "\(n) random point reads in one read transaction, per read, multi-process support off (YapDB)", .time,
                      figures, base: "alone", variant: "off")
    }
}
