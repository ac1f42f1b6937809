import Foundation
import YapDB
import YapDBStorage
import YapDBSimulatedDisk

/// Target (c): an operation script against the public API and a model. See
/// `FuzzEntry.runOperations` and `OperationScript` for the input format.
enum OperationsTarget {
    static let name = "operations"

    static func run(_ input: FuzzInput) {
        var input = input
        let config = OperationScript.Config(&input)
        let run = OperationRun(config: config)
        var steps = 0
        while !input.isAtEnd && steps < OperationScript.maxSteps {
            run.perform(OperationScript.Step(&input))
            steps += 1
        }
        run.finish()
    }
}

/// One run of a script: the simulated disk, the open database and its three connections, the
/// model, and what the model knows about durability.
///
/// **What is checked.** The committed model is `model`; `history[s]` is the state after the
/// commit of snapshot `s`, kept for every snapshot from `durable` on. A power cut may lose
/// commits not yet known durable, so the recovered snapshot `k` must satisfy `durable ≤ k`,
/// and its contents must equal `history[k]` (or the state of a commit that failed when the
/// crash point fired, which may or may not have reached the disk).
final class OperationRun {
    let config: OperationScript.Config
    let disk = SimulatedDisk(seed: 7)
    static let path = "/fuzz/db"
    var database: YapDatabase?
    var connections: [YapDatabaseConnection] = []
    var model = OperationModel()
    var history: [UInt64: OperationModel] = [0: OperationModel()]
    /// The newest snapshot known to be on disk (synced).
    var durable: UInt64 = 0
    /// A commit that failed at a crash point, which recovery may or may not find.
    var inDoubt: (snapshot: UInt64, state: OperationModel)?
    /// The power cut that follows an armed crash point.
    var armedCut: (mode: PowerCutMode, seed: UInt8)?

    init(config: OperationScript.Config) {
        self.config = config
        do throws(IOFailure) { try disk.mkdir("/fuzz") } catch { finding(OperationsTarget.name, "mkdir: \(error)") }
        open(context: "creating the database")
    }

    func fail(_ message: String) -> Never { finding(OperationsTarget.name, message) }

    var options: YapDatabaseOptions {
        let options = YapDatabaseOptions()
        options.durability = [.off, .normal, .full][config.durability]
        options.compression = config.compression ? .lz4 : YapDatabaseCompression.none
        options.checkpointThreshold = config.checkpointBytes
        options.maxValueSize = config.maxValueSize
        options.compactionThreshold = config.compaction
        return options
    }

    /// Opens the database and three connections: caches off, of one entry, and large.
    func open(context: String) {
        do throws(YapDatabaseError) {
            let database = try YapDatabase.open(path: Self.path, options: options, fileSystem: disk, segmentLimit: config.segmentBytes)
            self.database = database
            let off = database.newConnection(), one = database.newConnection(), large = database.newConnection()
            off.objectCacheEnabled = false
            off.metadataCacheEnabled = false
            one.objectCacheLimit = 1
            one.metadataCacheLimit = 1
            large.objectCacheLimit = 10_000
            large.metadataCacheLimit = 10_000
            connections = [off, one, large]
            // The crash point may have fired on the open's last call: the open succeeded, and
            // every call from now on fails until the power is cut.
            if disk.isStopped { recoverFromCrashPoint() }
        } catch {
            // A crash point armed by the script may fire inside the open: recover from it.
            guard disk.isStopped else { fail("\(context): open failed: \(error)") }
            recoverFromCrashPoint()
        }
    }

    var snapshot: UInt64 { database?.snapshot ?? 0 }

    // MARK: Steps

    func perform(_ step: OperationScript.Step) {
        if disk.isStopped { recoverFromCrashPoint() }
        switch step {
        case let .transaction(connection, actions, ending):
            transaction(connections[connection], actions, ending)
        case .check(let connection):
            check(connections[connection], "connection \(connection)")
        case .checkAll:
            checkAll("check step")
        case .reopen:
            reopen()
        case let .powerCut(mode, seed, crashInRecovery):
            armedCut = nil
            powerCut(mode: mode, seed: seed, crashInRecovery: crashInRecovery)
        case let .crashPoint(after, mode, seed):
            disk.crashAfter(operations: after)
            armedCut = (mode, seed)
        case .checkpoint:
            do throws(YapDatabaseError) {
                try database?.checkpoint()
                durable = snapshot
                pruneHistory()
            } catch { failedUnlessCrashed("checkpoint", error) }
        case .compact:
            do throws(YapDatabaseError) { try database?.compact() } catch { failedUnlessCrashed("compact", error) }
            if !disk.isStopped { checkAll("after compaction") }
        case .flush(let connection):
            connections[connection].flush(with: .caches)
        }
    }

    /// Final checks: recover if a crash point fired, compare, close, reopen, compare.
    func finish() {
        if disk.isStopped { recoverFromCrashPoint() }
        checkAll("end of script")
        reopen()
        do throws(YapDatabaseError) { try database?.close() } catch { failedUnlessCrashed("final close", error) }
    }

