import Foundation
import Testing
import TestSupport
import YapDBSimulatedDisk
@testable import YapDB

/// Manual edges are part of their commit (docs/format.md §3, extension data records): a power
/// cut at any point of a commit that adds, changes and removes manual edges leaves that commit
/// all there — rows and manual edges — or not there at all, with or without a checkpoint
/// before it; and hostile manual-edge records never trap.
@Suite struct RelationshipDurabilityTests {
    typealias R = YDB_NodeDeleteRules
    static let path = "/rd/db"
    static let scope = "durability"

    struct Edge: Hashable {
        var name, source, destination: String
        var rules: UInt16
    }

    static func open(_ disk: SimulatedDisk) throws -> YapDatabase {
        let options = YapDatabaseOptions()
        options.durability = .full
        let database = try YapDatabase.open(path: path, options: options, fileSystem: disk, segmentLimit: 16384)
        RelationshipFixture.configure(database)
        #expect(database.register(YapDatabaseRelationship(versionTag: "1"), withName: "relationships"))
        return database
    }

    static func manualEdges(_ database: YapDatabase) -> Set<Edge> {
        var edges = Set<Edge>()
        database.newConnection().read { tx in
            tx.rel.iterateEdges(withName: nil, sourceKey: nil, collection: nil) { edge, _ in
                if edge.isManualEdge {
                    edges.insert(Edge(name: edge.name, source: edge.sourceKey, destination: edge.destinationKey ?? "",
                                      rules: edge.nodeDeleteRules.rawValue))
                }
            }
        }
        return edges
    }

    static func manual(_ name: String, _ source: String, _ destination: String, _ rules: R = []) -> YapDatabaseRelationshipEdge {
        YapDatabaseRelationshipEdge(name: name, sourceKey: source, collection: RelNode.collection, destinationKey: destination,
                                    collection: RelNode.collection, nodeDeleteRules: rules)
    }

    /// Rows a…e and manual edges m1 a→b, m2 a→c, m3 c→d; a checkpoint when asked.
    static func setUp(_ disk: SimulatedDisk, checkpoint: Bool) throws -> YapDatabase {
        try disk.mkdir("/rd")
        let database = try open(disk)
        try database.newConnection().write { tx in
            for id in ["a", "b", "c", "d", "e"] { tx.setObject(RelNode(id: id, scope: scope), forKey: id, inCollection: RelNode.collection) }
            tx.rel.add(manual("m1", "a", "b"))
            tx.rel.add(manual("m2", "a", "c"))
            tx.rel.add(manual("m3", "c", "d"))
        }
        if checkpoint { try database.checkpoint() }
        return database
    }

    static let before: Set<Edge> = [Edge(name: "m1", source: "a", destination: "b", rules: 0),
                                    Edge(name: "m2", source: "a", destination: "c", rules: 0),
                                    Edge(name: "m3", source: "c", destination: "d", rules: 0)]
    /// After the commit: m1 removed, m2's rules changed, m3 gone with row d, m4 and m5 added.
    static let after: Set<Edge> = [Edge(name: "m2", source: "a", destination: "c", rules: R.notifyIfSourceDeleted.rawValue),
                                   Edge(name: "m4", source: "b", destination: "e", rules: 0),
                                   Edge(name: "m5", source: "e", destination: "a", rules: R.notifyIfDestinationDeleted.rawValue)]

    /// The commit under test: adds, a rule change, a removal with processing, a row removal
    /// that takes a manual edge with it, and a new row.
    static func change(_ database: YapDatabase) throws {
        try database.newConnection().write { tx in
            tx.rel.remove(manual("m1", "a", "b"), withProcessing: .edgeDeleted)
            tx.rel.add(manual("m2", "a", "c", .notifyIfSourceDeleted))
            tx.rel.add(manual("m4", "b", "e"))
            tx.rel.add(manual("m5", "e", "a", .notifyIfDestinationDeleted))
            tx.rel.add(manual("gone", "e", "b"))
            tx.rel.remove(manual("gone", "e", "b"), withProcessing: .edgeDeleted)
            tx.removeObject(forKey: "d", inCollection: RelNode.collection)
            tx.setObject(RelNode(id: "f", scope: scope), forKey: "f", inCollection: RelNode.collection)
        }
    }

