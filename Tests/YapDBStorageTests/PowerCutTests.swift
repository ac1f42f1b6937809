import Testing
import YapDBStorage
import YapDBSimulatedDisk
import TestSupport

/// Cuts power during a stream of commits on the simulated disk, many times per durability
/// mode, and proves every recovery is a prefix of the commit stream that contains every commit
/// known to be synced (docs/format.md §5, DESIGN.md §6 promises 1–3).
@Suite struct PowerCutTests {
    struct Tally: CustomStringConvertible {
        var cuts = 0, lostSynced = 0, partial = 0, falseCorruption = 0, recoveredCommits = 0, truncatedBytes: Int64 = 0
        var description: String {
            "cuts \(cuts), lost synced commits \(lostSynced), partial commits seen \(partial), false corruption reports \(falseCorruption), commits recovered \(recoveredCommits), torn bytes cut \(truncatedBytes)"
        }
    }

    /// The writes of commit `n`: 1–3 keys out of 6, values of varied size and compressibility.
    static func writes(commit n: Int) -> [(String, [UInt8])] {
        var rng = SeededRandom(seed: UInt64(n) &* 0x9E37)
        return (0..<(1 + Int(rng.next() % 3))).map { _ in
            let key = "k\(rng.next() % 6)"
            let size = [1, 30, 200, 900][Int(rng.next() % 4)]
            let value = rng.next() % 2 == 0 ? rng.bytes(size) : [UInt8](repeating: UInt8(n % 251), count: size)
            return (key, value)
        }
    }

    func run(mode: SyncMode, cuts: Int, seedBase: UInt64, cipherKey: CipherKeyOptions? = nil) throws -> Tally {
        var tally = Tally()
        let cutModes: [PowerCutMode] = [.drop, .torn, .garble]
        for iteration in 0..<cuts {
            let seed = seedBase &+ UInt64(iteration)
            var rng = SeededRandom(seed: seed)
            let disk = SimulatedDisk(seed: seed)
            try disk.mkdir("/db")
            var harness = LogHarness(path: "/db/main", fs: disk, mode: mode)
            harness.segmentLimit = 1500
            harness.cipherKey = cipherKey
            var states: [[String: [UInt8]]] = [[:]]
            func stateAfter(_ k: Int) -> [String: [UInt8]] {
                while states.count <= k {
                    var next = states.last!
                    for (key, value) in Self.writes(commit: states.count) { next[key] = value }
                    states.append(next)
                }
                return states[k]
            }
            var committed = 0, synced = 0
            // Two rounds: cut, recover, check, write more, cut again.
            for round in 0..<2 {
                let crashPoint = Int(rng.next() % 90)
                var opened: LogStore.Opened?
                disk.crashAfter(operations: crashPoint)
                do {
                    let (o, _) = try harness.open()
                    opened = o
                    o.writer.flushThreshold = 512
                    for _ in 0..<25 {
                        try LogHarness.commit(o.writer, Self.writes(commit: committed + 1))
                        committed += 1
                        if mode == .full { synced = committed }
                        if committed % 5 == 0 && mode != .full {
                            try o.writer.syncCommitted()
                            synced = committed
                        }
                    }
                } catch {
                    // Only the crash point may stop the stream.
                    #expect(Self.isPowerLoss(error), "seed \(seed): \(error)")
                }
                opened?.lock?.unlock()
                let cutMode = cutModes[Int(rng.next() % 3)]
                let log = disk.powerCut(seed: seed &+ UInt64(round), mode: cutMode)
                tally.cuts += 1
                let recovered: (LogStore.Opened, [String: [UInt8]])
                do {
                    recovered = try harness.open()
                } catch {
                    tally.falseCorruption += 1
                    Issue.record("seed \(seed) round \(round) \(mode) \(cutMode): recovery failed: \(error)\n\(log.suffix(20).joined(separator: "\n"))")
                    break
                }
                let k = Int(recovered.0.report.lastSnapshot)
                tally.recoveredCommits += k
                tally.truncatedBytes += recovered.0.report.truncatedBytes
                if k < synced {
                    tally.lostSynced += 1
                    Issue.record("seed \(seed) round \(round) \(mode) \(cutMode): recovered \(k) commits, \(synced) were synced")
                }
                if k > committed + 1 || recovered.1 != stateAfter(k) {
                    tally.partial += 1
                    Issue.record("seed \(seed) round \(round) \(mode) \(cutMode): recovered state is not the state after \(k) commits")
                }
                recovered.0.lock?.unlock()
                committed = k
                synced = min(synced, k)
                // States past k will be rewritten by the next round's commits with the same numbers.
                states.removeSubrange((k + 1)...)
            }
        }
        return tally
    }

    static func isPowerLoss(_ error: any Error) -> Bool {
        guard let storage = error as? StorageError, case .io(let failure) = storage else { return false }
        return failure.operation == "power lost"
    }

    @Test(arguments: [SyncMode.full, .normal, .off])
    func everyRecoveryIsAPrefixWithEverySyncedCommit(mode: SyncMode) throws {
        let tally = try run(mode: mode, cuts: 500, seedBase: 10_000)
        print("power cuts (\(mode)): \(tally)")
        #expect(tally.cuts == 1000)
        #expect(tally.lostSynced == 0)
        #expect(tally.partial == 0)
        #expect(tally.falseCorruption == 0)
        #expect(tally.recoveredCommits > 0, "the crash points must leave some commits to recover")
    }

    /// The same power cuts on an encrypted database's log (docs/format.md §12): a torn or
    /// garbled sealed record is a torn tail exactly as a plain one is, so the same promises hold.
    @Test(arguments: [SyncMode.full, .normal, .off])
    func everyRecoveryOfAnEncryptedLogIsAPrefixWithEverySyncedCommit(mode: SyncMode) throws {
        let key = CipherKeyOptions(key: .raw(Array(repeating: 0x42, count: 32)))
        let tally = try run(mode: mode, cuts: 150, seedBase: 30_000, cipherKey: key)
        print("power cuts, encrypted (\(mode)): \(tally)")
        #expect(tally.cuts == 300)
        #expect(tally.lostSynced == 0)
        #expect(tally.partial == 0)
        #expect(tally.falseCorruption == 0)
        #expect(tally.recoveredCommits > 0, "the crash points must leave some commits to recover")
    }
}
