import Foundation
import Testing
import TestSupport
import YapDBSimulatedDisk
@testable import YapDB

/// Extensions registered late: state a database holds for an extension that is not registered
/// again (yet) is carried through checkpoints until the extension registers or is
/// unregistered by name, or an index compaction drops it. A relationship registered after writes and checkpoints keeps its
/// manual edges and catches up with the rows; a view registered late rebuilds (the rows
/// changed since its trees are no longer listed) and is exact.
@Suite struct UnclaimedExtensionTests {
    typealias R = YDB_NodeDeleteRules
    static let scope = "unclaimed"

    static func node(_ id: String, _ edges: [EdgeSpec] = []) -> RelNode { RelNode(id: id, scope: scope, edges: edges) }

    static func manual(_ name: String, _ source: String, _ destination: String) -> YapDatabaseRelationshipEdge {
        YapDatabaseRelationshipEdge(name: name, sourceKey: source, collection: RelNode.collection, destinationKey: destination,
                                    collection: RelNode.collection, nodeDeleteRules: [])
    }

    static func register(_ database: YapDatabase) {
        #expect(database.register(YapDatabaseRelationship(versionTag: "1"), withName: "relationships"))
    }

    /// (name, source, destination) of every manual edge.
    static func manualEdges(_ database: YapDatabase) -> Set<[String]> {
        var edges = Set<[String]>()
        database.newConnection().read { tx in
            tx.rel.iterateEdges(withName: nil, sourceKey: nil, collection: nil) { edge, _ in
                if edge.isManualEdge { edges.insert([edge.name, edge.sourceKey, edge.destinationKey ?? ""]) }
            }
        }
        return edges
    }

    /// Session 1: the relationship with rows a…d, a protocol edge p → a and manual edges
    /// a → b, b → c, c → d; closed (a checkpoint writes its trees).
    static func firstSession(_ fixture: DatabaseFixture) throws {
        register(fixture.database)
        try fixture.database.newConnection().write { tx in
            for id in ["a", "b", "c", "d"] { tx.setObject(node(id), forKey: id, inCollection: RelNode.collection) }
            tx.setObject(node("p", [.to("a", "child", [])]), forKey: "p", inCollection: RelNode.collection)
            tx.rel.add(manual("m", "a", "b"))
            tx.rel.add(manual("m", "b", "c"))
            tx.rel.add(manual("m", "c", "d"))
        }
    }

    /// Writes without the relationship registered: p's edge moves to b, row d goes (so c → d
    /// must go too), row e comes.
    static func unregisteredWrites(_ database: YapDatabase) throws {
        try database.newConnection().write { tx in
            tx.setObject(node("p", [.to("b", "child", [])]), forKey: "p", inCollection: RelNode.collection)
            tx.removeObject(forKey: "d", inCollection: RelNode.collection)
            tx.setObject(node("e"), forKey: "e", inCollection: RelNode.collection)
        }
    }

    static func expectCaughtUp(_ database: YapDatabase, _ label: String) throws {
        #expect(manualEdges(database) == [["m", "a", "b"], ["m", "b", "c"]], "\(label): manual edges kept, the one to a removed row gone")
        database.newConnection().read { tx in
            #expect(tx.rel.edgeCount(withName: "child", destinationKey: "b", collection: RelNode.collection) == 1, "\(label)")
            #expect(tx.rel.edgeCount(withName: "child") == 1, "\(label): protocol edges are the objects' as they are now")
        }
        let report = try database.verify()
        #expect(report.isValid, "\(label): \(report.problems)")
    }

    @Test func aRelationshipRegisteredAfterWritesAndCheckpointsKeepsItsManualEdges() throws {
        let fixture = try DatabaseFixture(configure: RelationshipFixture.configure)
        try Self.firstSession(fixture)
        try fixture.reopen(configure: RelationshipFixture.configure)
        #expect(fixture.database.previouslyRegisteredExtensionNames() == ["relationships"])
        try Self.unregisteredWrites(fixture.database)
        try fixture.database.checkpoint()
        try fixture.database.newConnection().write { tx in tx.setObject(Self.node("f"), forKey: "f", inCollection: RelNode.collection) }
        try fixture.database.checkpoint()
        // A later session, still without the relationship, then one that registers it.
        try fixture.reopen(configure: RelationshipFixture.configure)
        #expect(fixture.database.previouslyRegisteredExtensionNames() == ["relationships"], "kept until registered or unregistered")
        try fixture.database.newConnection().write { tx in tx.setObject(Self.node("g"), forKey: "g", inCollection: RelNode.collection) }
        try fixture.reopen(configure: RelationshipFixture.configure)
        Self.register(fixture.database)
        try Self.expectCaughtUp(fixture.database, "reopened")
        // And registered late in the session that wrote and checkpointed.
        let late = try DatabaseFixture(configure: RelationshipFixture.configure)
        try Self.firstSession(late)
        try late.reopen(configure: RelationshipFixture.configure)
        try Self.unregisteredWrites(late.database)
        try late.database.checkpoint()
        Self.register(late.database)
        try Self.expectCaughtUp(late.database, "same session")
    }

