#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Switches `perf record --control fifo:CTL,ACK -D -1` on around YapDB's timed sections, so a
/// profile holds the measured work and not the setup around it (`Benchmarks/profile.sh`).
final class PerfControl: Sendable {
    /// Set once at start-up from `--perf-control`, before any workload runs; read-only after.
    nonisolated(unsafe) static var shared: PerfControl?

    private let control: Int32
    private let ack: Int32

    init?(controlPath: String, ackPath: String) {
        control = open(controlPath, O_WRONLY)
        ack = open(ackPath, O_RDONLY)
        if control < 0 || ack < 0 { return nil }
    }

    func enable() { send("enable\n") }
    func disable() { send("disable\n") }

    private func send(_ command: String) {
        var bytes = Array(command.utf8)
        _ = write(control, &bytes, bytes.count)
        var reply = [UInt8](repeating: 0, count: 5)
        _ = read(ack, &reply, reply.count)
    }
}
