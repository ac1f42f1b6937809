#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TestSupport
import YapDBStorage
import YapDBSimulatedDisk
import YapDBEngine

/// What the real-path parts of the harness share: scratch directories, the engine's options on
/// a given file system, and the workload with a checkpoint every eighth transaction.
enum RealPath {
    static let name = "db"

    /// A fresh empty directory: on tmpfs (`/dev/shm`) when there is one, for speed (the kernel
    /// path is the same; only `fsync` costs nothing), else under `/tmp`.
    static func scratch(_ label: String) -> String {
        let root = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
        var template = Array("\(root)/\(label)-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed: errno \(errno)")
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Removes `directory` and the files in it (the engine keeps no subdirectories).
    static func remove(_ directory: String) {
        if let names = try? PosixFileSystem.shared.listDirectory(directory) {
            for name in names { unlink(directory + "/" + name) }
        }
        rmdir(directory)
    }

    static func options(_ fs: any FileSystem, mode: SyncMode) -> EngineOptions {
        var options = EngineOptions()
        options.indexReadMode = TestEnvironment.cachedIndexPages.map { .cached(pages: $0) } ?? .mapped
        options.fileSystem = fs
        options.syncMode = mode
        options.segmentLimit = 16 << 10
        options.checkpointThreshold = 0
        return options
    }

    /// The workload's steps with an index checkpoint after every eighth transaction, so short
    /// workloads checkpoint too.
    static func steps(_ workload: Workload) -> [Workload.Step] {
        var steps: [Workload.Step] = []
        var transactions = 0
        for step in workload.steps {
            steps.append(step)
            if case .transaction = step {
                transactions += 1
                if transactions % 8 == 0 { steps.append(.checkpoint) }
            }
        }
        return steps
    }

    /// Opens the database in `directory` with plain `PosixFileSystem` and checks it: the
    /// snapshot k must lie in `minimum...maximum`, the rows must be `states[k]`, `verify()`
    /// must pass. Counts one crash state in `tally`.
    static func check(_ directory: String, mode: SyncMode, states: [Model], minimum: Int, maximum: Int,
                      into tally: inout FaultMatrix.Tally, label: String) {
        tally.states += 1
        tally.acknowledgedChecked += minimum
        do {
            let engine = try Engine.open(path: directory + "/" + name, options: options(PosixFileSystem.shared, mode: mode))
            defer { engine.abandon() }
            let k = Int(engine.snapshot().number)
            let state = try engine.snapshot().materialize()
            if k < minimum {
                tally.lost += minimum - k
                tally.fail("\(label): recovered snapshot \(k), but \(minimum) commit(s) were acknowledged")
            } else if k > maximum || k >= states.count {
                tally.partial += 1
                tally.fail("\(label): recovered snapshot \(k), past the \(maximum) commit(s) written")
            } else if states[k] != state {
                tally.partial += 1
                tally.fail("\(label): the state at snapshot \(k) is not the state after \(k) commits: \(state.difference(from: states[k]))")
            }
            let report = try engine.verify()
            if !report.isValid {
                tally.verifyFailures += 1
                tally.fail("\(label): verify: \(report.problems.prefix(3))")
            }
        } catch {
            tally.lost += minimum
            tally.failedRecoveries += 1
            tally.fail("\(label): recovery failed: \(error)")
        }
    }
}

/// The fault sweep on the real file system (issue 25, item 2): the workload runs through
/// `RealPathFileSystem` on a real directory with one `RealFault` armed; every error must be a
/// typed `EngineError`; a poisoned engine is closed and reopened; after a one-shot fault ten
/// more commits must succeed; at the end the database, reopened without faults, must hold every
/// acknowledged commit (no power was cut, so the page cache keeps everything written), show no
/// partial commit and pass `verify()`.
struct RealPathMatrix {
    let workload: Workload
    let mode: SyncMode

    /// The failures each kind of call is tried with.
    static func effects(_ call: Fault.Call) -> [RealFault.Effect] {
        switch call {
        case .write: [.error(EIO), .error(ENOSPC), .shortWrite(ENOSPC), .split, .error(EINTR)]
        case .read: [.error(EIO), .shortRead, .split, .error(EINTR)]
        case .open: [.error(EMFILE), .error(EIO), .error(EINTR)]
        case .map: [.error(ENOMEM)]
        default: [.error(EIO)]
        }
    }

    /// Runs the workload fault-free and returns how many calls of each kind it made.
    func counts() throws -> [Fault.Call: Int] {
        let directory = RealPath.scratch("yapdb-realpath")
        defer { RealPath.remove(directory) }
        let fs = RealPathFileSystem()
        let engine = try Engine.open(path: directory + "/" + RealPath.name, options: RealPath.options(fs, mode: mode))
        var history = History()
        for step in RealPath.steps(workload) { try step.run(on: engine, history: &history, mode: mode) }
        try engine.close()
        return Dictionary(uniqueKeysWithValues: Fault.Call.allCases.map { ($0, fs.count($0)) })
    }

    func run(_ fault: RealFault, into tally: inout FaultMatrix.Tally) {
        let label = "real path seed \(workload.seed) \(mode) \(fault)"
        let directory = RealPath.scratch("yapdb-realpath")
        defer { RealPath.remove(directory) }
        let path = directory + "/" + RealPath.name
        let fs = RealPathFileSystem(faults: [fault])
        tally.faults += 1
        var history = History()
        var engine: Engine?
        var failures = 0
        var surfaced = false

        func handle(_ error: any Error, _ what: String) {
            surfaced = true
            failures += 1
            guard let storage = engineError(error) else {
                tally.untyped += 1
                tally.fail("\(label): \(what) threw an untyped error \(error)")
                return
            }
            switch storage {
            case .io(let errno, _, _) where [EIO, ENOSPC, EMFILE, EINTR, ENOMEM].contains(errno): break
            case .poisoned, .tooLarge: break
            case .corrupted where fault.effect == .shortRead: break   // the bytes it got were incomplete
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
                let opened = try Engine.open(path: path, options: RealPath.options(fs, mode: mode))
                tally.reopens += 1
                let k = Int(opened.snapshot().number)
                let outcome = history.check(recovered: k, state: try opened.snapshot().materialize())
                tally.lost += outcome.lost
                if outcome.partial { tally.partial += 1 }
                for problem in outcome.problems { tally.fail("\(label), reopened after the fault: \(problem)") }
                history.recovered(at: k)
                engine = opened
            } catch {
                handle(error, "open")
            }
        }

        for step in RealPath.steps(workload) {
            if failures > 6 { break }
            reopen()
            guard let current = engine else { continue }
            do { try step.run(on: current, history: &history, mode: mode) } catch { handle(error, "\(step)") }
        }
        if surfaced { tally.surfaced += 1 }
        if !fault.persistent {
            reopen()
            Workload.runTailAfterOneShotFault(on: engine, seed: workload.seed, salt: UInt64(fault.nth), history: &history,
                                              mode: mode, label: label, into: &tally)
        }
        engine?.abandon()
        let states = history.states + (history.inFlight.map { [$0] } ?? [])
        RealPath.check(directory, mode: mode, states: states, minimum: history.acknowledged, maximum: states.count - 1, into: &tally,
                       label: "\(label), reopened without faults")
    }
}
