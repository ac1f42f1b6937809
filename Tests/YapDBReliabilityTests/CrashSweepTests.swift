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
        tally.record(into: &figures)
        figures.write(to: "crash-sweep-\(durability)-\(seed)")
    }
}
