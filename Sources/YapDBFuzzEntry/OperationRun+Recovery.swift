import Foundation
import YapDB
import YapDBStorage
import YapDBSimulatedDisk

extension OperationRun {
    // MARK: Comparing with the model

    func checkAll(_ context: String) {
        for (index, connection) in connections.enumerated() { check(connection, "\(context), connection \(index)") }
    }

    /// Everything `connection` reads must equal the model: collections, keys, counts, objects
    /// and metadata (from its cache or from disk).
    func check(_ connection: YapDatabaseConnection, _ context: String) {
        guard database != nil else { return }
        let expected = model
        connection.read { tx in
            guard tx.numberOfKeysInAllCollections() == expected.count else {
                fail("\(context): \(tx.numberOfKeysInAllCollections()) rows, the model has \(expected.count)")
            }
            guard Set(tx.allCollections()) == Set(expected.rows.keys) else {
                fail("\(context): collections \(tx.allCollections().sorted()), the model \(expected.rows.keys.sorted())")
            }
            for (collection, rows) in expected.rows {
                guard Set(tx.allKeys(inCollection: collection)) == Set(rows.keys) else {
                    fail("\(context): keys of '\(collection)' \(tx.allKeys(inCollection: collection).sorted()), the model \(rows.keys.sorted())")
                }
                for (key, row) in rows {
                    let object = tx.object(forKey: key, inCollection: collection) as? Data
                    let metadata = tx.metadata(forKey: key, inCollection: collection) as? Data
                    guard object == row.object, metadata == row.metadata else {
                        fail("\(context): \(collection)/\(key) reads \(object?.count ?? -1)/\(metadata?.count ?? -1) bytes "
                             + "(object/metadata), the model \(row.object.count)/\(row.metadata?.count ?? -1) at snapshot \(snapshot)")
                    }
                }
            }
        }
    }

    /// Drops the states older than the durable snapshot: recovery can no longer land there.
    func pruneHistory() {
        history = history.filter { $0.key >= durable }
        if history[durable] == nil { history[durable] = model }
    }

    /// An operation failed: fine when the crash point fired (recover), a finding otherwise.
    func failedUnlessCrashed(_ what: String, _ error: YapDatabaseError) {
        guard disk.isStopped else { fail("\(what) failed with no fault injected: \(error)") }
        recoverFromCrashPoint()
    }

    // MARK: Reopen and power cuts

    /// Closes cleanly (everything becomes durable) and opens again: same snapshot, same rows.
    func reopen() {
        let before = snapshot
        do throws(YapDatabaseError) {
            try database?.close()
        } catch {
            failedUnlessCrashed("close", error)
            return
        }
        database = nil
        connections = []
        durable = before
        pruneHistory()
        open(context: "reopening after a clean close")
        guard snapshot == before else { fail("closed at snapshot \(before), reopened at \(snapshot)") }
        checkAll("after reopening")
    }

    func recoverFromCrashPoint() {
        let cut = armedCut ?? (.drop, 0)
        armedCut = nil
        powerCut(mode: cut.mode, seed: cut.seed, crashInRecovery: 0)
    }

    /// Cuts the power, optionally crashes once more inside recovery, then opens and checks
    /// the recovered state against the history (see the type's documentation) and `verify()`.
    func powerCut(mode: PowerCutMode, seed: UInt8, crashInRecovery: Int) {
        database?.abandon()
        database = nil
        connections = []
        disk.powerCut(seed: UInt64(seed), mode: mode)
        if crashInRecovery > 0 {
            disk.crashAfter(operations: crashInRecovery)
            if let opened = try? YapDatabase.open(path: Self.path, options: options, fileSystem: disk, segmentLimit: config.segmentBytes) {
                opened.abandon()
            }
            disk.powerCut(seed: UInt64(seed) &+ 1, mode: mode)
        }
        open(context: "recovering after a \(mode) power cut, seed \(seed)")
        let recovered = snapshot
        guard recovered >= durable else { fail("power cut (\(mode), seed \(seed)) lost durable snapshot \(durable): recovered \(recovered)") }
        let state: OperationModel
        if let inDoubt, inDoubt.snapshot == recovered {
            state = inDoubt.state
        } else if let known = history[recovered] {
            state = known
        } else {
            fail("power cut (\(mode), seed \(seed)) recovered snapshot \(recovered), never committed (durable \(durable))")
        }
        inDoubt = nil
        model = state
        history = history.filter { $0.key <= recovered }
        history[recovered] = state
        durable = recovered
        pruneHistory()
        checkAll("after a \(mode) power cut, seed \(seed), at snapshot \(recovered)")
        do throws(YapDatabaseError) {
            let report = try database!.verify()
            guard report.isValid else { fail("verify() after a \(mode) power cut, seed \(seed): \(report.problems.prefix(3))") }
        } catch {
            fail("verify() after a \(mode) power cut, seed \(seed) throws \(error)")
        }
    }
}
