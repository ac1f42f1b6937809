import Foundation
import Testing
import TestSupport
import YapDBSimulatedDisk
@testable import YapDB

/// The seeded model test of relationships: random nodes with protocol edges (to rows, to rows
/// that never exist, to files), manual edges, every rule, notify callbacks that rewrite their
/// node, removals, collection clears, remove-alls, explicit flushes, rollbacks, reopens and
/// power cuts on a simulated disk — each commit checked against `RelationshipModel` (rows,
/// edges with rules, callbacks made, files deleted), at the newest snapshot and at an older one
/// held by a long-lived read. Removed keys are written again, in the same transaction or a
/// later one, across power cuts: the edge records in the log rebuild the edges exactly as the
/// rules left them (an edge dropped with its destination stays dropped once the destination
/// is written again, issue 22).
@Suite struct RelationshipModelTests {
    typealias Pair = RelationshipModel.Pair

    final class Runner {
        let seed: UInt64
        var rng: SeededRandom
        let disk: SimulatedDisk
        static let path = "/model/rel.yapdb"
        static let collections = ["nodes", "other"]
        let scope: String
        let files: [String]
        let folder: TemporaryDirectory
        var database: YapDatabase!
        var writer: YapDatabaseConnection!
        var model = RelationshipModel()
        var nextKey = 0
        /// Rows removed by `randomOperation`, newest last (some are written again, in the same
        /// transaction or a later one).
        var removedKeys: [Pair] = []
        var old: (connection: YapDatabaseConnection, model: RelationshipModel)?
        var commits = 0, rollbacks = 0, reopens = 0, crashes = 0, cascades = 0, callbacks = 0, filesDeleted = 0

        init(seed: UInt64) throws {
            self.seed = seed
            rng = SeededRandom(seed: seed)
            disk = SimulatedDisk(seed: seed)
            scope = "model-\(seed)-\(UUID().uuidString)"
            let folder = TemporaryDirectory("yapdb-rel-model")
            self.folder = folder
            files = (0..<4).map { folder.file("f\($0)") }
            try disk.mkdir("/model")
            try open()
        }

        func open() throws {
            let options = YapDatabaseOptions()
            options.durability = .full
            database = try YapDatabase.open(path: Self.path, options: options, fileSystem: disk, segmentLimit: 16384)
            RelationshipFixture.configure(database)
            precondition(database.register(YapDatabaseRelationship(versionTag: "1"), withName: "relationships"), "registration failed")
            writer = database.newConnection()
        }

        func endOld() {
            _ = old?.connection.endLongLivedReadTransaction()
            old = nil
        }

        func random(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }

        // MARK: Random operations (applied to the database and the model alike)

        func existingKeys(_ tx: RelationshipModelTransaction) -> [Pair] { tx.model.rows.keys.sorted() }

        func randomRules() -> YDB_NodeDeleteRules {
            var rules: YDB_NodeDeleteRules = []
            let all: [YDB_NodeDeleteRules] = [.notifyIfSourceDeleted, .notifyIfDestinationDeleted, .deleteSourceIfDestinationDeleted,
                                              .deleteDestinationIfSourceDeleted, .deleteSourceIfAllDestinationsDeleted,
                                              .deleteDestinationIfAllSourcesDeleted]
            for rule in all where random(5) == 0 { rules.insert(rule) }
            return rules
        }

        /// A destination: mostly a row that exists, sometimes a row that never will, or a file.
        func randomDestination(_ tx: RelationshipModelTransaction) -> (collection: String?, key: String?, file: String?) {
            let roll = random(20)
            let keys = existingKeys(tx)
            if roll < 2 { return (nil, nil, files[random(files.count)]) }
            if roll < 4 || keys.isEmpty { return (Self.collections[random(2)], "ghost\(random(3))", nil) }
            let pair = keys[random(keys.count)]
            return (pair.collection, pair.key, nil)
        }

        func randomNode(_ id: String, _ tx: RelationshipModelTransaction) -> RelNode {
            var edges: [EdgeSpec] = []
            for _ in 0..<random(4) {
                let d = randomDestination(tx)
                edges.append(EdgeSpec(name: ["a", "b", "c"][random(3)], collection: d.collection, key: d.key, file: d.file,
                                      rules: randomRules().rawValue))
            }
            return RelNode(id: id, scope: scope, edges: edges, clearsOnNotify: random(2) == 0)
        }

