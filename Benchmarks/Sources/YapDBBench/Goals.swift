/// The goals, checked against a run's rows. Each goal names the row it reads by
/// workload and a piece of its label.
struct Goal: Sendable {
    enum Direction: Sendable { case atLeast, atMost }
    let workload: String
    let text: String
    let direction: Direction
    let target: Double
    /// The figure compared with `target`, or nil when the run lacks it.
    let measure: @Sendable (RunResults) -> Double?
    /// How the figure reads in the report.
    let unit: Unit
    enum Unit: Sendable { case ratio, nanoseconds }

    func evaluate(_ results: RunResults) -> GoalResult {
        guard let value = measure(results) else {
            return GoalResult(workload: workload, goal: text, measured: nil, measuredText: "not run", met: nil, shortfall: nil)
        }
        let met = direction == .atLeast ? value >= target : value <= target
        let shortfall = direction == .atLeast ? target / value : value / target
        let shown = unit == .ratio ? formatRatio(value) : format(value, .time)
        return GoalResult(workload: workload, goal: text, measured: value, measuredText: shown, met: met, shortfall: shortfall)
    }
}

extension RunResults {
    func find(_ workload: String, _ piece: String) -> Row? {
        table.first { $0.workload == workload && $0.label.contains(piece) }
    }
    func ratio(_ workload: String, _ piece: String, _ peer: Engine) -> Double? { find(workload, piece)?.ratio(peer) }
    func yap(_ workload: String, _ piece: String) -> Double? { find(workload, piece)?.median(.yapdb) }
}

let goals: [Goal] = [
    Goal(workload: "W1", text: "bulk load ≥ 5× SQLite NORMAL", direction: .atLeast, target: 5,
         measure: { $0.ratio("W1", "random keys, one durable", .sqliteNormal) }, unit: .ratio),
    Goal(workload: "W1", text: "bulk load ≥ 1.5× LMDB", direction: .atLeast, target: 1.5,
         measure: { $0.ratio("W1", "random keys, one durable", .lmdb) }, unit: .ratio),
    Goal(workload: "W2", text: "durable commit p50 ≤ 1.15× the raw fsync floor (append)", direction: .atMost, target: 1.15,
         measure: { r in
             guard let row = r.find("W2", "durable single-row commit, p50"), let yap = row.median(.yapdb),
                   let floor = row.median(.floor) else { return nil }
             return yap / floor
         }, unit: .ratio),
    Goal(workload: "W2", text: "(for reference) durable commit p50 ≤ 1.15× the overwrite floor", direction: .atMost, target: 1.15,
         measure: { r in
             guard let yap = r.yap("W2", "durable single-row commit, p50"),
                   let floor = r.find("W2", "raw overwrite + fdatasync, p50")?.median(.floor) else { return nil }
             return yap / floor
         }, unit: .ratio),
    Goal(workload: "W2", text: "non-durable commit p50 ≥ 4× SQLite NORMAL", direction: .atLeast, target: 4,
         measure: { $0.ratio("W2", "non-durable single-row commit, p50", .sqliteNormal) }, unit: .ratio),
    Goal(workload: "W3", text: "100 × 1,000 rows ≥ 6× SQLite NORMAL", direction: .atLeast, target: 6,
         measure: { $0.ratio("W3", "durable transactions", .sqliteNormal) }, unit: .ratio),
    Goal(workload: "W3", text: "100 × 1,000 rows ≥ 10× LMDB", direction: .atLeast, target: 10,
         measure: { $0.ratio("W3", "durable transactions", .lmdb) }, unit: .ratio),
    Goal(workload: "W4", text: "point reads, one transaction, ≥ 5× SQLite", direction: .atLeast, target: 5,
         measure: { $0.ratio("W4", "in one read transaction", .sqliteNormal) }, unit: .ratio),
    Goal(workload: "W4", text: "point reads, one transaction, ≥ 1.1× LMDB", direction: .atLeast, target: 1.1,
         measure: { $0.ratio("W4", "in one read transaction", .lmdb) }, unit: .ratio),
    Goal(workload: "W4", text: "point reads, a transaction each, ≥ 5× SQLite", direction: .atLeast, target: 5,
         measure: { $0.ratio("W4", "one read transaction each", .sqliteNormal) }, unit: .ratio),
    Goal(workload: "W4", text: "point reads, a transaction each, ≥ 1.1× LMDB", direction: .atLeast, target: 1.1,
         measure: { $0.ratio("W4", "one read transaction each", .lmdb) }, unit: .ratio),
    Goal(workload: "W5", text: "≥ 1.8× from 1 to 2 reader threads", direction: .atLeast, target: 1.8,
         measure: { $0.yap("W5", "speed-up from 1 to 2") }, unit: .ratio),
    Goal(workload: "W7", text: "delete ≥ 8× SQLite", direction: .atLeast, target: 8,
         measure: { $0.ratio("W7", "delete", .sqliteNormal) }, unit: .ratio),
    Goal(workload: "W7", text: "size after compaction ≤ 1.15× the raw payload", direction: .atMost, target: 1.15,
         measure: { r in
             guard let size = r.yap("W7", "file size after compaction") else { return nil }
             return size / Double(Int64(r.rows - r.rows / 2) * Int64(Dataset.keySize + 100))
         }, unit: .ratio),
    Goal(workload: "W8", text: "clean open of every row to first read ≤ 10 ms", direction: .atMost, target: 10_000_000,
         measure: { $0.yap("W8", "after a clean close") }, unit: .nanoseconds),
    Goal(workload: "W9", text: "object-cache hit ≤ 150 ns", direction: .atMost, target: 150,
         measure: { $0.yap("W9", "cache hit, the same key") }, unit: .nanoseconds),
    Goal(workload: "W9", text: "empty read transaction ≤ 0.5 µs", direction: .atMost, target: 500,
         measure: { $0.yap("W9", "empty read transaction") }, unit: .nanoseconds),
    Goal(workload: "W10", text: "cache sync ≤ 200 ns per changed key (10,000 keys)", direction: .atMost, target: 200,
         measure: { $0.yap("W10", "after A changed 10,000") }, unit: .nanoseconds),
]
