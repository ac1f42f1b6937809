import Foundation
import TestSupport
import YapDB
import YapDBStorage
import YapDBSimulatedDisk
import YapDBEngine

/// An extension the sweep registers on a `YapDatabase`, and how it checks it after a recovery.
/// Adding a workload for another extension (relationships, full-text search) is one
/// conformance and one `DatabaseSubject` in `CrashSweepTests.subjects`.
protocol SweptExtension: Sendable {
    /// The registration name.
    var name: String { get }

    /// A new instance to register (the same blocks and `versionTag` every time, so a
    /// re-registration after a recovery reuses what the checkpoint wrote).
    func make() -> YapDatabaseExtension

    /// Problems in the registered extension, read in `transaction`, against what `rows` (the
    /// recovered rows) give when the extension is built from nothing.
    func problems(_ transaction: YapDatabaseReadTransaction, rows: Model) -> [String]
}

/// A workload run through the public API on a `YapDatabase` with `extensions` registered
/// (before the first step, and again at every recovery, as an app does at launch). After each
/// recovery, `verify()` must pass and every extension must equal a rebuild from the recovered
/// rows. Objects and metadata are stored as the workload's bytes (identity serializers).
struct DatabaseSubject: SweepSubject {
    let name: String
    let extensions: [any SweptExtension]

    func open(_ disk: SimulatedDisk, mode: SyncMode, segmentLimit: Int) throws -> any SweptDatabase {
        let options = YapDatabaseOptions()
        options.durability = switch mode {
        case .full: .full
        case .normal: .normal
        case .off: .off
        }
        options.checkpointThreshold = 0
        if let pages = TestEnvironment.cachedIndexPages { options.indexReadMode = .cached(pages: pages) }
        let database = try YapDatabase.open(path: CrashSweep.path, options: options, fileSystem: disk, segmentLimit: segmentLimit)
        database.registerDefaultSerializer { _, _, object in object as? Data ?? Data() }
        database.registerDefaultDeserializer { _, _, data in data }
        return SweptYapDatabase(database: database, extensions: extensions, disk: disk)
    }

    /// Any typed error of the public API once the disk has stopped (the engine's power loss
    /// reaches callers as `io`, `poisoned` or `closed`), or a registration refused then.
    func isCrash(_ error: any Error, _ disk: SimulatedDisk) -> Bool {
        disk.isStopped && (error is YapDatabaseError || error is RegistrationRefused)
    }
}

/// A registration returned false.
struct RegistrationRefused: Error, CustomStringConvertible {
    let name: String
    var description: String { "registering \(name) was refused" }
}

final class SweptYapDatabase: SweptDatabase {
    let database: YapDatabase
    let extensions: [any SweptExtension]
    let disk: SimulatedDisk
    let connection: YapDatabaseConnection

    init(database: YapDatabase, extensions: [any SweptExtension], disk: SimulatedDisk) {
        self.database = database
        self.extensions = extensions
        self.disk = disk
        connection = database.newConnection()
        connection.objectCacheEnabled = false
        connection.metadataCacheEnabled = false
    }

    func recovered() throws -> (snapshot: Int, rows: Model) {
        connection.read { transaction in
            var rows = Model()
            for collection in transaction.allCollections() {
                for key in transaction.allKeys(inCollection: collection) {
                    guard let object = transaction.serializedObject(forKey: key, inCollection: collection) else { continue }
                    let metadata = transaction.serializedMetadata(forKey: key, inCollection: collection)
                    rows[collection, key] = Model.Row(object: [UInt8](object), metadata: metadata.map { [UInt8]($0) })
                }
            }
            return (Int(database.snapshot), rows)
        }
    }

    func prepare(history: inout History, mode: SyncMode) throws {
        for ext in extensions {
            let before = database.snapshot
            history.inFlight = history.current
            guard database.register(ext.make(), withName: ext.name) else { throw RegistrationRefused(name: ext.name) }
            for _ in before..<database.snapshot { history.acknowledge(history.current, durable: mode == .full) }
            history.inFlight = nil
        }
    }

    func run(_ step: Workload.Step, history: inout History, mode: SyncMode) throws {
        switch step {
        case .checkpoint:
            try database.checkpoint()
            history.markAllDurable()
        case .idleCheckpoint:
            break   // the engine sweep runs it; the database does not expose its engine
        case .compact:
            // Whether compaction found anything to rewrite (and synced) is not visible here:
            // the sweep assumes it did not, which only asks less of recovery.
            try database.compact()
        case .transaction(let operations, let ending):
            var next = history.current
            for operation in operations { operation.apply(to: &next) }
            history.inFlight = ending == .commit ? next : nil
            let before = database.snapshot
            do {
                try connection.write { transaction in
                    for operation in operations { operation.apply(to: transaction) }
                    if ending == .rollback { transaction.rollback() }
                    if ending == .abort { throw WorkloadAbort() }
                }
            } catch is WorkloadAbort {
                return
            }
            if database.snapshot > before {
                history.acknowledge(next, durable: mode == .full)
            } else {
                history.inFlight = nil
            }
        }
    }

    func problems(rows: Model) -> [String] {
        var problems: [String] = []
        do {
            let report = try database.verify()
            if !report.isValid { problems.append("verify: \(report.problems.prefix(3))") }
        } catch {
            problems.append("verify threw \(error)")
        }
        connection.read { transaction in
            for ext in extensions {
                problems += ext.problems(transaction, rows: rows).prefix(3).map { "\(ext.name): \($0)" }
            }
        }
        return problems
    }

    func abandon() { database.abandon() }
}

extension Workload.Operation {
    /// The operation through the public API (the same effect on the rows as the engine form).
    func apply(to transaction: YapDatabaseReadWriteTransaction) {
        switch self {
        case .set(let collection, let key, let object, let metadata):
            transaction.setObject(Data(object), forKey: key, inCollection: collection, withMetadata: metadata.map { Data($0) })
        case .setMetadata(let collection, let key, let metadata):
            transaction.replaceMetadata(metadata.map { Data($0) }, forKey: key, inCollection: collection)
        case .remove(let collection, let key):
            transaction.removeObject(forKey: key, inCollection: collection)
        case .removeCollection(let collection):
            transaction.removeAllObjects(inCollection: collection)
        case .removeAll:
            transaction.removeAllObjectsInAllCollections()
        }
    }
}