        func randomOperation(_ tx: YapDatabaseReadWriteTransaction, _ m: inout RelationshipModelTransaction) {
            let rel = tx.ext("relationships") as! YapDatabaseRelationshipTransaction
            let keys = existingKeys(m)
            switch random(100) {
            case 0..<40:
                // A new row, or a new object for an existing one.
                let pair: Pair
                if keys.isEmpty || random(2) == 0 {
                    if !removedKeys.isEmpty, random(2) == 0 {
                        // A row removed before, often in this transaction (its old edges then
                        // still wait for the flush): written again.
                        pair = removedKeys[removedKeys.count - 1 - random(min(4, removedKeys.count))]
                    } else {
                        nextKey += 1
                        pair = Pair(collection: Self.collections[random(2)], key: "k\(nextKey)")
                    }
                } else {
                    pair = keys[random(keys.count)]
                }
                let node = randomNode(pair.key, m)
                tx.setObject(node, forKey: pair.key, inCollection: pair.collection)
                m.set(node, at: pair)
            case 40..<60:
                guard !keys.isEmpty else { return }
                let pair = keys[random(keys.count)]
                tx.removeObject(forKey: pair.key, inCollection: pair.collection)
                m.remove(pair)
                removedKeys.append(pair)
            case 60..<75:
                guard !keys.isEmpty else { return }
                let source = random(8) == 0 ? Pair(collection: "nodes", key: "ghost\(random(3))") : keys[random(keys.count)]
                let d = randomDestination(m)
                let rules = randomRules()
                let name = ["m", "n"][random(2)]
                let edge: YapDatabaseRelationshipEdge
                let destination: RelationshipModel.Destination
                if let file = d.file {
                    edge = YapDatabaseRelationshipEdge(name: name, sourceKey: source.key, collection: source.collection,
                                                       destinationFileURL: URL(fileURLWithPath: file), nodeDeleteRules: rules)
                    destination = .file(file)
                } else {
                    edge = YapDatabaseRelationshipEdge(name: name, sourceKey: source.key, collection: source.collection,
                                                       destinationKey: d.key!, collection: d.collection, nodeDeleteRules: rules)
                    destination = .node(Pair(collection: d.collection!, key: d.key!))
                }
                rel.add(edge)
                m.addManual(RelationshipModel.Edge(name: name, source: source, destination: destination, manual: true), rules)
            case 75..<85:
                let manual = m.model.edges.keys.filter(\.manual)
                guard let e = RelationshipModel.sorted(Array(manual), \.bySourceOrder).randomElement(using: &rng) else { return }
                let reason = [YDB_NotifyReason.edgeDeleted, .sourceNodeDeleted, .destinationNodeDeleted][random(3)]
                if case .node(let d) = e.destination, random(2) == 0 {
                    rel.removeEdge(withName: e.name, sourceKey: e.source.key, collection: e.source.collection, destinationKey: d.key,
                                   collection: d.collection, withProcessing: reason)
                } else {
                    let url: URL? = if case .file(let path) = e.destination { URL(fileURLWithPath: path) } else { nil }
                    let edge = url.map {
                        YapDatabaseRelationshipEdge(name: e.name, sourceKey: e.source.key, collection: e.source.collection,
                                                    destinationFileURL: $0, nodeDeleteRules: [])
                    } ?? YapDatabaseRelationshipEdge(name: e.name, sourceKey: e.source.key, collection: e.source.collection,
                                                     destinationKey: e.destinationNode!.key, collection: e.destinationNode!.collection,
                                                     nodeDeleteRules: [])
                    rel.remove(edge, withProcessing: reason)
                }
                m.removeManual(e, reason: reason)
            case 85..<92:
                rel.flush()
                m.flush()
            case 92..<97:
                let collection = Self.collections[random(2)]
                tx.removeAllObjects(inCollection: collection)
                m.removeCollection(collection)
            default:
                if random(4) == 0 {
                    tx.removeAllObjectsInAllCollections()
                    m.removeAll()
                }
            }
        }

        // MARK: Steps

        func step() throws {
            switch random(100) {
            case 0..<70: try transaction(rollsBack: false)
            case 70..<78: try transaction(rollsBack: true)
            case 78..<82:
                reopens += 1
                endOld()
                try database.close()
                database = nil
                try open()
                try check()
            case 82..<86:
                crashes += 1
                endOld()
                database.abandon()
                database = nil
                _ = disk.powerCut(seed: rng.next(), mode: .drop)
                try open()
                try check()
            case 86..<90:
                endOld()
                let connection = database.newConnection()
                _ = connection.beginLongLivedReadTransaction()
                old = (connection, model)
            case 90..<93:
                if random(2) == 0 { try database.checkpoint() } else { try database.compact() }
            default:
                let report = try database.verify()
                #expect(report.isValid, "seed \(seed): verify: \(report.problems)")
            }
        }

