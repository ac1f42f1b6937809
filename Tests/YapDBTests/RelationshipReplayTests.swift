import Foundation
import Testing
import TestSupport
import YapDBSimulatedDisk
@testable import YapDB

/// Issue 22: after a power cut (or any reopen that replays commits after the relationship's
/// checkpointed roots), the edge records in the log rebuild the trees exactly as the live
/// commits left them — protocol edges included — and only rows changed while the extension was
/// not registered are gathered again from their objects.
@Suite struct RelationshipReplayTests {
    typealias R = YDB_NodeDeleteRules
    static let path = "/rr/db"
    static let scope = "replay"

    static func open(_ disk: SimulatedDisk, registering: Bool = true) throws -> YapDatabase {
        let options = YapDatabaseOptions()
        options.durability = .full
        let database = try YapDatabase.open(path: path, options: options, fileSystem: disk, segmentLimit: 16384)
        RelationshipFixture.configure(database)
        if registering { #expect(database.register(YapDatabaseRelationship(versionTag: "1"), withName: "relationships")) }
        return database
    }

    /// Every edge as "source -name-> destination (rules)[ manual]".
    static func edges(_ database: YapDatabase) -> Set<String> {
        var edges = Set<String>()
        database.newConnection().read { tx in
            tx.rel.iterateEdges(withName: nil, sourceKey: nil, collection: nil) { edge, _ in
                edges.insert("\(edge.sourceKey ?? "?") -\(edge.name)-> \(edge.destinationKey ?? "?") (\(edge.nodeDeleteRules.rawValue))"
                             + (edge.isManualEdge ? " manual" : ""))
            }
        }
        return edges
    }

    static func rows(_ database: YapDatabase) -> Set<String> {
        database.newConnection().read { tx in Set(tx.allKeys(inCollection: RelNode.collection)) }
    }

    static func node(_ id: String, _ edges: [EdgeSpec] = []) -> RelNode { RelNode(id: id, scope: scope, edges: edges) }

    static func write(_ database: YapDatabase, _ body: (YapDatabaseReadWriteTransaction) -> Void) throws {
        try database.newConnection().write(body)
    }

    static func set(_ tx: YapDatabaseReadWriteTransaction, _ node: RelNode) {
        tx.setObject(node, forKey: node.id, inCollection: RelNode.collection)
    }

    /// Ends the session (a power cut that drops what was not synced, or a clean close) and
    /// opens the database again, registered.
    static func reopen(_ database: YapDatabase, _ disk: SimulatedDisk, powerCut: Bool) throws -> YapDatabase {
        if powerCut {
            database.abandon()
            disk.powerCut(seed: 7, mode: .drop)
        } else {
            try database.close()
        }
        return try open(disk)
    }

    /// The live edges and rows, then the same after the reopen, and `verify()`.
    static func expectSameAfterReopen(_ database: YapDatabase, _ disk: SimulatedDisk, powerCut: Bool,
                                      edges expected: Set<String>, rows expectedRows: Set<String>) throws {
        #expect(edges(database) == expected, "live")
        #expect(rows(database) == expectedRows, "live")
        let reopened = try reopen(database, disk, powerCut: powerCut)
        #expect(edges(reopened) == expected, "after the reopen (power cut: \(powerCut))")
        #expect(rows(reopened) == expectedRows)
        #expect(try reopened.verify().isValid)
        reopened.abandon()
    }

    /// After the checkpoint, s is written with an edge to x and one to d, which does not exist
    /// (so that edge goes at commit), then rewritten without the edge to x (which deletes x, its
    /// rule); d is written last. s's object still lists d, but the commits left no s → d.
    @Test(arguments: [true, false])
    func aProtocolEdgeRemovedAfterTheCheckpointStaysRemoved(powerCut: Bool) throws {
        let disk = SimulatedDisk(seed: 31)
        try disk.mkdir("/rr")
        let database = try Self.open(disk)
        try Self.write(database) { tx in Self.set(tx, Self.node("x")) }
        try database.checkpoint()
        let late = EdgeSpec.to("d", "late", [])
        try Self.write(database) { tx in Self.set(tx, Self.node("s", [.to("x", "keep", .deleteDestinationIfSourceDeleted), late])) }
        try Self.write(database) { tx in Self.set(tx, Self.node("s", [late])) }
        try Self.write(database) { tx in Self.set(tx, Self.node("d")) }
        try Self.expectSameAfterReopen(database, disk, powerCut: powerCut, edges: [], rows: ["s", "d"])
    }

    /// A cascade after the checkpoint: removing p deletes its children (their rule) and their
    /// children's g rows (theirs); o watched c1. c1 and g1 are written again (plain rows) after:
    /// none of the victims' edges, nor o → c1, come back.
    @Test(arguments: [true, false])
    func aCascadeAfterTheCheckpointKeepsItsVictimsEdgesGone(powerCut: Bool) throws {
        let disk = SimulatedDisk(seed: 32)
        try disk.mkdir("/rr")
        let database = try Self.open(disk)
        try Self.write(database) { tx in Self.set(tx, Self.node("p")) }
        try database.checkpoint()
        try Self.write(database) { tx in
            for i in 1...2 {
                Self.set(tx, Self.node("g\(i)"))
                Self.set(tx, Self.node("c\(i)", [.to("p", "parent", .deleteSourceIfDestinationDeleted),
                                                 .to("g\(i)", "owns", .deleteDestinationIfSourceDeleted)]))
            }
            Self.set(tx, Self.node("o", [.to("c1", "watch", [])]))
        }
        #expect(Self.edges(database).count == 5)
        try Self.write(database) { tx in tx.removeObject(forKey: "p", inCollection: RelNode.collection) }
        try Self.write(database) { tx in
            Self.set(tx, Self.node("c1"))
            Self.set(tx, Self.node("g1"))
        }
        try Self.expectSameAfterReopen(database, disk, powerCut: powerCut, edges: [], rows: ["o", "c1", "g1"])
    }

    /// Rows written while the extension is not registered (after a reopen that does not register
    /// it) are gathered when it registers: s → a is stored, t → m (m does not exist) is not.
    @Test(arguments: [true, false])
    func rowsWrittenWhileUnregisteredAreGatheredAtRegistration(powerCut: Bool) throws {
        let disk = SimulatedDisk(seed: 33)
        try disk.mkdir("/rr")
        var database = try Self.open(disk)
        try Self.write(database) { tx in Self.set(tx, Self.node("a")) }
        try database.checkpoint()
        try database.close()
        database = try Self.open(disk, registering: false)
        try Self.write(database) { tx in
            Self.set(tx, Self.node("s", [.to("a", "e", .notifyIfDestinationDeleted)]))
            Self.set(tx, Self.node("t", [.to("m", "e", [])]))
        }
        let reopened = try Self.reopen(database, disk, powerCut: powerCut)
        #expect(Self.edges(reopened) == ["s -e-> a (\(R.notifyIfDestinationDeleted.rawValue))"])
        #expect(try reopened.verify().isValid)
        reopened.abandon()
    }

    /// Rows written while unregistered, then the extension registered in the same session and
    /// more commits made: the registration's record covers the rows before it, so after a power
    /// cut they are not gathered again over the later commits (the edge dropped with d, and d
    /// written again, stays dropped).
    @Test(arguments: [true, false])
    func aRegistrationLateInTheSessionCoversTheRowsBeforeIt(powerCut: Bool) throws {
        let disk = SimulatedDisk(seed: 34)
        try disk.mkdir("/rr")
        var database = try Self.open(disk)
        try database.checkpoint()
        try database.close()
        database = try Self.open(disk, registering: false)
        try Self.write(database) { tx in
            Self.set(tx, Self.node("d"))
            Self.set(tx, Self.node("s", [.to("d", "e", [])]))
        }
        #expect(database.register(YapDatabaseRelationship(versionTag: "1"), withName: "relationships"))
        #expect(Self.edges(database) == ["s -e-> d (0)"])
        try Self.write(database) { tx in tx.removeObject(forKey: "d", inCollection: RelNode.collection) }
        try Self.write(database) { tx in Self.set(tx, Self.node("d")) }
        try Self.expectSameAfterReopen(database, disk, powerCut: powerCut, edges: [], rows: ["s", "d"])
    }

    /// A manual edge and protocol edges together, a `removeAllObjectsInAllCollections()` and
    /// rows written after it in the same commit: replayed exactly.
    @Test func removeAllThenNewEdgesInOneCommitReplayExactly() throws {
        let disk = SimulatedDisk(seed: 35)
        try disk.mkdir("/rr")
        let database = try Self.open(disk)
        try Self.write(database) { tx in
            Self.set(tx, Self.node("a", [.to("b", "e", [])]))
            Self.set(tx, Self.node("b"))
        }
        try database.checkpoint()
        try Self.write(database) { tx in
            tx.removeAllObjectsInAllCollections()
            Self.set(tx, Self.node("x", [.to("y", "f", .notifyIfSourceDeleted)]))
            Self.set(tx, Self.node("y"))
            tx.rel.add(YapDatabaseRelationshipEdge(name: "m", sourceKey: "y", collection: RelNode.collection, destinationKey: "x",
                                                   collection: RelNode.collection, nodeDeleteRules: []))
        }
        try Self.expectSameAfterReopen(database, disk, powerCut: true,
                                       edges: ["x -f-> y (\(R.notifyIfSourceDeleted.rawValue))", "y -m-> x (0) manual"], rows: ["x", "y"])
    }
}

/// A relationship whose registration claims the stored state, then fails.
final class FailingRelationship: YapDatabaseRelationship, @unchecked Sendable {
    override func prepare(name: String, transaction: YapDatabaseReadWriteTransaction) -> Bool {
        _ = super.prepare(name: name, transaction: transaction)
        return false
    }
}

extension RelationshipReplayTests {
    /// A registration that fails after claiming the stored edges leaves them unclaimed: the next
    /// registration still finds them (the manual edge with them), after a checkpoint too.
    @Test(arguments: [false, true])
    func aFailedRegistrationLeavesTheStoredEdgesForTheNextOne(checkpointBetween: Bool) throws {
        let disk = SimulatedDisk(seed: 36)
        try disk.mkdir("/rr")
        var database = try Self.open(disk)
        try Self.write(database) { tx in
            Self.set(tx, Self.node("a"))
            Self.set(tx, Self.node("b", [.to("a", "p", [])]))
            tx.rel.add(YapDatabaseRelationshipEdge(name: "m", sourceKey: "a", collection: RelNode.collection, destinationKey: "b",
                                                   collection: RelNode.collection, nodeDeleteRules: []))
        }
        let expected: Set<String> = ["b -p-> a (0)", "a -m-> b (0) manual"]
        #expect(Self.edges(database) == expected)
        try database.checkpoint()
        try Self.write(database) { tx in Self.set(tx, Self.node("c")) }
        database.abandon()
        disk.powerCut(seed: 1, mode: .drop)
        database = try Self.open(disk, registering: false)
        #expect(!database.register(FailingRelationship(versionTag: "1"), withName: "relationships"))
        if checkpointBetween { try database.checkpoint() }
        #expect(database.register(YapDatabaseRelationship(versionTag: "1"), withName: "relationships"))
        #expect(Self.edges(database) == expected, "the manual edge was kept for the second registration")
        #expect(try database.verify().isValid)
        database.abandon()
    }
}
