import Foundation
import Testing
import TestSupport
import YapDBFullText
import YapDBSimulatedDisk
@testable import YapDB

/// The seeded model test of full-text search: random documents in two columns and three
/// collections; random writes, replaces, removals, clears, touches, rollbacks, reopens,
/// checkpoints and power cuts on a simulated disk; random queries from the grammar (words,
/// prefixes, phrases, NEAR, column filters, `^`, nested AND/OR/NOT) checked against
/// `FTSMatcher` over every row of a plain dictionary, and bm25 scores against `FTSRanking`
/// computed directly — at the newest snapshot and at an older one held by a long-lived read.
@Suite struct FullTextSearchModelTests {
    struct Doc: Codable, Equatable {
        var title: String?
        var body: String?
    }
    typealias Rows = [String: [String: Doc]]

    static let collections = ["a", "b", "c"]
    static let words = ["alpha", "alps", "beta", "gamma", "delta", "Résumé", "resume", "zeta", "eta", "theta", "kappa", "ALPHA"]
    static let queryWords = ["alpha", "alps", "beta", "gamma", "delta", "resume", "zeta", "eta", "theta", "kappa", "missing"]
    static let columns = ["title", "body"]

    final class Runner {
        let seed: UInt64
        var rng: SeededRandom
        let disk: SimulatedDisk
        static let path = "/model/fts.yapdb"
        var database: YapDatabase!
        var writer: YapDatabaseConnection!
        var model: Rows = [:]
        var old: (connection: YapDatabaseConnection, rows: Rows)?
        var queriesChecked = 0, rankedChecked = 0, crashes = 0, reopens = 0
        let tokenizer = FTSTokenizer(.default)
        /// The index's `pendingBytesLimit` (nil: the default) — a tiny one makes the merge of
        /// pending postings run many times inside one transaction; with it, `step` also runs
        /// bulk inserts of new rows (kept or rolled back) that search inside their transaction.
        let pendingLimit: Int?
        var bulkRows = 0, bulkChecked = 0

        init(seed: UInt64, pendingLimit: Int? = nil) throws {
            self.seed = seed
            self.pendingLimit = pendingLimit
            rng = SeededRandom(seed: seed)
            disk = SimulatedDisk(seed: seed)
            try disk.mkdir("/model")
            try open()
        }

        func open() throws {
            let options = YapDatabaseOptions()
            options.durability = .full
            database = try YapDatabase.open(path: Self.path, options: options, fileSystem: disk, segmentLimit: 16384)
            for collection in FullTextSearchModelTests.collections {
                database.registerCodableSerialization(Doc.self, forCollection: collection)
            }
            let handler = YapDatabaseFullTextSearchHandler.withObjectBlock { _, dict, _, _, object in
                guard let doc = object as? Doc else { return }
                if let title = doc.title { dict["title"] = title }
                if let body = doc.body { dict["body"] = body }
            }
            let ftsOptions: [AnyHashable: Any]? = pendingLimit.map { [YapDatabaseFullTextSearchPendingBytesLimitOption: $0] }
            let fts = YapDatabaseFullTextSearch(columnNames: FullTextSearchModelTests.columns, options: ftsOptions, handler: handler,
                                                ftsVersion: YapDatabaseFullTextSearchFTS5Version, versionTag: "1")
            precondition(database.register(fts, withName: "fts"), "registration failed")
            writer = database.newConnection()
        }

        func endOld() {
            _ = old?.connection.endLongLivedReadTransaction()
            old = nil
        }

        func text(_ maximum: Int) -> String? {
            guard rng.next() % 6 != 0 else { return nil }
            let count = Int(rng.next() % UInt64(maximum + 1))
            return (0..<count).map { _ in FullTextSearchModelTests.words[Int(rng.next() % UInt64(FullTextSearchModelTests.words.count))] }
                .joined(separator: rng.next() % 3 == 0 ? ", " : " ")
        }