        func transaction(rollsBack: Bool) throws {
            for file in files where !FileManager.default.fileExists(atPath: file) {
                FileManager.default.createFile(atPath: file, contents: Data())
            }
            _ = NotifyLog.take(scope)
            var m = RelationshipModelTransaction(model)
            let before = model.rows.count
            try writer.write { tx in
                for _ in 0..<(1 + random(4)) { randomOperation(tx, &m) }
                if rollsBack { tx.rollback() }
            }
            let made = NotifyLog.take(scope)
            if rollsBack {
                rollbacks += 1
                for file in files { #expect(FileManager.default.fileExists(atPath: file), "seed \(seed): a rollback deleted \(file)") }
                try check()
                return
            }
            m.flush()
            commits += 1
            callbacks += m.notifications.count
            filesDeleted += Set(m.filesToDelete).count
            if m.model.rows.count < before { cascades += 1 }
            #expect(made.sorted() == m.notifications.sorted(), "seed \(seed) commit \(commits): callbacks")
            let deleted = Set(m.filesToDelete)
            for file in files {
                #expect(FileManager.default.fileExists(atPath: file) == !deleted.contains(file),
                        "seed \(seed) commit \(commits): \(file) should \(deleted.contains(file) ? "" : "not ")be deleted")
            }
            model = m.model
            try check()
        }

        // MARK: Checks

        func check() throws {
            try check(writer, model, "newest")
            if let old { try check(old.connection, old.model, "old snapshot") }
        }

        func check(_ connection: YapDatabaseConnection, _ expected: RelationshipModel, _ label: String) throws {
            connection.read { tx in
                var rows: [Pair: RelNode] = [:]
                for collection in Self.collections {
                    for key in tx.allKeys(inCollection: collection) {
                        rows[Pair(collection: collection, key: key)] = tx.object(forKey: key, inCollection: collection) as? RelNode
                    }
                }
                #expect(rows == expected.rows, "seed \(seed) \(label) after commit \(commits): rows")
                var edges: [RelationshipModel.Edge: YDB_NodeDeleteRules] = [:]
                let rel = tx.ext("relationships") as! YapDatabaseRelationshipTransaction
                rel.iterateEdges(withName: nil, sourceKey: nil, collection: nil) { edge, _ in
                    let destination: RelationshipModel.Destination = edge.destinationFileURL.map { .file($0.path) }
                        ?? .node(Pair(collection: edge.destinationCollection, key: edge.destinationKey))
                    edges[RelationshipModel.Edge(name: edge.name, source: Pair(collection: edge.sourceCollection, key: edge.sourceKey),
                                                 destination: destination, manual: edge.isManualEdge)] = edge.nodeDeleteRules
                }
                #expect(edges == expected.edges, "seed \(seed) \(label) after commit \(commits): edges")
                #expect(rel.numberOfEdges() == UInt(expected.edges.count))
            }
        }
    }

    /// `YAPDB_REL_SEEDS` (a count) and `YAPDB_REL_STEPS` widen the run by hand; the default is small.
    static var seeds: [UInt64] {
        let count = ProcessInfo.processInfo.environment["YAPDB_REL_SEEDS"].flatMap { UInt64($0) } ?? 4
        return Array(1...count)
    }
    static var steps: Int { ProcessInfo.processInfo.environment["YAPDB_REL_STEPS"].flatMap { Int($0) } ?? 200 }

    @Test(arguments: seeds)
    func randomHistoryMatchesTheModel(seed: UInt64) throws {
        let runner = try Runner(seed: seed)
        defer { runner.folder.remove() }
        for _ in 0..<Self.steps { try runner.step() }
        try runner.check()
        runner.endOld()
        let report = try runner.database.verify()
        #expect(report.isValid, "seed \(seed): \(report.problems)")
        #expect(runner.commits > 50 && runner.rollbacks > 0 && runner.reopens > 0 && runner.crashes > 0, "seed \(seed) skipped a kind of step")
        #expect(runner.cascades > 0 && runner.callbacks > 0 && runner.filesDeleted > 0, "seed \(seed): no rule ran")
        try runner.database.close()
    }
}
