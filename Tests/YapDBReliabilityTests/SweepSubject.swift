import YapDBStorage
import YapDBSimulatedDisk
import YapDBEngine

/// What a crash sweep runs its workload on, and how it checks a recovered state: the engine
/// alone (`EngineSubject`, the rows), or a `YapDatabase` with extensions registered
/// (`DatabaseSubject`: a view, a secondary index, …). The sweep itself (`CrashSweep`) only
/// opens, runs steps, reads back the rows and asks for problems; the report counts crash states
/// per subject (`name`).
protocol SweepSubject: Sendable {
    /// The name the report counts this workload's crash states under ("rows", "view", …).
    var name: String { get }

    /// Opens (creating it when missing) the database at `CrashSweep.path` on `disk`.
    func open(_ disk: SimulatedDisk, mode: SyncMode, segmentLimit: Int) throws -> any SweptDatabase

    /// Whether `error` is what a stopped disk explains (a power loss), not a bug.
    func isCrash(_ error: any Error, _ disk: SimulatedDisk) -> Bool
}

/// One open database of a sweep.
protocol SweptDatabase: AnyObject {
    /// The snapshot number and the rows as opened: read before anything is written.
    func recovered() throws -> (snapshot: Int, rows: Model)

    /// Readies the database for the workload after open or recovery (registers extensions);
    /// any commit this makes is acknowledged in `history` (it leaves the rows as they are).
    func prepare(history: inout History, mode: SyncMode) throws

    /// Runs one workload step, keeping `history` up to date: a commit is acknowledged only once
    /// it returned.
    func run(_ step: Workload.Step, history: inout History, mode: SyncMode) throws

    /// Problems in the database as it is now, whose rows are `rows`: `verify()`, and for
    /// extensions, their contents against what the rows give.
    func problems(rows: Model) -> [String]

    /// Drops the database without writing anything, as a dying process would.
    func abandon()
}

/// The rows workload on the engine (`YapDBEngine`): the sweep as issue 5 built it.
struct EngineSubject: SweepSubject {
    /// The key of an encrypted database (docs/format.md §12); nil: plain.
    var cipherKey: CipherKeyOptions?

    var name: String { cipherKey == nil ? "rows" : "encrypted rows" }

    func open(_ disk: SimulatedDisk, mode: SyncMode, segmentLimit: Int) throws -> any SweptDatabase {
        var options = CrashSweep.engineOptions(disk, mode: mode, segmentLimit: segmentLimit)
        options.cipherKey = cipherKey
        return SweptEngine(engine: try Engine.open(path: CrashSweep.path, options: options))
    }

    /// "power lost", or `poisoned` after a failure the engine swallowed (a rollback whose
    /// truncate hit the crash point poisons the log without throwing; the next write says so).
    func isCrash(_ error: any Error, _ disk: SimulatedDisk) -> Bool {
        guard let storage = engineError(error) else { return false }
        if case .io(_, let operation, _) = storage { return operation == "power lost" }
        return storage == .poisoned && disk.isStopped
    }
}

final class SweptEngine: SweptDatabase {
    let engine: Engine

    init(engine: Engine) { self.engine = engine }

    func recovered() throws -> (snapshot: Int, rows: Model) {
        let snapshot = engine.snapshot()
        return (Int(snapshot.number), try snapshot.materialize())
    }

    func prepare(history: inout History, mode: SyncMode) throws {}

    func run(_ step: Workload.Step, history: inout History, mode: SyncMode) throws {
        try step.run(on: engine, history: &history, mode: mode)
    }

    func problems(rows: Model) -> [String] {
        do {
            let report = try engine.verify()
            return report.isValid ? [] : ["verify: \(report.problems.prefix(3))"]
        } catch {
            return ["verify threw \(error)"]
        }
    }

    func abandon() { engine.abandon() }
}
