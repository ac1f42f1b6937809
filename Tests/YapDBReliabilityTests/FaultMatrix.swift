#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TestSupport
import YapDBStorage
import YapDBSimulatedDisk
import YapDBEngine

/// The fault matrix (issue 5, item 2): for every mutating I/O call a workload makes, a run in
/// which that call fails — once, or from then on — with each failure that call can have
/// (short write, EIO, ENOSPC, EFBIG on writes; EIO with pages marked clean on file syncs; EIO
/// on directory syncs, truncates, renames and removes). Each run expects typed errors only,
/// reopens when the engine says it is poisoned, then cuts power and checks that every
/// acknowledged commit is there; after a one-shot fault, ten more commits must survive too.
/// The calls that change nothing (reads, opens, maps, listings, locks) are swept the same way
/// by ordinal (`readSites`).
struct FaultMatrix {
    /// One mutating call of the fault-free run: its kind, its ordinal among calls of that
    /// kind (what `Fault.nth` counts), and the file it touched.
    struct Site: CustomStringConvertible {
        var operation: Int
        var call: Fault.Call
        var nth: Int
        var path: String
        var description: String { "call #\(operation) (\(call.rawValue) #\(nth) on \(path))" }

        /// The failures this kind of call can have.
        var effects: [Fault.Effect] {
            switch call {
            case .write: [.shortWrite(EIO), .error(EIO), .error(ENOSPC), .error(EFBIG)]
            case .sync: [.syncFailsMarkingClean]
            case .open: [.error(EIO), .error(EMFILE)]
            case .map: [.error(ENOMEM)]
            default: [.error(EIO)]
            }
        }
    }

    let workload: Workload
    let mode: SyncMode
    /// What the workload runs on (an encrypted database: `EngineSubject` with a key).
    var subject = EngineSubject()

    struct Tally {
        var faults = 0, surfaced = 0, reopens = 0, states = 0, acknowledgedChecked = 0
        var lost = 0, partial = 0, verifyFailures = 0, untyped = 0, failedRecoveries = 0
        var failures: [String] = []
        mutating func fail(_ message: String) { if failures.count < 20 { failures.append(message) } }
    }

    var sweep: CrashSweep { CrashSweep(workload: workload, subject: subject, mode: mode, segmentLimit: 16 << 10) }

    /// The mutating calls of the fault-free run, from the disk's log.
    func sites() throws -> [Site] {
        let disk = CrashSweep.newDisk(seed: workload.seed)
        disk.logLimit = 1_000_000
        var history = History()
        let (engine, unexpected) = sweep.runWorkload(on: disk, history: &history)
        if let unexpected { throw unexpected }
        engine?.abandon()
        var counts: [Fault.Call: Int] = [:]
        var sites: [Site] = []
        for line in disk.log where line.hasPrefix("#") {
            guard let space = line.firstIndex(of: " "), let number = Int(line[line.index(after: line.startIndex)..<space]),
                  let open = line.lastIndex(of: "(") else { continue }
            let operation = line[line.index(after: space)...]
            let call: Fault.Call? = operation.hasPrefix("write") ? .write : operation.hasPrefix("syncDirectory") ? .syncDirectory
                : operation.hasPrefix("sync") ? .sync : operation.hasPrefix("truncate") ? .truncate
                : operation.hasPrefix("rename") ? .rename : operation.hasPrefix("remove") ? .remove : nil
            guard let call else { continue }   // opens also count opens that are not logged
            counts[call, default: 0] += 1
            sites.append(Site(operation: number, call: call, nth: counts[call]!, path: String(line[line.index(after: open)...].dropLast())))
        }
        return sites
    }

    /// The calls that change nothing — reads, opens, maps, directory listings, locks — of the
    /// fault-free run, `perKind` of each kind spread evenly over its ordinals (all of them when
    /// there are fewer). The disk does not log these calls, so they are counted by kind
    /// (`SimulatedDisk.callCount`) and named by ordinal only; `operation` is a synthetic
    /// number, unique per site, that seeds the tail commits.
    func readSites(perKind: Int) throws -> [Site] {
        let disk = CrashSweep.newDisk(seed: workload.seed)
        var history = History()
        let (engine, unexpected) = sweep.runWorkload(on: disk, history: &history)
        if let unexpected { throw unexpected }
        engine?.abandon()
        var sites: [Site] = []
        for (kindIndex, call) in [Fault.Call.read, .open, .map, .listDirectory, .lock].enumerated() {
            let count = disk.callCount(call)
            guard count > 0 else { continue }
            let picks = Set((0..<min(perKind, count)).map { 1 + $0 * count / min(perKind, count) })
            for nth in picks.sorted() {
                sites.append(Site(operation: 1_000_000 * (kindIndex + 1) + nth, call: call, nth: nth, path: "any file"))
            }
        }
        return sites
    }

