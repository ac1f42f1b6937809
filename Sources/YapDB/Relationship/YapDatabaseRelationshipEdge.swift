import Foundation

/// What happens to the node at one end of an edge when the node at the other end is deleted
/// (YapDatabase's `YDB_NodeDeleteRules`; combine them). The rules are bidirectional: an edge
/// lives on its source, but a rule may name either end.
///
/// An empty set, `YDB_NodeDeleteRules()`, makes an edge that only records the link (a cheap
/// index of who points where).
public struct YDB_NodeDeleteRules: OptionSet, Sendable, Hashable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// When the source is deleted, the destination hears of it
    /// (`yapDatabaseRelationshipEdgeDeleted(_:with:)` with `.sourceNodeDeleted`).
    public static let notifyIfSourceDeleted = YDB_NodeDeleteRules(rawValue: 1 << 0)
    /// When the destination is deleted, the source hears of it (`.destinationNodeDeleted`).
    public static let notifyIfDestinationDeleted = YDB_NodeDeleteRules(rawValue: 1 << 1)
    /// When the destination is deleted, the source is deleted too (one-to-one).
    public static let deleteSourceIfDestinationDeleted = YDB_NodeDeleteRules(rawValue: 1 << 2)
    /// When the source is deleted, the destination is deleted too (one-to-one; also a file).
    public static let deleteDestinationIfSourceDeleted = YDB_NodeDeleteRules(rawValue: 1 << 3)
    /// When the destination is deleted and the source has no edge left (of any name), the
    /// source is deleted.
    public static let deleteSourceIfAllDestinationsDeleted = YDB_NodeDeleteRules(rawValue: 1 << 4)
    /// When the source is deleted and no edge (of any name, from any other source) points at
    /// the destination any more, the destination is deleted (a retain count; also a file).
    public static let deleteDestinationIfAllSourcesDeleted = YDB_NodeDeleteRules(rawValue: 1 << 5)
}

/// Why a node hears `yapDatabaseRelationshipEdgeDeleted(_:with:)`, and the processing
/// `remove(_:withProcessing:)` applies (YapDatabase's `YDB_NotifyReason`).
public enum YDB_NotifyReason: Int, Sendable {
    /// The edge alone was removed: no rule runs.
    case edgeDeleted = 0
    /// The edge's source was deleted.
    case sourceNodeDeleted = 1
    /// The edge's destination was deleted.
    case destinationNodeDeleted = 2
}

/// An object stored in the database that declares the edges starting from it (YapDatabase's
/// Swift `YapDatabaseRelationshipNode`; structs conform as well as classes).
///
/// Each time the object is inserted, set or replaced, the relationship extension asks it for its
/// edges; the list replaces the object's previous protocol edges (an edge left out counts as
/// removed by its source being deleted, so its rules run: "set the foreign key to nil and the
/// child goes"). The object is the source of every edge it returns.
public protocol YapDatabaseRelationshipNode {
    /// The edges starting from this object (nil or empty: none).
    func yapDatabaseRelationshipEdges() -> [YapDatabaseRelationshipEdge]?

    /// Called on this node when the node at the other end of `edge` was deleted and the edge
    /// carries the matching notify rule. Return an object to replace this node in the database
    /// (its metadata is kept), or nil to leave it. Called directly, so structs hear it too.
    /// When the same edge also deletes this node, it is still called and what it returns is
    /// ignored.
    func yapDatabaseRelationshipEdgeDeleted(_ edge: YapDatabaseRelationshipEdge, with reason: YDB_NotifyReason) -> Any?
}

extension YapDatabaseRelationshipNode {
    /// Does nothing and returns nil.
    public func yapDatabaseRelationshipEdgeDeleted(_ edge: YapDatabaseRelationshipEdge, with reason: YDB_NotifyReason) -> Any? {
        nil
    }
}

/// A directed link from a source node (a row) to a destination: another row, or a file.
/// Edges returned by a node's `yapDatabaseRelationshipEdges()` are *protocol* edges (their source
/// is that node); edges given to `add(_:)` are *manual* edges (they name their source). The two
/// kinds never replace or remove each other.
///
/// Immutable. Properties of the side an edge does not have are nil (the destination key and
/// collection of a file edge, the destination file of a key edge, the source of a protocol edge
/// before it is stored). Two edges are equal when their name, ends, rules and kind are.
public final class YapDatabaseRelationshipEdge: NSObject, @unchecked Sendable {
    // `@unchecked Sendable`: every stored property is an immutable value.

