import Foundation
import Synchronization
import Testing
import YapDB

/// One edge a test node declares: to a row (collection, key) or to a file path, with rules.
struct EdgeSpec: Codable, Hashable, Sendable {
    var name: String
    var collection: String?
    var key: String?
    var file: String?
    var rules: UInt16

    static func to(_ key: String, in collection: String = RelNode.collection, _ name: String, _ rules: YDB_NodeDeleteRules) -> EdgeSpec {
        EdgeSpec(name: name, collection: collection, key: key, file: nil, rules: rules.rawValue)
    }

    static func file(_ path: String, _ name: String, _ rules: YDB_NodeDeleteRules) -> EdgeSpec {
        EdgeSpec(name: name, collection: nil, key: nil, file: path, rules: rules.rawValue)
    }

    var edge: YapDatabaseRelationshipEdge {
        if let file {
            return YapDatabaseRelationshipEdge(name: name, destinationFileURL: URL(fileURLWithPath: file),
                                               nodeDeleteRules: YDB_NodeDeleteRules(rawValue: rules))
        }
        return YapDatabaseRelationshipEdge(name: name, destinationKey: key!, collection: collection,
                                           nodeDeleteRules: YDB_NodeDeleteRules(rawValue: rules))
    }
}

/// The callbacks nodes received, by the test scope a node names (tests run in parallel).
enum NotifyLog {
    static let entries = Mutex<[String: [String]]>([:])

    static func record(_ scope: String, _ entry: String) {
        entries.withLock { $0[scope, default: []].append(entry) }
    }

    static func take(_ scope: String) -> [String] {
        entries.withLock { $0.removeValue(forKey: scope) ?? [] }
    }
}

/// A struct node (structs conform to `YapDatabaseRelationshipNode`): its edges are data. Its
/// callback logs "id:edge name:reason" under `scope`, and returns a copy with `notified` + 1
/// and, when `clearsOnNotify`, without the edges to the node that went.
struct RelNode: Codable, Equatable, Sendable, YapDatabaseRelationshipNode {
    static let collection = "nodes"

    var id: String
    var scope: String
    var edges: [EdgeSpec] = []
    var clearsOnNotify = false
    var notified = 0

    func yapDatabaseRelationshipEdges() -> [YapDatabaseRelationshipEdge]? { edges.isEmpty ? nil : edges.map(\.edge) }

    func yapDatabaseRelationshipEdgeDeleted(_ edge: YapDatabaseRelationshipEdge, with reason: YDB_NotifyReason) -> Any? {
        NotifyLog.record(scope, "\(id):\(edge.name):\(reason.rawValue)")
        var copy = self
        copy.notified += 1
        if clearsOnNotify {
            copy.edges.removeAll { $0.key == edge.destinationKey && $0.collection == edge.destinationCollection && $0.name == edge.name }
        }
        return copy
    }
}

/// A database with a relationship extension named "relationships" and `RelNode` serialization
/// in the collections the tests use.
enum RelationshipFixture {
    static let collections = [RelNode.collection, "other", "more"]

    static func configure(_ database: YapDatabase) {
        for collection in collections { database.registerCodableSerialization(RelNode.self, forCollection: collection) }
    }

    static func make(versionTag: String = "1", options: YapDatabaseRelationshipOptions? = nil) throws -> DatabaseFixture {
        let fixture = try DatabaseFixture(configure: configure)
        #expect(fixture.database.register(YapDatabaseRelationship(versionTag: versionTag, options: options), withName: "relationships"))
        return fixture
    }
}

extension YapDatabaseReadTransaction {
    var rel: YapDatabaseRelationshipTransaction { ext("relationships") as! YapDatabaseRelationshipTransaction }

    func node(_ key: String, _ collection: String = RelNode.collection) -> RelNode? {
        object(forKey: key, inCollection: collection) as? RelNode
    }
}