        func setRandom(_ tx: YapDatabaseReadWriteTransaction, _ rows: inout Rows) {
            let key = "k\(rng.next() % 20)", collection = FullTextSearchModelTests.collections[Int(rng.next() % 3)]
            let doc = Doc(title: text(3), body: text(8))
            if rng.next() % 4 == 0 && rows[collection]?[key] != nil {
                tx.replace(doc, forKey: key, inCollection: collection)
            } else {
                tx.setObject(doc, forKey: key, inCollection: collection)
            }
            rows[collection, default: [:]][key] = doc
        }

        func removeRandom(_ tx: YapDatabaseReadWriteTransaction, _ rows: inout Rows) {
            let key = "k\(rng.next() % 20)", collection = FullTextSearchModelTests.collections[Int(rng.next() % 3)]
            tx.removeObject(forKey: key, inCollection: collection)
            rows[collection]?[key] = nil
            if rows[collection]?.isEmpty == true { rows[collection] = nil }
        }

        func write(_ body: @escaping (YapDatabaseReadWriteTransaction, inout Rows) -> Void) throws {
            var rows = model
            try writer.write { tx in body(tx, &rows) }
            model = rows
        }

        /// Inserts 10 to 49 new rows in one transaction (each above every indexed row id, so
        /// their postings wait and merge), removes a few older bulk rows half way, checks a
        /// one-word search against the rows inside the transaction, and rolls back one time in three.
        func bulkInsert() throws {
            let rollback = rng.next() % 3 == 0
            let count = 10 + Int(rng.next() % 40)
            var rows = model
            var failure: (any Error)?
            try writer.write { tx in
                for i in 0..<count {
                    let collection = FullTextSearchModelTests.collections[Int(self.rng.next() % 3)]
                    let doc = Doc(title: self.text(3), body: self.text(8))
                    let key = "bulk\(self.bulkRows + i)"
                    tx.setObject(doc, forKey: key, inCollection: collection)
                    rows[collection, default: [:]][key] = doc
                    if i == count / 2, self.bulkRows > 0 {
                        let old = "bulk\(Int(self.rng.next() % UInt64(self.bulkRows)))"
                        for collection in FullTextSearchModelTests.collections {
                            tx.removeObject(forKey: old, inCollection: collection)
                            rows[collection]?[old] = nil
                        }
                    }
                    if i == count / 3 || i == count - 1, let fts = tx.ext("fts") as? YapDatabaseFullTextSearchTransaction {
                        let word = self.word()
                        do {
                            let query = try FTSQuery.parse(word, columnNames: FullTextSearchModelTests.columns, tokenizer: self.tokenizer)
                            var expected: Set<String> = []
                            for (collection, keyed) in rows {
                                for (key, doc) in keyed where FTSMatcher.matches(query, self.document(doc)) { expected.insert(collection + "/" + key) }
                            }
                            var actual: [String] = []
                            try fts.search(word) { collection, key, _ in actual.append(collection + "/" + key) }
                            #expect(Set(actual) == expected && actual.count == expected.count, "seed \(self.seed): in the bulk transaction: \(word)")
                            self.bulkChecked += 1
                        } catch {
                            failure = error
                        }
                    }
                }
                if rollback { tx.rollback() }
            }
            if let failure { throw failure }
            bulkRows += count
            if !rollback { model = rows.filter { !$0.value.isEmpty } }
        }

