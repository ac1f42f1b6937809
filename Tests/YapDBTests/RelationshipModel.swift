import Foundation
import YapDB

/// A brute-force model of the relationship rules over plain dictionaries, for the seeded
/// model test: the same queue discipline as the extension's flush (edges removed with rules,
/// then ends of new edges, then removed rows, until nothing is left), with edges ordered the
/// way the extension's trees order them, so callbacks and cascades happen in the same order.
struct RelationshipModel {
    struct Pair: Hashable, Comparable {
        var collection: String
        var key: String
        static func < (a: Pair, b: Pair) -> Bool { (a.collection, a.key) < (b.collection, b.key) }
    }

    enum Destination: Hashable {
        case node(Pair)
        case file(String)

        /// The parts in tree order: kind, then collection and key, or the path.
        var parts: [String] {
            switch self {
            case .node(let p): ["1", p.collection, p.key]
            case .file(let path): ["2", path, ""]
            }
        }
    }

    /// An edge's identity.
    struct Edge: Hashable {
        var name: String
        var source: Pair
        var destination: Destination
        var manual: Bool

        var bySourceOrder: [String] { [source.collection, source.key, name] + destination.parts + [manual ? "1" : "0"] }
        var byDestinationOrder: [String] { destination.parts + [name, source.collection, source.key, manual ? "1" : "0"] }
        var destinationNode: Pair? { if case .node(let p) = destination { return p } else { return nil } }
    }

    var rows: [Pair: RelNode] = [:]
    var edges: [Edge: YDB_NodeDeleteRules] = [:]

    static func sorted(_ list: [Edge], _ key: (Edge) -> [String]) -> [Edge] {
        list.sorted { key($0).lexicographicallyPrecedes(key($1)) }
    }

    func edges(from source: Pair) -> [Edge] {
        Self.sorted(edges.keys.filter { $0.source == source }, \.bySourceOrder)
    }

    func edges(to destination: Destination) -> [Edge] {
        Self.sorted(edges.keys.filter { $0.destination == destination }, \.byDestinationOrder)
    }
}

/// One read-write transaction of the model, with the pending work of the extension.
struct RelationshipModelTransaction {
    typealias Pair = RelationshipModel.Pair
    typealias Edge = RelationshipModel.Edge

    var model: RelationshipModel
    var deletedOrder: [Pair] = []
    var deletedCursor = 0
    var deletedSet: Set<Pair> = []
    var checks: [Edge] = []
    var checkCursor = 0
    var pending: [(Edge, YDB_NodeDeleteRules, YDB_NotifyReason)] = []
    var pendingCursor = 0
    var flushing = false
    /// What the commit decides: files to delete and the callbacks made ("id:edge:reason").
    var filesToDelete: [String] = []
    var notifications: [String] = []

    init(_ model: RelationshipModel) { self.model = model }

    func exists(_ p: Pair) -> Bool { model.rows[p] != nil }

    static func edge(_ spec: EdgeSpec, from source: Pair, manual: Bool) -> Edge {
        let destination: RelationshipModel.Destination = spec.file.map { .file($0) }
            ?? .node(Pair(collection: spec.collection ?? "", key: spec.key!))
        return Edge(name: spec.name, source: source, destination: destination, manual: manual)
    }

    // MARK: Operations

    mutating func set(_ node: RelNode, at pair: Pair) {
        model.rows[pair] = node
        rowWritten(pair)
    }

    mutating func rowWritten(_ pair: Pair) {
        deletedSet.remove(pair)
        let node = model.rows[pair]!
        var wanted: [Edge] = []
        var wantedRules: [Edge: YDB_NodeDeleteRules] = [:]
        for spec in node.edges {
            let e = Self.edge(spec, from: pair, manual: false)
            if flushing, let d = e.destinationNode, !exists(d) { continue }
            if wantedRules.updateValue(YDB_NodeDeleteRules(rawValue: spec.rules), forKey: e) == nil { wanted.append(e) }
        }
        let old = model.edges(from: pair).filter { !$0.manual }
        if old.isEmpty && wanted.isEmpty { return }
        for e in old where wantedRules[e] == nil {
            let rules = model.edges.removeValue(forKey: e)!
            pending.append((e, rules, .sourceNodeDeleted))
        }
        for e in wanted {
            let rules = wantedRules[e]!
            if old.contains(e), model.edges[e] == rules { continue }
            store(e, rules)
        }
    }

    mutating func store(_ e: Edge, _ rules: YDB_NodeDeleteRules) {
        if model.edges[e] == rules { return }
        model.edges[e] = rules
        checks.append(e)
    }

    mutating func nodeRemoved(_ pair: Pair) {
        if deletedSet.insert(pair).inserted { deletedOrder.append(pair) }
    }

    mutating func remove(_ pair: Pair) {
        guard exists(pair) else { return }
        nodeRemoved(pair)
        model.rows[pair] = nil
    }

    mutating func removeCollection(_ collection: String) {
        let keys = model.rows.keys.filter { $0.collection == collection }.sorted()
        for pair in keys { nodeRemoved(pair) }
        for pair in keys { model.rows[pair] = nil }
    }

