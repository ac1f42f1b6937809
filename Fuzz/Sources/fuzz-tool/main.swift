import Foundation
import YapDBFuzzEntry

// The fuzz harness's helper, built without sanitizers:
//   fuzz-tool seeds [CORPUS]            writes the generated seeds to CORPUS/<target>/seed-NNN
//                                       (default: this package's Corpus/), replacing older
//                                       seed-* files and keeping what the fuzzer added
//   fuzz-tool replay TARGET FILE...     runs TARGET's entry point on each FILE, printing its name
//                                       and the database's log messages

let arguments = Array(CommandLine.arguments.dropFirst())
let manager = FileManager.default

func usage() -> Never {
    print("usage: fuzz-tool seeds [CORPUS] | fuzz-tool replay records|recovery|operations|pages|query FILE...")
    exit(2)
}

switch arguments.first {
case "seeds":
    FuzzEntry.silenceLogging()
    let corpus = arguments.count > 1
        ? URL(fileURLWithPath: arguments[1])
        : URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Corpus")
    for target in FuzzEntry.Target.allCases {
        let directory = corpus.appendingPathComponent(target.rawValue)
        try manager.createDirectory(at: directory, withIntermediateDirectories: true)
        for old in try manager.contentsOfDirectory(atPath: directory.path) where old.hasPrefix("seed-") {
            try manager.removeItem(at: directory.appendingPathComponent(old))
        }
        let seeds = FuzzEntry.seeds(for: target)
        for (index, seed) in seeds.enumerated() {
            let name = "seed-" + String(repeating: "0", count: max(0, 3 - String(index).count)) + String(index)
            try Data(seed).write(to: directory.appendingPathComponent(name))
        }
        print("\(target.rawValue): \(seeds.count) seeds, \(seeds.reduce(0) { $0 + $1.count }) bytes")
    }
case "replay":
    guard arguments.count >= 3, let target = FuzzEntry.Target(rawValue: arguments[1]) else { usage() }
    for path in arguments.dropFirst(2) {
        print("replaying \(path)")
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        data.withUnsafeBytes { FuzzEntry.run(target, $0) }
    }
    print("ok: \(arguments.count - 2) input(s)")
default:
    usage()
}
