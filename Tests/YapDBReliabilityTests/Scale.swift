#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// How big the reliability harness runs: `small` (the default, what `make test` runs: a few
/// minutes in all) or `full` (`make reliability`, the scale of issue 5's "Done when").
///
/// Read from the environment variable `YAPDB_SCALE`. It is a size knob only: every check runs
/// at both scales, only the number of seeds, crash points, kills and commits changes.
enum Scale: String, Sendable {
    case small, full

    static let current: Scale = {
        guard let raw = getenv("YAPDB_SCALE") else { return .small }
        return Scale(rawValue: String(cString: raw)) ?? .small
    }()

    /// `small` at small scale, `full` at full scale.
    static func pick<T>(small: T, full: T) -> T { current == .full ? full : small }
}

/// The figures a part of the harness reports, one `name: value` line each, written to
/// `$YAPDB_RELIABILITY_DIR/<file>.txt` (default `.build/reliability`) when the part ends.
/// `make reliability` sums the figures of every file into its report.
struct Figures: Sendable {
    private var values: [(String, Int)] = []

    mutating func add(_ name: String, _ amount: Int) {
        if let index = values.firstIndex(where: { $0.0 == name }) {
            values[index].1 += amount
        } else {
            values.append((name, amount))
        }
    }

    subscript(name: String) -> Int { values.first { $0.0 == name }?.1 ?? 0 }

    /// The figures as report lines.
    var lines: [String] { values.map { "\($0.0): \($0.1)" } }

    /// Writes the figures to `<directory>/<file>.txt`, replacing an older file of that name.
    func write(to file: String) {
        let directory = getenv("YAPDB_RELIABILITY_DIR").map { String(cString: $0) } ?? ".build/reliability"
        var prefix = directory.hasPrefix("/") ? "/" : ""
        for part in directory.split(separator: "/") {
            prefix += part
            mkdir(prefix, 0o755)
            prefix += "/"
        }
        let text = lines.joined(separator: "\n") + "\n"
        guard let stream = fopen(directory + "/" + file + ".txt", "w") else { return }
        fputs(text, stream)
        fclose(stream)
    }
}