    // MARK: Transactions

    struct Abort: Error {}

    func transaction(_ connection: YapDatabaseConnection, _ actions: [OperationScript.Action], _ ending: OperationScript.Ending) {
        guard let database else { return }
        let before = database.snapshot
        var next = model
        var oversize = false
        do {
            try connection.write { tx in
                for action in actions { apply(action, tx, &next, oversize: &oversize) }
                switch ending {
                case .commit: break
                case .rollback: tx.rollback()
                case .throwError: throw Abort()
                }
            }
        } catch is Abort {
            unchanged(before, "a transaction whose block threw")
            return
        } catch {
            if oversize, case YapDatabaseError.valueTooLarge = error {
                unchanged(before, "a transaction with a value over maxValueSize")
                return
            }
            guard disk.isStopped else { fail("commit failed with no fault injected: \(error)") }
            // A failed commit applied nothing (the API's contract): nothing published.
            guard database.snapshot == before else {
                fail("a commit reported as failed (\(error)) was applied: snapshot \(before) → \(database.snapshot)")
            }
            // The commit (or the checkpoint after it) met the crash point: it may be on disk.
            if ending == .commit && !oversize { inDoubt = (before + 1, next) }
            recoverFromCrashPoint()
            return
        }
        if ending == .rollback || oversize {
            if oversize { fail("a value over maxValueSize was committed") }
            unchanged(before, "a rolled-back transaction")
            return
        }
        let after = database.snapshot
        if after == before {
            guard next == model else { fail("a transaction that changed rows committed nothing (snapshot \(before))") }
            return
        }
        guard after == before + 1 else { fail("one commit moved the snapshot from \(before) to \(after)") }
        model = next
        history[after] = next
        if config.durability == 2 { durable = after; pruneHistory() }
    }

    func unchanged(_ before: UInt64, _ what: String) {
        guard snapshot == before else { fail("\(what) moved the snapshot from \(before) to \(snapshot)") }
    }

    /// Applies one action to the transaction and to `next`; reads back when asked.
    func apply(_ action: OperationScript.Action, _ tx: YapDatabaseReadWriteTransaction, _ next: inout OperationModel, oversize: inout Bool) {
        let names = OperationScript.collections
        func key(_ k: Int) -> String { "k\(k)" }
        func tooBig(_ data: Data?) -> Bool { (data?.count ?? 0) + 1 > config.maxValueSize }
        switch action {
        case let .set(c, k, value, metadata):
            let object = value.data, meta = metadata?.data
            if let meta {
                tx.setObject(object, forKey: key(k), inCollection: names[c], withMetadata: meta)
            } else {
                tx.setObject(object, forKey: key(k), inCollection: names[c])
            }
            if tooBig(object) || tooBig(meta) { oversize = true }
            next[names[c], key(k)] = OperationModel.Row(object: object, metadata: meta)
        case let .replaceObject(c, k, value):
            let object = value.data
            tx.replaceObject(object, forKey: key(k), inCollection: names[c])
            if next[names[c], key(k)] != nil {
                if tooBig(object) { oversize = true }
                next[names[c], key(k)]!.object = object
            }
        case let .replaceMetadata(c, k, metadata):
            let meta = metadata?.data
            tx.replaceMetadata(meta, forKey: key(k), inCollection: names[c])
            if next[names[c], key(k)] != nil {
                if tooBig(meta) { oversize = true }
                next[names[c], key(k)]!.metadata = meta
            }
        case let .remove(c, k):
            tx.removeObject(forKey: key(k), inCollection: names[c])
            next[names[c], key(k)] = nil
        case .removeCollection(let c):
            tx.removeAllObjects(inCollection: names[c])
            next.removeCollection(names[c])
        case .removeAll:
            tx.removeAllObjectsInAllCollections()
            next.removeAll()
        case let .touch(c, k):
            tx.touchRow(forKey: key(k), inCollection: names[c])
        case let .readBack(c, k):
            // A write that failed (a value over the limit, or the crash point firing inside the
            // transaction) leaves the transaction failed: what it reads is no longer defined.
            guard !oversize && !disk.isStopped else { return }
            let row = next[names[c], key(k)]
            let object = tx.object(forKey: key(k), inCollection: names[c]) as? Data
            let metadata = tx.metadata(forKey: key(k), inCollection: names[c]) as? Data
            guard tx.hasObject(forKey: key(k), inCollection: names[c]) == (row != nil), object == row?.object,
                  metadata == row?.metadata else {
                fail("inside a transaction, \(names[c])/\(key(k)) reads \(object?.count ?? -1)/\(metadata?.count ?? -1) bytes "
                     + "(exists: \(tx.hasObject(forKey: key(k), inCollection: names[c])), stored object "
                     + "\(tx.serializedObject(forKey: key(k), inCollection: names[c])?.count ?? -1) bytes), "
                     + "the model \(row?.object.count ?? -1)/\(row?.metadata?.count ?? -1)")
            }
        }
    }
}
