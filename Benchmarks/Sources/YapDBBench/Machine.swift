import CLMDB
import CSQLite
import Foundation

/// What the report says about the machine and the software measured.
func describeMachine(workFolder: URL) -> [String: String] {
    var info: [String: String] = [:]
    info["cores (nproc)"] = String(ProcessInfo.processInfo.activeProcessorCount)
    info["memory"] = String(format: "%.1f GiB", Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824)
    if let cpuinfo = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
       let line = cpuinfo.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
       let model = line.split(separator: ":", maxSplits: 1).last {
        info["CPU"] = model.trimmingCharacters(in: .whitespaces)
    }
    var names = utsname()
    uname(&names)
    info["kernel"] = withUnsafeBytes(of: &names.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    info["Swift"] = run("/usr/bin/env", ["swift", "--version"])?.split(separator: "\n").first.map(String.init) ?? "unknown"
    info["SQLite"] = String(cString: sqlite3_libversion())
    info["LMDB"] = String(cString: mdb_version(nil, nil, nil))
    info["file system"] = run("/usr/bin/env", ["df", "-T", workFolder.path])?
        .split(separator: "\n").last.map { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            return fields.count > 1 ? "\(fields[1]) on \(fields[0])" : String(line)
        } ?? "unknown"
    return info
}

/// The load average (1, 5, 15 minutes), to tell a busy machine from a quiet one.
func loadAverage() -> String {
    (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?
        .split(separator: " ").prefix(3).joined(separator: " ") ?? "unknown"
}

/// Runs a command and returns its standard output, or nil when it fails.
func run(_ path: String, _ arguments: [String]) -> String? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return nil }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return process.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
}
