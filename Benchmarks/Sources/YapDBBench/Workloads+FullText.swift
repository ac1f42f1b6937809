import Foundation

/// W14: full-text search (issue 23's benchmark). YapDB's `YapDatabaseFullTextSearch` beside
/// SQLite FTS5 through the system SQLite and GRDB's FTS5, on the same corpus
/// (`FullTextCorpus`: manual-page paragraphs, Chinese fortunes, then synthetic Zipf documents)
/// and the same query texts (`FullTextQueries`), interleaved.
extension Runner {
    /// Documents of W14: 1M in a full run; fewer in a quick one; `--w14-documents` says otherwise.
    var w14Documents: Int { settings.w14Documents ?? (settings.size == .full ? 1_000_000 : 50_000) }
    static let w14Batch = 500
    static let w14Updates = 200

    var w14Engines: [Engine] { [.yapdb, .sqliteNormal, .grdb] }

    func openFullTextStore(_ engine: Engine, folder: URL, indexed: Bool) throws -> any FullTextStore {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        switch engine {
        case .yapdb: return try YapFullTextStore(folder: folder, indexed: indexed)
        case .sqliteNormal: return try SQLiteFullTextStore(folder: folder, indexed: indexed)
        case .grdb: return try GRDBFullTextStore(folder: folder, indexed: indexed)
        default: throw BenchError("W14: \(engine.rawValue) has no full-text index here")
        }
    }

    func runW14() throws {
        guard sqliteHasFTS5() else { throw BenchError("W14: the system SQLite lacks ENABLE_FTS5 (PRAGMA compile_options)") }
        let n = w14Documents
        let corpus = try FullTextCorpus.make(count: n)
        try corpus.save(to: settings.workFolder.appendingPathComponent("W14-corpus.txt"))
        let queries = FullTextQueries(corpus)
        note("W14 corpus: \(corpus.description). Queries chosen by document frequency: rare `\(queries.rare)`, "
             + "frequent `\(queries.frequent)`, AND `\(queries.and)`, phrase `\(queries.phrase)`, prefix `\(queries.prefix)`.")
        try runW14Builds(corpus)
        try runW14Queries(corpus, queries)
        try runW14Memory()
    }

