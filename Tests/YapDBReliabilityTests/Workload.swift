import TestSupport
import YapDBStorage
import YapDBEngine

/// A seeded, deterministic sequence of engine operations: transactions (sets with and without
/// metadata, metadata updates, removes, collection clears, clear-all; committed, rolled back or
/// aborted by an error), checkpoints and one forced compaction. Values run from 1 byte to 1 MiB,
/// compressible and random. The same seed always gives the same steps.
struct Workload: Sendable {
    enum Operation: Sendable {
        case set(collection: String, key: String, object: [UInt8], metadata: [UInt8]?)
        case setMetadata(collection: String, key: String, metadata: [UInt8]?)
        case remove(collection: String, key: String)
        case removeCollection(String)
        case removeAll
    }

    enum Ending: Sendable { case commit, rollback, abort }

    enum Step: Sendable {
        case transaction([Operation], Ending)
        case checkpoint
        case compact
        /// The background idle checkpoint, run now (`Engine.runIdleCheckpointNow`): its errors
        /// are swallowed, as the timer swallows them, so it proves nothing durable.
        case idleCheckpoint
    }

    let seed: UInt64
    let steps: [Step]

    /// Transactions that commit.
    var commits: Int { steps.filter { if case .transaction(_, .commit) = $0 { true } else { false } }.count }

    /// - Parameters:
    ///   - transactions: how many transactions (rolled back and aborted ones included).
    ///   - bigValues: whether to include the 1 MiB values (one compressible, one random).
    ///   - idleCheckpoints: whether to run the idle checkpoint after every fifth transaction
    ///     (as the timer would when commits pause), besides the explicit checkpoints.
    init(seed: UInt64, transactions: Int, bigValues: Bool = true, idleCheckpoints: Bool = false) {
        self.seed = seed
        var rng = SeededRandom(seed: seed)
        var steps: [Step] = []
        let collections = ["", "c", "people", "logs"]
        for index in 0..<transactions {
            var operations: [Operation] = []
            if bigValues && index == transactions / 3 {
                operations.append(.set(collection: "big", key: "compressible", object: Self.value(1 << 20, compressible: true, &rng), metadata: nil))
            } else if bigValues && index == transactions / 2 {
                operations.append(.set(collection: "big", key: "random", object: Self.value(1 << 20, compressible: false, &rng), metadata: [1]))
            } else if index == transactions * 3 / 4 {
                operations.append(.removeAll)
            }
            for _ in 0..<(1 + Int(rng.next() % 4)) {
                let collection = collections[Int(rng.next() % UInt64(collections.count))]
                let key = "k\(rng.next() % 30)"
                switch rng.next() % 20 {
                case 0..<11:
                    let object = Self.value(Self.size(&rng), compressible: rng.next() % 2 == 0, &rng)
                    let metadata = rng.next() % 3 == 0 ? Self.value(Int(1 + rng.next() % 200), compressible: true, &rng) : nil
                    operations.append(.set(collection: collection, key: key, object: object, metadata: metadata))
                case 11..<13:
                    let metadata = rng.next() % 4 == 0 ? nil : Self.value(Int(1 + rng.next() % 300), compressible: false, &rng)
                    operations.append(.setMetadata(collection: collection, key: key, metadata: metadata))
                case 13..<18:
                    operations.append(.remove(collection: collection, key: key))
                case 18:
                    operations.append(.removeCollection(collection))
                default:
                    operations.append(.set(collection: collection, key: key, object: [UInt8(truncatingIfNeeded: index)], metadata: nil))
                }
            }
            let roll = rng.next() % 20
            steps.append(.transaction(operations, roll == 0 ? .rollback : roll == 1 ? .abort : .commit))
            if idleCheckpoints && index % 5 == 4 { steps.append(.idleCheckpoint) }
            if index % 60 == 59 { steps.append(.checkpoint) }
            if index == transactions * 2 / 3 { steps.append(.compact) }
        }
        self.steps = steps
    }

    /// Ten small transactions to write after a recovery, different for each `salt`.
    static func tail(seed: UInt64, salt: UInt64) -> [Step] {
        var rng = SeededRandom(seed: seed &* 31 &+ salt)
        return (0..<10).map { index in
            let key = "t\(rng.next() % 8)"
            if index % 4 == 3 { return .transaction([.remove(collection: "tail", key: key)], .commit) }
            return .transaction([.set(collection: "tail", key: key, object: value(Int(1 + rng.next() % 3000), compressible: index % 2 == 0, &rng),
                                      metadata: index % 3 == 0 ? [UInt8(index)] : nil)], .commit)
        }
    }