    /// An index compaction drops what is still unclaimed (it keeps only the pages of registered
    /// extensions, so an extension the app no longer registers cannot hold the index's space
    /// forever): a relationship registered after `compact()` starts afresh — no manual edges,
    /// the protocol edges gathered from the objects — and the database verifies.
    @Test func anIndexCompactionDropsTheStateOfAnUnclaimedExtension() throws {
        let fixture = try DatabaseFixture(configure: RelationshipFixture.configure)
        try Self.firstSession(fixture)
        try fixture.reopen(configure: RelationshipFixture.configure)
        try Self.unregisteredWrites(fixture.database)
        try fixture.database.checkpoint()
        try fixture.database.compact()
        try fixture.reopen(configure: RelationshipFixture.configure)
        #expect(fixture.database.previouslyRegisteredExtensionNames()?.isEmpty == true, "nothing kept after the compaction")
        Self.register(fixture.database)
        #expect(Self.manualEdges(fixture.database).isEmpty)
        fixture.database.newConnection().read { tx in
            #expect(tx.rel.edgeCount(withName: "child", destinationKey: "b", collection: RelNode.collection) == 1)
        }
        let report = try fixture.database.verify()
        #expect(report.isValid, "\(report.problems)")
    }

    /// A power cut after the checkpoint that carried the state, and before anything registered.
    @Test func carriedStateSurvivesAPowerCut() throws {
        let disk = SimulatedDisk(seed: 11)
        try disk.mkdir("/uc")
        func open() throws -> YapDatabase {
            let options = YapDatabaseOptions()
            options.durability = .full
            let database = try YapDatabase.open(path: "/uc/db", options: options, fileSystem: disk, segmentLimit: 16384)
            RelationshipFixture.configure(database)
            return database
        }
        var database = try open()
        Self.register(database)
        try database.newConnection().write { tx in
            for id in ["a", "b", "c", "d"] { tx.setObject(Self.node(id), forKey: id, inCollection: RelNode.collection) }
            tx.setObject(Self.node("p", [.to("a", "child", [])]), forKey: "p", inCollection: RelNode.collection)
            tx.rel.add(Self.manual("m", "a", "b"))
        }
        database.abandon()
        disk.powerCut(seed: 1, mode: .drop)
        database = try open()   // no registration: the records and rows wait
        try Self.unregisteredWrites(database)
        try database.newConnection().write { tx in
            // Rows only: a checkpoint then carries the records with lost row changes.
            tx.setObject(Self.node("c"), forKey: "c", inCollection: RelNode.collection)
        }
        try database.checkpoint()
        database.abandon()
        disk.powerCut(seed: 2, mode: .torn)
        database = try open()
        Self.register(database)
        #expect(Self.manualEdges(database) == [["m", "a", "b"]])
        database.newConnection().read { tx in #expect(tx.rel.edgeCount(withName: "child") == 1) }
        #expect(try database.verify().isValid)
        database.abandon()
    }

    @Test func unregisteringByNameDropsTheCarriedState() throws {
        let fixture = try DatabaseFixture(configure: RelationshipFixture.configure)
        try Self.firstSession(fixture)
        try fixture.reopen(configure: RelationshipFixture.configure)
        fixture.database.unregisterExtension(withName: "relationships")
        try fixture.reopen(configure: RelationshipFixture.configure)
        #expect(fixture.database.previouslyRegisteredExtensionNames() == [])
        Self.register(fixture.database)
        #expect(Self.manualEdges(fixture.database).isEmpty, "the relationship starts over")
        fixture.database.newConnection().read { tx in #expect(tx.rel.edgeCount(withName: "child") == 1) }
    }

    /// A view registered after writes and a checkpoint that carried its trees: the rows changed
    /// since are no longer listed, so it rebuilds, and holds every row.
    @Test func aViewRegisteredLateRebuildsExactly() throws {
        let grouping = YapDatabaseViewGrouping.withKeyBlock { _, _, _ in "all" }
        let sorting = YapDatabaseViewSorting.withKeyBlock { _, _, _, key1, _, key2 in key1.compare(key2) }
        func view() -> YapDatabaseAutoView { YapDatabaseAutoView(grouping: grouping, sorting: sorting, versionTag: "1") }
        func keys(_ database: YapDatabase) -> [String] {
            var keys: [String] = []
            database.newConnection().read { tx in
                (tx.ext("v") as? YapDatabaseViewTransaction)?.iterateKeys(inGroup: "all") { _, key, _, _ in keys.append(key) }
            }
            return keys
        }
        let fixture = try DatabaseFixture()
        #expect(fixture.database.register(view(), withName: "v"))
        try fixture.database.newConnection().write { tx in for k in ["k1", "k2", "k3"] { tx.setObject(k, forKey: k, inCollection: "c") } }
        try fixture.reopen()
        #expect(fixture.database.previouslyRegisteredExtensionNames() == ["v"])
        try fixture.database.newConnection().write { tx in
            tx.removeObject(forKey: "k2", inCollection: "c")
            tx.setObject("k4", forKey: "k4", inCollection: "c")
        }
        try fixture.database.checkpoint()
        try fixture.database.newConnection().write { tx in tx.setObject("k5", forKey: "k5", inCollection: "c") }
        try fixture.reopen()
        #expect(fixture.database.register(view(), withName: "v"))
        #expect(keys(fixture.database) == ["k1", "k3", "k4", "k5"])
        #expect(try fixture.database.verify().isValid)
    }
}
