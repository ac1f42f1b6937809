import Foundation
import TestSupport
import YapDBSimulatedDisk
@testable import YapDB

/// The relationship workload of the crash sweep: a seeded run of read-write transactions on a
/// database with a relationship extension (nodes with protocol edges and rules, manual edges
/// added and removed, removals that cascade), stopped after n mutating disk calls for sampled
/// n, cut, reopened and checked: `verify()` passes (the edge trees agree, every edge's rows
/// exist, stored protocol edges are their objects'), the rows are those after some commit k no
/// earlier than the last acknowledged one, and the protocol and manual edges are commit k's
/// (manual-edge changes are part of their commit's log records). Every tenth transaction is
/// followed by a checkpoint, so crashes also fall inside checkpoints and recoveries replay
/// manual-edge records onto written trees.
struct RelationshipCrashSweep {
    static let path = "/rel/db"
    static let collections = ["a", "b"]

    struct Edge: Codable, Hashable, Sendable {
        var name: String
        var collection: String
        var key: String
        var rules: UInt16
    }

    struct Node: Codable, Equatable, Sendable, YapDatabaseRelationshipNode {
        var id: String
        var edges: [Edge]

        func yapDatabaseRelationshipEdges() -> [YapDatabaseRelationshipEdge]? {
            edges.map {
                YapDatabaseRelationshipEdge(name: $0.name, destinationKey: $0.key, collection: $0.collection,
                                            nodeDeleteRules: YDB_NodeDeleteRules(rawValue: $0.rules))
            }
        }
    }

    /// An edge as read back: identity, kind and rules.
    struct StoredEdge: Hashable {
        var name, sourceCollection, sourceKey, destinationCollection, destinationKey: String
        var manual: Bool
        var rules: UInt16
    }

    /// What a commit left: rows and edges.
    struct State: Equatable {
        var rows: [String: Node] = [:]
        var edges: Set<StoredEdge> = []
        var protocolEdges: Set<StoredEdge> { edges.filter { !$0.manual } }
        var manualEdges: Set<StoredEdge> { edges.filter(\.manual) }
    }

    let seed: UInt64
    let transactions: Int

    static func newDisk(seed: UInt64) -> SimulatedDisk {
        let disk = SimulatedDisk(seed: seed)
        try! disk.mkdir("/rel")
        return disk
    }

    static func open(_ disk: SimulatedDisk) throws -> YapDatabase {
        let options = YapDatabaseOptions()
        options.durability = .full
        let database = try YapDatabase.open(path: path, options: options, fileSystem: disk, segmentLimit: 16384)
        for collection in collections { database.registerCodableSerialization(Node.self, forCollection: collection) }
        guard database.register(YapDatabaseRelationship(versionTag: "1"), withName: "rel") else {
            database.abandon()
            throw YapDatabaseError.io(errno: EIO, operation: "register")
        }
        return database
    }

    static func state(of database: YapDatabase) -> State {
        database.newConnection().read { tx in state(in: tx) }
    }

    /// The rows and edges `tx` sees.
    static func state(in tx: YapDatabaseReadTransaction) -> State {
        var state = State()
        for collection in collections {
            for key in tx.allKeys(inCollection: collection) {
                state.rows[collection + "/" + key] = tx.object(forKey: key, inCollection: collection) as? Node
            }
        }
        (tx.ext("rel") as? YapDatabaseRelationshipTransaction)?.iterateEdges(withName: nil, sourceKey: nil, collection: nil) { e, _ in
            state.edges.insert(StoredEdge(name: e.name, sourceCollection: e.sourceCollection, sourceKey: e.sourceKey,
                                          destinationCollection: e.destinationCollection ?? "", destinationKey: e.destinationKey ?? "",
                                          manual: e.isManualEdge, rules: e.nodeDeleteRules.rawValue))
        }
        return state
    }