    /// Cuts the power after every number of disk calls the commit makes (and once after it
    /// returned, with no checkpoint in between): the recovered database has the rows and the
    /// manual edges of the same commit, and those of the commit when it was acknowledged.
    @Test(arguments: [false, true])
    func aPowerCutAtAnyPointOfTheCommitKeepsRowsAndManualEdgesTogether(checkpointFirst: Bool) throws {
        var n = 0
        var sawAcknowledged = false
        while !sawAcknowledged && n < 200 {
            defer { n += 1 }
            let disk = SimulatedDisk(seed: UInt64(n))
            let database = try Self.setUp(disk, checkpoint: checkpointFirst)
            #expect(Self.manualEdges(database) == Self.before)
            disk.crashAfter(operations: n)
            var acknowledged = false
            do {
                try Self.change(database)
                acknowledged = true
            } catch {}
            // Acknowledged with calls to spare: the commit finished before the crash point.
            if acknowledged && !disk.isStopped { sawAcknowledged = true }
            database.abandon()
            for (index, mode) in [PowerCutMode.drop, .torn].enumerated() {
                let copy = disk.copy()
                copy.powerCut(seed: UInt64(n * 2 + index), mode: mode)
                let label = "checkpoint \(checkpointFirst), cut after \(n) calls, \(mode.rawValue)"
                let reopened = try Self.open(copy)
                let edges = Self.manualEdges(reopened)
                let committed = reopened.newConnection().read { tx in tx.hasObject(forKey: "f", inCollection: RelNode.collection) }
                if acknowledged { #expect(committed, "\(label): an acknowledged commit's row is lost") }
                #expect(edges == (committed ? Self.after : Self.before), "\(label): rows of \(committed ? "after" : "before") the commit, edges \(edges)")
                #expect(try reopened.verify().isValid, "\(label)")
                reopened.abandon()
            }
        }
        #expect(sawAcknowledged, "the commit never completed")
    }

    /// The manual edges of a commit survive a reopen after a power cut with no checkpoint
    /// after them, then a checkpoint, more changes and another cut.
    @Test func manualEdgesReplayOntoCheckpointedTrees() throws {
        let disk = SimulatedDisk(seed: 3)
        var database = try Self.setUp(disk, checkpoint: false)
        try Self.change(database)
        database.abandon()
        disk.powerCut(seed: 1, mode: .drop)
        database = try Self.open(disk)
        #expect(Self.manualEdges(database) == Self.after)
        try database.checkpoint()
        try database.newConnection().write { tx in tx.rel.add(Self.manual("m6", "a", "f")) }
        database.abandon()
        disk.powerCut(seed: 2, mode: .drop)
        database = try Self.open(disk)
        #expect(Self.manualEdges(database) == Self.after.union([Edge(name: "m6", source: "a", destination: "f", rules: 0)]))
        #expect(try database.verify().isValid)
        database.abandon()
    }

    /// `removeAllObjectsInAllCollections()` and unregistering are records too: a reopen does not
    /// bring back edges they removed.
    @Test func removeAllAndUnregisterAreReplayed() throws {
        let disk = SimulatedDisk(seed: 4)
        var database = try Self.setUp(disk, checkpoint: true)
        try database.newConnection().write { tx in
            tx.removeAllObjectsInAllCollections()
            for id in ["x", "y"] { tx.setObject(RelNode(id: id, scope: Self.scope), forKey: id, inCollection: RelNode.collection) }
            tx.rel.add(Self.manual("n", "x", "y"))
        }
        database.abandon()
        disk.powerCut(seed: 1, mode: .drop)
        database = try Self.open(disk)
        #expect(Self.manualEdges(database) == [Edge(name: "n", source: "x", destination: "y", rules: 0)])
        try database.checkpoint()
        database.unregisterExtension(withName: "relationships")
        database.abandon()
        disk.powerCut(seed: 2, mode: .drop)
        database = try Self.open(disk)
        #expect(Self.manualEdges(database).isEmpty, "an unregistered relationship starts over")
        #expect(try database.verify().isValid)
        database.abandon()
    }

    /// Hostile records under the relationship's name (a payload that does not decode) and
    /// records of a name no extension registers: the database opens, the rows are intact, the
    /// relationship logs the bad record and starts empty, gathering its protocol edges again.
    @Test(arguments: [[UInt8](), [9], [1, 0, 1, 1, 0x40], [1, 2, 0], [1, 0, 1, 1, 3, 0x61, 0, 0], [1, 0, 0, 0xEE],
                      // Layout 2: an unknown flag, "dropped" without "removed all", a count past the
                      // end, a key cut short, a key whose name is not UTF-8, a change kind of 2.
                      [2, 4, 0], [2, 2, 0], [2, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F], [2, 0, 1, 1, 9, 0x61, 0],
                      [2, 0, 1, 1, 10, 0x6E, 0, 0, 0x61, 0, 0, 0xFF, 0xFE, 0, 0, 0, 0], [2, 0, 1, 2, 0]])
    func hostileManualEdgeRecordsNeverTrap(payload: [UInt8]) throws {
        let disk = SimulatedDisk(seed: 5)
        var database = try Self.setUp(disk, checkpoint: true)
        try database.newConnection().write { tx in
            tx.setObject(RelNode(id: "p", scope: Self.scope, edges: [.to("a", "child", [])]), forKey: "p", inCollection: RelNode.collection)
            try tx.engineTransaction.appendExtensionData(name: "relationship:relationships", payload: payload)
            try tx.engineTransaction.appendExtensionData(name: "nobody:registers", payload: [1, 2, 3])
        }
        database.abandon()
        disk.powerCut(seed: 1, mode: .drop)
        database = try Self.open(disk)
        database.newConnection().read { tx in
            #expect(tx.node("p") != nil && tx.node("a") != nil)
            #expect(tx.rel.edgeCount(withName: "child") == 1, "protocol edges gathered again")
        }
        #expect(Self.manualEdges(database).isEmpty, "manual edges lost with the bad record, as format.md says")
        #expect(try database.verify().isValid)
        database.abandon()
    }

    /// Issue 22 (model seed 21): row s has a protocol edge a → d (rule 16,
    /// deleteDestinationIfSourceDeleted) and is written after the last checkpoint; d is removed
    /// (the edge goes with it, s stays) and written again in a later commit, s untouched. The
    /// committed edges have no a → d, and a reopen keeps it that way — after a power cut too:
    /// the commits' edge records are replayed, s's object (which still lists a → d) is not read
    /// again.
    @Test(arguments: [false, true])
    func anEdgeDroppedWithItsDestinationAfterTheCheckpoint(powerCut: Bool) throws {
        let disk = SimulatedDisk(seed: 22)
        try disk.mkdir("/rd")
        var database = try Self.open(disk)
        let connection = database.newConnection()
        try connection.write { tx in
            tx.setObject(RelNode(id: "d", scope: Self.scope), forKey: "d", inCollection: RelNode.collection)
        }
        try database.checkpoint()
        try connection.write { tx in
            tx.setObject(RelNode(id: "s", scope: Self.scope, edges: [.to("d", "a", .deleteDestinationIfSourceDeleted)]),
                         forKey: "s", inCollection: RelNode.collection)
        }
        try connection.write { tx in tx.removeObject(forKey: "d", inCollection: RelNode.collection) }
        try connection.write { tx in
            tx.setObject(RelNode(id: "d", scope: Self.scope), forKey: "d", inCollection: RelNode.collection)
        }
        func edgeCount(_ database: YapDatabase) -> UInt {
            var count: UInt = 0
            database.newConnection().read { tx in count = tx.rel.edgeCount(withName: "a") }
            return count
        }
        #expect(edgeCount(database) == 0, "the edge went with its destination")
        if powerCut {
            database.abandon()
            disk.powerCut(seed: 1, mode: .drop)
        } else {
            try database.close()
        }
        database = try Self.open(disk)
        database.newConnection().read { tx in #expect(tx.node("s") != nil && tx.node("d") != nil) }
        #expect(edgeCount(database) == 0, "a reopen (power cut: \(powerCut)) keeps the committed edges")
        #expect(try database.verify().isValid)
        database.abandon()
    }
}
