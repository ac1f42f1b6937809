#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Monotonic time in nanoseconds.
func nowNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Runs `body` and returns how long it took, in nanoseconds. While a profiler is attached
/// (`--perf-control`), only these timed sections of YapDB are recorded.
func timed(_ profiled: Bool = false, _ body: () throws -> Void) rethrows -> Double {
    if profiled { PerfControl.shared?.enable() }
    let start = nowNanoseconds()
    try body()
    let elapsed = Double(nowNanoseconds() - start)
    if profiled { PerfControl.shared?.disable() }
    return elapsed
}

/// The median of `values` (the mean of the two middle values for an even count).
func median(_ values: [Double]) -> Double {
    precondition(!values.isEmpty, "median of nothing")
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// The `p`-th percentile (0...100) of `values`, nearest rank.
func percentile(_ values: [Double], _ p: Double) -> Double {
    precondition(!values.isEmpty, "percentile of nothing")
    let sorted = values.sorted()
    let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
    return sorted[max(0, min(sorted.count - 1, rank))]
}