    /// Runs the workload with `fault` armed from the start; checks as described on the type.
    func run(_ fault: Fault, site: Site, into tally: inout Tally) {
        let label = "seed \(workload.seed) \(mode) \(site): \(fault.persistent ? "persistent" : "once") \(fault.effect)"
        let disk = CrashSweep.newDisk(seed: workload.seed)
        disk.inject(fault)
        tally.faults += 1
        var history = History()
        var engine: Engine?
        var failures = 0
        var surfaced = false

        /// Handles an error from the engine: typed, and reopen when it is poisoned.
        func handle(_ error: any Error, _ what: String) {
            surfaced = true
            failures += 1
            guard let storage = engineError(error) else {
                tally.untyped += 1
                tally.fail("\(label): \(what) threw an untyped error \(error)")
                return
            }
            switch storage {
            case .io(let errno, _, _) where [EIO, ENOSPC, EFBIG, EMFILE, ENOMEM].contains(errno): break
            case .poisoned, .tooLarge: break
            default:
                tally.untyped += 1
                tally.fail("\(label): \(what) threw \(storage), not an I/O error")
            }
            if let current = engine, current.isPoisoned || storage == .poisoned {
                try? current.close()
                engine = nil
            }
        }

        func reopen() {
            guard engine == nil else { return }
            do {
                let opened = try Engine.open(path: CrashSweep.path, options: sweep.options(disk))
                tally.reopens += 1
                let state = try opened.snapshot().materialize()
                let k = Int(opened.snapshot().number)
                let outcome = history.check(recovered: k, state: state)
                record(outcome, label: "\(label), reopened after the fault", into: &tally)
                history.recovered(at: k)
                engine = opened
            } catch {
                handle(error, "reopen")
            }
        }

        for step in workload.steps {
            if failures > 6 { break }   // a persistent fault: enough evidence
            reopen()
            guard let current = engine else { continue }
            do { try step.run(on: current, history: &history, mode: mode) } catch { handle(error, "\(step)") }
        }
        if surfaced { tally.surfaced += 1 }

        if !fault.persistent {
            // After a one-shot fault the database works again: ten commits, all acknowledged.
            reopen()
            Workload.runTailAfterOneShotFault(on: engine, seed: workload.seed, salt: UInt64(site.operation), history: &history,
                                              mode: mode, label: label, into: &tally)
        }

        // Power cut; every acknowledged (durable) commit must be there.
        engine?.abandon()
        engine = nil
        disk.clearFaults()
        disk.powerCut(seed: workload.seed &+ UInt64(site.operation), mode: .torn)
        tally.states += 1
        tally.acknowledgedChecked += history.durable
        do {
            let recovered = try Engine.open(path: CrashSweep.path, options: sweep.options(disk))
            let k = Int(recovered.snapshot().number)
            record(history.check(recovered: k, state: try recovered.snapshot().materialize()), label: "\(label), after the power cut",
                   into: &tally)
            let report = try recovered.verify()
            if !report.isValid {
                tally.verifyFailures += 1
                tally.fail("\(label): verify after the power cut: \(report.problems.prefix(3))")
            }
            recovered.abandon()
        } catch {
            tally.lost += history.durable
            tally.fail("\(label): recovery after the power cut failed: \(error)\n  " + disk.log.suffix(10).joined(separator: "\n  "))
        }
    }

    func record(_ outcome: RecoveryCheck, label: String, into tally: inout Tally) {
        tally.lost += outcome.lost
        if outcome.partial { tally.partial += 1 }
        for problem in outcome.problems { tally.fail("\(label): \(problem)") }
    }
}

extension FaultMatrix.Tally {
    func record(into figures: inout Figures) {
        figures.add("faults injected", faults)
        figures.add("faults surfaced as typed errors", surfaced)
        figures.add("untyped or unexpected errors", untyped)
        figures.add("crash states", states)
        figures.add("acknowledged commits checked", acknowledgedChecked)
        figures.add("lost acknowledged commits", lost)
        figures.add("partial commits visible", partial)
        figures.add("verify failures", verifyFailures)
        figures.add("failed recoveries", failedRecoveries)
    }
}
