import Foundation
import Synchronization
import Testing
import YapDB

/// A cascade removes its rows in batches (the relationship's batch removal), and everything
/// else must see exactly what removing the same rows with `removeObject` one by one, in the
/// cascade's order, shows: the hooks' calls in order, the notification's removed keys, a
/// view's row changes and contents, and the rows and edges left.
@Suite struct RelationshipCascadeBatchTests {
    /// What one run shows.
    struct Observed: Equatable {
        var hookCalls: [String]
        var removedKeys: [String]
        var viewRowChanges: [String]
        var viewContents: [String]
        var rowsLeft: [String]
        var edgesLeft: UInt
    }

    let scope = UUID().uuidString

    /// Parent "p" with 30 children ("c00"…"c29", deleted with it; "c07" also through a second
    /// edge name), grandchildren in "other" under "c05" and "c10" (deleted with them), and
    /// rows the cascade leaves ("u", and "k" whose edge to "p" only notifies nobody: no rule).
    func load(_ tx: YapDatabaseReadWriteTransaction) {
        func put(_ id: String, _ edges: [EdgeSpec], _ collection: String = RelNode.collection) {
            tx.setObject(RelNode(id: id, scope: scope, edges: edges), forKey: id, inCollection: collection)
        }
        put("p", [])
        for i in 0..<30 {
            let id = String(format: "c%02d", i)
            var edges: [EdgeSpec] = [.to("p", "parent", .deleteSourceIfDestinationDeleted)]
            if i == 7 { edges.append(.to("p", "second", .deleteSourceIfDestinationDeleted)) }
            put(id, edges)
        }
        for i in 0..<10 {
            put("g\(i)", [.to(i < 5 ? "c05" : "c10", "up", .deleteSourceIfDestinationDeleted)], "other")
        }
        put("u", [])
        put("k", [.to("p", "loose", [])])
    }

    /// The rows the cascade of "p" removes, in the order it removes them.
    static let cascadeOrder: [(String, String)] = [(RelNode.collection, "p")]
        + (0..<30).map { (RelNode.collection, String(format: "c%02d", $0)) }
        + (0..<10).map { ("other", "g\($0)") }

    func run(removingOneByOne: Bool) throws -> Observed {
        let calls = Mutex<[String]>([])
        let fixture = try RelationshipFixture.make()
        let database = fixture.database!
        let hooks = YapDatabaseHooks()
        hooks.willRemoveRow = { tx, collection, key in
            let stored = tx.hasObject(forKey: key, inCollection: collection)
            calls.withLock { $0.append("will \(collection)/\(key) stored=\(stored)") }
        }
        hooks.didRemoveRow = { tx, collection, key in
            let stored = tx.hasObject(forKey: key, inCollection: collection)
            calls.withLock { $0.append("did \(collection)/\(key) stored=\(stored)") }
        }
        #expect(database.register(hooks, withName: "hooks"))
        let view = YapDatabaseAutoView(
            grouping: .withKeyBlock { _, collection, _ in collection },
            sorting: .withKeyBlock { _, _, _, key1, _, key2 in key1 < key2 ? .orderedAscending : key1 > key2 ? .orderedDescending : .orderedSame },
            versionTag: "1")
        #expect(database.register(view, withName: "v"))
        let writer = database.newConnection(), ui = database.newConnection()
        writer.readWrite { tx in load(tx) }
        ui.beginLongLivedReadTransaction()
        let mappings = YapDatabaseViewMappings(groups: [RelNode.collection, "other"], view: "v")
        ui.read { tx in mappings.update(with: tx) }
        calls.withLock { $0.removeAll() }

        writer.readWrite { tx in
            if removingOneByOne {
                for (collection, key) in Self.cascadeOrder { tx.removeObject(forKey: key, inCollection: collection) }
            } else {
                tx.removeObject(forKey: "p", inCollection: RelNode.collection)
            }
        }
        let notifications = ui.beginLongLivedReadTransaction()
        let removed = notifications.flatMap { note in
            (note.userInfo?[YapDatabaseNotificationKey.removedKeys] as? Set<YapCollectionKey> ?? []).map { "\($0.collection)/\($0.key)" }
        }
        let (_, rowChanges) = (ui.ext("v") as! YapDatabaseViewConnection).getChanges(forNotifications: notifications, withMappings: mappings)
        var observed = Observed(hookCalls: calls.withLock { $0 }, removedKeys: removed.sorted(),
                                viewRowChanges: rowChanges.map(ViewChangeSetTests.describe), viewContents: [], rowsLeft: [], edgesLeft: 0)
        ui.read { tx in
            let viewTx = tx.ext("v") as! YapDatabaseViewTransaction
            for group in [RelNode.collection, "other"] {
                viewTx.iterateKeys(inGroup: group) { collection, key, _, _ in observed.viewContents.append("\(collection)/\(key)") }
            }
            for collection in RelationshipFixture.collections {
                for key in tx.allKeys(inCollection: collection).sorted() { observed.rowsLeft.append("\(collection)/\(key)") }
            }
            observed.edgesLeft = tx.rel.numberOfEdges()
        }
        #expect(try database.verify().isValid)
        return observed
    }

    @Test func aCascadeShowsWhatRemovingItsRowsOneByOneShows() throws {
        let cascade = try run(removingOneByOne: false)
        let oneByOne = try run(removingOneByOne: true)
        #expect(cascade == oneByOne)
        // And what that is: every row of the cascade, each heard before and after it went.
        #expect(cascade.removedKeys.count == Self.cascadeOrder.count)
        #expect(cascade.hookCalls.count == 2 * Self.cascadeOrder.count)
        #expect(cascade.hookCalls.first == "will nodes/p stored=true")
        #expect(cascade.hookCalls[2] == "will nodes/c00 stored=true" && cascade.hookCalls[3] == "did nodes/c00 stored=false")
        #expect(cascade.viewRowChanges.count == Self.cascadeOrder.count)
        #expect(cascade.viewContents == ["nodes/k", "nodes/u"])
        #expect(cascade.rowsLeft == ["nodes/k", "nodes/u"])
        #expect(cascade.edgesLeft == 0)
    }
}
