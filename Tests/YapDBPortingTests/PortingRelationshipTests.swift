import Foundation
import XCTest
import YapDB   // was `import YapDatabase`

// Relationship code written the way OpenArchive's Save and ChatSecure write it against
// YapDatabase: model classes and structs that declare their edges, the full manual-edge
// initializer, `YDB_NodeDeleteRules()`, the extension reached with `ext(_:) as?`, enumeration
// with an `ObjCBool` stop and edge counts.

private let kRelationships = "relationships"

/// OpenArchive-style: an asset owns its file and belongs to a collection.
final class Asset: Codable, YapDatabaseRelationshipNode {
    static let collection = "assets"
    var id: String
    var collectionId: String?
    var filePath: String?

    init(id: String, collectionId: String?, filePath: String?) {
        self.id = id
        self.collectionId = collectionId
        self.filePath = filePath
    }

    func yapDatabaseRelationshipEdges() -> [YapDatabaseRelationshipEdge]? {
        var edges = [YapDatabaseRelationshipEdge]()
        if let filePath, FileManager.default.fileExists(atPath: filePath) {
            edges.append(YapDatabaseRelationshipEdge(name: "file", destinationFileURL: URL(fileURLWithPath: filePath),
                                                     nodeDeleteRules: .deleteDestinationIfSourceDeleted))
        }
        if let collectionId {
            edges.append(YapDatabaseRelationshipEdge(name: "collection", destinationKey: collectionId,
                                                     collection: AssetCollection.collection,
                                                     nodeDeleteRules: .deleteSourceIfDestinationDeleted))
        }
        return edges
    }
}

struct AssetCollection: Codable {
    static let collection = "collections"
    var id: String
}

/// OpenArchive-style: a project hears when its current collection goes and forgets it.
struct Project: Codable, YapDatabaseRelationshipNode {
    static let collection = "projects"
    var id: String
    var currentCollectionId: String?

    func yapDatabaseRelationshipEdges() -> [YapDatabaseRelationshipEdge]? {
        guard let currentCollectionId else { return nil }
        return [YapDatabaseRelationshipEdge(name: "collection", destinationKey: currentCollectionId,
                                            collection: AssetCollection.collection, nodeDeleteRules: .notifyIfDestinationDeleted)]
    }

    func yapDatabaseRelationshipEdgeDeleted(_ edge: YapDatabaseRelationshipEdge, with reason: YDB_NotifyReason) -> Any? {
        switch reason {
        case .destinationNodeDeleted:
            var copy = self
            copy.currentCollectionId = nil
            return copy
        default:
            return nil
        }
    }
}

/// ChatSecure-style: an occupant builds its edges with the full initializer.
final class RoomOccupant: Codable, YapDatabaseRelationshipNode {
    static let collection = "OTRXMPPRoomOccupant"
    var uniqueId: String
    var roomUniqueId: String?
    var buddyUniqueId: String?

    init(uniqueId: String, roomUniqueId: String?, buddyUniqueId: String?) {
        self.uniqueId = uniqueId
        self.roomUniqueId = roomUniqueId
        self.buddyUniqueId = buddyUniqueId
    }

    func yapDatabaseRelationshipEdges() -> [YapDatabaseRelationshipEdge]? {
        var edges: [YapDatabaseRelationshipEdge] = []
        if let roomUniqueId {
            let edge = YapDatabaseRelationshipEdge(name: "OTRRoomOccupantEdgeName", sourceKey: uniqueId,
                                                   collection: RoomOccupant.collection, destinationKey: roomUniqueId,
                                                   collection: "OTRXMPPRoom", nodeDeleteRules: .deleteSourceIfDestinationDeleted)
            edges.append(edge)
        }
        if let buddyUniqueId {
            // Used purely as an index: no rules.
            edges.append(YapDatabaseRelationshipEdge(name: "OTRRoomOccupantBuddyEdgeName", destinationKey: buddyUniqueId,
                                                     collection: "OTRBuddy", nodeDeleteRules: YDB_NodeDeleteRules()))
        }
        return edges
    }
}

