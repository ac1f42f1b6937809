import Foundation
import YapDB
import YapDBFullText

/// A full-text index over the workload's rows, two columns: `title` holds words picked by a
/// hash of the row's object, `body` words picked by a hash of its metadata (no metadata: no
/// body), so metadata updates re-index a row. A row whose object is 2 bytes long
/// writes no text and is not indexed (an update to that size takes it out). Some words carry
/// diacritics and capitals, so the default tokenizer's folding is on the crash path too.
///
/// After a recovery, each query's rows and count, and the bm25 top-k (scores in order, each
/// row's score), must equal what `FTSMatcher` and `FTSRanking` give over the recovered rows
/// tokenized afresh: the index rebuilt from nothing, evaluated by brute force.
struct SweptFullText: SweptExtension {
    var name: String { "fts" }

    static let columns = ["title", "body"]
    static let words = ["apple", "apricot", "Bandit", "cherry", "Delta", "Résumé", "echo", "naïve"]

    /// Queries whose matching rows (and `numberOfMatches`) are checked: a term, a prefix, a
    /// phrase, a column filter (matching a folded word), a boolean mix, a first-token match.
    static let queries = ["apple", "ban*", "\"cherry delta\"", "body:resume", "(apple OR naive) NOT echo", "title:^echo"]

    /// bm25 queries, their column weights and k: a single term (the path that skips blocks) and
    /// a prefix OR (the general path).
    static let ranked: [(query: String, weights: [Double], limit: Int)] = [
        ("echo", [2, 1], 5), ("apr* OR naive", [1, 0.5], 4),
    ]

    /// The row's text per column, as the handler writes it (nil: the row writes nothing). The
    /// words are picked by a hash of the bytes (the workload's compressible values share their
    /// first bytes), so each word is in about a quarter of the rows and bm25's idf stays positive;
    /// one title in three holds the phrase "cherry Delta".
    static func texts(object: [UInt8], metadata: [UInt8]?) -> [String?]? {
        guard !object.isEmpty, object.count != 2 else { return nil }
        func hash(_ bytes: [UInt8]) -> UInt64 {
            var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(bytes.count)
            for byte in bytes.prefix(64) { h = (h ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return h
        }
        func phrase(_ h: UInt64) -> [String] {
            (0..<Int(1 + h % 4)).map { words[Int((h >> (8 + 4 * UInt64($0))) % UInt64(words.count))] }
        }
        let h = hash(object)
        var title = phrase(h)
        if (h >> 50) % 3 == 0 { title.insert(contentsOf: ["cherry", "Delta"], at: Int(h >> 60) % (title.count + 1)) }
        let body = metadata.map { phrase(hash($0)).joined(separator: " ") }
        return [title.joined(separator: " "), body]
    }

    func make() -> YapDatabaseExtension {
        let handler = YapDatabaseFullTextSearchHandler.withRowBlock { _, dict, _, _, object, metadata in
            guard let data = object as? Data,
                  let texts = Self.texts(object: [UInt8](data), metadata: (metadata as? Data).map { [UInt8]($0) }) else { return }
            for (column, text) in zip(Self.columns, texts) { if let text { dict[column] = text } }
        }
        return YapDatabaseFullTextSearch(columnNames: Self.columns, options: nil, handler: handler,
                                         ftsVersion: YapDatabaseFullTextSearchFTS5Version, versionTag: "1")
    }

    /// The recovered rows' documents, tokenized as a fresh index would.
    static func documents(_ rows: Model, tokenizer: FTSTokenizer) -> [String: FTSDocument] {
        var documents: [String: FTSDocument] = [:]
        for (collection, keys) in rows.rows {
            for (key, row) in keys {
                guard let texts = texts(object: row.object, metadata: row.metadata) else { continue }
                documents["\(collection)/\(key)"] = FTSDocument(texts: texts, tokenizer: tokenizer)
            }
        }
        return documents
    }

    func problems(_ transaction: YapDatabaseReadTransaction, rows: Model) -> [String] {
        guard let fts = transaction.ext(name) as? YapDatabaseFullTextSearchTransaction else { return ["not registered"] }
        let tokenizer = FTSTokenizer(.default)
        let documents = Self.documents(rows, tokenizer: tokenizer)
        var problems: [String] = []
        for text in Self.queries {
            guard let query = try? FTSQuery.parse(text, columnNames: Self.columns, tokenizer: tokenizer) else {
                return ["the reference refused \(text)"]
            }
            let want = Set(documents.filter { FTSMatcher.matches(query, $0.value) }.keys)
            var have = Set<String>()
            fts.enumerateKeys(matching: text) { collection, key, _ in have.insert("\(collection)/\(key)") }
            if have != want {
                problems.append("\(text): \(have.count) rows, rebuilt: \(want.count); only stored \(have.subtracting(want).sorted().prefix(3)), "
                                + "only rebuilt \(want.subtracting(have).sorted().prefix(3))")
            }
            let count = try? fts.numberOfMatches(text)
            if count != want.count { problems.append("\(text): numberOfMatches \(count.map { "\($0)" } ?? "threw"), rebuilt \(want.count)") }
        }
        for (text, weights, limit) in Self.ranked {
            guard let query = try? FTSQuery.parse(text, columnNames: Self.columns, tokenizer: tokenizer) else {
                return ["the reference refused \(text)"]
            }
            let want = Self.scores(query, weights: weights, documents: documents)
            var have: [(String, Double)] = []
            do {
                try fts.searchRanked(text, weights: weights, limit: limit) { collection, key, score, _ in have.append(("\(collection)/\(key)", score)) }
            } catch {
                problems.append("\(text) ranked threw \(error)")
                continue
            }
            // Rows of equal score come in row id order, which a rebuild does not know: compare
            // the scores in order, and each returned row's own score.
            let best = want.values.sorted(by: >).prefix(limit)
            if have.count != best.count || zip(have, best).contains(where: { !Self.same($0.1, $1) }) {
                problems.append("\(text) top \(limit): scores \(have.map(\.1)), rebuilt \(Array(best))")
            }
            for (row, score) in have where !Self.same(score, want[row] ?? -1) {
                problems.append("\(text) top \(limit): \(row) scored \(score), rebuilt \(want[row].map { "\($0)" } ?? "no match")")
            }
        }
        return problems
    }

    /// bm25 (higher is better) of every matching document, computed directly.
    static func scores(_ query: FTSQuery, weights: [Double], documents: [String: FTSDocument]) -> [String: Double] {
        let total = documents.values.reduce(0) { $0 + $1.tokenCount }
        let average = documents.isEmpty ? 0 : Double(total) / Double(documents.count)
        var idfs: [Double] = []
        for (phrase, columns) in zip(query.phrases, query.phraseColumnFilters) {
            let alone = FTSQuery(root: FTSQueryNode.phrase(phrase, columns: columns), phrases: [phrase])
            let n = documents.values.filter { FTSMatcher.matches(alone, $0) }.count
            idfs.append(FTSRanking.idf(documentCount: documents.count, documentsMatching: n))
        }
        var scores: [String: Double] = [:]
        for (row, document) in documents where FTSMatcher.matches(query, document) {
            scores[row] = FTSRanking.bm25(hitCounts: FTSMatcher.phraseHitCounts(query, document), idfs: idfs, weights: weights,
                                          documentLength: document.tokenCount, averageLength: average)
        }
        return scores
    }

    static func same(_ a: Double, _ b: Double) -> Bool {
        abs(a - b) <= 1e-9 * max(1, abs(a), abs(b))
    }
}
