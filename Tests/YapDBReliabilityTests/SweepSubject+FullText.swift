import Foundation
import YapDB

/// A full-text index over the workload's rows: each object's first 6 bytes become words of the
/// `body` column ("w" and the byte modulo 8), the metadata's first 3 bytes words of the `meta`
/// column; a row whose object is 3 bytes long sets nothing and is not indexed. Queries are
/// checked against the same words, computed from the recovered rows.
struct SweptFullTextSearch: SweptExtension {
    var name: String { "fts" }

    static func words(_ bytes: [UInt8]?, _ count: Int) -> [String]? {
        bytes.map { $0.prefix(count).map { "w\($0 % 8)" } }
    }

    static func columns(object: [UInt8], metadata: [UInt8]?) -> (body: [String], meta: [String]?)? {
        guard object.count != 3 else { return nil }
        return (words(object, 6) ?? [], words(metadata, 3))
    }

    /// Each query, and whether a row's (body, meta) words match it.
    static let queries: [(String, @Sendable ([String], [String]?) -> Bool)] = [
        ("w1", { body, meta in body.contains("w1") || meta?.contains("w1") == true }),
        ("w2 w3", { body, meta in
            let all = body + (meta ?? [])
            return all.contains("w2") && all.contains("w3")
        }),
        ("meta:w4", { _, meta in meta?.contains("w4") == true }),
        ("\"w5 w6\"", { body, meta in
            [body, meta ?? []].contains { words in words.indices.dropLast().contains { words[$0] == "w5" && words[$0 + 1] == "w6" } }
        }),
        ("w0 NOT w7", { body, meta in
            let all = body + (meta ?? [])
            return all.contains("w0") && !all.contains("w7")
        }),
    ]

    func make() -> YapDatabaseExtension {
        let handler = YapDatabaseFullTextSearchHandler.withRowBlock { _, dict, _, _, object, metadata in
            guard let data = object as? Data,
                  let columns = Self.columns(object: Array(data), metadata: (metadata as? Data).map { Array($0) }) else { return }
            dict["body"] = columns.body.joined(separator: " ")
            if let meta = columns.meta { dict["meta"] = meta.joined(separator: " ") }
        }
        return YapDatabaseFullTextSearch(columnNames: ["body", "meta"], options: nil, handler: handler,
                                         ftsVersion: YapDatabaseFullTextSearchFTS5Version, versionTag: "1")
    }

    func problems(_ transaction: YapDatabaseReadTransaction, rows: Model) -> [String] {
        guard let fts = transaction.ext(name) as? YapDatabaseFullTextSearchTransaction else { return ["not registered"] }
        var problems: [String] = []
        for (text, matches) in Self.queries {
            var want = Set<String>()
            for (collection, keys) in rows.rows {
                for (key, row) in keys {
                    guard let columns = Self.columns(object: row.object, metadata: row.metadata), matches(columns.body, columns.meta) else { continue }
                    want.insert("\(collection)/\(key)")
                }
            }
            var have = Set<String>()
            do {
                try fts.search(text) { collection, key, _ in have.insert("\(collection)/\(key)") }
                if try fts.numberOfMatches(text) != want.count { problems.append("\(text): numberOfMatches differs from \(want.count)") }
            } catch {
                problems.append("\(text): \(error)")
            }
            if have != want {
                problems.append("\(text): \(have.count) rows, rebuilt: \(want.count); only stored \(have.subtracting(want).sorted().prefix(3)), "
                                + "only rebuilt \(want.subtracting(have).sorted().prefix(3))")
            }
        }
        return problems
    }
}
