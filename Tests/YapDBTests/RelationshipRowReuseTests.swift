import Foundation
import Testing
import YapDB

/// YapDatabase keyed edges by SQLite row ids, which are reused: deleting one object and writing
/// another in the same transaction could fire a third object's rules (its issues #274, #453,
/// #543). YapDB keys edges by collection and key; these tests pin that no other object's rules
/// fire and no relationship breaks.
@Suite struct RelationshipRowReuseTests {
    let scope = UUID().uuidString

    func node(_ id: String, _ edges: [EdgeSpec] = []) -> RelNode { RelNode(id: id, scope: scope, edges: edges) }

    func put(_ tx: YapDatabaseReadWriteTransaction, _ n: RelNode) { tx.setObject(n, forKey: n.id, inCollection: RelNode.collection) }

    /// #543: delete an object and create a new one with an edge in the same transaction.
    @Test func deleteOneAndWriteAnotherFiresNoOtherRules() throws {
        let fixture = try RelationshipFixture.make()
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            for i in 0..<20 {
                put(tx, node("parent\(i)", [.to("child\(i)", "child", .deleteDestinationIfSourceDeleted)]))
                put(tx, node("child\(i)"))
            }
            put(tx, node("loner"))
        }
        try connection.write { tx in
            tx.removeObject(forKey: "loner", inCollection: RelNode.collection)
            put(tx, node("newcomer", [.to("child3", "child", .deleteSourceIfDestinationDeleted)]))
            tx.removeObject(forKey: "parent5", inCollection: RelNode.collection)
            put(tx, node("another", [.to("child7", "watch", .notifyIfDestinationDeleted)]))
        }
        connection.read { tx in
            let keys = Set(tx.allKeys(inCollection: RelNode.collection))
            var expected = Set((0..<20).flatMap { ["parent\($0)", "child\($0)"] })
            expected.subtract(["parent5", "child5"])
            expected.formUnion(["newcomer", "another"])
            #expect(keys == expected, "exactly parent5's cascade went")
            #expect(tx.rel.edgeCount(withName: nil, destinationKey: "child3", collection: RelNode.collection) == 2)
        }
        #expect(NotifyLog.take(scope).isEmpty)
        #expect(try fixture.database.verify().isValid)
    }

    /// #274: remove a destination, write it again and save the source again, in one
    /// transaction: the relationship holds.
    @Test func removeAndRewriteTheDestinationKeepsTheRelationship() throws {
        let fixture = try RelationshipFixture.make()
        let connection = fixture.database.newConnection()
        let source = node("source", [.to("target", "link", .deleteSourceIfDestinationDeleted)])
        try connection.write { tx in
            put(tx, source)
            put(tx, node("target"))
        }
        try connection.write { tx in
            tx.removeObject(forKey: "target", inCollection: RelNode.collection)
            put(tx, node("target"))
            put(tx, source)
        }
        connection.read { tx in
            #expect(tx.node("source") != nil && tx.node("target") != nil)
            #expect(tx.rel.edgeCount(withName: "link", sourceKey: "source", collection: RelNode.collection,
                                     destinationKey: "target", collection: RelNode.collection) == 1)
        }
        // The edge still works afterwards.
        try connection.write { tx in tx.removeObject(forKey: "target", inCollection: RelNode.collection) }
        connection.read { tx in #expect(tx.node("source") == nil) }
    }

    /// #453: a cascade while many rows are deleted and created deletes only what its rules say.
    @Test func cascadesAmongManyDeletesAndInsertsTouchOnlyTheirRows() throws {
        let fixture = try RelationshipFixture.make()
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            for i in 0..<50 { put(tx, node("keep\(i)", [.to("keep\((i + 1) % 50)", "ring", [])])) }
            put(tx, node("root", [.to("leaf", "child", .deleteDestinationIfSourceDeleted)]))
            put(tx, node("leaf", [.to("leafchild", "child", .deleteDestinationIfSourceDeleted)]))
            put(tx, node("leafchild"))
        }
        for round in 0..<5 {
            try connection.write { tx in
                for i in 0..<10 { put(tx, node("temp\(round)-\(i)", [.to("keep\(i)", "ref", [])])) }
                if round > 0 { for i in 0..<10 { tx.removeObject(forKey: "temp\(round - 1)-\(i)", inCollection: RelNode.collection) } }
                if round == 3 { tx.removeObject(forKey: "root", inCollection: RelNode.collection) }
            }
        }
        connection.read { tx in
            for i in 0..<50 { #expect(tx.node("keep\(i)") != nil, "keep\(i) has no rule that deletes it") }
            #expect(tx.node("leaf") == nil && tx.node("leafchild") == nil)
            #expect(tx.rel.edgeCount(withName: "ring") == 50)
            #expect(tx.rel.edgeCount(withName: "ref") == 10)
        }
        #expect(try fixture.database.verify().isValid)
    }
}
