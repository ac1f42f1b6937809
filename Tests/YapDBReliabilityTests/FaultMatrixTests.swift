import Testing
import YapDBStorage
import YapDBSimulatedDisk
import YapDBEngine

/// The fault matrix at the harness's scale: every mutating call of an 80-transaction workload
/// (a 1 MiB value, checkpoints, a compaction, small segments so they roll), each failure that
/// call can have, once and persistently. Small scale takes every third call site.
@Suite struct FaultMatrixTests {
    static let cases: [(UInt64, String)] = Scale.pick(small: [(7, "full"), (8, "normal")],
                                                      full: [(7, "full"), (9, "full"), (8, "normal")])

    /// Cases on an encrypted database (docs/format.md §12): the same promises with every unit sealed.
    static let encryptedCases: [(UInt64, String, Bool)] = Scale.pick(small: [(10, "full", true)],
                                                                     full: [(10, "full", true), (11, "normal", true)])

    @Test(arguments: cases.map { ($0.0, $0.1, false) } + encryptedCases)
    func everyFaultIsTypedAndLosesNothingAcknowledged(seed: UInt64, durability: String, encrypted: Bool) throws {
        var matrix = FaultMatrix(workload: Workload(seed: seed, transactions: 80), mode: durability == "full" ? .full : .normal)
        if encrypted { matrix.subject = EngineSubject(cipherKey: CipherKeyOptions(key: .raw(Array(repeating: 0x5D, count: 32)))) }
        let sites = try matrix.sites()
        #expect(Set(sites.map(\.call)).isSuperset(of: [.write, .sync, .syncDirectory, .rename, .remove]),
                "the workload reaches every kind of call: \(Set(sites.map(\.call)))")
        var tally = FaultMatrix.Tally()
        let stride = Scale.pick(small: 3, full: 1)
        for site in sites where site.operation % stride == 0 || site.call != .write {
            for effect in site.effects {
                for persistent in [false, true] {
                    matrix.run(Fault(site.call, nth: site.nth, persistent: persistent, effect: effect), site: site, into: &tally)
                }
            }
        }
        for failure in tally.failures { Issue.record(Comment(rawValue: failure)) }
        print("fault matrix seed \(seed) \(durability)\(encrypted ? " encrypted" : ""): \(sites.count) call sites, \(tally.faults) faults, \(tally.surfaced) surfaced, "
              + "\(tally.reopens) reopens, lost \(tally.lost), partial \(tally.partial), verify failures \(tally.verifyFailures), untyped \(tally.untyped)")
        #expect(tally.lost == 0 && tally.partial == 0 && tally.verifyFailures == 0 && tally.untyped == 0)
        #expect(tally.surfaced > tally.faults / 2, "most faults must reach the caller as errors")
        var figures = Figures()
        figures.add("seeds", 1)
        tally.record(into: &figures)
        figures.write(to: "fault-matrix-\(durability)-\(seed)\(encrypted ? "-encrypted" : "")")
    }

    /// The calls that change nothing, swept the same way (issue 25): every read, open, map,
    /// directory listing and lock of the workload is a site (small scale: a few of each kind,
    /// spread over the run; full: forty of each), failing once and persistently — during
    /// creation, recovery, reads of values and index pages, commits, checkpoints and the
    /// compaction. Each must end as a typed I/O error or a correct result, and lose nothing
    /// acknowledged.
    static let readCases: [(UInt64, String)] = Scale.pick(small: [(7, "full")], full: [(7, "full"), (9, "full"), (8, "normal")])

    @Test(arguments: readCases)
    func readOpenMapListAndLockFaultsAreTypedAndLoseNothing(seed: UInt64, durability: String) throws {
        let matrix = FaultMatrix(workload: Workload(seed: seed, transactions: 80), mode: durability == "full" ? .full : .normal)
        let sites = try matrix.readSites(perKind: Scale.pick(small: 5, full: 40))
        #expect(Set(sites.map(\.call)) == [.read, .open, .map, .listDirectory, .lock],
                "the workload reaches every kind of call: \(Set(sites.map(\.call)))")
        var tally = FaultMatrix.Tally()
        for site in sites {
            for effect in site.effects {
                for persistent in [false, true] {
                    matrix.run(Fault(site.call, nth: site.nth, persistent: persistent, effect: effect), site: site, into: &tally)
                }
            }
        }
        for failure in tally.failures { Issue.record(Comment(rawValue: failure)) }
        print("fault matrix (reads, opens, maps, listings, locks) seed \(seed) \(durability): \(sites.count) call sites, "
              + "\(tally.faults) faults, \(tally.surfaced) surfaced, \(tally.reopens) reopens, lost \(tally.lost), partial \(tally.partial), "
              + "verify failures \(tally.verifyFailures), untyped \(tally.untyped)")
        #expect(tally.lost == 0 && tally.partial == 0 && tally.verifyFailures == 0 && tally.untyped == 0)
        var figures = Figures()
        figures.add("seeds", 1)
        figures.add("read, open, map, list and lock faults injected", tally.faults)
        tally.record(into: &figures)
        figures.write(to: "fault-matrix-reads-\(durability)-\(seed)")
    }
}