    /// Bytes of every file under `folder`.
    func folderBytes(_ folder: URL) -> Double {
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.fileSizeKey])
        var total = 0
        while let file = files?.nextObject() as? URL {
            total += (try? file.resourceValues(forKeys: [.fileSizeKey]).fileSize ?? 0) ?? 0
        }
        return Double(total)
    }

    /// Loads into a new database: in one transaction and in transactions of 500 with the index,
    /// and in transactions of 500 without it (for the index size: the growth of the files,
    /// measured after a clean close, over the same documents stored without the index).
    func runW14Builds(_ corpus: FullTextCorpus) throws {
        let n = corpus.documents.count
        let figures = try interleave(w14Engines, reps: settings.w14BuildReps ?? (settings.size == .full ? 3 : 2)) { engine, rep in
            var out: [String: Double] = [:]
            var sizes: [String: Double] = [:]
            for (name, indexed, batch) in [("one", true, n), ("batched", true, Runner.w14Batch), ("plain", false, Runner.w14Batch)] {
                let folder = try freshFolder("W14-build-\(engine.rawValue)-\(name)-\(rep)")
                defer { remove(folder) }
                let store = try openFullTextStore(engine, folder: folder, indexed: indexed)
                out[name] = try timed(engine == .yapdb) { try store.load(corpus, batch: batch) } / Double(n)
                try store.close()
                sizes[name] = folderBytes(folder)
            }
            out["size"] = sizes["batched"]! - sizes["plain"]!
            out["sizeOne"] = sizes["one"]! - sizes["plain"]!
            return out
        }
        let docs = n.formatted()
        add("W14", "build: \(docs) documents with the index in one transaction, per document", .time, figures, "one")
        add("W14", "build: \(docs) documents with the index in transactions of 500, per document", .time, figures, "batched")
        add("W14", "store: \(docs) documents without an index in transactions of 500, per document", .time, figures, "plain", charted: false)
        add("W14", "index size: \(docs) documents loaded in transactions of 500", .bytes, figures, "size",
            note: "the files after a clean close, less the same documents stored without the index (YapDB: the .yapdb files; "
                + "SQLite, GRDB: the database file, WAL checkpointed)")
        add("W14", "index size: \(docs) documents loaded in one transaction", .bytes, figures, "sizeOne", charted: false)
    }

    func runW14Queries(_ corpus: FullTextCorpus, _ queries: FullTextQueries) throws {
        var stores: [Engine: any FullTextStore] = [:]
        for engine in w14Engines where settings.wants(engine) {
            let store = try openFullTextStore(engine, folder: try freshFolder("W14-\(engine.rawValue)"), indexed: true)
            try store.load(corpus, batch: 10_000)
            stores[engine] = store
        }
        defer { for store in stores.values { try? store.close() } }
        var live: [String: [Engine: [Double]]] = [:]
        for (engine, store) in stores { live["live", default: [:]][engine] = [try store.liveIndexBytes()] }
        add("W14", "live index bytes: \(corpus.documents.count.formatted()) documents", .bytes, live, "live",
            note: "without free space or superseded pages: YapDB `stats()` entry bytes of the terms, postings, positions and documents trees; SQLite, GRDB: "
                + "`dbstat` payload of the `fts_*` shadow tables", charted: false)
        let keyQueries = [("rare", queries.rare, 200), ("frequent", queries.frequent, 5), ("and", queries.and, 20),
                          ("phrase", queries.phrase, 20), ("prefix", queries.prefix, 20)]
        var matches: [Engine: [String: Int]] = [:]
        var tops: [Engine: [String]] = [:]
        let figures = try interleave(w14Engines, reps: settings.reps) { engine, _ in
            let store = stores[engine]!
            var out: [String: Double] = [:]
            for (name, query, times) in keyQueries {
                var found = 0
                out[name] = try timed(engine == .yapdb) { found = try store.keys(query, times: times) } / Double(times)
                matches[engine, default: [:]][name] = found
            }
            var top: [String] = []
            out["top"] = try timed(engine == .yapdb) { top = try store.top(queries.frequent, limit: 10, times: 50) } / 50
            tops[engine] = top
            var length = 0
            out["snippets"] = try timed(engine == .yapdb) { length = try store.snippets(queries.frequent, limit: 20, times: 20) } / 20
            guard length > 0 else { throw BenchError("W14 \(engine.rawValue): empty snippets") }
            var count = 0
            out["count"] = try timed(engine == .yapdb) { count = try store.count(queries.frequent, times: 50) } / 50
            matches[engine, default: [:]]["count"] = count
            return out
        }
        // SQLite and GRDB run the same FTS5: their results must agree; YapDB's differences are noted.
        if let sqlite = matches[.sqliteNormal], let grdb = matches[.grdb], sqlite != grdb {
            throw BenchError("W14: SQLite \(sqlite) and GRDB \(grdb) disagree")
        }
        let reference = matches[.sqliteNormal] ?? matches[.grdb] ?? [:]
        if let yap = matches[.yapdb], !reference.isEmpty, yap != reference {
            note("W14: YapDB's match counts differ from FTS5's: YapDB \(yap.sorted { $0.key < $1.key }), FTS5 \(reference.sorted { $0.key < $1.key }).")
        }
        if let yap = tops[.yapdb], let sqlite = tops[.sqliteNormal], Set(yap) != Set(sqlite) {
            note("W14: the bm25 top 10 of `\(queries.frequent)` differ (ties may order differently): YapDB \(yap), FTS5 \(sqlite).")
        }
        func found(_ name: String) -> String { (reference[name] ?? matches[.yapdb]?[name] ?? 0).formatted() }
        let docs = corpus.documents.count.formatted()
        add("W14", "rare term `\(queries.rare)` (\(found("rare")) matches of \(docs)), keys, per query", .time, figures, "rare")
        add("W14", "frequent term `\(queries.frequent)` (\(found("frequent")) matches), keys, per query", .time, figures, "frequent")
        add("W14", "two-term AND `\(queries.and)` (\(found("and")) matches), keys, per query", .time, figures, "and")
        add("W14", "phrase `\(queries.phrase)` (\(found("phrase")) matches), keys, per query", .time, figures, "phrase")
        add("W14", "3-letter prefix `\(queries.prefix)` (\(found("prefix")) matches), keys, per query", .time, figures, "prefix",
            note: "search-as-you-type")
        add("W14", "bm25 top-10 of the frequent term, keys, per query", .time, figures, "top",
            note: "SQLite: `ORDER BY rank LIMIT 10`; YapDB: `searchRanked(_:limit: 10)`")
        add("W14", "snippets for the bm25 top 20 of the frequent term, per query", .time, figures, "snippets",
            note: "SQLite: `snippet(fts, 1, '<b>', '</b>', '...', 15)` with `ORDER BY rank LIMIT 20`; YapDB: `searchRanked(limit: 20)` "
                + "then `snippet(forKey:inCollection:matching:)` per row (default options: the same marks, 15 tokens)")
        add("W14", "match count of the frequent term, per query", .time, figures, "count",
            note: "SQLite: `SELECT count(*) … MATCH`; YapDB: `numberOfMatches`")

        let updates = try interleave(w14Engines, reps: settings.reps) { engine, rep in
            var rng = SplitMix64(seed: 0x5EED_0142 &+ UInt64(rep))
            let n = corpus.documents.count
            let picks = (0..<Runner.w14Updates).map { _ in (Int(rng.next() % UInt64(n)), Int(rng.next() % UInt64(n))) }
            let store = stores[engine]!
            let time = try timed(engine == .yapdb) {
                for (target, source) in picks { try store.update(target, text: corpus.documents[source]) }
            }
            return ["update": time / Double(picks.count)]
        }
        add("W14", "incremental update of one document, a transaction each", .time, updates, "update",
            note: "\(Runner.w14Updates) updates per run, each replacing a random document's text with another's")
    }

    /// Private memory during a build in transactions of 500, each engine alone in a new process
    /// (`child-fts`), at a quarter of the documents and at all of them: bounded by settings means
    /// the two peaks are about the same.
    func runW14Memory() throws {
        let n = w14Documents
        var figures: [String: [Engine: [Double]]] = [:]
        for (name, count) in [("quarter", n / 4), ("all", n)] {
            for engine in w14Engines where settings.wants(engine) {
                let folder = try freshFolder("W14-memory-\(engine.rawValue)-\(name)")
                defer { remove(folder) }
                let child = try runChild(["child-fts", engine.rawValue, folder.path, String(count),
                                           settings.workFolder.appendingPathComponent("W14-corpus.txt").path])
                let peak = try child.number("peak"), baseline = try child.number("baseline")
                guard peak >= 0, baseline >= 0 else { note("W14: no RssAnon on this system; private memory not measured"); return }
                figures[name, default: [:]][engine, default: []].append(peak - baseline)
            }
        }
        add("W14", "private memory during the build of a quarter (\((n / 4).formatted()) documents) in transactions of 500", .bytes, figures, "quarter",
            note: "RssAnon peak (sampled every 2 ms) less RssAnon with the corpus in memory before the open; a new process per engine",
            charted: false)
        add("W14", "private memory during the build of all \(n.formatted()) documents in transactions of 500", .bytes, figures, "all", charted: false)
    }
}

