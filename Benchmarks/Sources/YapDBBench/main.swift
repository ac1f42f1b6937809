import Foundation

// yapdb-bench: YapDB, SQLite, GRDB and LMDB on the same workloads (W1–W10 of issue 6, W11 and the
// fresh-process open and memory figures of issue 9, W12 secondary indexes of issue 11, W14 full-text
// search of issue 23), interleaved, medians of several runs, ratios per pair; writes
// docs/benchmarks.md and docs/benchmarks.json.
//
//   yapdb-bench [--size quick|full] [--huge] [--only W1,W4] [--engines sqlite,grdb,lmdb,floor]
//               [--work DIR] [--markdown PATH] [--json PATH] [--profiles PATH] [--merge-into JSON]
//               [--perf-control CTL_FIFO,ACK_FIFO]

let arguments = Array(CommandLine.arguments.dropFirst())
runChildModeIfAsked(arguments)

let (settings, profilesPath) = parseArguments(arguments)

// `--report-from JSON`: rewrite the report from a finished run (after editing profiles.md).
if let source = settings.reportFrom {
    do {
        var previous = try JSONDecoder().decode(RunResults.self, from: Data(contentsOf: URL(fileURLWithPath: source)))
        // Every goal reads the rows, so the goals are checked again (a goal added since the run counts too).
        previous.goals = goals(rows: previous.rows, hugeRows: previous.hugeRows).map { $0.evaluate(previous) }
        let profiles = profilesPath.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) }
        try Report(results: previous, profiles: profiles).markdown()
            .write(toFile: settings.markdownPath ?? "benchmarks.md", atomically: true, encoding: .utf8)
        log("wrote \(settings.markdownPath ?? "benchmarks.md") from \(source)")
        exit(0)
    } catch {
        log("cannot rewrite the report from \(source): \(error)")
        exit(1)
    }
}

let dateFormatter = ISO8601DateFormatter()
dateFormatter.formatOptions = [.withFullDate]
var machine = describeMachine(workFolder: settings.workFolder.deletingLastPathComponent())
machine["load average at start"] = loadAverage()
let results = RunResults(
    size: settings.size.rawValue, rows: settings.rows, hugeRows: settings.huge ? settings.hugeRows : nil, date: dateFormatter.string(from: Date()), machine: machine,
    settings: [
        "Rows: \(settings.rows.formatted()); keys 16 bytes (hex of a random 64-bit number), values 100 random bytes; "
            + "the compression variant of W1 uses a tenth of the rows with 1 KiB JSON-like values; fixed seeds.",
        "Runs per engine: \(settings.reps) (W1, W4–W7, which load or read every row each run: \(settings.heavyReps)); medians reported.",
        "Key order: insertion in random key order unless the row says sequential; reads in another random order.",
        "YapDB: public API only; the collection's serializer stores `Data` as it is; `durability = .full` for durable "
            + "rows, `.normal` for non-durable; LZ4 compression on (its default: values under 128 bytes are not tried); "
            + "object cache off on the connections of W1–W8 (it is measured in W9 and W10).",
        "SQLite: YapDatabase's layout (`database2` with rowid, collection, key, data, metadata; unique index on "
            + "(collection, key)); WAL; `synchronous=NORMAL` or `FULL` per column; other settings default (4 KiB pages, "
            + "2 MB cache); prepared statements; blobs read in place. Reads use the NORMAL database.",
        "GRDB 7.10.0 (the system SQLite): a `DatabasePool` (WAL, GRDB's `synchronous=NORMAL`), table `bench` with the "
            + "primary key (collection, key) and a blob column; cached statements (`db.cachedStatement(sql:)`, "
            + "`execute(arguments:)`, `Data.fetchOne`: values come back as a copy); `pool.write { }` per transaction, "
            + "`pool.read { }` per read transaction.",
        "LMDB: one file (`MDB_NOSUBDIR`), `MDB_NOTLS`, durable commits (`MDB_NOSYNC` for non-durable rows), key = "
            + "\"bench\\0\" + key; values read in place; readers reset and renew their transaction.",
        "Fresh-process figures (W1's memory peak, W8, W11's reopen): the run spawns `yapdb-bench child-…` once per "
            + "engine and run, interleaved, so each figure is one engine alone in a new process. Private memory is "
            + "`RssAnon` of /proc/self/status (anonymous resident pages: not a map's file pages, not the page cache).",
        "Every read is checksummed and the sum is checked against the dataset: all engines return the same bytes.",
    ])
