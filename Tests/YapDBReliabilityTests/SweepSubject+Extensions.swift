import Foundation
import YapDB

/// A view over the workload's rows: grouped by whether the row has metadata and by its
/// object's first byte (a first byte divisible by 5 leaves the row out), sorted by object size,
/// then collection and key. Metadata updates move rows between groups; object writes move them
/// within one.
struct SweptView: SweptExtension {
    var name: String { "view" }

    static func group(object: Data?, metadata: Data?) -> String? {
        guard let first = object?.first, first % 5 != 0 else { return nil }
        return (metadata == nil ? "plain" : "meta") + (first % 2 == 0 ? "-even" : "-odd")
    }

    static func order(_ a: (size: Int, collection: String, key: String), _ b: (size: Int, collection: String, key: String)) -> ComparisonResult {
        if a.size != b.size { return a.size < b.size ? .orderedAscending : .orderedDescending }
        if a.collection != b.collection { return a.collection < b.collection ? .orderedAscending : .orderedDescending }
        if a.key != b.key { return a.key < b.key ? .orderedAscending : .orderedDescending }
        return .orderedSame
    }

    func make() -> YapDatabaseExtension {
        let grouping = YapDatabaseViewGrouping.withRowBlock { _, _, _, object, metadata in
            Self.group(object: object as? Data, metadata: metadata as? Data)
        }
        let sorting = YapDatabaseViewSorting.withRowBlock { _, _, c1, k1, o1, _, c2, k2, o2, _ in
            Self.order(((o1 as? Data)?.count ?? 0, c1, k1), ((o2 as? Data)?.count ?? 0, c2, k2))
        }
        return YapDatabaseAutoView(grouping: grouping, sorting: sorting, versionTag: "1")
    }

    func problems(_ transaction: YapDatabaseReadTransaction, rows: Model) -> [String] {
        guard let view = transaction.ext(name) as? YapDatabaseViewTransaction else { return ["not registered"] }
        _ = view.checkIndexInvariants()
        var expected: [String: [(size: Int, collection: String, key: String)]] = [:]
        for (collection, keys) in rows.rows {
            for (key, row) in keys {
                guard let group = Self.group(object: Data(row.object), metadata: row.metadata.map { Data($0) }) else { continue }
                expected[group, default: []].append((row.object.count, collection, key))
            }
        }
        var problems: [String] = []
        let groups = Set(view.allGroups())
        if groups != Set(expected.keys) { problems.append("groups \(groups.sorted()), rebuilt from the rows \(expected.keys.sorted())") }
        for (group, items) in expected {
            let want = items.sorted { Self.order($0, $1) == .orderedAscending }.map { "\($0.collection)/\($0.key)" }
            var have: [String] = []
            view.iterateKeys(inGroup: group) { collection, key, _, _ in have.append("\(collection)/\(key)") }
            if have != want { problems.append("group \(group): \(have.count) rows \(have.prefix(4)), rebuilt: \(want.count) rows \(want.prefix(4))") }
        }
        if view.numberOfItemsInAllGroups() != UInt(expected.values.reduce(0) { $0 + $1.count }) {
            problems.append("numberOfItemsInAllGroups \(view.numberOfItemsInAllGroups())")
        }
        return problems
    }
}

/// A secondary index over the workload's rows (collection "logs" not allowed; a row whose
/// object is 2 bytes long writes no values and is not indexed): its object's size and first
/// byte, and its metadata's size (NULL without metadata).
struct SweptSecondaryIndex: SweptExtension {
    var name: String { "index" }

    /// Each query, and which rows (object, metadata) it must match.
    static let queries: [(String, @Sendable ([UInt8], [UInt8]?) -> Bool)] = [
        ("WHERE size >= 0", { _, _ in true }),
        ("WHERE first < 100", { object, _ in object[0] < 100 }),
        ("WHERE meta >= 50", { _, metadata in (metadata?.count ?? -1) >= 50 }),
        ("WHERE size > 1000 AND first >= 64", { object, _ in object.count > 1000 && object[0] >= 64 }),
    ]

    static func isIndexed(collection: String, object: [UInt8]) -> Bool {
        collection != "logs" && !object.isEmpty && object.count != 2
    }

    func make() -> YapDatabaseExtension {
        let setup = YapDatabaseSecondaryIndexSetup()
        setup.addColumn("size", with: .integer)
        setup.addColumn("first", with: .integer)
        setup.addColumn("meta", with: .integer)
        let handler = YapDatabaseSecondaryIndexHandler.withRowBlock { _, dict, _, _, object, metadata in
            guard let data = object as? Data, let first = data.first, data.count != 2 else { return }
            dict["size"] = data.count
            dict["first"] = Int(first)
            if let metadata = metadata as? Data { dict["meta"] = metadata.count }
        }
        let options = YapDatabaseSecondaryIndexOptions()
        options.allowedCollections = YapWhitelistBlacklist(blacklist: ["logs"])
        return YapDatabaseSecondaryIndex(setup: setup, handler: handler, versionTag: "1", options: options)
    }

    func problems(_ transaction: YapDatabaseReadTransaction, rows: Model) -> [String] {
        guard let index = transaction.ext(name) as? YapDatabaseSecondaryIndexTransaction else { return ["not registered"] }
        var problems: [String] = []
        for (text, matches) in Self.queries {
            var want = Set<String>()
            for (collection, keys) in rows.rows {
                for (key, row) in keys where Self.isIndexed(collection: collection, object: row.object) && matches(row.object, row.metadata) {
                    want.insert("\(collection)/\(key)")
                }
            }
            var have = Set<String>()
            let ran = index.iterateKeys(matching: YapDatabaseQuery(string: text, parameters: [])) { collection, key, _ in
                have.insert("\(collection)/\(key)")
            }
            if !ran { problems.append("\(text) did not run") }
            if have != want {
                problems.append("\(text): \(have.count) rows, rebuilt: \(want.count); only stored \(have.subtracting(want).sorted().prefix(3)), "
                                + "only rebuilt \(want.subtracting(have).sorted().prefix(3))")
            }
            if index.numberOfRows(matching: YapDatabaseQuery(string: text, parameters: [])) != UInt(want.count) {
                problems.append("\(text): numberOfRows differs from \(want.count)")
            }
        }
        return problems
    }
}
