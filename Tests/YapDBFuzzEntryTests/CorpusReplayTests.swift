import Foundation
import Testing
import YapDBFuzzEntry

/// The fuzz corpora live in the repository (`Fuzz/Corpus/<target>/`, seeds and what the
/// fuzzer kept; `Fuzz/Crashes/<target>/`, every input that ever crashed a target). Replaying
/// them here makes every past finding a regression test: an input that traps, or breaks an
/// invariant the entry point checks, stops this test process with "FUZZ FINDING".
@Suite struct CorpusReplayTests {
    /// `Fuzz/` at the root of this package.
    static let fuzzDirectory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    static func inputs(_ folder: String, _ target: FuzzEntry.Target) throws -> [URL] {
        let directory = fuzzDirectory.appendingPathComponent(folder).appendingPathComponent(target.rawValue)
        guard FileManager.default.fileExists(atPath: directory.path) else { return [] }
        return try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { !$0.lastPathComponent.hasPrefix(".") }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    static func replay(_ target: FuzzEntry.Target, _ file: URL) throws {
        let data = try Data(contentsOf: file)
        data.withUnsafeBytes { FuzzEntry.run(target, $0) }
    }

    @Test(arguments: FuzzEntry.Target.allCases)
    func corpusReplays(target: FuzzEntry.Target) throws {
        let files = try Self.inputs("Corpus", target)
        #expect(files.count >= 5, "Fuzz/Corpus/\(target.rawValue) holds only \(files.count) inputs: regenerate the seeds (Fuzz/README.md)")
        for file in files { try Self.replay(target, file) }
    }

    @Test(arguments: FuzzEntry.Target.allCases)
    func crashInputsReplay(target: FuzzEntry.Target) throws {
        for file in try Self.inputs("Crashes", target) { try Self.replay(target, file) }
    }

    @Test(arguments: FuzzEntry.Target.allCases)
    func generatedSeedsRunAndDiffer(target: FuzzEntry.Target) {
        let seeds = FuzzEntry.seeds(for: target)
        #expect(seeds.count >= 5)
        #expect(Set(seeds).count == seeds.count, "duplicate seeds for \(target.rawValue)")
        for seed in seeds { seed.withUnsafeBytes { FuzzEntry.run(target, $0) } }
    }

    /// Empty and tiny inputs decode to something and must not trap.
    @Test(arguments: FuzzEntry.Target.allCases)
    func degenerateInputs(target: FuzzEntry.Target) {
        for input: [UInt8] in [[], [0], [0xFF], [UInt8](repeating: 0xFF, count: 64), [UInt8](repeating: 0, count: 300)] {
            input.withUnsafeBytes { FuzzEntry.run(target, $0) }
        }
    }
}
