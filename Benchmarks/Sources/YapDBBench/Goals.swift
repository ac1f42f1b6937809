/// The issues' goals, checked against a run's rows. Each goal names the row it reads by
/// workload and a piece of its label (the first row that holds it). Issue 9's table comes
/// first, complete; then the later issues'; the goals of issue 6 that issue 9 does not restate
/// come last. Issue 24 restates some of issue 9's goals with its own targets.
struct Goal: Sendable {
    enum Direction: Sendable { case atLeast, atMost }
    /// The issue that set the goal ("9", "6").
    let issue: String
    let workload: String
    let text: String
    let direction: Direction
    let target: Double
    /// The figure compared with `target`, or nil when the run lacks it.
    let measure: @Sendable (RunResults) -> Double?
    /// How the figure reads in the report.
    let unit: Unit
    /// What the report says when the figure is missing (default: "not run").
    var missing = "not run"
    enum Unit: Sendable { case ratio, nanoseconds, bytes }

    func evaluate(_ results: RunResults) -> GoalResult {
        guard let value = measure(results) else {
            return GoalResult(workload: workload, goal: text, measured: nil, measuredText: missing, met: nil, shortfall: nil, issue: issue)
        }
        let met = direction == .atLeast ? value >= target : value <= target
        let shortfall = direction == .atLeast ? target / value : value / target
        let shown = switch unit {
        case .ratio: formatRatio(value)
        case .nanoseconds: format(value, .time)
        case .bytes: format(value, .bytes)
        }
        return GoalResult(workload: workload, goal: text, measured: value, measuredText: shown, met: met, shortfall: shortfall, issue: issue)
    }
}

extension Goal {
    /// "YapDB ≥ `target`× `peer`" on the row of `workload` whose label holds `piece`.
    static func atLeast(issue: String, _ workload: String, _ text: String, _ target: Double, row piece: String, than peer: Engine) -> Goal {
        Goal(issue: issue, workload: workload, text: text, direction: .atLeast, target: target,
             measure: { $0.ratio(workload, piece, peer) }, unit: .ratio)
    }
}

extension RunResults {
    func find(_ workload: String, _ piece: String) -> Row? {
        table.first { $0.workload == workload && $0.label.contains(piece) }
    }
    func ratio(_ workload: String, _ piece: String, _ peer: Engine) -> Double? { find(workload, piece)?.ratio(peer) }
    func yap(_ workload: String, _ piece: String) -> Double? { find(workload, piece)?.median(.yapdb) }
    /// YapDB's figure over `peer`'s in the same row (for "≤ N× the peer's time" goals).
    func timeOver(_ workload: String, _ piece: String, _ peer: Engine) -> Double? {
        guard let row = find(workload, piece), let yap = row.median(.yapdb), let other = row.median(peer), other > 0 else { return nil }
        return yap / other
    }
    /// The figure of `first` over the figure of `second`, both YapDB's.
    func yapOver(_ workload: String, _ first: String, _ second: String) -> Double? {
        guard let a = yap(workload, first), let b = yap(workload, second), b > 0 else { return nil }
        return a / b
    }
}