    /// After a one-shot fault the database works again: `tail(seed:salt:)` runs on `engine` and
    /// every commit of it must be acknowledged; a failure (or no engine: the database did not
    /// reopen) goes into `tally` under `label`.
    static func runTailAfterOneShotFault(on engine: Engine?, seed: UInt64, salt: UInt64, history: inout History,
                                         mode: SyncMode, label: String, into tally: inout FaultMatrix.Tally) {
        guard let engine else {
            tally.fail("\(label): the database does not reopen after a one-shot fault")
            return
        }
        for step in tail(seed: seed, salt: salt) {
            do { try step.run(on: engine, history: &history, mode: mode) } catch {
                tally.fail("\(label): a commit after the one-shot fault failed: \(error)")
                return
            }
        }
    }

    /// A value size: mostly small, sometimes tens of KiB.
    static func size(_ rng: inout SeededRandom) -> Int {
        let sizes = [1, 2, 17, 100, 130, 700, 2000, 5000, 20_000, 70_000]
        let weights = [8, 6, 6, 10, 10, 10, 8, 4, 2, 1]
        var pick = Int(rng.next() % UInt64(weights.reduce(0, +)))
        for (size, weight) in zip(sizes, weights) {
            if pick < weight { return size }
            pick -= weight
        }
        return 1
    }

    /// `count` bytes: a repeated JSON-like pattern, or seeded random bytes. Filled through a
    /// raw buffer (debug builds make per-element collection code slow for 1 MiB values).
    static func value(_ count: Int, compressible: Bool, _ rng: inout SeededRandom) -> [UInt8] {
        let pattern = Array("{\"name\":\"value-\(rng.next() % 1000)\",\"tags\":[1,2,3]}".utf8)
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var index = 0
            while index < count {
                var word = rng.next()
                for _ in 0..<min(8, count - index) {
                    buffer[index] = compressible ? pattern[index % pattern.count] : UInt8(truncatingIfNeeded: word)
                    word >>= 8
                    index += 1
                }
            }
            initialized = count
        }
    }
}

/// An error the workload throws from a transaction body to abort it.
struct WorkloadAbort: Error {}

extension Workload.Step {
    /// Runs the step against `engine`, keeping `history` up to date: a commit is acknowledged
    /// only once `write` returned. Any error but the step's own abort propagates.
    func run(on engine: Engine, history: inout History, mode: SyncMode) throws {
        switch self {
        case .checkpoint:
            try engine.checkpoint()
            history.markAllDurable()
        case .idleCheckpoint:
            engine.runIdleCheckpointNow()
        case .compact:
            // Compaction syncs the log only when it found something to rewrite (its checkpoint).
            if try !engine.compact(force: true).victims.isEmpty { history.markAllDurable() }
        case .transaction(let operations, let ending):
            var next = history.current
            for operation in operations { operation.apply(to: &next) }
            history.inFlight = ending == .commit ? next : nil
            let result: (value: Void, changeset: Changeset?)
            do {
                result = try engine.write { tx in
                    for operation in operations { try operation.apply(to: tx) }
                    if ending == .rollback { tx.rollback() }
                    if ending == .abort { throw WorkloadAbort() }
                }
            } catch let failure as WriteFailure<any Error> {
                if case .body(let body) = failure, body is WorkloadAbort { return }
                throw failure
            }
            if result.changeset != nil {
                history.acknowledge(next, durable: mode == .full)
            } else {
                history.inFlight = nil
            }
        }
    }
}

extension Workload.Operation {
    func apply(to model: inout Model) {
        switch self {
        case .set(let collection, let key, let object, let metadata):
            model[collection, key] = Model.Row(object: object, metadata: metadata)
        case .setMetadata(let collection, let key, let metadata):
            if model[collection, key] != nil { model[collection, key]!.metadata = metadata }
        case .remove(let collection, let key):
            model[collection, key] = nil
        case .removeCollection(let collection):
            model.rows[collection] = nil
        case .removeAll:
            model = Model()
        }
    }

    func apply(to tx: WriteTransaction) throws {
        switch self {
        case .set(let collection, let key, let object, let metadata):
            try object.withUnsafeBytes { o in
                if let metadata {
                    try metadata.withUnsafeBytes { m in try tx.setObject(o, metadata: .set(m), collection: collection, key: key) }
                } else {
                    try tx.setObject(o, metadata: .clear, collection: collection, key: key)
                }
            }
        case .setMetadata(let collection, let key, let metadata):
            if let metadata {
                try metadata.withUnsafeBytes { m in _ = try tx.setMetadata(m, collection: collection, key: key) }
            } else {
                try tx.setMetadata(nil, collection: collection, key: key)
            }
        case .remove(let collection, let key):
            try tx.remove(collection: collection, key: key)
        case .removeCollection(let collection):
            try tx.removeCollection(collection)
        case .removeAll:
            try tx.removeAll()
        }
    }
}
