import Foundation
import YapDB

/// YapDB's side of W14: documents as `String` objects in collection "docs" (stored as their
/// UTF-8 bytes by a registered serializer), relaxed durability (`.normal`, as SQLite's
/// `synchronous=NORMAL`), caches off, and — when `indexed` — a `YapDatabaseFullTextSearch`
/// named "fts" with one column `body` filled from the object, the default tokenizer and
/// `ftsVersion` FTS5. Queries run on one read transaction per batch: `search` for the keys,
/// `searchRanked(limit:)` for bm25, `snippet(forKey:…)` for each of the best rows,
/// `numberOfMatches` for the count.
final class YapFullTextStore: FullTextStore {
    static let collection = "docs"
    let database: YapDatabase
    let writer: YapDatabaseConnection
    let folder: URL

    init(folder: URL, indexed: Bool) throws {
        self.folder = folder
        let options = YapDatabaseOptions()
        options.durability = .normal
        database = try YapDatabase.open(url: folder.appendingPathComponent("fts.yapdb"), options: options)
        database.registerSerializer({ _, _, object in
            guard let text = object as? String else { throw BenchError("not a String") }
            return Data(text.utf8)
        }, forCollection: Self.collection)
        database.registerDeserializer({ _, _, data in String(decoding: data, as: UTF8.self) }, forCollection: Self.collection)
        if indexed {
            let handler = YapDatabaseFullTextSearchHandler.withObjectBlock { _, dict, _, _, object in
                if let text = object as? String { dict["body"] = text }
            }
            guard database.register(YapDatabaseFullTextSearch(columnNames: ["body"], options: nil, handler: handler,
                                                              ftsVersion: YapDatabaseFullTextSearchFTS5Version, versionTag: "1"),
                                    withName: "fts") else { throw BenchError("W14: the full-text index did not register") }
        }
        writer = database.newConnection()
        writer.objectCacheEnabled = false
        writer.metadataCacheEnabled = false
    }

    func load(_ corpus: FullTextCorpus, batch: Int) throws {
        var start = 0
        while start < corpus.documents.count {
            let end = min(start + batch, corpus.documents.count)
            try writer.write { tx in
                for i in start..<end { tx.setObject(corpus.documents[i], forKey: "d\(i)", inCollection: Self.collection) }
            }
            start = end
        }
    }

    private func reading<T>(_ body: (YapDatabaseFullTextSearchTransaction) throws -> T) throws -> T {
        let reader = database.newConnection()
        reader.objectCacheEnabled = false
        reader.metadataCacheEnabled = false
        return try reader.read { tx in
            guard let fts = tx.ext("fts") as? YapDatabaseFullTextSearchTransaction else { throw BenchError("W14: no full-text transaction") }
            return try body(fts)
        }
    }

    func keys(_ query: String, times: Int) throws -> Int {
        try reading { fts in
            var found = 0
            for _ in 0..<times {
                found = 0
                try fts.search(query) { _, key, _ in
                    _ = key
                    found += 1
                }
            }
            return found
        }
    }

    func top(_ query: String, limit: Int, times: Int) throws -> [String] {
        try reading { fts in
            var keys: [String] = []
            for _ in 0..<times {
                keys = []
                try fts.searchRanked(query, limit: limit) { _, key, _, _ in keys.append(key) }
            }
            return keys
        }
    }

    func snippets(_ query: String, limit: Int, times: Int) throws -> Int {
        try reading { fts in
            var length = 0
            for _ in 0..<times {
                length = 0
                var best: [(String, String)] = []
                try fts.searchRanked(query, limit: limit) { collection, key, _, _ in best.append((collection, key)) }
                for (collection, key) in best {
                    length += try fts.snippet(forKey: key, inCollection: collection, matching: query)?.count ?? 0
                }
            }
            return length
        }
    }

    func count(_ query: String, times: Int) throws -> Int {
        try reading { fts in
            var found = 0
            for _ in 0..<times { found = try fts.numberOfMatches(query) }
            return found
        }
    }

    func liveIndexBytes() throws -> Double {
        try reading { fts in
            let stats = try fts.stats()
            return Double(stats.termsBytes + stats.postingsBytes + stats.positionsBytes + stats.documentsBytes)
        }
    }

    func update(_ index: Int, text: String) throws {
        try writer.write { tx in tx.setObject(text, forKey: "d\(index)", inCollection: Self.collection) }
    }

    func close() throws {
        try database.checkpoint()
        try database.close()
    }
}