/// A child that builds the first `documents` documents of W14's corpus (saved by the parent) in transactions of 500 with the
/// index, sampling private memory every 2 ms. Figures: `peak` (highest RssAnon), `baseline`
/// (RssAnon with the corpus in memory, before the open), `time` (ns).
func childFullText(engine name: String, folder: String, documents: Int, corpus path: String) throws -> [String: String] {
    guard let engine = Engine(rawValue: name) else { throw BenchError("unknown engine \(name)") }
    let corpus = try FullTextCorpus.load(from: URL(fileURLWithPath: path), count: documents)
    let baseline = privateMemoryBytes() ?? -1
    let sampler = PeakMemorySampler()
    let start = nowNanoseconds()
    let url = URL(fileURLWithPath: folder)
    let store: any FullTextStore = switch engine {
    case .yapdb: try YapFullTextStore(folder: url, indexed: true)
    case .sqliteNormal: try SQLiteFullTextStore(folder: url, indexed: true)
    case .grdb: try GRDBFullTextStore(folder: url, indexed: true)
    default: throw BenchError("W14: \(name) has no full-text index here")
    }
    try store.load(corpus, batch: Runner.w14Batch)
    let time = nowNanoseconds() - start
    let peak = sampler.stop()
    try store.close()
    return ["time": String(time), "peak": String(baseline < 0 ? -1 : peak), "baseline": String(baseline)]
}