    mutating func removeAll() {
        guard !model.rows.isEmpty else { return }
        for e in RelationshipModel.sorted(model.edges.keys.filter { if case .file = $0.destination { true } else { false } },
                                          \.byDestinationOrder) {
            let rules = model.edges[e]!
            if rules.contains(.deleteDestinationIfSourceDeleted) || rules.contains(.deleteDestinationIfAllSourcesDeleted),
               case .file(let path) = e.destination {
                filesToDelete.append(path)
            }
        }
        model.rows = [:]
        model.edges = [:]
        deletedOrder = []; deletedCursor = 0; deletedSet = []
        checks = []; checkCursor = 0; pending = []; pendingCursor = 0
    }

    mutating func addManual(_ e: Edge, _ rules: YDB_NodeDeleteRules) { store(e, rules) }

    mutating func removeManual(_ e: Edge, reason: YDB_NotifyReason) {
        guard let rules = model.edges.removeValue(forKey: e) else { return }
        if reason != .edgeDeleted { pending.append((e, rules, reason)) }
    }

    // MARK: Flush

    mutating func flush() {
        guard !flushing else { return }
        flushing = true
        while true {
            if pendingCursor < pending.count {
                let (e, rules, reason) = pending[pendingCursor]
                pendingCursor += 1
                if reason == .sourceNodeDeleted { sourceDeleted(e, rules) } else if reason == .destinationNodeDeleted { destinationDeleted(e, rules) }
            } else if checkCursor < checks.count {
                let e = checks[checkCursor]
                checkCursor += 1
                guard let rules = model.edges[e] else { continue }
                if e.manual, !exists(e.source) {
                    model.edges[e] = nil
                    sourceDeleted(e, rules)
                } else if let d = e.destinationNode, !exists(d) {
                    model.edges[e] = nil
                    destinationDeleted(e, rules)
                }
            } else if deletedCursor < deletedOrder.count {
                let node = deletedOrder[deletedCursor]
                deletedCursor += 1
                if deletedSet.contains(node), !exists(node) { processDeleted(node) }
            } else {
                break
            }
        }
        flushing = false
        deletedOrder = []; deletedCursor = 0; deletedSet = []
        checks = []; checkCursor = 0; pending = []; pendingCursor = 0
    }

    mutating func processDeleted(_ node: Pair) {
        let outgoing = model.edges(from: node)
        let incoming = model.edges(to: .node(node)).filter { $0.source != node }
        var rules: [Edge: YDB_NodeDeleteRules] = [:]
        for e in outgoing + incoming { rules[e] = model.edges.removeValue(forKey: e) }
        for e in outgoing { sourceDeleted(e, rules[e]!) }
        for e in incoming { destinationDeleted(e, rules[e]!) }
    }

    mutating func sourceDeleted(_ e: Edge, _ rules: YDB_NodeDeleteRules) {
        let retainGone = rules.contains(.deleteDestinationIfAllSourcesDeleted)
            && !model.edges.keys.contains { $0.destination == e.destination && $0.source != e.source }
        let deletes = rules.contains(.deleteDestinationIfSourceDeleted) || retainGone
        switch e.destination {
        case .node(let d):
            guard exists(d) else { return }
            if rules.contains(.notifyIfSourceDeleted) { notify(d, e, rules, .sourceNodeDeleted, keeps: !deletes) }
            if deletes { deleteRow(d) }
        case .file(let path):
            if deletes { filesToDelete.append(path) }
        }
    }

    mutating func destinationDeleted(_ e: Edge, _ rules: YDB_NodeDeleteRules) {
        guard exists(e.source) else { return }
        let deletes = rules.contains(.deleteSourceIfDestinationDeleted)
            || (rules.contains(.deleteSourceIfAllDestinationsDeleted)
                && !model.edges.keys.contains { $0.source == e.source && $0.destination != e.destination })
        if rules.contains(.notifyIfDestinationDeleted) { notify(e.source, e, rules, .destinationNodeDeleted, keeps: !deletes) }
        if deletes { deleteRow(e.source) }
    }

    mutating func notify(_ pair: Pair, _ e: Edge, _ rules: YDB_NodeDeleteRules, _ reason: YDB_NotifyReason, keeps: Bool) {
        guard var node = model.rows[pair] else { return }
        notifications.append("\(node.id):\(e.name):\(reason.rawValue)")
        guard keeps else { return }
        node.notified += 1
        if node.clearsOnNotify, case .node(let d) = e.destination {
            node.edges.removeAll { $0.key == d.key && $0.collection == d.collection && $0.name == e.name }
        } else if node.clearsOnNotify {
            node.edges.removeAll { $0.key == nil && $0.collection == nil && $0.name == e.name }
        }
        model.rows[pair] = node
        rowWritten(pair)
    }

    mutating func deleteRow(_ pair: Pair) {
        guard exists(pair) else { return }
        nodeRemoved(pair)
        model.rows[pair] = nil
    }
}