        func step() throws {
            if pendingLimit != nil, rng.next() % 10 == 0 {
                try bulkInsert()
                return
            }
            switch rng.next() % 100 {
            case 0..<45: try write { tx, rows in self.setRandom(tx, &rows) }
            case 45..<52: try write { tx, rows in
                for _ in 0..<6 { self.setRandom(tx, &rows) }
                self.removeRandom(tx, &rows)
            }
            case 52..<60: try write { tx, rows in self.removeRandom(tx, &rows) }
            case 60..<62:
                let collection = FullTextSearchModelTests.collections[Int(rng.next() % 3)]
                try write { tx, rows in
                    tx.removeAllObjects(inCollection: collection)
                    rows[collection] = nil
                }
            case 62: try write { tx, rows in
                tx.removeAllObjectsInAllCollections()
                rows = [:]
            }
            case 63..<67:
                _ = try writer.write { tx in
                    var scratch = model
                    self.setRandom(tx, &scratch)
                    self.removeRandom(tx, &scratch)
                    tx.rollback()
                }
            case 67..<69:
                let key = "k\(rng.next() % 20)", collection = FullTextSearchModelTests.collections[Int(rng.next() % 3)]
                try write { tx, _ in tx.touchObject(forKey: key, inCollection: collection) }
            case 69..<72:
                reopens += 1
                endOld()
                try database.close()
                database = nil
                try open()
            case 72..<74:
                crashes += 1
                endOld()
                database.abandon()
                database = nil
                _ = disk.powerCut(seed: rng.next(), mode: .drop)
                try open()
            case 74..<78:
                endOld()
                let connection = database.newConnection()
                _ = connection.beginLongLivedReadTransaction()
                old = (connection, model)
            case 78:
                let report = try database.verify()
                #expect(report.isValid, "seed \(seed): verify: \(report.problems)")
            case 79..<81:
                if rng.next() % 2 == 0 { try database.checkpoint() } else { try database.compact() }
            default:
                try check(writer, model, "newest")
                if let old { try check(old.connection, old.rows, "old snapshot") }
            }
        }

        // MARK: Queries

        func word() -> String { FullTextSearchModelTests.queryWords[Int(rng.next() % UInt64(FullTextSearchModelTests.queryWords.count))] }

        func leaf() -> String {
            switch rng.next() % 8 {
            case 0: return String(word().prefix(Int(1 + rng.next() % 3))) + "*"
            case 1: return "\"\(word()) \(word())\""
            case 2: return "NEAR(\(word()) \(word()), \(rng.next() % 4))"
            case 3: return "title:\(word())"
            case 4: return "{title body}:\(word())"
            case 5: return "^\(word())"
            case 6: return "body:(\(word()) OR \(word()))"
            default: return word()
            }
        }

        func randomQuery(depth: Int = 0) -> String {
            guard depth < 3, rng.next() % 3 == 0 else { return leaf() }
            let a = randomQuery(depth: depth + 1), b = randomQuery(depth: depth + 1)
            switch rng.next() % 4 {
            case 0: return "(\(a)) AND (\(b))"
            case 1: return "(\(a)) OR (\(b))"
            case 2: return "(\(a)) NOT (\(b))"
            default: return "(\(a)) (\(b))"
            }
        }

        func document(_ doc: Doc) -> FTSDocument { FTSDocument(texts: [doc.title, doc.body], tokenizer: tokenizer) }