/// Every goal, worded for this run's sizes (`rows`, and `hugeRows` when W8 ran at 10M).
func goals(rows: Int, hugeRows: Int?) -> [Goal] {
    let n = rows.formatted()
    let big = (hugeRows ?? 10_000_000).formatted()
    let atSize = rows == 1_000_000 ? "1M rows" : "\(n) rows (1M in a full run)"
    let mib32 = Double(32 << 20)
    let load = "random keys, one durable"
    return [
        // Issue 9.
        Goal(issue: "9", workload: "W8", text: "open + first read after a clean close ≤ 10 ms, \(atSize)", direction: .atMost,
             target: 10_000_000, measure: { $0.yap("W8", "\(n) rows, after a clean close") }, unit: .nanoseconds),
        Goal(issue: "9", workload: "W8", text: "open + first read after a clean close, \(big) rows ≤ 2× the \(n)-row figure",
             direction: .atMost, target: 2, measure: { $0.yapOver("W8", "\(big) rows, after a clean close", "\(n) rows, after a clean close") },
             unit: .ratio, missing: "not run (`make bench SIZE=huge`)"),
        Goal(issue: "9", workload: "W8", text: "open + first read after a SIGKILL mid-write ≤ 100 ms, \(atSize)", direction: .atMost,
             target: 100_000_000, measure: { $0.yap("W8", "\(n) rows, after a SIGKILL") }, unit: .nanoseconds),
        Goal(issue: "9", workload: "W8", text: "private memory after open + 1,000 reads ≤ 32 MiB, \(atSize)", direction: .atMost,
             target: mib32, measure: { $0.yap("W8", "1,000 random reads, \(n) rows") }, unit: .bytes, missing: "n/a (no RssAnon)"),
        Goal(issue: "9", workload: "W8", text: "private memory after open + 1,000 reads ≤ 32 MiB, \(big) rows", direction: .atMost,
             target: mib32, measure: { $0.yap("W8", "1,000 random reads, \(big) rows") }, unit: .bytes,
             missing: "not run (`make bench SIZE=huge`)"),
        Goal.atLeast(issue: "9", "W1", "bulk load ≥ 1.0× LMDB", 1, row: load, than: .lmdb),
        Goal.atLeast(issue: "9", "W1", "bulk load ≥ 5× SQLite NORMAL", 5, row: load, than: .sqliteNormal),
        Goal.atLeast(issue: "9", "W1", "bulk load ≥ 5× GRDB", 5, row: load, than: .grdb),
        Goal.atLeast(issue: "9", "W4", "point reads, one transaction, ≥ 1.0× LMDB", 1, row: "in one read transaction", than: .lmdb),
        Goal.atLeast(issue: "9", "W4", "point reads, one transaction, ≥ 5× SQLite", 5, row: "in one read transaction", than: .sqliteNormal),
        Goal.atLeast(issue: "9", "W4", "point reads, a transaction each, ≥ 1.0× LMDB", 1, row: "one read transaction each", than: .lmdb),
        Goal.atLeast(issue: "9", "W4", "point reads, a transaction each, ≥ 5× SQLite", 5, row: "one read transaction each", than: .sqliteNormal),
        Goal(issue: "9", workload: "W6", text: "full enumeration ≤ 2× LMDB's time (YapDB ÷ LMDB)", direction: .atMost, target: 2,
             measure: { $0.timeOver("W6", "enumerate all", .lmdb) }, unit: .ratio),
        Goal(issue: "9", workload: "W6", text: "ordered scans of 10 rows ≤ 2× LMDB's time (YapDB ÷ LMDB)", direction: .atMost, target: 2,
             measure: { $0.timeOver("W6", "ordered scans", .lmdb) }, unit: .ratio),
        Goal(issue: "9", workload: "W2", text: "durable commit p50 ≤ 1.15× the raw fsync floor (append)", direction: .atMost, target: 1.15,
             measure: { r in
                 guard let row = r.find("W2", "durable single-row commit, p50"), let yap = row.median(.yapdb),
                       let floor = row.median(.floor) else { return nil }
                 return yap / floor
             }, unit: .ratio),
        Goal(issue: "9", workload: "W7", text: "size after deleting half + compaction ≤ 1.3× the raw payload", direction: .atMost, target: 1.3,
             measure: { r in
                 guard let size = r.yap("W7", "file size after compaction") else { return nil }
                 return size / Double(Int64(r.rows - r.rows / 2) * Int64(Dataset.keySize + 100))
             }, unit: .ratio),
        Goal(issue: "9", workload: "W9", text: "object-cache hit ≤ 150 ns", direction: .atMost, target: 150,
             measure: { $0.yap("W9", "cache hit, the same key") }, unit: .nanoseconds),
        Goal(issue: "9", workload: "W11", text: "view maintenance over plain inserts ≤ 1.1×, sorted key order", direction: .atMost, target: 1.1,
             measure: { $0.yapOver("W11", "sorted key order, one durable transaction, with a view",
                                   "sorted key order, one durable transaction, without") }, unit: .ratio),
        Goal(issue: "9", workload: "W11", text: "view maintenance over plain inserts ≤ 1.5×, random key order", direction: .atMost, target: 1.5,
             measure: { $0.yapOver("W11", "random key order, one durable transaction, with a view",
                                   "random key order, one durable transaction, without") }, unit: .ratio),
        Goal(issue: "9", workload: "W11", text: "reopen + re-register + first row of the view ≤ 10 ms, \(atSize)", direction: .atMost,
             target: 10_000_000, measure: { $0.yap("W11", "reopen, re-register") }, unit: .nanoseconds),
        Goal(issue: "9", workload: "W11", text: "private memory after reopening the view + 1,000 reads ≤ 32 MiB, \(atSize)", direction: .atMost,
             target: mib32, measure: { $0.yap("W11", "private memory") }, unit: .bytes, missing: "n/a (no RssAnon)"),
        Goal(issue: "9", workload: "W10", text: "cache sync ≤ 200 ns per changed key (10,000 keys)", direction: .atMost, target: 200,
             measure: { $0.yap("W10", "after A changed 10,000") }, unit: .nanoseconds),
        // Issue 11 (secondary indexes).
        Goal.atLeast(issue: "11", "W12", "equality lookup ≥ 2× SQLite", 2, row: "equality lookup", than: .sqliteNormal),
        Goal.atLeast(issue: "11", "W12", "ordered range of 100 rows ≥ 2× SQLite", 2, row: "ordered range", than: .sqliteNormal),
        Goal.atLeast(issue: "11", "W12", "COUNT(*) of a range ≥ 10× SQLite", 10, row: "COUNT(*)", than: .sqliteNormal),
        Goal.atLeast(issue: "11", "W12", "MIN of a column ≥ 10× SQLite", 10, row: "MIN(a)` over", than: .sqliteNormal),
        Goal(issue: "11", workload: "W12", text: "added cost per write of two indexed columns ≤ 1.5× SQLite's (YapDB ÷ SQLite)",
             direction: .atMost, target: 1.5, measure: { $0.timeOver("W12", "added cost per write", .sqliteNormal) }, unit: .ratio),
        // Issue 22 (relationships).
        Goal.atLeast(issue: "22", "W13", "cascade delete of a parent with 10,000 children ≥ 3× SQLite", 3,
                     row: "cascade delete of 1 parent", than: .sqliteNormal),
        Goal.atLeast(issue: "22", "W13", "cascade delete of 100 × 100 in one commit ≥ 3× SQLite", 3,
                     row: "cascade delete of 100 parents", than: .sqliteNormal),
        Goal.atLeast(issue: "22", "W13", "edges by destination ≥ 2× SQLite", 2, row: "edges by destination", than: .sqliteNormal),
        Goal(issue: "22", workload: "W13", text: "added cost per write of 3 protocol edges ≤ 1.5× SQLite's foreign keys (YapDB ÷ SQLite)",
             direction: .atMost, target: 1.5, measure: { $0.timeOver("W13", "added cost per write of a node", .sqliteNormal) }, unit: .ratio),
        // Issue 24 (the row path), at 1M rows; the tuned rows (caches off, the raw-bytes reads)
        // and the default configuration's rows (object cache on, object reads) held to the same goals.
        Goal.atLeast(issue: "24", "W1", "bulk load, random keys, ≥ 1.2× LMDB", 1.2, row: load, than: .lmdb),
        Goal.atLeast(issue: "24", "W1", "bulk load, random keys, default configuration, ≥ 1.2× LMDB", 1.2,
                     row: "YapDB in the default configuration", than: .lmdb),
        Goal.atLeast(issue: "24", "W1", "bulk load, sequential keys, ≥ 1.2× LMDB", 1.2, row: "sequential keys, one durable", than: .lmdb),
        Goal.atLeast(issue: "24", "W1", "bulk load, random keys, ≥ 5× SQLite NORMAL", 5, row: load, than: .sqliteNormal),
        Goal.atLeast(issue: "24", "W1", "bulk load, random keys, ≥ 5× GRDB", 5, row: load, than: .grdb),
        Goal.atLeast(issue: "24", "W1", "bulk load, sequential keys, ≥ 5× SQLite NORMAL", 5, row: "sequential keys, one durable",
                     than: .sqliteNormal),
        Goal.atLeast(issue: "24", "W1", "bulk load, sequential keys, ≥ 5× GRDB", 5, row: "sequential keys, one durable", than: .grdb),
        Goal(issue: "24", workload: "W1", text: "private memory peak during the load ≤ 64 MiB above the baseline, \(atSize)",
             direction: .atMost, target: Double(64 << 20), measure: { $0.yap("W1", "private memory (RssAnon) peak") }, unit: .bytes,
             missing: "n/a (no RssAnon)"),
        Goal.atLeast(issue: "24", "W3", "100 × 1,000-row durable transactions ≥ 2× SQLite NORMAL", 2, row: "100 durable transactions",
                     than: .sqliteNormal),
        Goal.atLeast(issue: "24", "W3", "100 × 1,000-row durable transactions ≥ 2× LMDB", 2, row: "100 durable transactions", than: .lmdb),
        Goal.atLeast(issue: "24", "W4", "point reads, one transaction, ≥ 1.0× LMDB", 1, row: "in one read transaction, per read", than: .lmdb),
        Goal.atLeast(issue: "24", "W4", "point reads, one transaction, default configuration, ≥ 1.0× LMDB", 1,
                     row: "one read transaction, per read, YapDB in the default", than: .lmdb),
        Goal.atLeast(issue: "24", "W4", "point reads, a transaction each, ≥ 1.0× LMDB", 1, row: "one read transaction each, per read", than: .lmdb),
        Goal.atLeast(issue: "24", "W4", "point reads, a transaction each, default configuration, ≥ 1.0× LMDB", 1,
                     row: "transaction each, per read, YapDB in the default", than: .lmdb),
        Goal(issue: "24", workload: "W5", text: "speed-up from 1 to 2 reader threads ≥ 1.8×", direction: .atLeast, target: 1.8,
             measure: { $0.yap("W5", "speed-up from 1 to 2") }, unit: .ratio),
        Goal(issue: "24", workload: "W6", text: "full scan through the lending form ≤ 1.0× LMDB's time (YapDB ÷ LMDB)", direction: .atMost,
             target: 1, measure: { $0.timeOver("W6", "(keys and values), YapDB through the lending", .lmdb) }, unit: .ratio),
        Goal(issue: "24", workload: "W6", text: "full scan through iterateKeysAndObjects ≤ 2.0× LMDB's time (YapDB ÷ LMDB)", direction: .atMost,
             target: 2, measure: { $0.timeOver("W6", "enumerate all", .lmdb) }, unit: .ratio),
        Goal(issue: "24", workload: "W6", text: "full scan, default configuration, ≤ 2.0× LMDB's time (YapDB ÷ LMDB)", direction: .atMost,
             target: 2, measure: { $0.timeOver("W6", "(keys and values), YapDB in the default", .lmdb) }, unit: .ratio),
        Goal(issue: "24", workload: "W6", text: "10-row ordered scans ≤ 1.5× LMDB's time (YapDB ÷ LMDB)", direction: .atMost, target: 1.5,
             measure: { $0.timeOver("W6", "ordered scans", .lmdb) }, unit: .ratio),
        Goal(issue: "24", workload: "W6", text: "10-row ordered scans, default configuration, ≤ 1.5× LMDB's time (YapDB ÷ LMDB)",
             direction: .atMost, target: 1.5, measure: { $0.timeOver("W6", "per scan, YapDB in the default", .lmdb) }, unit: .ratio),
        Goal.atLeast(issue: "24", "W7", "delete half ≥ 1.0× LMDB", 1, row: "random rows in one durable", than: .lmdb),
        Goal(issue: "24", workload: "W7", text: "size after deleting half + compaction ≤ 1.3× the raw payload", direction: .atMost, target: 1.3,
             measure: { r in
                 guard let size = r.yap("W7", "file size after compaction") else { return nil }
                 return size / Double(Int64(r.rows - r.rows / 2) * Int64(Dataset.keySize + 100))
             }, unit: .ratio),
        Goal(issue: "24", workload: "W9", text: "empty read transaction ≤ 150 ns", direction: .atMost, target: 150,
             measure: { $0.yap("W9", "empty read transaction") }, unit: .nanoseconds),
        Goal(issue: "24", workload: "W10", text: "cache sync ≤ 200 ns per changed key (10,000 keys)", direction: .atMost, target: 200,
             measure: { $0.yap("W10", "after A changed 10,000") }, unit: .nanoseconds),
        Goal(issue: "24", workload: "W11", text: "view upkeep over plain inserts ≤ 1.1×, sorted key order", direction: .atMost, target: 1.1,
             measure: { $0.yapOver("W11", "sorted key order, one durable transaction, with a view",
                                   "sorted key order, one durable transaction, without") }, unit: .ratio),
        Goal(issue: "24", workload: "W11", text: "view upkeep over plain inserts ≤ 1.5×, random key order", direction: .atMost, target: 1.5,
             measure: { $0.yapOver("W11", "random key order, one durable transaction, with a view",
                                   "random key order, one durable transaction, without") }, unit: .ratio),
        Goal(issue: "24", workload: "W8", text: "open + first read after a clean close, \(big) rows ≤ 2× the \(n)-row figure",
             direction: .atMost, target: 2, measure: { $0.yapOver("W8", "\(big) rows, after a clean close", "\(n) rows, after a clean close") },
             unit: .ratio, missing: "not run (`make bench SIZE=huge`)"),
        // Issue 23 (full-text search), against SQLite FTS5 through the system SQLite.
        Goal.atLeast(issue: "23", "W14", "build in one transaction ≥ 2× SQLite FTS5", 2, row: "with the index in one transaction", than: .sqliteNormal),
        Goal.atLeast(issue: "23", "W14", "build in transactions of 500 ≥ 2× SQLite FTS5", 2, row: "with the index in transactions of 500",
                     than: .sqliteNormal),
        Goal.atLeast(issue: "23", "W14", "rare term ≥ 2× SQLite FTS5", 2, row: "rare term", than: .sqliteNormal),
        Goal.atLeast(issue: "23", "W14", "frequent term ≥ 2× SQLite FTS5", 2, row: "frequent term `", than: .sqliteNormal),
        Goal.atLeast(issue: "23", "W14", "two-term AND ≥ 2× SQLite FTS5", 2, row: "two-term AND", than: .sqliteNormal),
        Goal.atLeast(issue: "23", "W14", "phrase ≥ 2× SQLite FTS5", 2, row: "phrase `", than: .sqliteNormal),
        Goal.atLeast(issue: "23", "W14", "3-letter prefix ≥ 2× SQLite FTS5", 2, row: "3-letter prefix", than: .sqliteNormal),
        Goal.atLeast(issue: "23", "W14", "bm25 top-10 of a frequent term ≥ 5× SQLite FTS5", 5, row: "bm25 top-10", than: .sqliteNormal),
        Goal.atLeast(issue: "23", "W14", "snippets for the top 20 ≥ 2× SQLite FTS5", 2, row: "snippets for the bm25 top 20", than: .sqliteNormal),
        Goal.atLeast(issue: "23", "W14", "match count ≥ 2× SQLite FTS5", 2, row: "match count", than: .sqliteNormal),
        Goal.atLeast(issue: "23", "W14", "index size ≤ 1.0× FTS5's (FTS5 ÷ YapDB ≥ 1)", 1, row: "loaded in transactions of 500", than: .sqliteNormal),
        Goal(issue: "23", workload: "W14", text: "private memory during the build bounded by settings: all documents ≤ 1.25× a quarter",
             direction: .atMost, target: 1.25,
             measure: { $0.yapOver("W14", "during the build of all", "during the build of a quarter") }, unit: .ratio,
             missing: "n/a (no RssAnon)"),
        // Issue 6, where issue 9 does not restate them.
        Goal(issue: "6", workload: "W2", text: "(for reference) durable commit p50 ≤ 1.15× the overwrite floor", direction: .atMost, target: 1.15,
             measure: { r in
                 guard let yap = r.yap("W2", "durable single-row commit, p50"),
                       let floor = r.find("W2", "raw overwrite + fdatasync, p50")?.median(.floor) else { return nil }
                 return yap / floor
             }, unit: .ratio),
        Goal(issue: "6", workload: "W2", text: "non-durable commit p50 ≥ 4× SQLite NORMAL", direction: .atLeast, target: 4,
             measure: { $0.ratio("W2", "non-durable single-row commit, p50", .sqliteNormal) }, unit: .ratio),
        Goal.atLeast(issue: "6", "W3", "100 × 1,000 rows ≥ 6× SQLite NORMAL", 6, row: "durable transactions", than: .sqliteNormal),
        Goal.atLeast(issue: "6", "W3", "100 × 1,000 rows ≥ 10× LMDB", 10, row: "durable transactions", than: .lmdb),
        Goal(issue: "6", workload: "W5", text: "≥ 1.8× from 1 to 2 reader threads", direction: .atLeast, target: 1.8,
             measure: { $0.yap("W5", "speed-up from 1 to 2") }, unit: .ratio),
        Goal.atLeast(issue: "6", "W7", "delete ≥ 8× SQLite", 8, row: "delete", than: .sqliteNormal),
        Goal(issue: "6", workload: "W9", text: "empty read transaction ≤ 0.5 µs", direction: .atMost, target: 500,
             measure: { $0.yap("W9", "empty read transaction") }, unit: .nanoseconds),
    ]
}
