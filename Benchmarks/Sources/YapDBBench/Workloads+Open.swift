import Foundation

/// The rows a fresh process reads after opening: the first read, then 1,000 random reads, with
/// the checksums the values must give.
struct OpenProbe {
    /// `keys[0]` is read first (timed with the open); the rest are the random reads.
    var keys: [String] = []
    var firstSum: UInt64 = 0
    var readsSum: UInt64 = 0

    static let randomReads = 1_000
}

/// W8: open + first read in a fresh process per engine (after a clean close, and after a
/// SIGKILL mid-write), and the process's private memory after open + 1,000 random reads; at
/// the run's size and, with `--huge`, at 10M rows.
extension Runner {
    func runW8() throws {
        let data = main
        let engines = Runner.readEngines.filter { settings.wants($0) }
        for engine in engines {
            _ = try fixture(engine)
            try fixtures.removeValue(forKey: engine)?.close()
        }
        var probe = OpenProbe()
        for (position, row) in data.readOrder.prefix(OpenProbe.randomReads + 1).enumerated() {
            probe.keys.append(data.keys[row])
            if position == 0 { probe.firstSum = data.valueChecksum(row) } else { probe.readsSum &+= data.valueChecksum(row) }
        }
        try measureOpen(rows: data.count, probe: probe, reps: settings.reps) { self.fixtureFolder($0) }
        guard settings.huge else { return }
        let hugeProbe = try buildHugeFixtures(engines)
        defer { for engine in engines { remove(hugeFolder(engine)) } }
        try measureOpen(rows: settings.hugeRows, probe: hugeProbe, reps: settings.heavyReps) { self.hugeFolder($0) }
    }

    func hugeFolder(_ engine: Engine) -> URL { settings.workFolder.appendingPathComponent("huge-\(engine)") }

    /// Spawns `child-open` per engine, interleaved: on the database in `folder(engine)` (closed
    /// cleanly), then on a copy a child writer was SIGKILLed in. Adds the W8 rows for `rows`.
    func measureOpen(rows: Int, probe: OpenProbe, reps: Int, folder: @escaping (Engine) -> URL) throws {
        let probePath = settings.workFolder.appendingPathComponent("W8-\(rows).keys").path
        try probe.keys.joined(separator: "\n").write(toFile: probePath, atomically: true, encoding: .utf8)
        func check(_ figures: [String: String], _ engine: Engine, _ what: String) throws {
            try expectChecksum(try figures.checksum("first"), probe.firstSum, engine, "W8 first read \(what)")
            try expectChecksum(try figures.checksum("reads"), probe.readsSum, engine, "W8 random reads \(what)")
        }
        var recovered: [Double] = []
        let figures = try interleave(Runner.readEngines, reps: reps) { engine, rep in
            let clean = try runChild(["child-open", engine.rawValue, folder(engine).path, probePath])
            try check(clean, engine, "after a clean close")
            let copy = settings.workFolder.appendingPathComponent("W8-\(engine)-\(rep)")
            remove(copy)
            try FileManager.default.copyItem(at: folder(engine), to: copy)
            defer { remove(copy) }
            try killWriterMidCommit(engine, copy)
            let killed = try runChild(["child-open", engine.rawValue, copy.path, probePath])
            try check(killed, engine, "after a SIGKILL")
            if let bytes = killed["recovered"].flatMap(Double.init) { recovered.append(bytes) }
            var out = ["clean": try clean.number("open"), "kill": try killed.number("open")]
            if let memory = try? clean.number("memory"), memory >= 0 { out["memory"] = memory }
            return out
        }
        let n = rows.formatted()
        add("W8", "open and first read, \(n) rows, after a clean close (fresh process)", .time, figures, "clean",
            note: "a new process per run: from the open call to the first row read; warm page cache")
        var killNote = "a child process writing durable transactions of 100,000 rows is SIGKILLed 250 ms after its first commit; "
            + "then a new process opens and reads"
        if !recovered.isEmpty { killNote += "; YapDB cut a torn tail of \(format(median(recovered), .bytes)) (median) at open" }
        add("W8", "open and first read, \(n) rows, after a SIGKILL mid-write (fresh process)", .time, figures, "kill", note: killNote)
        add("W8", "private memory (RssAnon) after open + 1,000 random reads, \(n) rows (fresh process)", .bytes, figures, "memory",
            note: privateMemoryBytes() == nil ? "n/a: no /proc/self/status on this system"
                : "RssAnon of /proc/self/status in the new process after its open, first read and 1,000 random reads "
                + "(anonymous pages only: a memory map's file pages and the page cache are not counted)")
    }