    /// Runs the workload until it ends or the disk stops; returns the states after each
    /// acknowledged commit (index 0: before any) and the error that stopped it, if it was not
    /// the disk.
    func run(on disk: SimulatedDisk) -> (states: [State], inFlight: State?, database: YapDatabase?, unexpected: (any Error)?) {
        var states = [State()]
        var inFlight: State?
        var rng = SeededRandom(seed: seed)
        var database: YapDatabase?
        var nextKey = 0
        func random(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
        func rules() -> UInt16 { [0, 4, 8, 16, 32, 12][random(6)] }
        do {
            database = try Self.open(disk)
            let connection = database!.newConnection()
            for _ in 0..<transactions {
                inFlight = nil
                try connection.write { tx in
                    let rel = tx.ext("rel") as! YapDatabaseRelationshipTransaction
                    defer {
                        // The rules run now, so the state read here is what the commit holds
                        // (read in the transaction: a crash in the checkpoint after the commit
                        // may leave the disk unreadable once it returns).
                        rel.flush()
                        inFlight = Self.state(in: tx)
                    }
                    var keys: [(String, String)] = []
                    for collection in Self.collections { for key in tx.allKeys(inCollection: collection) { keys.append((collection, key)) } }
                    func target() -> (String, String) {
                        keys.isEmpty || random(10) == 0 ? (Self.collections[random(2)], "ghost") : keys[random(keys.count)]
                    }
                    for _ in 0..<(1 + random(3)) {
                        switch random(10) {
                        case 0..<5:
                            nextKey += 1
                            let id = "n\(nextKey)"
                            let edges = (0..<random(3)).map { _ -> Edge in
                                let (c, k) = target()
                                return Edge(name: ["x", "y"][random(2)], collection: c, key: k, rules: rules())
                            }
                            tx.setObject(Node(id: id, edges: edges), forKey: id, inCollection: Self.collections[random(2)])
                        case 5..<7:
                            if !keys.isEmpty {
                                let (c, k) = keys[random(keys.count)]
                                tx.removeObject(forKey: k, inCollection: c)
                            }
                        case 7..<9:
                            if !keys.isEmpty {
                                let (sc, sk) = keys[random(keys.count)], (dc, dk) = target()
                                rel.add(YapDatabaseRelationshipEdge(name: "m", sourceKey: sk, collection: sc, destinationKey: dk,
                                                                    collection: dc, nodeDeleteRules: YDB_NodeDeleteRules(rawValue: rules())))
                            }
                        default:
                            var manual: [YapDatabaseRelationshipEdge] = []
                            rel.iterateEdges(withName: "m") { e, _ in manual.append(e) }
                            if !manual.isEmpty {
                                rel.remove(manual[random(manual.count)], withProcessing: [.edgeDeleted, .sourceNodeDeleted][random(2)])
                            }
                        }
                    }
                }
                states.append(inFlight!)
                inFlight = nil
                if states.count % 10 == 0 { try database!.checkpoint() }
            }
        } catch {
            if !disk.isStopped { return (states, inFlight, database, error) }
        }
        return (states, inFlight, database, nil)
    }

    /// Checks a recovered database against the states of the run that was cut (`inFlight`:
    /// the commit it was making, which may be durable without having been acknowledged).
    static func check(_ database: YapDatabase, states acknowledgedStates: [State], inFlight: State?, label: String) -> [String] {
        let states = acknowledgedStates + (inFlight.map { [$0] } ?? [])
        var problems: [String] = []
        do {
            let report = try database.verify()
            if !report.isValid { problems.append("\(label): verify: \(report.problems.prefix(3))") }
        } catch {
            problems.append("\(label): verify threw \(error)")
        }
        let found = state(of: database)
        let acknowledged = acknowledgedStates.count - 1
        // Commit k's rows, for k the last acknowledged commit or the one after it (durable, not
        // acknowledged); several commits may leave the same rows (manual-edge changes only).
        let candidates = (acknowledged..<states.count).filter { states[$0].rows == found.rows }
        guard !candidates.isEmpty else {
            let want = Set(states[acknowledged].rows.keys), got = Set(found.rows.keys)
            return problems + ["\(label): the rows are not those of acknowledged commit \(acknowledged) or the next; missing "
                               + "\(want.subtracting(got).sorted()), extra \(got.subtracting(want).sorted())"]
        }
        func edgesMatch(_ k: Int) -> Bool {
            found.protocolEdges == states[k].protocolEdges && found.manualEdges == states[k].manualEdges
        }
        if !candidates.contains(where: edgesMatch) {
            func describe(_ edges: Set<StoredEdge>) -> String {
                edges.map { "\($0.sourceCollection)/\($0.sourceKey)->\($0.destinationCollection)/\($0.destinationKey):\($0.rules)\($0.manual ? "m" : "")" }
                    .sorted().joined(separator: " ")
            }
            let k = candidates[0]
            problems.append("\(label): the edges match no candidate commit \(candidates) (\(acknowledged) acknowledged): found "
                            + "[\(describe(found.edges))], commit \(k) [\(describe(states[k].edges))]")
        }
        return problems
    }
}
