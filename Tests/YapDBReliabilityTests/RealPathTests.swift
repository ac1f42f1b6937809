import Testing
import TestSupport
import YapDBStorage
import YapDBSimulatedDisk
import YapDBEngine

/// The engine on the real POSIX file system (issue 25, items 2 and 3): faults injected at the
/// `RealPathFileSystem` seam above `PosixFileSystem`, and crash states built from the system
/// calls a workload made (ALICE's method, `RecordedTrace`).
@Suite struct RealPathTests {
    /// Every kind of call the seam has, each failed at a few of its ordinals (small: the middle
    /// one; full: twelve spread over the run) with each failure `RealPathMatrix.effects` lists,
    /// once and persistently.
    @Test func everyFailureOfTheRealFileSystemIsTypedAndLosesNothing() throws {
        let seed: UInt64 = 21
        let matrix = RealPathMatrix(workload: Workload(seed: seed, transactions: Scale.pick(small: 16, full: 60), bigValues: false), mode: .full)
        let counts = try matrix.counts()
        #expect(Fault.Call.allCases.allSatisfy { counts[$0, default: 0] > 0 || $0 == .truncate },
                "the workload reaches every kind of call (a truncate only on failures): \(counts)")
        var tally = FaultMatrix.Tally()
        let picks = Scale.pick(small: 1, full: 12)
        for call in Fault.Call.allCases {
            let count = counts[call, default: 0]
            guard count > 0 else { continue }
            let ordinals = Set((0..<min(picks, count)).map { 1 + (2 * $0 + 1) * count / (2 * min(picks, count)) })
            for nth in ordinals.sorted() {
                for effect in RealPathMatrix.effects(call) {
                    for persistent in [false, true] {
                        matrix.run(RealFault(call: call, nth: nth, persistent: persistent, effect: effect), into: &tally)
                    }
                }
            }
        }
        for failure in tally.failures { Issue.record(Comment(rawValue: failure)) }
        print("real-path faults seed \(seed): calls \(counts.map { "\($0.key.rawValue) \($0.value)" }.sorted().joined(separator: ", ")); "
              + "\(tally.faults) faults, \(tally.surfaced) surfaced, \(tally.reopens) reopens, lost \(tally.lost), partial \(tally.partial), "
              + "verify failures \(tally.verifyFailures), untyped \(tally.untyped), failed reopens \(tally.failedRecoveries)")
        #expect(tally.lost == 0 && tally.partial == 0 && tally.verifyFailures == 0 && tally.untyped == 0 && tally.failedRecoveries == 0)
        #expect(tally.surfaced > tally.faults / 3, "many faults must reach the caller as errors")
        var figures = Figures()
        figures.add("faults injected", tally.faults)
        figures.add("real-path faults injected", tally.faults)
        figures.add("faults surfaced as typed errors", tally.surfaced)
        figures.add("untyped or unexpected errors", tally.untyped)
        figures.add("acknowledged commits checked", tally.acknowledgedChecked)
        figures.add("lost acknowledged commits", tally.lost)
        figures.add("partial commits visible", tally.partial)
        figures.add("verify failures", tally.verifyFailures)
        figures.add("failed recoveries", tally.failedRecoveries)
        figures.write(to: "real-path-faults")
    }

    /// A read that returns fewer bytes than the file holds is an I/O failure, never a verdict
    /// on the file: the first read of the workload (the magic of the main file, read at the
    /// first reopen to tell a foreign file from ours) returning half its bytes once made the open
    /// throw `notADatabase` (found by the full-scale run above, seed 21, read #1).
    @Test func aShortReadOfTheMainFilesMagicIsNotAForeignFile() throws {
        let matrix = RealPathMatrix(workload: Workload(seed: 21, transactions: 16, bigValues: false), mode: .full)
        for persistent in [false, true] {
            var tally = FaultMatrix.Tally()
            matrix.run(RealFault(call: .read, nth: 1, persistent: persistent, effect: .shortRead), into: &tally)
            for failure in tally.failures { Issue.record(Comment(rawValue: failure)) }
            #expect(tally.untyped == 0 && tally.lost == 0 && tally.partial == 0 && tally.verifyFailures == 0)
        }
    }

    /// (seed, durability, transactions, 1 MiB values, seeded resolutions per kind and crash
    /// point). The 1 MiB values span 256 blocks, so their torn and reordered states are many.
    static let traceCases: [(UInt64, String, Int, Bool, Int)] = Scale.pick(
        small: [(31, "full", 24, false, 3), (32, "normal", 24, true, 4)],
        full: [(31, "full", 250, true, 4), (32, "normal", 250, true, 6), (33, "full", 250, false, 4), (34, "normal", 250, false, 6),
               (35, "full", 250, true, 4), (36, "normal", 250, true, 6), (37, "full", 250, false, 4), (38, "normal", 250, false, 6)]
    )

    /// Records the workload's mutating calls on the real file system, then for every prefix of
    /// them builds the states `RecordedTrace` allows (every call kept; only what was synced;
    /// seeded prefixes with a torn write; seeded reordered blocks), writes each distinct one
    /// into a fresh directory and opens it: every commit acknowledged before the crash point
    /// (`.full`; in `.normal`, every one before the last checkpoint, and all of them when every
    /// call was kept) must be there, no commit in part, `verify()` clean.
    @Test(arguments: traceCases)
    func everyCrashStateOfTheRecordedCallsRecovers(seed: UInt64, durability: String, transactions: Int, bigValues: Bool, seeded: Int) throws {
        let mode: SyncMode = durability == "full" ? .full : .normal
        let workload = Workload(seed: seed, transactions: transactions, bigValues: bigValues)
        let directory = RealPath.scratch("yapdb-trace")
        defer { RealPath.remove(directory) }
        let fs = RealPathFileSystem(recording: true)
        var history = History()
        // After each step: (trace position, commits acknowledged, commits known durable).
        var marks: [(position: Int, acknowledged: Int, durable: Int)] = [(0, 0, 0)]
        let engine = try Engine.open(path: directory + "/" + RealPath.name, options: RealPath.options(fs, mode: mode))
        for step in RealPath.steps(workload) {
            try step.run(on: engine, history: &history, mode: mode)
            marks.append((fs.traceCount, history.acknowledged, history.durable))
        }
        try engine.close()
        history.markAllDurable()
        marks.append((fs.traceCount, history.acknowledged, history.durable))
        let calls = fs.trace
        #expect(calls.contains { if case .rename = $0 { true } else { false } } && calls.contains { if case .remove = $0 { true } else { false } },
                "the trace has renames and removes (checkpoints, the compaction)")

        var tally = FaultMatrix.Tally()
        var seen = Set<[String: Int]>()
        var resolutionsTried = 0
        var machine = RecordedTrace.Machine()
        for p in 0...calls.count {
            if p > 0 { machine.apply(calls[p - 1]) }
            let mark = marks.last { $0.position <= p }!
            var resolutions: [RecordedTrace.Resolution] = [.kept, .synced]
            for index in 0..<seeded {
                let salt = seed &* 1_000_003 &+ UInt64(p) &* 64 &+ UInt64(index)
                resolutions += [.prefixTorn(seed: salt), .reordered(seed: salt &+ 32)]
            }
            for resolution in resolutions {
                resolutionsTried += 1
                let files = RecordedTrace.state(of: machine, resolution)
                guard seen.insert(RecordedTrace.fingerprint(files)).inserted else { continue }
                let state = RealPath.scratch("yapdb-state")
                defer { RealPath.remove(state) }
                guard RecordedTrace.materialize(files, in: state) else {
                    tally.fail("crash point \(p) \(resolution): could not write the state")
                    continue
                }
                let minimum = mode == .full || { if case .kept = resolution { true } else { false } }() ? mark.acknowledged : mark.durable
                RealPath.check(state, mode: mode, states: history.states, minimum: minimum, maximum: mark.acknowledged + 1, into: &tally,
                               label: "recorded trace seed \(seed) \(durability) crash point \(p) of \(calls.count) \(resolution)")
            }
        }
        for failure in tally.failures { Issue.record(Comment(rawValue: failure)) }
        print("recorded trace seed \(seed) \(durability): \(calls.count) calls, \(resolutionsTried) resolutions, \(tally.states) distinct crash states, "
              + "lost \(tally.lost), partial \(tally.partial), verify failures \(tally.verifyFailures), failed recoveries \(tally.failedRecoveries)")
        #expect(tally.lost == 0 && tally.partial == 0 && tally.verifyFailures == 0 && tally.failedRecoveries == 0,
                "reproduce with YAPDB_SCALE=\(Scale.current.rawValue) swift test --filter RealPathTests")
        #expect(tally.states * 2 >= calls.count, "most crash points give a state of their own")
        var figures = Figures()
        figures.add("seeds", 1)
        figures.add("recorded real-path calls", calls.count)
        figures.add("crash states from recorded real-path calls", tally.states)
        figures.add("acknowledged commits checked", tally.acknowledgedChecked)
        figures.add("lost acknowledged commits", tally.lost)
        figures.add("partial commits visible", tally.partial)
        figures.add("verify failures", tally.verifyFailures)
        figures.add("failed recoveries", tally.failedRecoveries)
        figures.write(to: "recorded-trace-\(durability)-\(seed)")
    }
}
