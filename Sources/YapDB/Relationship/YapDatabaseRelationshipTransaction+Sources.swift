import Foundation
import YapDBEngine

// A Swift-native query for the commonest question asked of a relationship — which rows point
// at this one — that hands out the source row itself rather than an edge object per edge.
extension YapDatabaseRelationshipTransaction {
    /// Calls `block` with the source row (key, collection) of each edge to the row
    /// `destinationKey` in `destinationCollection` (named `name`, when given; a nil collection
    /// is ""), in the order `iterateEdges(withName:destinationKey:collection:using:)` gives them,
    /// until it sets `stop`. The same edges as that call (pending changes of a read-write
    /// transaction included, edges of rows it removed hidden), without making a
    /// `YapDatabaseRelationshipEdge` for each: use it when the sources are all you need. A
    /// source with several edges (of different names, or a protocol and a manual edge) to the
    /// row comes once per edge.
    ///
    /// Threading: inside the transaction's block only.
    public func iterateEdgeSources(withName name: String?, destinationKey: String, collection destinationCollection: String?,
                                   using block: (_ sourceKey: String, _ sourceCollection: String, _ stop: inout Bool) -> Void) {
        databaseTransaction.checkValid()
        let destinationPair = CollectionKeyPair(collection: destinationCollection ?? "", key: destinationKey)
        let destinationHidden = !deletedSet.isEmpty && deletedSet.contains(destinationPair)
        guard !destinationHidden else { return }
        reading { state throws(EngineError) in
            try state.forEachSource(to: .node(destinationPair), name: name) { source, _ in
                if !deletedSet.isEmpty, deletedSet.contains(source) { return true }
                var stop = false
                block(source.key, source.collection, &stop)
                return !stop
            }
        }
    }
}
