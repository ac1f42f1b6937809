import Foundation
import Testing
import YapDBStorage
import YapDBEngine

/// The crash sweep at the harness's scale: every crash point of a 250-transaction workload,
/// each resolved as drop, torn, garble and (with a seeded data mode) unsynced names kept by
/// the seed; `.full` must keep every acknowledged commit, `.normal` every commit up to its last
/// sync; neither may show part of a commit; `verify()` passes after every recovery.
@Suite struct CrashSweepTests {
    static let transactions = 250

    /// (seed, durability) cases: a seed per case so the two cores share the work.
    static let cases: [(UInt64, String)] = Scale.pick(
        small: [(1, "full"), (2, "normal")],
        full: (1...14).map { (UInt64($0), "full") } + (101...107).map { (UInt64($0), "normal") }
    )

    static let variants: [CrashSweep.Variant] = [
        .init(mode: .drop, names: .needDirectorySync),
        .init(mode: .torn, names: .needDirectorySync),
        .init(mode: .garble, names: .needDirectorySync),
        .init(mode: .torn, names: .seeded),
    ]

    @Test(arguments: cases)
    func everyCrashPointRecoversAPrefixWithEveryAcknowledgedCommit(seed: UInt64, durability: String) throws {
        let mode: SyncMode = durability == "full" ? .full : .normal
        let sweep = CrashSweep(workload: Workload(seed: seed, transactions: Self.transactions), mode: mode, segmentLimit: 64 << 10)
        #expect(sweep.workload.commits >= 200)
        let total = try sweep.countOperations()
        var tally = CrashSweep.Tally()
        sweep.sweep(points: 0...total, variants: Self.variants, into: &tally)
        for failure in tally.failures { Issue.record(Comment(rawValue: failure)) }
        print("crash sweep seed \(seed) \(durability): T = \(total), \(tally.crashPoints) crash points, \(tally.states) crash states, "
              + "\(tally.recoveryCrashes) inside recovery, lost \(tally.lost), partial \(tally.partial), verify failures \(tally.verifyFailures)")
        #expect(tally.crashPoints == total + 1)
        #expect(tally.lost == 0 && tally.partial == 0 && tally.verifyFailures == 0 && tally.failedRecoveries == 0,
                "seed \(seed) \(durability): reproduce with YAPDB_SCALE=\(Scale.current.rawValue) swift test --filter CrashSweepTests")
        #expect(tally.recoveryCrashes > 0, "some recoveries must do I/O (torn tails, leftovers) for the recovery crashes to mean anything")
        var figures = Figures()
        figures.add("seeds", 1)
        tally.record(into: &figures, workload: sweep.subject.name)
        figures.write(to: "crash-sweep-\(durability)-\(seed)")
    }

    /// (seed, durability) cases of the sweep on an encrypted database (docs/format.md §12): the
    /// same promises, with every record, checkpoint and index page sealed.
    static let encryptedCases: [(UInt64, String)] = Scale.pick(
        small: [(3, "full")],
        full: [(3, "full"), (4, "full"), (103, "normal")]
    )

    @Test(arguments: encryptedCases)
    func everyCrashPointOfAnEncryptedDatabaseRecoversAPrefix(seed: UInt64, durability: String) throws {
        let mode: SyncMode = durability == "full" ? .full : .normal
        let subject = EngineSubject(cipherKey: CipherKeyOptions(key: .raw(Array(repeating: 0x5C, count: 32))))
        let sweep = CrashSweep(workload: Workload(seed: seed, transactions: Self.transactions), subject: subject, mode: mode,
                               segmentLimit: 64 << 10)
        let total = try sweep.countOperations()
        var tally = CrashSweep.Tally()
        sweep.sweep(points: 0...total, variants: Self.variants, into: &tally)
        for failure in tally.failures { Issue.record(Comment(rawValue: failure)) }
        print("crash sweep (encrypted) seed \(seed) \(durability): T = \(total), \(tally.crashPoints) crash points, \(tally.states) crash states, "
              + "\(tally.recoveryCrashes) inside recovery, lost \(tally.lost), partial \(tally.partial), verify failures \(tally.verifyFailures)")
        #expect(tally.crashPoints == total + 1)
        #expect(tally.lost == 0 && tally.partial == 0 && tally.verifyFailures == 0 && tally.failedRecoveries == 0,
                "seed \(seed) \(durability) encrypted: reproduce with YAPDB_SCALE=\(Scale.current.rawValue) swift test --filter CrashSweepTests")
        #expect(tally.recoveryCrashes > 0)
    }

    /// The workloads with extensions: the same generator through the public API on a
    /// `YapDatabase` with the extension registered (and registered again at each recovery).
    /// A new extension's workload is one more `DatabaseSubject` here.
    static let subjects: [String: DatabaseSubject] = [
        "view": DatabaseSubject(name: "view", extensions: [SweptView()]),
        "secondary index": DatabaseSubject(name: "secondary index", extensions: [SweptSecondaryIndex()]),
        "full-text search": DatabaseSubject(name: "full-text search", extensions: [SweptFullText()]),
    ]

    /// (workload, seed, durability, transactions, every how many crash points): at small scale
    /// a short workload and a sample of its crash points, at full scale every crash point.
    static let extensionCases: [(String, UInt64, String, Int, Int)] = Scale.pick(
        small: [("view", 1, "full", 40, 3), ("secondary index", 2, "normal", 40, 3), ("full-text search", 3, "full", 40, 3)],
        full: subjects.keys.sorted().flatMap { name in
            (1...3).map { (name, UInt64($0), "full", 120, 1) } + [(name, 101, "normal", 120, 1)]
        }
    )

    @Test(arguments: extensionCases)
    func extensionsEqualARebuildAfterEveryCrash(workload name: String, seed: UInt64, durability: String, transactions: Int, stride: Int) throws {
        let mode: SyncMode = durability == "full" ? .full : .normal
        let subject = try #require(Self.subjects[name])
        let sweep = CrashSweep(workload: Workload(seed: seed, transactions: transactions, bigValues: false), subject: subject,
                               mode: mode, segmentLimit: 16 << 10)
        let total = try sweep.countOperations()
        var tally = CrashSweep.Tally()
        let points = Array(Swift.stride(from: 0, through: total, by: stride))
        sweep.sweep(points: points, variants: Self.variants, into: &tally)
        for failure in tally.failures { Issue.record(Comment(rawValue: failure)) }
        print("crash sweep \(name) seed \(seed) \(durability): T = \(total), \(tally.crashPoints) crash points, \(tally.states) crash states, "
              + "\(tally.recoveryCrashes) inside recovery, lost \(tally.lost), partial \(tally.partial), verify failures \(tally.verifyFailures)")
        #expect(tally.crashPoints == points.count)
        #expect(tally.lost == 0 && tally.partial == 0 && tally.verifyFailures == 0 && tally.failedRecoveries == 0,
                "\(name) seed \(seed) \(durability): reproduce with YAPDB_SCALE=\(Scale.current.rawValue) swift test --filter CrashSweepTests")
        var figures = Figures()
        figures.add("seeds", 1)
        tally.record(into: &figures, workload: name)
        figures.write(to: "crash-sweep-\(name.replacingOccurrences(of: " ", with: "-"))-\(durability)-\(seed)")
    }

    /// The background idle checkpoint (issue 25): run at deterministic points between commits
    /// through the engine's hook (`Engine.runIdleCheckpointNow`, what the timer calls), every
    /// fifth transaction, with the explicit checkpoints and the compaction around it. Every
    /// mutating call of every idle checkpoint is a crash point (plus every fourth other call),
    /// each cut as drop, torn, garble and torn with names kept, and checked as the main sweep.
    static let idleCases: [(UInt64, String, Int)] = Scale.pick(small: [(41, "full", 20)],
                                                             full: [(41, "full", 120), (42, "full", 120), (43, "normal", 120)])

    @Test(arguments: idleCases)
    func theIdleCheckpointCrashedAtEveryCallRecovers(seed: UInt64, durability: String, transactions: Int) throws {
        let mode: SyncMode = durability == "full" ? .full : .normal
        let workload = Workload(seed: seed, transactions: transactions, bigValues: false, idleCheckpoints: true)
        let sweep = CrashSweep(workload: workload, mode: mode, segmentLimit: 16 << 10)
        // Where the idle checkpoints' calls fall, from a run without crashes.
        let disk = CrashSweep.newDisk(seed: seed)
        let engine = try Engine.open(path: CrashSweep.path, options: sweep.options(disk))
        var history = History()
        var inside = Set<Int>()
        for step in workload.steps {
            let before = disk.operationCount
            try step.run(on: engine, history: &history, mode: mode)
            if case .idleCheckpoint = step { inside.formUnion(before..<disk.operationCount) }
        }
        engine.abandon()
        let total = disk.operationCount
        #expect(inside.count >= 10, "the idle checkpoints do I/O: \(inside.count) calls")
        let points = (0...total).filter { inside.contains($0) || $0 % 4 == 0 }
        var tally = CrashSweep.Tally()
        sweep.sweep(points: points, variants: Self.variants, into: &tally)
        for failure in tally.failures { Issue.record(Comment(rawValue: failure)) }
        print("crash sweep idle checkpoint seed \(seed) \(durability): T = \(total), \(inside.count) calls inside idle checkpoints, "
              + "\(tally.crashPoints) crash points, \(tally.states) crash states, lost \(tally.lost), partial \(tally.partial), "
              + "verify failures \(tally.verifyFailures)")
        #expect(tally.crashPoints == points.count)
        #expect(tally.lost == 0 && tally.partial == 0 && tally.verifyFailures == 0 && tally.failedRecoveries == 0,
                "idle checkpoint seed \(seed) \(durability): reproduce with YAPDB_SCALE=\(Scale.current.rawValue) swift test --filter CrashSweepTests")
        var figures = Figures()
        figures.add("seeds", 1)
        figures.add("crash points inside the idle checkpoint", inside.count)
        tally.record(into: &figures, workload: "idle checkpoint")
        figures.write(to: "crash-sweep-idle-\(durability)-\(seed)")
    }
}
