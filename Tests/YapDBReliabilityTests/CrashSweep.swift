import TestSupport
import YapDBStorage
import YapDBSimulatedDisk
import YapDBEngine

/// The crash sweep (issue 5, item 1): runs a `Workload` on a `SimulatedDisk`, stops the disk
/// after n mutating calls for every n in 0…T, and resolves that moment in several ways (power
/// cut modes drop, torn and garble, and one with unsynced name operations kept by the seed).
/// Each resolution is a crash state: reopen, check against the `History`, `verify()`. Then,
/// per state: a crash inside the recovery itself, and ten more commits cut at a seeded point.
///
/// The workload runs on a `SweepSubject`: the engine alone (the rows), or a `YapDatabase` with
/// extensions registered, each checked against a rebuild from the recovered rows.
struct CrashSweep {
    static let path = "/db/main"

    let workload: Workload
    let subject: any SweepSubject
    let mode: SyncMode
    let segmentLimit: Int

    init(workload: Workload, subject: any SweepSubject = EngineSubject(), mode: SyncMode, segmentLimit: Int) {
        self.workload = workload
        self.subject = subject
        self.mode = mode
        self.segmentLimit = segmentLimit
    }

    /// Counters (see `Figures` names in `record`) and the first few failures.
    struct Tally {
        var states = 0, crashPoints = 0, recoveryCrashes = 0, seededNameStates = 0
        var acknowledgedChecked = 0, lost = 0, partial = 0, verifyFailures = 0, failedRecoveries = 0
        var failures: [String] = []

        mutating func fail(_ message: String) {
            if failures.count < 20 { failures.append(message) }
        }
    }

    /// A resolution of a crash moment.
    struct Variant: CustomStringConvertible {
        var mode: PowerCutMode
        var names: UnsyncedNames
        var description: String { "\(mode.rawValue)\(names == .seeded ? "+names" : "")" }
    }

    /// The engine's options on `disk` (the fault matrix opens the engine with them too).
    func options(_ disk: SimulatedDisk) -> EngineOptions {
        var options = Self.engineOptions(disk, mode: mode, segmentLimit: segmentLimit)
        options.cipherKey = (subject as? EngineSubject)?.cipherKey
        return options
    }

    static func engineOptions(_ disk: SimulatedDisk, mode: SyncMode, segmentLimit: Int) -> EngineOptions {
        var options = EngineOptions()
        options.indexReadMode = TestEnvironment.cachedIndexPages.map { .cached(pages: $0) } ?? .mapped
        options.fileSystem = disk
        options.syncMode = mode
        options.segmentLimit = segmentLimit
        options.checkpointThreshold = 0
        return options
    }

    static func newDisk(seed: UInt64) -> SimulatedDisk {
        let disk = SimulatedDisk(seed: seed)
        try! disk.mkdir("/db")
        disk.logLimit = 200
        return disk
    }

    /// Runs the workload from database creation on, on `disk`, until it ends or the disk
    /// stops. Returns the history and whether only a power loss stopped it.
    func runWorkload(on disk: SimulatedDisk, history: inout History) -> (database: (any SweptDatabase)?, unexpected: (any Error)?) {
        var database: (any SweptDatabase)?
        do {
            database = try subject.open(disk, mode: mode, segmentLimit: segmentLimit)
            try database!.prepare(history: &history, mode: mode)
            for step in workload.steps { try database!.run(step, history: &history, mode: mode) }
        } catch {
            if !subject.isCrash(error, disk) { return (database, error) }
        }
        return (database, nil)
    }

    /// The number of mutating calls of the whole workload (T).
    func countOperations() throws -> Int {
        let disk = Self.newDisk(seed: workload.seed)
        var history = History()
        let (database, unexpected) = runWorkload(on: disk, history: &history)
        if let unexpected { throw unexpected }
        database?.abandon()
        return disk.operationCount
    }

    /// Sweeps crash points `points` (each n: stop after n mutating calls).
    func sweep(points: some Sequence<Int>, variants: [Variant], into tally: inout Tally) {
        for n in points {
            let disk = Self.newDisk(seed: workload.seed)
            disk.crashAfter(operations: n)
            var history = History()
            let (database, unexpected) = runWorkload(on: disk, history: &history)
            database?.abandon()
            if let unexpected {
                tally.fail("\(subject.name) seed \(workload.seed) \(mode) crash point \(n): the workload failed with \(unexpected), not a power loss")
                continue
            }
            tally.crashPoints += 1
            for (index, variant) in variants.enumerated() {
                let cutSeed = workload.seed &* 1_000_003 &+ UInt64(n) &* 16 &+ UInt64(index)
                let copy = disk.copy()
                copy.powerCut(seed: cutSeed, mode: variant.mode, names: variant.names)
                if variant.names == .seeded { tally.seededNameStates += 1 }
                let label = "\(subject.name) seed \(workload.seed) \(mode) crash point \(n) \(variant) (cut seed \(cutSeed))"
                recoverAndContinue(copy, history: history, cutSeed: cutSeed, label: label, into: &tally)
            }
        }
    }

