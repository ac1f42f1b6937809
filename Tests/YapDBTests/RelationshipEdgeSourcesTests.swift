import Foundation
import Testing
import YapDB

/// `iterateEdgeSources(withName:destinationKey:collection:using:)` gives the sources of exactly
/// the edges `iterateEdges(withName:destinationKey:collection:using:)` gives, in the same order:
/// with and without a name, sources in several collections (the empty one too, and names and
/// keys holding a zero byte or non-ASCII text), protocol and manual edges, pending edges and
/// hidden rows inside a read-write transaction, and after commit; and it stops when told.
@Suite struct RelationshipEdgeSourcesTests {
    let scope = UUID().uuidString

    func sources(_ rel: YapDatabaseRelationshipTransaction, _ name: String?, _ key: String, _ collection: String?) -> (edges: [String], sources: [String]) {
        var edges: [String] = [], sources: [String] = []
        rel.iterateEdges(withName: name, destinationKey: key, collection: collection) { edge, _ in
            edges.append("\(edge.sourceCollection ?? "-")/\(edge.sourceKey ?? "-")")
        }
        rel.iterateEdgeSources(withName: name, destinationKey: key, collection: collection) { key, collection, _ in
            sources.append("\(collection)/\(key)")
        }
        return (edges, sources)
    }

    func check(_ tx: YapDatabaseReadTransaction, expectingSome: Bool = true) {
        for destination in ["t", "t\u{0}z", "tä"] {
            for name in [nil, "a", "b\u{0}", "ü", "none"] as [String?] {
                let (edges, sources) = sources(tx.rel, name, destination, RelNode.collection)
                #expect(edges == sources, "\(destination) \(name ?? "any")")
                if expectingSome, name == nil { #expect(!edges.isEmpty) }
            }
        }
    }

    @Test func sameSourcesAsTheEdges() throws {
        let fixture = try RelationshipFixture.make()
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            for destination in ["t", "t\u{0}z", "tä"] {
                tx.setObject(RelNode(id: destination, scope: scope), forKey: destination, inCollection: RelNode.collection)
            }
            var i = 0
            for collection in RelationshipFixture.collections {
                for key in ["s1", "s\u{0}2", "sé3", "s4-a-longer-key-than-fifteen-bytes"] {
                    let edges: [EdgeSpec] = [
                        .to(["t", "t\u{0}z", "tä"][i % 3], "a", []), .to("t", "b\u{0}", []), .to("tä", "ü", .notifyIfDestinationDeleted),
                    ]
                    tx.setObject(RelNode(id: key, scope: scope, edges: edges), forKey: key, inCollection: collection)
                    i += 1
                }
            }
            tx.rel.add(YapDatabaseRelationshipEdge(name: "a", sourceKey: "s1", collection: "other", destinationKey: "t",
                                                   collection: RelNode.collection, nodeDeleteRules: []))
            check(tx)
        }
        connection.read { tx in check(tx) }
        try connection.write { tx in
            tx.removeObject(forKey: "s1", inCollection: "other")
            tx.removeObject(forKey: "tä", inCollection: RelNode.collection)
            check(tx, expectingSome: false)
            var seen = 0
            tx.rel.iterateEdgeSources(withName: nil, destinationKey: "t", collection: RelNode.collection) { _, _, stop in
                seen += 1
                stop = seen == 2
            }
            #expect(seen == 2, "stops when told")
            var hidden = 0
            tx.rel.iterateEdgeSources(withName: nil, destinationKey: "tä", collection: RelNode.collection) { _, _, _ in hidden += 1 }
            #expect(hidden == 0, "a removed destination's edges are hidden")
        }
        connection.read { tx in check(tx, expectingSome: false) }
    }
}