struct Room: Codable { var uniqueId: String }
struct Buddy: Codable { var uniqueId: String }

final class PortingRelationshipTests: PortingTestCase {
    var database: YapDatabase!
    var connection: YapDatabaseConnection!

    override func setUpWithError() throws {
        try super.setUpWithError()
        database = YapDatabase(url: directory.appendingPathComponent("app.sqlite"))
        database.registerCodableSerialization(Asset.self, forCollection: Asset.collection)
        database.registerCodableSerialization(AssetCollection.self, forCollection: AssetCollection.collection)
        database.registerCodableSerialization(Project.self, metadata: Date.self, forCollection: Project.collection)
        database.registerCodableSerialization(RoomOccupant.self, forCollection: RoomOccupant.collection)
        database.registerCodableSerialization(Room.self, forCollection: "OTRXMPPRoom")
        database.registerCodableSerialization(Buddy.self, forCollection: "OTRBuddy")
        // ChatSecure registers with a tag, OpenArchive with the bare initializer.
        XCTAssertTrue(database.register(YapDatabaseRelationship(versionTag: "1"), withName: kRelationships))
        connection = database.newConnection()
    }

    override func tearDownWithError() throws {
        connection = nil
        database = nil
        try super.tearDownWithError()
    }

    func testOpenArchiveAssetsFilesAndCollections() throws {
        let file = directory.appendingPathComponent("photo.jpg")
        FileManager.default.createFile(atPath: file.path, contents: Data([1, 2, 3]))
        connection.readWrite { transaction in
            transaction.setObject(AssetCollection(id: "c1"), forKey: "c1", inCollection: AssetCollection.collection)
            transaction.setObject(Asset(id: "a1", collectionId: "c1", filePath: file.path), forKey: "a1", inCollection: Asset.collection)
            transaction.setObject(Project(id: "p1", currentCollectionId: "c1"), forKey: "p1", inCollection: Project.collection,
                                  withMetadata: Date(timeIntervalSince1970: 42))
        }
        connection.read { transaction in
            let count = (transaction.ext(kRelationships) as? YapDatabaseRelationshipTransaction)?
                .edgeCount(withName: "collection", destinationKey: "c1", collection: AssetCollection.collection)
            XCTAssertEqual(count, 2)
        }
        // Deleting the collection deletes its assets (and so the asset's file) and clears the
        // project's reference.
        connection.readWrite { transaction in
            transaction.removeObject(forKey: "c1", inCollection: AssetCollection.collection)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: file.path))
        connection.read { transaction in
            XCTAssertNil(transaction.object(forKey: "a1", inCollection: Asset.collection))
            let project = transaction.object(forKey: "p1", inCollection: Project.collection) as? Project
            XCTAssertNotNil(project)
            XCTAssertNil(project?.currentCollectionId)
            XCTAssertEqual(transaction.metadata(forKey: "p1", inCollection: Project.collection) as? Date, Date(timeIntervalSince1970: 42))
        }
    }

    func testChatSecureOccupantsAndManualEdges() throws {
        connection.readWrite { transaction in
            transaction.setObject(Room(uniqueId: "room"), forKey: "room", inCollection: "OTRXMPPRoom")
            transaction.setObject(Buddy(uniqueId: "buddy"), forKey: "buddy", inCollection: "OTRBuddy")
            for i in 0..<3 {
                transaction.setObject(RoomOccupant(uniqueId: "o\(i)", roomUniqueId: "room", buddyUniqueId: "buddy"),
                                      forKey: "o\(i)", inCollection: RoomOccupant.collection)
            }
            // A manual edge, added the way apps do it.
            let edge = YapDatabaseRelationshipEdge(name: "favorite", sourceKey: "buddy", collection: "OTRBuddy",
                                                   destinationKey: "room", collection: "OTRXMPPRoom",
                                                   nodeDeleteRules: YDB_NodeDeleteRules())
            (transaction.ext(kRelationships) as? YapDatabaseRelationshipTransaction)?.add(edge)
        }
        connection.read { transaction in
            guard let relationships = transaction.ext(kRelationships) as? YapDatabaseRelationshipTransaction else {
                return XCTFail("no relationship transaction")
            }
            var occupants: [String] = []
            relationships.enumerateEdges(withName: "OTRRoomOccupantEdgeName", destinationKey: "room", collection: "OTRXMPPRoom",
                                         using: { (edge, stop) in
                occupants.append(edge.sourceKey)
            })
            XCTAssertEqual(occupants.sorted(), ["o0", "o1", "o2"])
            var first: String?
            relationships.enumerateEdges(withName: "OTRRoomOccupantBuddyEdgeName", destinationKey: "buddy", collection: "OTRBuddy",
                                         using: { (edge, stop) in
                first = edge.sourceKey
                stop.pointee = true
            })
            XCTAssertNotNil(first)
            var manual = false
            relationships.enumerateEdges(withName: nil, sourceKey: "buddy", collection: "OTRBuddy", using: { (edge, stop) in
                manual = edge.isManualEdge
            })
            XCTAssertTrue(manual)
            XCTAssertEqual(relationships.edgeCount(withName: "OTRRoomOccupantBuddyEdgeName"), 3)
            let someEdge = YapDatabaseRelationshipEdge(name: "x", sourceKey: "o0", collection: RoomOccupant.collection,
                                                       destinationKey: "room", collection: "OTRXMPPRoom", nodeDeleteRules: [])
            XCTAssertTrue(relationships.destinationNode(for: someEdge) is Room)
            XCTAssertTrue(relationships.sourceNode(for: someEdge) is RoomOccupant)
        }
        // Leaving the room: the occupants go with it; the buddy stays.
        connection.readWrite { transaction in
            transaction.removeObject(forKey: "room", inCollection: "OTRXMPPRoom")
        }
        connection.read { transaction in
            XCTAssertEqual(transaction.numberOfKeys(inCollection: RoomOccupant.collection), 0)
            XCTAssertNotNil(transaction.object(forKey: "buddy", inCollection: "OTRBuddy"))
            XCTAssertEqual((transaction.ext(kRelationships) as? YapDatabaseRelationshipTransaction)?
                .edgeCount(withName: nil, sourceKey: "buddy", collection: "OTRBuddy"), 0)
        }
    }

    func testRegistrationSpellings() {
        let options = YapDatabaseRelationshipOptions()
        options.disableYapDatabaseRelationshipNodeProtocol = false
        options.allowedCollections = YapWhitelistBlacklist(whitelist: [Asset.collection])
        let relationship = YapDatabaseRelationship(versionTag: "2", options: options)
        XCTAssertEqual(relationship.versionTag, "2")
        XCTAssertTrue(database.register(YapDatabaseRelationship(), withName: "other"))
        let rules: YDB_NodeDeleteRules = [.notifyIfSourceDeleted, .notifyIfDestinationDeleted, .deleteSourceIfDestinationDeleted,
                                          .deleteDestinationIfSourceDeleted, .deleteSourceIfAllDestinationsDeleted,
                                          .deleteDestinationIfAllSourcesDeleted]
        XCTAssertEqual(rules.rawValue, 0x3F)
        let edge = YapDatabaseRelationshipEdge(name: "n", sourceKey: "s", collection: nil,
                                               destinationFileURL: URL(fileURLWithPath: "/tmp/x"), nodeDeleteRules: rules)
        XCTAssertTrue(edge.isManualEdge)
        XCTAssertNil(edge.destinationKey)
        connection.readWrite { transaction in
            (transaction.ext("other") as? YapDatabaseRelationshipTransaction)?.flush()
        }
    }
}