    /// Loads `hugeRows` rows into a database per engine, in durable transactions of 100,000 rows
    /// generated chunk by chunk (so the parent never holds them all); returns the probe.
    func buildHugeFixtures(_ engines: [Engine]) throws -> OpenProbe {
        let rows = settings.hugeRows, chunk = 100_000
        var rng = SplitMix64(seed: 0x5EED_1001)
        // picks[0] is the first read, the rest the random reads.
        let picks = (0...OpenProbe.randomReads).map { _ in Int(rng.next() % UInt64(rows)) }
        var stores: [Engine: any Store] = [:]
        for engine in engines {
            let folder = try freshFolder("huge-\(engine)")
            stores[engine] = try openStore(engine, in: folder, durability: .durable, mapSize: settings.lmdbMapSize)
        }
        var keys = [String](repeating: "", count: picks.count)
        var sums = [UInt64](repeating: 0, count: picks.count)
        let start = nowNanoseconds()
        for c in 0..<((rows + chunk - 1) / chunk) {
            let base = c * chunk
            let data = Dataset(count: min(chunk, rows - base), valueSize: 100, kind: .random, seed: 0x5EED_2000 &+ UInt64(c))
            for engine in engines { try stores[engine]!.write(data, rows: Array(0..<data.count)[...]) }
            for (p, global) in picks.enumerated() where global >= base && global < base + data.count {
                keys[p] = data.keys[global - base]
                sums[p] = data.valueChecksum(global - base)
            }
            if c % 10 == 9 { log("  (huge fixtures: \((base + data.count).formatted()) rows, \(format(Double(nowNanoseconds() - start), .time)))") }
        }
        for store in stores.values { try store.close() }
        return OpenProbe(keys: keys, firstSum: sums[0], readsSum: sums.dropFirst().reduce(0, &+))
    }
}

/// The child of W8: opens `engine` on `folder`, reads the probe's first key (timed from the open
/// call), then its 1,000 random keys in one read transaction. Figures: `open` (ns), `first` and
/// `reads` (checksums), `memory` (RssAnon bytes, -1 without /proc), `recovered` (YapDB: the torn
/// tail it cut at open).
func childOpen(engine name: String, folder: String, probePath: String) throws -> [String: String] {
    guard let engine = Engine(rawValue: name) else { throw BenchError("unknown engine \(name)") }
    let keys = try readLines(probePath).map { $0[0] }
    let data = Dataset(keys: keys, valueSize: 100)
    let rest = Array(1..<keys.count)[...]
    let start = nowNanoseconds()
    let store = try openStore(engine, in: URL(fileURLWithPath: folder), durability: .durable, mapSize: 32 << 30)
    let reader = try store.makeReader()
    let first = try reader.readInOneTransaction(data, rows: [0][...])
    let open = nowNanoseconds() - start
    let reads = try reader.readInOneTransaction(data, rows: rest)
    var figures = ["open": String(open), "first": String(first), "reads": String(reads), "memory": reportedMemory()]
    if let yap = store as? YapStore, let stats = try? yap.database.stats() { figures["recovered"] = String(stats.recoveredTruncatedBytes) }
    reader.close()
    try store.close()
    return figures
}
