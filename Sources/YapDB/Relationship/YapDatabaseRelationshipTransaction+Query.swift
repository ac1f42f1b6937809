import Foundation

// The edge queries, spelled as YapDatabase's `YapDatabaseRelationshipTransaction.h` imports
// into Swift (an `UnsafeMutablePointer<ObjCBool>` stop: YapDatabase has no Swift overlay for
// them, so these are the current spellings, not deprecated), each with a Swift-native
// `iterateEdges…` form taking an `inout Bool` stop beside it. A nil name, key or file matches
// any; a nil collection is "". Edges come in key order of the tree the query walks.
extension YapDatabaseRelationshipTransaction {
    // MARK: Enumerate (ObjCBool stop)

    /// Every edge named `name`.
    public func enumerateEdges(withName name: String, using block: (YapDatabaseRelationshipEdge, UnsafeMutablePointer<ObjCBool>) -> Void) {
        enumerate(name: name, source: nil, destination: nil, block)
    }

    /// The edges from the row `sourceKey` in `sourceCollection` (named `name`, when given).
    public func enumerateEdges(withName name: String?, sourceKey: String?, collection sourceCollection: String?,
                               using block: (YapDatabaseRelationshipEdge, UnsafeMutablePointer<ObjCBool>) -> Void) {
        enumerate(name: name, source: Self.node(sourceKey, sourceCollection), destination: nil, block)
    }

    /// The edges to the row `destinationKey` in `destinationCollection` (named `name`, when given).
    public func enumerateEdges(withName name: String?, destinationKey: String?, collection destinationCollection: String?,
                               using block: (YapDatabaseRelationshipEdge, UnsafeMutablePointer<ObjCBool>) -> Void) {
        enumerate(name: name, source: nil, destination: Self.node(destinationKey, destinationCollection).map { .node($0) }, block)
    }

    /// The edges to the file `destinationFileURL` (named `name`, when given).
    public func enumerateEdges(withName name: String?, destinationFileURL: URL?,
                               using block: (YapDatabaseRelationshipEdge, UnsafeMutablePointer<ObjCBool>) -> Void) {
        let file = fileFilter(destinationFileURL, name: name)
        guard !file.matchesNothing else { return }
        enumerate(name: name, source: nil, destination: file.destination, block)
    }

    /// The edges from one row to another (named `name`, when given).
    public func enumerateEdges(withName name: String?, sourceKey: String?, collection sourceCollection: String?,
                               destinationKey: String?, collection destinationCollection: String?,
                               using block: (YapDatabaseRelationshipEdge, UnsafeMutablePointer<ObjCBool>) -> Void) {
        enumerate(name: name, source: Self.node(sourceKey, sourceCollection),
                  destination: Self.node(destinationKey, destinationCollection).map { .node($0) }, block)
    }

    /// The edges from a row to a file (named `name`, when given).
    public func enumerateEdges(withName name: String?, sourceKey: String?, collection sourceCollection: String?,
                               destinationFileURL: URL?,
                               using block: (YapDatabaseRelationshipEdge, UnsafeMutablePointer<ObjCBool>) -> Void) {
        let file = fileFilter(destinationFileURL, name: name)
        guard !file.matchesNothing else { return }
        enumerate(name: name, source: Self.node(sourceKey, sourceCollection), destination: file.destination, block)
    }

    // MARK: Iterate (inout Bool stop; Swift-native)

    /// Every edge named `name`; set `stop` to end early.
    public func iterateEdges(withName name: String, using block: (YapDatabaseRelationshipEdge, inout Bool) -> Void) {
        iterate(name: name, source: nil, destination: nil, block)
    }

    /// The edges from the row `sourceKey` in `sourceCollection` (named `name`, when given).
    public func iterateEdges(withName name: String?, sourceKey: String?, collection sourceCollection: String?,
                             using block: (YapDatabaseRelationshipEdge, inout Bool) -> Void) {
        iterate(name: name, source: Self.node(sourceKey, sourceCollection), destination: nil, block)
    }

