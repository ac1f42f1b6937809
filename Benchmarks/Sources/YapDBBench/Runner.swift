import Foundation

/// Settings of a run, from the command line.
struct Settings: Sendable {
    enum Size: String, Sendable { case quick, full }
    var size: Size = .quick
    /// Workloads to run ("W1", …); empty means all.
    var only: Set<String> = []
    /// Engines to run; YapDB always runs. Empty means all.
    var engines: Set<Engine> = []
    var workFolder = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".build/bench-data")
    var markdownPath: String?
    var jsonPath: String?
    /// Rewrite the report from this finished run's JSON instead of running.
    var reportFrom: String?
    /// Merge this run's workloads into that finished run's JSON before writing the report.
    var mergeInto: String?

    /// W8 also at `hugeRows` rows (`--huge`; 10M by default, `--huge-rows` for a smaller try).
    var huge = false
    var hugeRows = 10_000_000
    /// W14's documents when not the size's (`--w14-documents`: a run smaller than a full one's
    /// 1M that fits the time at hand, reported as such).
    var w14Documents: Int?
    /// W14's builds per engine when not the size's (`--w14-build-reps`: one build per engine lets
    /// the 1M-document run fit an afternoon; reported with the run's command).
    var w14BuildReps: Int?

    var rows: Int { size == .full ? 1_000_000 : 100_000 }
    /// Runs per engine for light workloads, and for the ones that load a whole database.
    var reps: Int { size == .full ? 5 : 3 }
    var heavyReps: Int { 3 }
    var singleCommits: Int { size == .full ? 1_000 : 200 }
    var objectOperations: Int { size == .full ? 200_000 : 50_000 }
    var scans: Int { min(100_000, rows) }
    /// LMDB's map: the most the file may grow to (address space only; the file grows as used).
    var lmdbMapSize: Int { 32 << 30 }

    func wants(_ workload: String) -> Bool { only.isEmpty || only.contains(workload) }
    func wants(_ engine: Engine) -> Bool { engine == .yapdb || engines.isEmpty || engines.contains(engine) }
}

/// Runs workloads and collects their rows. Engines are interleaved within a workload
/// (A B C A B C …) so that a change in the machine's speed during the run hits all of them.
final class Runner {
    let settings: Settings
    var results: RunResults
    private var datasets: [String: Dataset] = [:]
    /// The read workloads' databases: every row of `main`, loaded once per engine.
    var fixtures: [Engine: any Store] = [:]

    init(settings: Settings, results: RunResults) {
        self.settings = settings
        self.results = results
    }

    /// The main data: `rows` rows of 16-byte keys and 100-byte random values.
    var main: Dataset { dataset("main") { Runner.mainDataset(rows: self.settings.rows) } }

    /// The main data at `rows` rows (a child process builds the same rows from the same seed).
    static func mainDataset(rows: Int) -> Dataset { Dataset(count: rows, valueSize: 100, kind: .random, seed: 0x5EED_0001) }
    /// The compression variant: a tenth of the rows, 1 KiB JSON-like values.
    var json: Dataset { dataset("json") { Dataset(count: self.settings.rows / 10, valueSize: 1024, kind: .json, seed: 0x5EED_0002) } }

    func dataset(_ name: String, _ make: () -> Dataset) -> Dataset {
        if let existing = datasets[name] { return existing }
        let start = nowNanoseconds()
        let made = make()
        log("  (dataset \(name): \(made.count) rows in \(format(Double(nowNanoseconds() - start), .time)))")
        datasets[name] = made
        return made
    }

    /// A fresh, empty folder for one run of one engine.
    func freshFolder(_ name: String) throws -> URL {
        let folder = settings.workFolder.appendingPathComponent(name)
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    func remove(_ folder: URL) { try? FileManager.default.removeItem(at: folder) }

    /// Runs `body` `reps` times for each engine, interleaved; `body` returns named figures.
    /// Returns figure → engine → values, in run order.
    func interleave(_ engines: [Engine], reps: Int, _ body: (Engine, Int) throws -> [String: Double]) throws -> [String: [Engine: [Double]]] {
        let engines = engines.filter { settings.wants($0) }
        var out: [String: [Engine: [Double]]] = [:]
        for rep in 0..<reps {
            for engine in engines {
                let figures = try body(engine, rep)
                for (name, value) in figures { out[name, default: [:]][engine, default: []].append(value) }
            }
        }
        return out
    }

    /// Adds a row from figure `name` of `figures`, keeping each engine's median.
    func add(_ workload: String, _ label: String, _ kind: Kind, _ figures: [String: [Engine: [Double]]], _ name: String,
             scale: Double = 1, note: String? = nil, charted: Bool = true, notApplicable: [Engine] = []) {
        var medians: [String: Double] = [:]
        var samples: [String: [Double]] = [:]
        for (engine, values) in figures[name] ?? [:] {
            let scaled = values.map { $0 * scale }
            samples[engine.rawValue] = scaled
            medians[engine.rawValue] = median(scaled)
        }
        let row = Row(workload: workload, label: label, kind: kind, medians: medians, samples: samples, note: note,
                      charted: charted, notApplicable: notApplicable.map(\.rawValue))
        results.table.append(row)
        log(describe(row))
    }

    /// Adds a row whose YapDB figure is figure `variant` (measured only for YapDB, in the same
    /// interleaved runs) and whose peers' figures are figure `base`'s: the same peers' runs as
    /// the row of `base`, set beside another way of using YapDB.
    func addYapVariant(_ workload: String, _ label: String, _ kind: Kind, _ figures: [String: [Engine: [Double]]],
                       base: String, variant: String) {
        guard let yap = figures[variant]?[.yapdb] else { return }
        var merged = figures
        merged[variant] = (figures[base] ?? [:]).merging([.yapdb: yap]) { _, new in new }
        add(workload, label, kind, merged, variant, note: "YapDB another way; the peers' figures are those of the row above", charted: false)
    }

    func describe(_ row: Row) -> String {
        var parts: [String] = []
        for engine in Engine.allCases {
            guard let value = row.median(engine) else { continue }
            var text = "\(engine.rawValue) \(format(value, row.kind))"
            if engine.isPeer, let ratio = row.ratio(engine) { text += " (\(formatRatio(ratio)))" }
            parts.append(text)
        }
        return "  \(row.workload) \(row.label): " + parts.joined(separator: " · ")
    }

    func note(_ text: String) {
        results.notes.append(text)
        log("  note: \(text)")
    }
}

/// Progress goes to standard error so standard output stays clean.
func log(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Fails the run when an engine's reads do not add up to what the dataset holds.
func expectChecksum(_ got: UInt64, _ expected: UInt64, _ engine: Engine, _ what: String) throws {
    if got != expected {
        throw BenchError("\(engine.rawValue) \(what): checksum \(got) differs from the dataset's \(expected)")
    }
}
