import Foundation
import Testing
import YapDBSimulatedDisk
import YapDB

/// The crash sweep's relationship workload (`RelationshipCrashSweep`): sampled crash points of
/// a seeded run, each cut as drop, torn and garble, reopened and checked.
@Suite struct RelationshipCrashSweepTests {
    static let seeds: [UInt64] = Scale.pick(small: [1], full: Array(1...6))
    static let transactions = Scale.pick(small: 60, full: 120)
    /// Every `stride`-th crash point (every one at full scale).
    static let stride = Scale.pick(small: 7, full: 1)

    @Test(arguments: seeds)
    func everySampledCrashPointRecoversAConsistentGraph(seed: UInt64) throws {
        let sweep = RelationshipCrashSweep(seed: seed, transactions: Self.transactions)
        let clean = RelationshipCrashSweep.newDisk(seed: seed)
        let full = sweep.run(on: clean)
        if let unexpected = full.unexpected { throw unexpected }
        full.database?.abandon()
        let total = clean.operationCount
        #expect(full.states.count == Self.transactions + 1)
        var states = 0, problems: [String] = []
        let only = ProcessInfo.processInfo.environment["REL_POINT"].flatMap { Int($0) }
        for n in Swift.stride(from: 0, through: total, by: Self.stride) where only == nil || only == n {
            let disk = RelationshipCrashSweep.newDisk(seed: seed)
            disk.crashAfter(operations: n)
            let run = sweep.run(on: disk)
            run.database?.abandon()
            if let unexpected = run.unexpected {
                problems.append("crash point \(n): the workload failed with \(unexpected)")
                continue
            }
            for (index, mode) in [PowerCutMode.drop, .torn, .garble].enumerated() {
                let copy = disk.copy()
                copy.powerCut(seed: seed &* 7919 &+ UInt64(n) &* 4 &+ UInt64(index), mode: mode)
                let label = "seed \(seed) crash point \(n) \(mode.rawValue)"
                do {
                    let database = try RelationshipCrashSweep.open(copy)
                    problems += RelationshipCrashSweep.check(database, states: run.states, inFlight: run.inFlight, label: label)
                    database.abandon()
                } catch {
                    problems.append("\(label): reopen failed: \(error)")
                }
                states += 1
            }
        }
        for problem in problems.prefix(10) { Issue.record(Comment(rawValue: problem)) }
        print("relationship crash sweep seed \(seed): T = \(total), \(states) crash states, \(problems.count) problems")
        #expect(states > 20)
        var figures = Figures()
        figures.add("relationship crash states", states)
        figures.add("relationship crash problems", problems.count)
        figures.write(to: "crash-sweep-relationships-\(seed)")
    }
}
