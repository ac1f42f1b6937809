import TestSupport
import YapDBStorage
import YapDBSimulatedDisk
import YapDBEngine

/// The crash sweep (issue 5, item 1): runs a `Workload` on a `SimulatedDisk`, stops the disk
/// after n mutating calls for every n in 0…T, and resolves that moment in several ways (power
/// cut modes drop, torn and garble, and one with unsynced name operations kept by the seed).
/// Each resolution is a crash state: reopen, check against the `History`, `verify()`. Then,
/// per state: a crash inside the recovery itself, and ten more commits cut at a seeded point.
struct CrashSweep {
    static let path = "/db/main"

    let workload: Workload
    let mode: SyncMode
    let segmentLimit: Int

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

    func options(_ disk: SimulatedDisk) -> EngineOptions {
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
    func runWorkload(on disk: SimulatedDisk, history: inout History) -> (engine: Engine?, unexpected: (any Error)?) {
        var engine: Engine?
        do {
            engine = try Engine.open(path: Self.path, options: options(disk))
            for step in workload.steps { try step.run(on: engine!, history: &history, mode: mode) }
        } catch {
            if !Self.isCrash(error, disk) { return (engine, error) }
        }
        return (engine, nil)
    }

    /// The number of mutating calls of the whole workload (T).
    func countOperations() throws -> Int {
        let disk = Self.newDisk(seed: workload.seed)
        var history = History()
        let (engine, unexpected) = runWorkload(on: disk, history: &history)
        if let unexpected { throw unexpected }
        engine?.abandon()
        return disk.operationCount
    }

    /// Sweeps crash points `points` (each n: stop after n mutating calls).
    func sweep(points: some Sequence<Int>, variants: [Variant], into tally: inout Tally) {
        for n in points {
            let disk = Self.newDisk(seed: workload.seed)
            disk.crashAfter(operations: n)
            var history = History()
            let (engine, unexpected) = runWorkload(on: disk, history: &history)
            engine?.abandon()
            if let unexpected {
                tally.fail("seed \(workload.seed) \(mode) crash point \(n): the workload failed with \(unexpected), not a power loss")
                continue
            }
            tally.crashPoints += 1
            for (index, variant) in variants.enumerated() {
                let cutSeed = workload.seed &* 1_000_003 &+ UInt64(n) &* 16 &+ UInt64(index)
                let copy = disk.copy()
                copy.powerCut(seed: cutSeed, mode: variant.mode, names: variant.names)
                if variant.names == .seeded { tally.seededNameStates += 1 }
                let label = "seed \(workload.seed) \(mode) crash point \(n) \(variant) (cut seed \(cutSeed))"
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
        guard let engine = recover(disk, history: &history, label: label, into: &tally) else { return }
        let recoveryCalls = disk.operationCount

        // A crash inside recovery: stop after j of its mutating calls, cut, recover again.
        if recoveryCalls > 0 {
            let j = Int(rng.next() % UInt64(recoveryCalls))
            beforeRecovery.crashAfter(operations: j)
            if let interrupted = try? Engine.open(path: Self.path, options: options(beforeRecovery)) { interrupted.abandon() }
            let mode = [PowerCutMode.drop, .torn, .garble][Int(rng.next() % 3)]
            beforeRecovery.powerCut(seed: rng.next(), mode: mode)
            var again = start
            tally.recoveryCrashes += 1
            recover(beforeRecovery, history: &again, label: "\(label), then recovery stopped after \(j) of \(recoveryCalls) calls, \(mode)",
                    into: &tally)?.abandon()
        }

        // Ten more commits, cut at a seeded point among their calls.
        disk.resetOperationCount()
        disk.crashAfter(operations: Int(rng.next() % 40))
        do {
            for step in Workload.tail(seed: workload.seed, salt: cutSeed) { try step.run(on: engine, history: &history, mode: mode) }
        } catch {
            if !Self.isCrash(error, disk) { tally.fail("\(label), tail commits: \(error)") }
        }
        engine.abandon()
        let mode = [PowerCutMode.drop, .torn, .garble][Int(rng.next() % 3)]
        disk.powerCut(seed: rng.next(), mode: mode)
        recover(disk, history: &history, label: "\(label), then ten commits cut (\(mode))", into: &tally)?.abandon()
    }

    /// Opens `disk` after a cut and checks it: one crash state. Returns the open engine.
    @discardableResult
    func recover(_ disk: SimulatedDisk, history: inout History, label: String, into tally: inout Tally) -> Engine? {
        tally.states += 1
        tally.acknowledgedChecked += history.durable
        let engine: Engine
        do {
            engine = try Engine.open(path: Self.path, options: options(disk))
        } catch {
            tally.failedRecoveries += 1
            tally.lost += history.durable
            tally.fail("\(label): recovery failed: \(error)\n  " + disk.log.suffix(12).joined(separator: "\n  "))
            return nil
        }
        let snapshot = engine.snapshot()
        let state: Model
        do { state = try snapshot.materialize() } catch {
            tally.partial += 1
            tally.fail("\(label): reading the recovered state failed: \(error)")
            engine.abandon()
            return nil
        }
        let k = Int(snapshot.number)
        let outcome = history.check(recovered: k, state: state)
        tally.lost += outcome.lost
        if outcome.partial { tally.partial += 1 }
        for problem in outcome.problems { tally.fail("\(label): \(problem)") }
        do {
            let report = try engine.verify()
            if !report.isValid {
                tally.verifyFailures += 1
                tally.fail("\(label): verify: \(report.problems.prefix(3))")
            }
        } catch {
            tally.verifyFailures += 1
            tally.fail("\(label): verify threw \(error)")
        }
        if !outcome.problems.isEmpty {
            engine.abandon()
            return nil
        }
        history.recovered(at: k)
        return engine
    }

    /// Whether `error` is what a stopped disk explains: "power lost", or `poisoned` after a
    /// failure the engine swallowed (a rollback whose truncate hit the crash point poisons the
    /// log without throwing; the next write says so).
    static func isCrash(_ error: any Error, _ disk: SimulatedDisk) -> Bool {
        guard let storage = error as? StorageError else { return false }
        if case .io(let failure) = storage { return failure.operation == "power lost" }
        return storage == .poisoned && disk.isStopped
    }
}

extension CrashSweep.Tally {
    /// Adds the tally to the report's figures.
    func record(into figures: inout Figures) {
        figures.add("crash states", states)
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
