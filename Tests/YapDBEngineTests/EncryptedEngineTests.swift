import Testing
import YapDBStorage
import YapDBSimulatedDisk
import YapDBIndex
@testable import YapDBEngine
import TestSupport

/// The engine over an encrypted database (docs/format.md §12): rows written, rolled across
/// segments, compacted (records opened and sealed again at their new place), checkpointed and
/// index-compacted (pages sealed again) and read back after a reopen; a wrong or missing key is its own error whatever `corruptAction` says, and
/// changes no file.
@Suite struct EncryptedEngineTests {
    static let key = CipherKeyOptions(key: .raw(Array(repeating: 0x33, count: 32)))

    static func options(_ disk: SimulatedDisk, key: CipherKeyOptions? = key) -> EngineOptions {
        var options = EngineTesting.options(disk, segmentLimit: 4096)
        options.cipherKey = key
        return options
    }

    static func everyFile(_ disk: SimulatedDisk) throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for name in try disk.listDirectory("/db") { files[name] = disk.currentBytes(of: "/db/" + name) }
        return files
    }

    @Test func rowsSurviveRollsCompactionAndReopen() throws {
        let disk = try EngineTesting.simulated()
        var engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        var model = Model()
        var rng = SeededRandom(seed: 26)
        for batch in 0..<6 {
            _ = try engine.write { tx in
                for i in 0..<10 {
                    let key = "k\(batch * 10 + i)", value = rng.bytes(200)
                    try EngineTesting.set(tx, "c", key, value)
                    model["c", key] = .init(object: value)
                }
            }
        }
        _ = try engine.write { tx in
            for i in 0..<60 where i % 2 == 0 {
                try tx.remove(collection: "c", key: "k\(i)")
                model["c", "k\(i)"] = nil
            }
        }
        #expect(try engine.snapshot().materialize() == model)
        let report = try engine.compact()
        #expect(!report.victims.isEmpty && report.recordsMoved > 0)
        #expect(try engine.snapshot().materialize() == model)
        #expect(try engine.verify().isValid)
        // Index compaction copies the trees into a new index file: every page sealed again.
        try engine.checkpoint()
        try engine.compactIndex()
        #expect(try engine.snapshot().materialize() == model)
        #expect(try engine.verify().isValid)
        try engine.close()
        engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        #expect(try engine.snapshot().materialize() == model)
        try engine.close()
    }

    @Test func aReadOnlyOpenReadsWithTheKeyAndRefusesAWrongOne() throws {
        let disk = try EngineTesting.simulated()
        var engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        var model = Model()
        for n in 0..<20 {
            _ = try engine.write { tx in try EngineTesting.set(tx, "c", "k\(n)", [UInt8](repeating: UInt8(n), count: 100)) }
            model["c", "k\(n)"] = .init(object: [UInt8](repeating: UInt8(n), count: 100))
        }
        try engine.checkpoint()
        _ = try engine.write { tx in try EngineTesting.set(tx, "c", "late", [9]) }
        model["c", "late"] = .init(object: [9])
        try engine.close()
        let before = try Self.everyFile(disk)
        var readOnly = Self.options(disk)
        readOnly.readOnly = true
        engine = try Engine.open(path: "/db/main", options: readOnly)
        #expect(try engine.snapshot().materialize() == model)
        try engine.close()
        readOnly.cipherKey = CipherKeyOptions(key: .raw(Array(repeating: 0x35, count: 32)))
        #expect(throws: EngineError.wrongKey) { try Engine.open(path: "/db/main", options: readOnly) }
        #expect(try Self.everyFile(disk) == before)
    }

    @Test(arguments: [CorruptAction.fail, .rename, .delete])
    func aWrongOrMissingKeyNeverReachesCorruptAction(action: CorruptAction) throws {
        let disk = try EngineTesting.simulated()
        let engine = try Engine.open(path: "/db/main", options: Self.options(disk))
        _ = try engine.write { tx in try EngineTesting.set(tx, "c", "k", [1, 2, 3]) }
        try engine.close()
        let before = try Self.everyFile(disk)
        var wrong = Self.options(disk, key: CipherKeyOptions(key: .raw(Array(repeating: 0x34, count: 32))))
        wrong.corruptAction = action
        #expect(throws: EngineError.wrongKey) { try Engine.open(path: "/db/main", options: wrong) }
        var missing = Self.options(disk, key: nil)
        missing.corruptAction = action
        #expect(throws: EngineError.keyUnavailable) { try Engine.open(path: "/db/main", options: missing) }
        #expect(try Self.everyFile(disk) == before)
    }
}