    /// The edge's name (any string; queries filter by it).
    public let name: String
    /// The source row's key (nil for a protocol edge not yet stored).
    public let sourceKey: String!
    /// The source row's collection ("" for nil).
    public let sourceCollection: String!
    /// The destination row's key (nil for a file edge).
    public let destinationKey: String!
    /// The destination row's collection (nil for a file edge).
    public let destinationCollection: String!
    /// The destination file (nil for an edge to a row).
    public let destinationFileURL: URL!
    /// The delete and notify rules.
    public let nodeDeleteRules: YDB_NodeDeleteRules
    /// Whether the edge was added with `add(_:)` rather than returned by its source node.
    public let isManualEdge: Bool

    init(name: String, sourceKey: String?, sourceCollection: String?, destinationKey: String?,
         destinationCollection: String?, destinationFileURL: URL?, rules: YDB_NodeDeleteRules, isManualEdge: Bool) {
        self.name = name
        self.sourceKey = sourceKey
        self.sourceCollection = sourceCollection
        self.destinationKey = destinationKey
        self.destinationCollection = destinationCollection
        self.destinationFileURL = destinationFileURL
        self.nodeDeleteRules = rules
        self.isManualEdge = isManualEdge
    }

    /// An edge from the node that returns it (a protocol edge) to the row `key` in `collection`
    /// (nil: "").
    public convenience init(name: String, destinationKey key: String, collection: String?, nodeDeleteRules rules: YDB_NodeDeleteRules) {
        self.init(name: name, sourceKey: nil, sourceCollection: nil, destinationKey: key, destinationCollection: collection ?? "",
                  destinationFileURL: nil, rules: rules, isManualEdge: false)
    }

    /// An edge from the node that returns it (a protocol edge) to a file. Only
    /// `.deleteDestinationIfSourceDeleted` and `.deleteDestinationIfAllSourcesDeleted` act on a
    /// file: it is deleted after the commit that deletes its last reason to exist is durable.
    public convenience init(name: String, destinationFileURL: URL, nodeDeleteRules rules: YDB_NodeDeleteRules) {
        self.init(name: name, sourceKey: nil, sourceCollection: nil, destinationKey: nil, destinationCollection: nil,
                  destinationFileURL: destinationFileURL, rules: rules, isManualEdge: false)
    }

    /// A manual edge (for `add(_:)`) from the row `sourceKey` in `sourceCollection` to the row
    /// `destinationKey` in `destinationCollection` (nil collections: "").
    public convenience init(name: String, sourceKey: String, collection sourceCollection: String?, destinationKey: String,
                            collection destinationCollection: String?, nodeDeleteRules rules: YDB_NodeDeleteRules) {
        self.init(name: name, sourceKey: sourceKey, sourceCollection: sourceCollection ?? "", destinationKey: destinationKey,
                  destinationCollection: destinationCollection ?? "", destinationFileURL: nil, rules: rules, isManualEdge: true)
    }

    /// A manual edge (for `add(_:)`) from the row `sourceKey` in `sourceCollection` to a file.
    public convenience init(name: String, sourceKey: String, collection sourceCollection: String?, destinationFileURL: URL,
                            nodeDeleteRules rules: YDB_NodeDeleteRules) {
        self.init(name: name, sourceKey: sourceKey, sourceCollection: sourceCollection ?? "", destinationKey: nil,
                  destinationCollection: nil, destinationFileURL: destinationFileURL, rules: rules, isManualEdge: true)
    }

    /// A copy of the edge (edges are immutable: the same values).
    public func copy(with zone: NSZone? = nil) -> Any { self }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? YapDatabaseRelationshipEdge else { return false }
        return name == other.name && sourceKey == other.sourceKey && sourceCollection == other.sourceCollection
            && destinationKey == other.destinationKey && destinationCollection == other.destinationCollection
            && destinationFileURL == other.destinationFileURL && nodeDeleteRules == other.nodeDeleteRules
            && isManualEdge == other.isManualEdge
    }

    public override var hash: Int {
        var hasher = Hasher()
        hasher.combine(name)
        hasher.combine(sourceKey)
        hasher.combine(destinationKey)
        hasher.combine(destinationFileURL)
        return hasher.finalize()
    }

    public override var description: String {
        let source = sourceKey.map { "\(sourceCollection ?? "")/\($0)" } ?? "(node)"
        let destination = destinationKey.map { "\(destinationCollection ?? "")/\($0)" } ?? destinationFileURL?.path ?? "?"
        return "<YapDatabaseRelationshipEdge \(name): \(source) -> \(destination) rules \(nodeDeleteRules.rawValue)\(isManualEdge ? " manual" : "")>"
    }
}