    /// One crash state and the two it leads to: a crash inside recovery, and ten more
    /// commits cut at a seeded point.
    func recoverAndContinue(_ disk: SimulatedDisk, history start: History, cutSeed: UInt64, label: String, into tally: inout Tally) {
        var rng = SeededRandom(seed: cutSeed)
        let beforeRecovery = disk.copy()
        disk.resetOperationCount()
        var history = start
        guard let database = recover(disk, history: &history, label: label, into: &tally) else { return }
        let recoveryCalls = disk.operationCount

        // A crash inside recovery: stop after j of its mutating calls, cut, recover again.
        // Recovery may commit (a subject registering its extensions): what the interrupted
        // recovery acknowledged, or had in flight, is in the history the next one is checked
        // against.
        if recoveryCalls > 0 {
            let j = Int(rng.next() % UInt64(recoveryCalls))
            beforeRecovery.crashAfter(operations: j)
            var again = start
            if let interrupted = try? subject.open(beforeRecovery, mode: mode, segmentLimit: segmentLimit) {
                if let opened = try? interrupted.recovered(), again.check(recovered: opened.snapshot, state: opened.rows).problems.isEmpty {
                    again.recovered(at: opened.snapshot)
                    try? interrupted.prepare(history: &again, mode: mode)
                }
                interrupted.abandon()
            }
            let mode = [PowerCutMode.drop, .torn, .garble][Int(rng.next() % 3)]
            beforeRecovery.powerCut(seed: rng.next(), mode: mode)
            tally.recoveryCrashes += 1
            recover(beforeRecovery, history: &again, label: "\(label), then recovery stopped after \(j) of \(recoveryCalls) calls, \(mode)",
                    into: &tally)?.abandon()
        }

        // Ten more commits, cut at a seeded point among their calls.
        disk.resetOperationCount()
        disk.crashAfter(operations: Int(rng.next() % 40))
        do {
            for step in Workload.tail(seed: workload.seed, salt: cutSeed) { try database.run(step, history: &history, mode: mode) }
        } catch {
            if !subject.isCrash(error, disk) { tally.fail("\(label), tail commits: \(error)") }
        }
        database.abandon()
        let mode = [PowerCutMode.drop, .torn, .garble][Int(rng.next() % 3)]
        disk.powerCut(seed: rng.next(), mode: mode)
        recover(disk, history: &history, label: "\(label), then ten commits cut (\(mode))", into: &tally)?.abandon()
    }

    /// Opens `disk` after a cut and checks it: one crash state. The rows must be the state
    /// after some k commits with every durable one kept; then the subject readies the
    /// database (registers its extensions, as an app does at launch), and `verify()` and the
    /// extensions' own checks must pass. Returns the open database.
    @discardableResult
    func recover(_ disk: SimulatedDisk, history: inout History, label: String, into tally: inout Tally) -> (any SweptDatabase)? {
        tally.states += 1
        tally.acknowledgedChecked += history.durable
        let database: any SweptDatabase
        do {
            database = try subject.open(disk, mode: mode, segmentLimit: segmentLimit)
        } catch {
            tally.failedRecoveries += 1
            tally.lost += history.durable
            tally.fail("\(label): recovery failed: \(error)\n  " + disk.log.suffix(12).joined(separator: "\n  "))
            return nil
        }
        let recovered: (snapshot: Int, rows: Model)
        do { recovered = try database.recovered() } catch {
            tally.partial += 1
            tally.fail("\(label): reading the recovered state failed: \(error)")
            database.abandon()
            return nil
        }
        let k = recovered.snapshot
        let outcome = history.check(recovered: k, state: recovered.rows)
        tally.lost += outcome.lost
        if outcome.partial { tally.partial += 1 }
        for problem in outcome.problems { tally.fail("\(label): \(problem)") }
        if !outcome.problems.isEmpty {
            database.abandon()
            return nil
        }
        history.recovered(at: k)
        do {
            try database.prepare(history: &history, mode: mode)
        } catch {
            tally.failedRecoveries += 1
            tally.fail("\(label): readying the recovered database failed: \(error)")
            database.abandon()
            return nil
        }
        let problems = database.problems(rows: recovered.rows)
        if !problems.isEmpty {
            tally.verifyFailures += 1
            for problem in problems.prefix(3) { tally.fail("\(label): \(problem)") }
        }
        return database
    }
}

extension CrashSweep.Tally {
    /// Adds the tally to the report's figures; the crash states also under the workload's
    /// name ("crash states (view)", …).
    func record(into figures: inout Figures, workload: String) {
        figures.add("crash states", states)
        figures.add("crash states (\(workload))", states)
        figures.add("distinct crash points", crashPoints)
        figures.add("crash states with unsynced names kept by seed", seededNameStates)
        figures.add("crashes inside recovery", recoveryCrashes)
        figures.add("acknowledged commits checked", acknowledgedChecked)
        figures.add("lost acknowledged commits", lost)
        figures.add("partial commits visible", partial)
        figures.add("verify failures", verifyFailures)
        figures.add("failed recoveries", failedRecoveries)
    }
}
