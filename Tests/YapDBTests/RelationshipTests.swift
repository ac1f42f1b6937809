import Foundation
import Testing
import YapDB

/// The behaviours of YapDatabase's relationship tests, in YapDB's words: the four protocol rule
/// kinds, manual edges, nested enumeration, edges added and removed in one transaction, notify
/// with delete, and file edges.
@Suite struct RelationshipTests {
    typealias R = YDB_NodeDeleteRules
    let scope = UUID().uuidString

    func node(_ id: String, _ edges: [EdgeSpec] = [], clears: Bool = false) -> RelNode {
        RelNode(id: id, scope: scope, edges: edges, clearsOnNotify: clears)
    }

    func put(_ tx: YapDatabaseReadWriteTransaction, _ n: RelNode, _ collection: String = RelNode.collection) {
        tx.setObject(n, forKey: n.id, inCollection: collection)
    }

    @Test func standardCascadesToChildren() throws {
        let fixture = try RelationshipFixture.make()
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            put(tx, node("p", [.to("c1", "child", .deleteDestinationIfSourceDeleted), .to("c2", "child", .deleteDestinationIfSourceDeleted)]))
            put(tx, node("c1"))
            put(tx, node("c2"))
            put(tx, node("c3"))
            #expect(tx.rel.edgeCount(withName: "child") == 2, "pending edges are visible in the transaction")
        }
        try connection.write { tx in
            #expect(tx.rel.edgeCount(withName: "child", sourceKey: "p", collection: RelNode.collection) == 2)
            tx.removeObject(forKey: "c1", inCollection: RelNode.collection)
            #expect(tx.rel.edgeCount(withName: "child") == 1, "a removed row's edges are hidden at once")
            tx.removeObject(forKey: "p", inCollection: RelNode.collection)
            #expect(tx.rel.edgeCount(withName: "child") == 0)
            #expect(tx.hasObject(forKey: "c2", inCollection: RelNode.collection), "rules run at flush")
            tx.rel.flush()
            #expect(!tx.hasObject(forKey: "c2", inCollection: RelNode.collection))
        }
        connection.read { tx in
            #expect(tx.node("c3") != nil, "an unrelated row stays")
            #expect(tx.numberOfKeys(inCollection: RelNode.collection) == 1)
            #expect(tx.rel.numberOfEdges() == 0)
        }
        #expect(try fixture.database.verify().isValid)
    }

    @Test func aRowRemovedAndWrittenAgainInOneTransactionKeepsOnlyItsNewEdges() throws {
        let fixture = try RelationshipFixture.make()
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            put(tx, node("p", [.to("c1", "child", .deleteDestinationIfSourceDeleted), .to("c2", "child", .deleteDestinationIfSourceDeleted)]))
            put(tx, node("c1"))
            put(tx, node("c2"))
        }
        try connection.write { tx in
            tx.removeObject(forKey: "p", inCollection: RelNode.collection)
            // Written again before the flush: its old edges are still stored and are diffed
            // against the new ones (the one left out runs its rules; the one kept does not).
            put(tx, node("p", [.to("c2", "child", .deleteDestinationIfSourceDeleted)]))
        }
        connection.read { tx in
            #expect(tx.node("c1") == nil, "the edge left out deleted its destination")
            #expect(tx.node("c2") != nil && tx.node("p") != nil)
            #expect(tx.rel.numberOfEdges() == 1)
            #expect(tx.rel.edgeCount(withName: "child", sourceKey: "p", collection: RelNode.collection) == 1)
        }
        #expect(try fixture.database.verify().isValid)
    }

    @Test func droppingAnEdgeCountsAsSourceDeleted() throws {
        let fixture = try RelationshipFixture.make()
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            put(tx, node("p", [.to("c1", "child", .deleteDestinationIfSourceDeleted), .to("c2", "child", .deleteDestinationIfSourceDeleted)]))
            put(tx, node("c1"))
            put(tx, node("c2"))
        }
        try connection.write { tx in put(tx, node("p", [.to("c2", "child", .deleteDestinationIfSourceDeleted)])) }
        connection.read { tx in
            #expect(tx.node("c1") == nil, "the edge left out deleted its destination")
            #expect(tx.node("c2") != nil && tx.node("p") != nil)
        }
        try connection.write { tx in put(tx, node("p")) }
        connection.read { tx in
            #expect(tx.node("c2") == nil)
            #expect(tx.rel.numberOfEdges() == 0)
        }
    }

    @Test func inverseDeletesSourcesWithTheirDestination() throws {
        let fixture = try RelationshipFixture.make()
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            put(tx, node("parent"))
            for i in 0..<3 { put(tx, node("child\(i)", [.to("parent", "parent", .deleteSourceIfDestinationDeleted)])) }
            put(tx, node("other"))
        }
        connection.read { tx in
            #expect(tx.rel.edgeCount(withName: "parent", destinationKey: "parent", collection: RelNode.collection) == 3)
        }
        try connection.write { tx in tx.removeObject(forKey: "parent", inCollection: RelNode.collection) }
        connection.read { tx in
            #expect(tx.allKeys(inCollection: RelNode.collection) == ["other"])
            #expect(tx.rel.numberOfEdges() == 0)
        }
    }

    @Test func retainCountCountsEdgesOfAnyName() throws {
        let fixture = try RelationshipFixture.make()
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            put(tx, node("tag"))
            put(tx, node("a", [.to("tag", "retained", .deleteDestinationIfAllSourcesDeleted)]))
            put(tx, node("b", [.to("tag", "retained", .deleteDestinationIfAllSourcesDeleted)]))
            put(tx, node("c", [.to("tag", "mentions", [])]))
        }
        try connection.write { tx in tx.removeObject(forKey: "a", inCollection: RelNode.collection) }
        connection.read { tx in #expect(tx.node("tag") != nil, "b still retains it") }
        try connection.write { tx in tx.removeObject(forKey: "b", inCollection: RelNode.collection) }
        connection.read { tx in #expect(tx.node("tag") != nil, "c's edge of another name keeps it") }
        try connection.write { tx in tx.removeObject(forKey: "c", inCollection: RelNode.collection) }
        connection.read { tx in #expect(tx.node("tag") != nil, "c's edge has no rule: removing c deletes nothing") }
        // Both retainers removed in one transaction: the second processed finds no edge left.
        try connection.write { tx in
            put(tx, node("x", [.to("tag", "retained", .deleteDestinationIfAllSourcesDeleted)]))
            put(tx, node("y", [.to("tag", "retained", .deleteDestinationIfAllSourcesDeleted)]))
        }
        try connection.write { tx in tx.removeObjects(forKeys: ["x", "y"], inCollection: RelNode.collection) }
        connection.read { tx in #expect(tx.node("tag") == nil) }
    }

    @Test func inverseRetainCountDeletesTheSourceWithItsLastDestination() throws {
        let fixture = try RelationshipFixture.make()
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            put(tx, node("r1"))
            put(tx, node("r2"))
            put(tx, node("x", [.to("r1", "retainer", .deleteSourceIfAllDestinationsDeleted),
                               .to("r2", "retainer", .deleteSourceIfAllDestinationsDeleted)]))
        }
        try connection.write { tx in tx.removeObject(forKey: "r1", inCollection: RelNode.collection) }
        connection.read { tx in #expect(tx.node("x") != nil) }
        try connection.write { tx in tx.removeObject(forKey: "r2", inCollection: RelNode.collection) }
        connection.read { tx in #expect(tx.node("x") == nil) }
    }

    @Test func manualEdgeRulesRunLikeProtocolOnes() throws {
        let fixture = try RelationshipFixture.make()
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            put(tx, node("s"))
            put(tx, node("d"))
            tx.rel.add(YapDatabaseRelationshipEdge(name: "m", sourceKey: "s", collection: RelNode.collection, destinationKey: "d",
                                                   collection: RelNode.collection, nodeDeleteRules: .deleteDestinationIfSourceDeleted))
        }
        connection.read { tx in
            var seen: [YapDatabaseRelationshipEdge] = []
            tx.rel.enumerateEdges(withName: "m") { edge, _ in seen.append(edge) }
            #expect(seen.count == 1 && seen[0].isManualEdge && seen[0].sourceKey == "s" && seen[0].destinationKey == "d")
        }
        try connection.write { tx in tx.removeObject(forKey: "s", inCollection: RelNode.collection) }
        connection.read { tx in #expect(tx.node("d") == nil) }
    }

    @Test func manualEdgeAddedTwiceIsReplacedAndRemovedWithoutProcessing() throws {
        let fixture = try RelationshipFixture.make()
        let connection = fixture.database.newConnection()
        let edge = { (rules: R) in
            YapDatabaseRelationshipEdge(name: "m", sourceKey: "s", collection: nil, destinationKey: "d", collection: nil, nodeDeleteRules: rules)
        }
        try connection.write { tx in
            tx.setObject(node("s"), forKey: "s", inCollection: nil)
            tx.setObject(node("d"), forKey: "d", inCollection: nil)
            tx.rel.add(edge([]))
            tx.rel.add(edge(.deleteDestinationIfSourceDeleted))
        }
        connection.read { tx in
            #expect(tx.rel.edgeCount(withName: "m", sourceKey: "s", collection: nil, destinationKey: "d", collection: nil) == 1)
            var rules: R = []
            tx.rel.enumerateEdges(withName: nil, sourceKey: "s", collection: nil) { e, _ in rules = e.nodeDeleteRules }
            #expect(rules == .deleteDestinationIfSourceDeleted, "the second add replaced the rules")
        }
        try connection.write { tx in tx.rel.remove(edge([]), withProcessing: .edgeDeleted) }
        connection.read { tx in
            #expect(tx.rel.edgeCount(withName: "m") == 0)
            #expect(tx.hasObject(forKey: "d", inCollection: nil) && tx.hasObject(forKey: "s", inCollection: nil))
        }
    }

    @Test func manualRemovalWithProcessingRunsTheRules() throws {
        let fixture = try RelationshipFixture.make()
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            for id in ["s", "d", "s2", "d2"] { put(tx, node(id)) }
            tx.rel.add(YapDatabaseRelationshipEdge(name: "m", sourceKey: "s", collection: RelNode.collection, destinationKey: "d",
                                                   collection: RelNode.collection, nodeDeleteRules: .deleteDestinationIfSourceDeleted))
            tx.rel.add(YapDatabaseRelationshipEdge(name: "m", sourceKey: "s2", collection: RelNode.collection, destinationKey: "d2",
                                                   collection: RelNode.collection, nodeDeleteRules: .deleteSourceIfDestinationDeleted))
        }
        try connection.write { tx in
            tx.rel.removeEdge(withName: "m", sourceKey: "s", collection: RelNode.collection, destinationKey: "d",
                              collection: RelNode.collection, withProcessing: .sourceNodeDeleted)
            tx.rel.removeEdge(withName: "m", sourceKey: "s2", collection: RelNode.collection, destinationKey: "d2",
                              collection: RelNode.collection, withProcessing: .destinationNodeDeleted)
        }
        connection.read { tx in
            #expect(tx.allKeys(inCollection: RelNode.collection).sorted() == ["d2", "s"],
                    "the rules ran as if the named node had gone; that node stays")
        }
    }

    @Test func manualEdgeToAMissingRowLastsUntilCommit() throws {
        let fixture = try RelationshipFixture.make()
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            put(tx, node("s"))
            tx.rel.add(YapDatabaseRelationshipEdge(name: "m", sourceKey: "s", collection: RelNode.collection, destinationKey: "ghost",
                                                   collection: RelNode.collection, nodeDeleteRules: []))
            #expect(tx.rel.edgeCount(withName: "m") == 1)
        }
        connection.read { tx in
            #expect(tx.rel.edgeCount(withName: "m") == 0)
            #expect(tx.node("s") != nil, "no rule: the source stays")
        }
    }

    @Test func edgeToAMissingDestinationDeletesTheSourceWhenItsRuleSaysSo() throws {
        let fixture = try RelationshipFixture.make()
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            // The destination is written later in the same transaction: it exists at commit.
            put(tx, node("early", [.to("late", "parent", .deleteSourceIfDestinationDeleted)]))
            put(tx, node("late"))
            // This destination is never written: the source goes at commit.
            put(tx, node("orphan", [.to("never", "parent", .deleteSourceIfDestinationDeleted)]))
        }
        connection.read { tx in
            #expect(tx.node("early") != nil)
            #expect(tx.node("orphan") == nil)
        }
    }

    @Test func nestedEnumeration() throws {
        let fixture = try RelationshipFixture.make()
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            put(tx, node("sport", [.to("t1", "team", []), .to("t2", "team", [])]))
            put(tx, node("t1", [.to("p1", "player", []), .to("p2", "player", [])]))
            put(tx, node("t2", [.to("p3", "player", []), .to("p4", "player", [])]))
            for p in ["p1", "p2", "p3", "p4"] { put(tx, node(p)) }
        }
        connection.read { tx in
            var players = 0
            tx.rel.enumerateEdges(withName: "team", sourceKey: "sport", collection: RelNode.collection) { team, _ in
                tx.rel.enumerateEdges(withName: "player", sourceKey: team.destinationKey, collection: team.destinationCollection) { _, _ in
                    players += 1
                }
            }
            #expect(players == 4)
            var stopped = 0
            tx.rel.iterateEdges(withName: "player") { _, stop in
                stopped += 1
                stop = true
            }
            #expect(stopped == 1)
        }
    }

    @Test func edgeAddedAndRemovedInOneTransaction() throws {
        let fixture = try RelationshipFixture.make()
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            put(tx, node("a"))
            put(tx, node("b"))
            let edge = YapDatabaseRelationshipEdge(name: "m", sourceKey: "a", collection: RelNode.collection, destinationKey: "b",
                                                   collection: RelNode.collection, nodeDeleteRules: .deleteDestinationIfSourceDeleted)
            tx.rel.add(edge)
            tx.rel.remove(edge, withProcessing: .edgeDeleted)
            tx.rel.add(edge)
            tx.removeObject(forKey: "a", inCollection: RelNode.collection)
        }
        connection.read { tx in
            #expect(tx.rel.numberOfEdges() == 0)
            #expect(tx.node("b") == nil, "the edge added again deleted b with a")
        }
    }

    @Test func deleteAndNotifyCallsTheNodeOnce() throws {
        let fixture = try RelationshipFixture.make()
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            put(tx, node("parent", [.to("child", "child", [.deleteDestinationIfSourceDeleted, .notifyIfSourceDeleted])]))
            put(tx, node("child"))
        }
        _ = NotifyLog.take(scope)
        try connection.write { tx in tx.removeObject(forKey: "parent", inCollection: RelNode.collection) }
        #expect(NotifyLog.take(scope) == ["child:child:1"])
        connection.read { tx in #expect(tx.node("child") == nil) }
    }

    @Test func notifyReachesStructsAndItsResultReplacesTheNode() throws {
        let fixture = try RelationshipFixture.make()
        let connection = fixture.database.newConnection()
        fixture.database.registerCodableSerialization(RelNode.self, metadata: String.self, forCollection: "more")
        try connection.write { tx in
            tx.setObject(node("project", [.to("collection", in: "other", "collection", .notifyIfDestinationDeleted)], clears: true),
                         forKey: "project", inCollection: "more", withMetadata: "kept")
            put(tx, node("collection"), "other")
        }
        try connection.write { tx in tx.removeObject(forKey: "collection", inCollection: "other") }
        #expect(NotifyLog.take(scope) == ["project:collection:2"])
        connection.read { tx in
            let project = tx.node("project", "more")
            #expect(project?.notified == 1 && project?.edges.isEmpty == true, "the returned copy replaced the node")
            #expect(tx.metadata(forKey: "project", inCollection: "more") as? String == "kept")
        }
        #expect(try fixture.database.verify().isValid)
    }

    @Test func fileEdgesDeleteFilesOnlyAfterACommitAndOnlyAsTheirRulesSay() throws {
        let fixture = try RelationshipFixture.make()
        let folder = fixture.directory.file("files")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        func file(_ name: String) -> String {
            let path = folder + "/" + name
            FileManager.default.createFile(atPath: path, contents: Data(name.utf8))
            return path
        }
        let own = file("own"), shared = file("shared"), kept = file("kept")
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            put(tx, node("a", [.file(own, "file", .deleteDestinationIfSourceDeleted), .file(shared, "shared", .deleteDestinationIfAllSourcesDeleted),
                               .file(kept, "kept", [])]))
            put(tx, node("b", [.file(shared, "shared", .deleteDestinationIfAllSourcesDeleted)]))
        }
        connection.read { tx in
            #expect(tx.rel.edgeCount(withName: nil, destinationFileURL: URL(fileURLWithPath: shared)) == 2)
            var url: URL?
            tx.rel.enumerateEdges(withName: "file", sourceKey: "a", collection: RelNode.collection, destinationFileURL: nil) { e, _ in
                url = e.destinationFileURL
            }
            #expect(url?.path == URL(fileURLWithPath: own).path)
        }
        // A rollback deletes nothing.
        try connection.write { tx in
            tx.removeObject(forKey: "a", inCollection: RelNode.collection)
            tx.rel.flush()
            #expect(FileManager.default.fileExists(atPath: own), "never before the commit")
            tx.rollback()
        }
        #expect(FileManager.default.fileExists(atPath: own))
        try connection.write { tx in tx.removeObject(forKey: "a", inCollection: RelNode.collection) }
        #expect(!FileManager.default.fileExists(atPath: own))
        #expect(FileManager.default.fileExists(atPath: shared), "b still holds it")
        #expect(FileManager.default.fileExists(atPath: kept), "no rule, no deletion")
        try connection.write { tx in tx.removeObject(forKey: "b", inCollection: RelNode.collection) }
        #expect(!FileManager.default.fileExists(atPath: shared))
        #expect(FileManager.default.fileExists(atPath: kept))
    }

    @Test func removeAllDeletesFilesOnlyAsTheirRulesSay() throws {
        let fixture = try RelationshipFixture.make()
        let folder = fixture.directory.file("files")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let owned = folder + "/owned", kept = folder + "/kept"
        FileManager.default.createFile(atPath: owned, contents: Data())
        FileManager.default.createFile(atPath: kept, contents: Data())
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            put(tx, node("a", [.file(owned, "f", .deleteDestinationIfAllSourcesDeleted), .file(kept, "f", [.notifyIfSourceDeleted])]))
        }
        try connection.write { tx in tx.removeAllObjectsInAllCollections() }
        #expect(!FileManager.default.fileExists(atPath: owned))
        #expect(FileManager.default.fileExists(atPath: kept))
        connection.read { tx in #expect(tx.rel.numberOfEdges() == 0) }
    }

    @Test func removeAllInCollectionRunsEachRowsRules() throws {
        let fixture = try RelationshipFixture.make()
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            put(tx, node("p1", [.to("c1", "child", .deleteDestinationIfSourceDeleted)]), "other")
            put(tx, node("p2", [.to("c2", "child", .deleteDestinationIfSourceDeleted)]), "other")
            put(tx, node("c1"))
            put(tx, node("c2"))
            put(tx, node("c3"))
        }
        try connection.write { tx in tx.removeAllObjects(inCollection: "other") }
        connection.read { tx in #expect(tx.allKeys(inCollection: RelNode.collection) == ["c3"]) }
    }

    @Test func allowedCollectionsAndDisabledProtocol() throws {
        let options = YapDatabaseRelationshipOptions()
        options.allowedCollections = YapWhitelistBlacklist(whitelist: [RelNode.collection])
        let fixture = try RelationshipFixture.make(options: options)
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            put(tx, node("p", [.to("c", "child", .deleteDestinationIfSourceDeleted)]), "other")
            put(tx, node("c"))
            tx.rel.add(YapDatabaseRelationshipEdge(name: "m", sourceKey: "p", collection: "other", destinationKey: "c",
                                                   collection: RelNode.collection, nodeDeleteRules: .deleteDestinationIfSourceDeleted))
        }
        connection.read { tx in #expect(tx.rel.edgeCount(withName: "child") == 0 && tx.rel.edgeCount(withName: "m") == 1) }
        try connection.write { tx in tx.removeObject(forKey: "p", inCollection: "other") }
        connection.read { tx in #expect(tx.node("c") == nil, "removals in any collection run the rules of manual edges") }

        let disabled = YapDatabaseRelationshipOptions()
        disabled.disableYapDatabaseRelationshipNodeProtocol = true
        let second = try RelationshipFixture.make(options: disabled)
        try second.database.newConnection().write { tx in
            put(tx, node("p", [.to("c", "child", .deleteDestinationIfSourceDeleted)]))
            put(tx, node("c"))
        }
        second.database.newConnection().read { tx in #expect(tx.rel.numberOfEdges() == 0) }
    }

    @Test func edgesSurviveReopenAndANewTagRegathersProtocolEdges() throws {
        let fixture = try DatabaseFixture(configure: RelationshipFixture.configure)
        // Rows first, extension later: registration gathers their edges.
        try fixture.database.newConnection().write { tx in
            put(tx, node("p", [.to("c", "child", .deleteDestinationIfSourceDeleted)]))
            put(tx, node("c"))
            put(tx, node("x"))
        }
        #expect(fixture.database.register(YapDatabaseRelationship(versionTag: "1"), withName: "relationships"))
        try fixture.database.newConnection().write { tx in
            tx.rel.add(YapDatabaseRelationshipEdge(name: "m", sourceKey: "x", collection: RelNode.collection, destinationKey: "c",
                                                   collection: RelNode.collection, nodeDeleteRules: []))
        }
        try fixture.reopen(configure: RelationshipFixture.configure)
        #expect(fixture.database.register(YapDatabaseRelationship(versionTag: "1"), withName: "relationships"))
        fixture.database.newConnection().read { tx in
            #expect(tx.rel.edgeCount(withName: "child") == 1 && tx.rel.edgeCount(withName: "m") == 1)
        }
        #expect(try fixture.database.verify().isValid)
        try fixture.reopen(configure: RelationshipFixture.configure)
        #expect(fixture.database.register(YapDatabaseRelationship(versionTag: "2"), withName: "relationships"))
        fixture.database.newConnection().read { tx in
            #expect(tx.rel.edgeCount(withName: "child") == 1, "protocol edges gathered again")
            #expect(tx.rel.edgeCount(withName: "m") == 1, "manual edges kept")
        }
        try fixture.database.newConnection().write { tx in tx.removeObject(forKey: "p", inCollection: RelNode.collection) }
        fixture.database.newConnection().read { tx in #expect(tx.node("c") == nil) }
    }

    @Test func anOlderSnapshotKeepsItsEdges() throws {
        let fixture = try RelationshipFixture.make()
        let writer = fixture.database.newConnection(), reader = fixture.database.newConnection()
        try writer.write { tx in
            put(tx, node("p", [.to("c", "child", .deleteDestinationIfSourceDeleted)]))
            put(tx, node("c"))
        }
        _ = reader.beginLongLivedReadTransaction()
        try writer.write { tx in tx.removeObject(forKey: "p", inCollection: RelNode.collection) }
        reader.read { tx in
            #expect(tx.rel.edgeCount(withName: "child") == 1)
            #expect(tx.node("c") != nil)
        }
        _ = reader.endLongLivedReadTransaction()
        reader.read { tx in #expect(tx.rel.edgeCount(withName: "child") == 0 && tx.node("c") == nil) }
    }

    @Test func cascadedRemovalsReachTheChangeset() throws {
        let fixture = try RelationshipFixture.make()
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            put(tx, node("a", [.to("b", "next", .deleteDestinationIfSourceDeleted)]))
            put(tx, node("b", [.to("c", "next", .deleteDestinationIfSourceDeleted)]))
            put(tx, node("c"))
        }
        let recorder = NotificationRecorder(fixture.database)
        try connection.write { tx in tx.removeObject(forKey: "a", inCollection: RelNode.collection) }
        let removed = recorder.notifications.last?.userInfo?["removedKeys"] as? Set<YapCollectionKey>
        #expect(removed == Set(["a", "b", "c"].map { YapCollectionKey(collection: RelNode.collection, key: $0) }),
                "the whole cascade, in one commit")
    }
}