        func check(_ connection: YapDatabaseConnection, _ rows: Rows, _ label: String) throws {
            var failure: (any Error)?
            connection.read { tx in
                guard let fts = tx.ext("fts") as? YapDatabaseFullTextSearchTransaction else {
                    Issue.record("seed \(seed): no full-text transaction")
                    return
                }
                // Every row with text in some column is indexed.
                var documents: [String: FTSDocument] = [:]
                for (collection, keyed) in rows {
                    for (key, doc) in keyed where doc.title != nil || doc.body != nil { documents[collection + "/" + key] = document(doc) }
                }
                let total = documents.values.reduce(0) { $0 + $1.tokenCount }
                let average = documents.isEmpty ? 0 : Double(total) / Double(documents.count)
                for _ in 0..<8 {
                    let text = randomQuery()
                    let context = "seed \(seed) \(label): \(text)"
                    do {
                        let query = try FTSQuery.parse(text, columnNames: FullTextSearchModelTests.columns, tokenizer: tokenizer)
                        let expected = Set(documents.filter { FTSMatcher.matches(query, $0.value) }.keys)
                        var actual: [String] = []
                        try fts.search(text) { collection, key, _ in actual.append(collection + "/" + key) }
                        #expect(Set(actual) == expected && actual.count == expected.count, "\(context)")
                        #expect(try fts.numberOfMatches(text) == expected.count, "\(context): count")
                        queriesChecked += 1
                        // bm25, computed directly.
                        let idfs = query.phrases.indices.map { i -> Double in
                            let leaf = leaves(query)[i]
                            let alone = FTSQuery(root: .phrase(leaf.0, columns: leaf.1), phrases: [leaf.0])
                            let n = documents.values.filter { FTSMatcher.matches(alone, $0) }.count
                            return FTSRanking.idf(documentCount: documents.count, documentsMatching: n)
                        }
                        var scores: [String: Double] = [:]
                        for key in expected {
                            let doc = documents[key]!
                            scores[key] = FTSRanking.bm25(hitCounts: FTSMatcher.phraseHitCounts(query, doc), idfs: idfs, weights: [2, 1],
                                                          documentLength: doc.tokenCount, averageLength: average)
                        }
                        var ranked: [(String, Double)] = []
                        try fts.searchRanked(text, weights: [2, 1]) { collection, key, score, _ in ranked.append((collection + "/" + key, score)) }
                        #expect(ranked.count == expected.count, "\(context): ranked count")
                        for (i, (key, score)) in ranked.enumerated() {
                            #expect(abs(score - (scores[key] ?? .nan)) <= 1e-9 * max(1, abs(score)), "\(context): score of \(key)")
                            if i > 0 { #expect(ranked[i - 1].1 >= score, "\(context): order") }
                        }
                        // A top-k of one word skips blocks, and keeps the same top rows.
                        if case .phrase(let p, nil)? = query.root, p.terms.count == 1, !p.lastIsPrefix, !p.mustStartColumn {
                            var top: [Double] = []
                            try fts.searchRanked(text, weights: [2, 1], limit: 3) { _, _, score, _ in top.append(score) }
                            #expect(top == Array(ranked.prefix(3).map(\.1)), "\(context): top 3")
                        }
                        rankedChecked += 1
                    } catch let error as FTSError {
                        // The generator only writes valid queries.
                        Issue.record("\(context): \(error)")
                    } catch {
                        failure = error
                        return
                    }
                }
            }
            if let failure { throw failure }
        }

        func leaves(_ query: FTSQuery) -> [(FTSPhrase, [Int]?)] {
            var found: [(FTSPhrase, [Int]?)] = []
            func walk(_ node: FTSQueryNode) {
                switch node {
                case .phrase(let p, let columns): found.append((p, columns))
                case .near(let phrases, _, let columns): for p in phrases { found.append((p, columns)) }
                case .and(let children), .or(let children): children.forEach(walk)
                case .not(let a, let b): walk(a); walk(b)
                }
            }
            if let root = query.root { walk(root) }
            return found
        }
    }

    @Test(arguments: [UInt64(1), 2, 3, 4])
    func randomWorkload(seed: UInt64) throws {
        let runner = try Runner(seed: seed)
        for _ in 0..<250 { try runner.step() }
        try runner.check(runner.writer, runner.model, "final")
        let report = try runner.database.verify()
        #expect(report.isValid, "seed \(seed): \(report.problems)")
        #expect(runner.queriesChecked > 50)
        runner.endOld()
        try runner.database.close()
    }

    /// The same workload with a 1 KiB `pendingBytesLimit` (a few rows) and bulk inserts: the pending
    /// postings are merged many times inside one transaction (and rolled back with it).
    @Test(arguments: [UInt64(5), 6, 7])
    func randomWorkloadWithTinyPendingLimit(seed: UInt64) throws {
        let runner = try Runner(seed: seed, pendingLimit: 1024)
        for _ in 0..<250 { try runner.step() }
        try runner.check(runner.writer, runner.model, "final")
        let report = try runner.database.verify()
        #expect(report.isValid, "seed \(seed): \(report.problems)")
        #expect(runner.queriesChecked > 50)
        #expect(runner.bulkChecked > 20)
        runner.endOld()
        try runner.database.close()
    }
}
