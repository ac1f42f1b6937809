import Foundation

/// What a row measures; all kinds are "lower is better" except `.factor`.
enum Kind: String, Codable, Sendable {
    /// Nanoseconds.
    case time
    /// Bytes.
    case bytes
    /// A dimensionless factor where higher is better (thread scaling).
    case factor
}

/// One line of the report: a metric of a workload, with each engine's median.
struct Row: Codable, Sendable {
    var workload: String
    var label: String
    var kind: Kind
    /// Engine (raw value) → median over the runs.
    var medians: [String: Double]
    /// Engine (raw value) → every run's value, in run order.
    var samples: [String: [Double]]
    var note: String?
    /// Whether the chart shows this row's ratios.
    var charted: Bool
    /// Engines (raw values) that have no such operation ("n/a" in the report).
    var notApplicable: [String] = []

    func median(_ engine: Engine) -> Double? { medians[engine.rawValue] }

    /// Peer ÷ YapDB for lower-is-better rows: above 1 means YapDB is faster (or smaller).
    func ratio(_ peer: Engine) -> Double? {
        guard kind != .factor, let yap = median(.yapdb), let other = median(peer), yap > 0 else { return nil }
        return other / yap
    }
}

/// A goal from the issue and how the run measured against it.
struct GoalResult: Codable, Sendable {
    var workload: String
    var goal: String
    /// The measured figure, in the goal's terms (a ratio, or a time in ns).
    var measured: Double?
    var measuredText: String
    var met: Bool?
    /// How far from the goal: 1 at the goal, above 1 when missed by that factor.
    var shortfall: Double?
    /// The issue that set the goal (absent in runs recorded before issue 9).
    var issue: String?
}

/// Everything one run produced: the machine, the settings, the rows and the goals.
struct RunResults: Codable, Sendable {
    var size: String
    var rows: Int
    /// The rows of W8's `--huge` run, when it ran.
    var hugeRows: Int?
    var date: String
    var machine: [String: String]
    var settings: [String]
    var table: [Row] = []
    var goals: [GoalResult] = []
    var notes: [String] = []

    func row(_ workload: String, _ label: String) -> Row? {
        table.first { $0.workload == workload && $0.label == label }
    }
}

/// Formats a row's value for the report.
func format(_ value: Double, _ kind: Kind) -> String {
    switch kind {
    case .time:
        if value < 1_000 { return String(format: "%.0f ns", value) }
        if value < 1_000_000 { return String(format: value < 10_000 ? "%.2f µs" : "%.1f µs", value / 1_000) }
        if value < 1_000_000_000 { return String(format: value < 10_000_000 ? "%.2f ms" : "%.1f ms", value / 1_000_000) }
        return String(format: "%.2f s", value / 1_000_000_000)
    case .bytes:
        return String(format: "%.1f MiB", value / 1_048_576)
    case .factor:
        return String(format: "%.2f×", value)
    }
}

func formatRatio(_ ratio: Double) -> String {
    if ratio >= 100 { return String(format: "%.0f×", ratio) }
    if ratio >= 10 { return String(format: "%.1f×", ratio) }
    if ratio >= 0.1 { return String(format: "%.2f×", ratio) }
    return String(format: "%.2g×", ratio)
}