let runner = Runner(settings: settings, results: results)
try? FileManager.default.removeItem(at: settings.workFolder)
try FileManager.default.createDirectory(at: settings.workFolder, withIntermediateDirectories: true)

let workloads: [(String, () throws -> Void)] = [
    ("W1", runner.runW1), ("W2", runner.runW2), ("W3", runner.runW3), ("W4", runner.runW4),
    ("W5", runner.runW5), ("W6", runner.runW6), ("W8", runner.runW8), ("W7", runner.runW7),
    ("W9", runner.runW9), ("W10", runner.runW10), ("W11", runner.runW11), ("W12", runner.runW12), ("W13", runner.runW13),
    ("W14", runner.runW14),
    // W12's queries alone (no maintenance loads), for profiling: only when named.
    ("W12Q", runner.runW12QueriesOnly),
    // W13's cascades and writes, YapDB alone, for profiling: only when named.
    ("W13P", runner.runW13ForProfiling),
]
let started = nowNanoseconds()
do {
    for (name, run) in workloads where settings.wants(name) && (!["W12Q", "W13P"].contains(name) || settings.only.contains(name)) {
        let start = nowNanoseconds()
        log("\(name)…")
        try run()
        log("  (\(name) took \(format(Double(nowNanoseconds() - start), .time)))")
    }
    for store in runner.fixtures.values { try store.close() }
} catch {
    log("benchmark failed: \(error)")
    exit(1)
}
try? FileManager.default.removeItem(at: settings.workFolder)
log("all workloads took \(format(Double(nowNanoseconds() - started), .time))")

runner.results.machine["load average at end"] = loadAverage()
let busiest = [machine["load average at start"], runner.results.machine["load average at end"]]
    .compactMap { $0?.split(separator: " ").first.flatMap { Double($0) } }.max() ?? 0
if busiest > Double(ProcessInfo.processInfo.activeProcessorCount) {
    runner.note(String(format: "The machine was busy (1-minute load average up to %.1f on %d cores, other work running): ", busiest,
                       ProcessInfo.processInfo.activeProcessorCount)
        + "absolute times are inflated and thread scaling (W5) is capped by the cores left; ratios within a workload "
        + "hold better because engines were interleaved.")
}
runner.results.table.sort { lhs, rhs in
    let l = Int(lhs.workload.dropFirst()) ?? 0, r = Int(rhs.workload.dropFirst()) ?? 0
    return l < r
}
runner.results.goals = goals(rows: runner.results.rows, hugeRows: runner.results.hugeRows).map { $0.evaluate(runner.results) }
for goal in runner.results.goals where goal.met != nil {
    log("goal \(goal.workload) \(goal.goal): \(goal.measuredText) — \(goal.met! ? "met" : "missed")")
}

// `--merge-into JSON`: this run's workloads replace theirs in a finished run's results (the
// other workloads' rows, goals and notes stay), which then stand for the run (W14 alone, say).
if let path = settings.mergeInto {
    do {
        var previous = try JSONDecoder().decode(RunResults.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        let ran = Set(runner.results.table.map(\.workload))
        previous.table.removeAll { ran.contains($0.workload) }
        previous.table += runner.results.table
        previous.table.sort { (Int($0.workload.dropFirst()) ?? 0) < (Int($1.workload.dropFirst()) ?? 0) }
        let fresh = goals(rows: previous.rows, hugeRows: previous.hugeRows).map { $0.evaluate(previous) }
        previous.goals.removeAll { ran.contains($0.workload) }
        previous.goals += fresh.filter { ran.contains($0.workload) }
        let prefix = "\(ran.sorted().joined(separator: ", ")) (\(settings.size.rawValue) run of \(runner.results.date), merged)"
        previous.notes.removeAll { note in ran.contains { note.hasPrefix("\($0) ") || note.hasPrefix("\($0):") } }
        previous.notes += runner.results.notes.map { $0.hasPrefix("W") ? $0 : "\(prefix): \($0)" }
        runner.results = previous
        log("merged \(ran.sorted()) into \(path)")
    } catch {
        log("cannot merge into \(path): \(error)")
        exit(1)
    }
}

if let path = settings.jsonPath {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    try encoder.encode(runner.results).write(to: URL(fileURLWithPath: path))
    log("wrote \(path)")
}
if let path = settings.markdownPath {
    let profiles = profilesPath.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) }
    try Report(results: runner.results, profiles: profiles).markdown().write(toFile: path, atomically: true, encoding: .utf8)
    log("wrote \(path)")
}
