#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
import YapDBStorage
import YapDBIndex
@testable import YapDBEngine
import TestSupport

/// Regressions found by the reliability harness's fault matrix (docs/reliability.md): one
/// failing I/O call, then commits that are acknowledged, then a power cut that must keep them.
@Suite struct FaultRegressionTests {
    /// Commits a random (incompressible) 300-byte value, so segments fill and roll.
    static func commit(_ engine: Engine, _ key: String) throws {
        var rng = SeededRandom(seed: key.utf8.reduce(UInt64(17)) { $0 &* 31 &+ UInt64($1) })
        let value = rng.bytes(300)
        _ = try engine.write { tx in try EngineTesting.set(tx, "c", key, value) }
    }

    /// Bug: a compaction whose new segment's header write failed (ENOSPC) left the empty
    /// segment file behind; once a later segment existed, recovery read it as damage before
    /// synced commits and refused to open (`corrupted`), losing every acknowledged commit.
    @Test func aSegmentWhoseHeaderCannotBeWrittenIsRemoved() throws {
        let disk = try EngineTesting.simulated()
        let options = EngineTesting.options(disk, segmentLimit: 2048)
        var engine = try Engine.open(path: "/db/main", options: options)
        for i in 0..<20 { try Self.commit(engine, "k\(i % 10)") }
        disk.inject(Fault(.write, nth: 1, effect: .error(ENOSPC)))
        #expect(throws: StorageError.self) { _ = try engine.compact(force: true) }
        for i in 0..<20 { try Self.commit(engine, "after\(i)") }   // rolls to new segments
        engine.abandon()
        disk.powerCut(seed: 1, mode: .drop)
        engine = try Engine.open(path: "/db/main", options: options)
        #expect(engine.snapshot().number == 40)
        #expect(try engine.verify().isValid)
    }
}
