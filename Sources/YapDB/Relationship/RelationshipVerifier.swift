import Foundation
import YapDBEngine

/// Checks a relationship extension's stored edges against the rows (`YapDatabase.verify()`):
/// the two trees hold the same edges, every edge's source row exists, every destination row
/// exists (the rules removed the others at commit), and each node's protocol edges are among
/// the ones its object gives now (the rules may have removed some since).
struct RelationshipVerifier {
    let relationship: YapDatabaseRelationship
    let state: RelationshipState
    let transaction: YapDatabaseReadTransaction

    func exists(_ pair: CollectionKeyPair) -> Bool {
        transaction.entry(collection: pair.collection, key: pair.key) != nil
    }

    func problems() -> [String] {
        var problems: [String] = []
        do throws(EngineError) {
            try state.validateTrees()
            try state.validateState()
            var bySource: Set<StoredEdge> = [], byDestination: Set<StoredEdge> = []
            var failure: EngineError?
            try state.bySource.forEach { key, value in
                do throws(EngineError) { bySource.insert(try RelationshipState.parseSourceEntry(key, value)) } catch { failure = error }
                return failure == nil
            }
            try state.byDestination.forEach { key, value in
                do throws(EngineError) { byDestination.insert(try RelationshipState.parseDestinationEntry(key, value)) } catch { failure = error }
                return failure == nil
            }
            if let failure { throw failure }
            if bySource != byDestination { problems.append("the edge trees differ (\(bySource.count) by source, \(byDestination.count) by destination)") }
            var protocolEdges: [CollectionKeyPair: Set<StoredEdge>] = [:]
            for edge in bySource {
                if !exists(edge.source) { problems.append("edge \(edge.name) from missing row \(edge.source.collection)/\(edge.source.key)") }
                if let destination = edge.destinationNode, !exists(destination) {
                    problems.append("edge \(edge.name) to missing row \(destination.collection)/\(destination.key)")
                }
                if !edge.isManual { protocolEdges[edge.source, default: []].insert(edge) }
            }
            guard !relationship.storedOptions.disableYapDatabaseRelationshipNodeProtocol else { return problems }
            let helper = YapDatabaseRelationshipTransaction(relationship: relationship, name: "", transaction: transaction)
            for collection in transaction.collectionNames() where relationship.gathersEdges(in: collection) {
                transaction.forEachKey(inCollection: collection) { key, _ in
                    let pair = CollectionKeyPair(collection: collection, key: key)
                    // What the object gives now (duplicates: the last rules). Edges the rules
                    // removed since (a destination deleted) may be missing: stored ⊆ given.
                    var given: [StoredEdge: YDB_NodeDeleteRules] = [:]
                    if let node = transaction.object(forKey: key, inCollection: collection) as? YapDatabaseRelationshipNode {
                        for edge in node.yapDatabaseRelationshipEdges() ?? [] {
                            guard let stored = helper.storedEdge(edge, source: pair, manual: false) else { continue }
                            given[stored.identity] = stored.rules
                        }
                    }
                    for edge in protocolEdges[pair] ?? [] where given[edge.identity] != edge.rules {
                        problems.append("\(collection)/\(key): stored protocol edge \(edge.name) is not one its object gives")
                    }
                    return problems.count < 100
                }
            }
        } catch {
            problems.append("\(error)")
        }
        return problems
    }
}
