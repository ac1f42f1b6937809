import Foundation
#if canImport(Glibc)
import Glibc
#endif

// Child processes: measurements that need a fresh process (open time and private memory of one
// engine alone) run as `yapdb-bench child-… ARGS`, spawned by the parent one engine at a time,
// interleaved. A child prints one line of `name=value` pairs on standard output and exits 0, or
// prints `error: …` and exits 1.

/// This program, to spawn as a child.
func selfExecutable() -> URL {
    #if os(Linux)
    return URL(fileURLWithPath: "/proc/self/exe")
    #else
    return Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
    #endif
}

/// Runs `yapdb-bench ARGUMENTS` to its end and returns the figures of its line.
func runChild(_ arguments: [String]) throws -> [String: String] {
    let child = Process()
    child.executableURL = selfExecutable()
    child.arguments = arguments
    let output = Pipe()
    child.standardOutput = output
    try child.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    child.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    guard child.terminationStatus == 0 else {
        throw BenchError("child \(arguments.first ?? "") \(arguments.dropFirst().joined(separator: " ")) failed: \(text)")
    }
    var figures: [String: String] = [:]
    for pair in text.split(separator: " ") {
        let parts = pair.split(separator: "=", maxSplits: 1)
        if parts.count == 2 { figures[String(parts[0])] = String(parts[1]) }
    }
    return figures
}

extension Dictionary where Key == String, Value == String {
    /// A child's figure as a number; throws when the child did not print it.
    func number(_ name: String) throws -> Double {
        guard let text = self[name], let value = Double(text) else { throw BenchError("a child did not report \(name)") }
        return value
    }

    /// A child's 64-bit checksum, exactly (a `Double` would round it).
    func checksum(_ name: String) throws -> UInt64 {
        guard let text = self[name], let value = UInt64(text) else { throw BenchError("a child did not report \(name)") }
        return value
    }
}

/// Runs a child's body: prints its figures as one line and exits 0, or the error and exits 1.
func childMain(_ body: () throws -> [String: String]) -> Never {
    do {
        let figures = try body()
        let line = figures.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
        exit(0)
    } catch {
        FileHandle.standardOutput.write(Data("error: \(error)\n".utf8))
        exit(1)
    }
}

/// Private memory as a child reports it: bytes, or -1 where the system has no RssAnon.
func reportedMemory() -> String { String(privateMemoryBytes() ?? -1) }

/// Reads a file of lines, each split into fields at spaces.
func readLines(_ path: String) throws -> [[String]] {
    try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
}

/// The child dispatcher: returns when `arguments` name no child mode.
func runChildModeIfAsked(_ arguments: [String]) {
    guard let mode = arguments.first, mode.hasPrefix("child-") else { return }
    let rest = Array(arguments.dropFirst())
    switch (mode, rest.count) {
    case ("child-writer", 2): childWriter(engine: rest[0], folder: rest[1])
    case ("child-open", 3): childMain { try childOpen(engine: rest[0], folder: rest[1], probePath: rest[2]) }
    case ("child-load", 3): childMain { try childLoad(engine: rest[0], folder: rest[1], rows: Int(rest[2]) ?? 0) }
    case ("child-fts", 4): childMain { try childFullText(engine: rest[0], folder: rest[1], documents: Int(rest[2]) ?? 0, corpus: rest[3]) }
    case ("child-view", 2): childMain { try childView(folder: rest[0], probePath: rest[1]) }
    case ("child-xp", 4):
        do { try childCrossProcess(engine: rest[0], durable: rest[1] == "1", folder: rest[2], role: rest[3]) } catch {
            print("error: \(error)")
            exit(1)
        }
    case ("child-micro", 3), ("child-micro", 4):
        if rest.count == 4, rest[3] == "--lending" { YapReader.lends = true }
        childMain { try childMicro(op: rest[0], rows: Int(rest[1]) ?? 0, folder: rest[2]) }
    default:
        log("unknown child mode \(mode) with \(rest.count) arguments")
        exit(2)
    }
}

/// A child that opens `engine` and loads `rows` rows of the main dataset in one durable
/// transaction, sampling private memory every 2 ms. Figures: `time` (ns), `peak` (the highest
/// RssAnon during open + load), `baseline` (RssAnon before the open, the dataset built).
func childLoad(engine name: String, folder: String, rows: Int) throws -> [String: String] {
    guard let engine = Engine(rawValue: name) else { throw BenchError("unknown engine \(name)") }
    let data = Runner.mainDataset(rows: rows)
    let baseline = privateMemoryBytes() ?? -1
    let sampler = PeakMemorySampler()
    let start = nowNanoseconds()
    let store = try openStore(engine, in: URL(fileURLWithPath: folder), durability: .durable, mapSize: 32 << 30)
    try store.write(data, rows: Array(0..<data.count)[...])
    let time = nowNanoseconds() - start
    let peak = sampler.stop()
    try store.close()
    return ["time": String(time), "peak": String(baseline < 0 ? -1 : peak), "baseline": String(baseline)]
}