    /// The edges to the row `destinationKey` in `destinationCollection` (named `name`, when given).
    public func iterateEdges(withName name: String?, destinationKey: String?, collection destinationCollection: String?,
                             using block: (YapDatabaseRelationshipEdge, inout Bool) -> Void) {
        iterate(name: name, source: nil, destination: Self.node(destinationKey, destinationCollection).map { .node($0) }, block)
    }

    /// The edges to the file `destinationFileURL` (named `name`, when given).
    public func iterateEdges(withName name: String?, destinationFileURL: URL?,
                             using block: (YapDatabaseRelationshipEdge, inout Bool) -> Void) {
        let file = fileFilter(destinationFileURL, name: name)
        guard !file.matchesNothing else { return }
        iterate(name: name, source: nil, destination: file.destination, block)
    }

    /// The edges from one row to another (named `name`, when given).
    public func iterateEdges(withName name: String?, sourceKey: String?, collection sourceCollection: String?,
                             destinationKey: String?, collection destinationCollection: String?,
                             using block: (YapDatabaseRelationshipEdge, inout Bool) -> Void) {
        iterate(name: name, source: Self.node(sourceKey, sourceCollection),
                destination: Self.node(destinationKey, destinationCollection).map { .node($0) }, block)
    }

    /// The edges from a row to a file (named `name`, when given).
    public func iterateEdges(withName name: String?, sourceKey: String?, collection sourceCollection: String?,
                             destinationFileURL: URL?, using block: (YapDatabaseRelationshipEdge, inout Bool) -> Void) {
        let file = fileFilter(destinationFileURL, name: name)
        guard !file.matchesNothing else { return }
        iterate(name: name, source: Self.node(sourceKey, sourceCollection), destination: file.destination, block)
    }

    // MARK: Count

    /// The number of edges named `name`.
    public func edgeCount(withName name: String) -> UInt {
        databaseTransaction.checkValid()
        return countMatches(name: name, source: nil, destination: nil)
    }

    /// The number of edges from the row `sourceKey` in `sourceCollection` (named `name`, when given).
    public func edgeCount(withName name: String?, sourceKey: String?, collection sourceCollection: String?) -> UInt {
        databaseTransaction.checkValid()
        return countMatches(name: name, source: Self.node(sourceKey, sourceCollection), destination: nil)
    }

    /// The number of edges to the row `destinationKey` in `destinationCollection` (named `name`, when given).
    public func edgeCount(withName name: String?, destinationKey: String?, collection destinationCollection: String?) -> UInt {
        databaseTransaction.checkValid()
        return countMatches(name: name, source: nil, destination: Self.node(destinationKey, destinationCollection).map { .node($0) })
    }

    /// The number of edges to the file `destinationFileURL` (named `name`, when given).
    public func edgeCount(withName name: String?, destinationFileURL: URL?) -> UInt {
        databaseTransaction.checkValid()
        let file = fileFilter(destinationFileURL, name: name)
        guard !file.matchesNothing else { return 0 }
        return countMatches(name: name, source: nil, destination: file.destination)
    }

    /// The number of edges from one row to another (named `name`, when given).
    public func edgeCount(withName name: String?, sourceKey: String?, collection sourceCollection: String?,
                          destinationKey: String?, collection destinationCollection: String?) -> UInt {
        databaseTransaction.checkValid()
        return countMatches(name: name, source: Self.node(sourceKey, sourceCollection),
                            destination: Self.node(destinationKey, destinationCollection).map { .node($0) })
    }

    /// The number of edges from a row to a file (named `name`, when given).
    public func edgeCount(withName name: String?, sourceKey: String?, collection sourceCollection: String?,
                          destinationFileURL: URL?) -> UInt {
        databaseTransaction.checkValid()
        let file = fileFilter(destinationFileURL, name: name)
        guard !file.matchesNothing else { return 0 }
        return countMatches(name: name, source: Self.node(sourceKey, sourceCollection), destination: file.destination)
    }
}
