import Foundation

/// W12: secondary indexes (issue 11, item 5). Rows with two indexed integer columns; the same
/// queries on each engine (`W12Query`): equality lookup, an ordered range of 100 rows, `COUNT(*)`
/// of a range, `MIN` of a column, and the added cost per write of maintaining the two indexes.
extension Runner {
    static let w12Equalities = 10_000
    static let w12Ranges = 1_000
    static let w12Counts = 1_000
    static let w12Minimums = 10_000
    static let w12Batch = 1_000

    /// The engines of W12: YapDB when its side is built, SQLite NORMAL and GRDB.
    var w12Engines: [Engine] { (yapIndexedStoreIsBuilt ? [.yapdb] : []) + [.sqliteNormal, .grdb] }

    func openIndexedStore(_ engine: Engine, folder: URL, indexed: Bool) throws -> any IndexedStore {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        switch engine {
        case .yapdb: return try makeYapIndexedStore(folder: folder, indexed: indexed)
        case .sqliteNormal: return try SQLiteIndexedStore(folder: folder, indexed: indexed)
        case .grdb: return try GRDBIndexedStore(folder: folder, indexed: indexed)
        default: throw BenchError("W12: \(engine.rawValue) has no secondary index here")
        }
    }

    func runW12() throws {
        let data = dataset("indexed") { Dataset(count: self.settings.rows, valueSize: 100, kind: .random, seed: 0x5EED_0001) }
        let indexed = IndexedDataset(base: data, seed: 0x5EED_0121)
        let engines = w12Engines
        if !engines.contains(.yapdb) {
            note("W12: YapDB's secondary index is not built on this branch yet; W12 shows SQLite and GRDB alone.")
        }
        try runW12Queries(indexed, engines: engines)
        try runW12Maintenance(indexed, engines: engines)
    }

    /// W12's queries without the maintenance loads (`--only W12Q`, for profiling the queries).
    func runW12QueriesOnly() throws {
        let data = dataset("indexed") { Dataset(count: self.settings.rows, valueSize: 100, kind: .random, seed: 0x5EED_0001) }
        try runW12Queries(IndexedDataset(base: data, seed: 0x5EED_0121), engines: w12Engines)
    }

    /// One database per engine with every row and both indexes (not timed), then the queries,
    /// interleaved, each checked against the dataset.
    func runW12Queries(_ data: IndexedDataset, engines: [Engine]) throws {
        var stores: [Engine: any IndexedStore] = [:]
        for engine in engines where settings.wants(engine) {
            let store = try openIndexedStore(engine, folder: try freshFolder("W12-\(engine.rawValue)"), indexed: true)
            try store.load(data, rows: data.base.readOrder[...], batch: 100_000)
            stores[engine] = store
        }
        defer { for store in stores.values { try? store.close() } }
        var rng = SplitMix64(seed: 0x5EED_0122)
        let n = data.count
        let equalities = (0..<Runner.w12Equalities).map { _ in data.a[Int(rng.next() % UInt64(n))] }
        var rowsPerValue: [Int64: Int] = [:]
        for value in data.a { rowsPerValue[value, default: 0] += 1 }
        let expectedEqualities = equalities.reduce(0) { $0 + (rowsPerValue[$1] ?? 0) }
        let starts = (0..<Runner.w12Ranges).map { _ in Int64(rng.next() % UInt64(max(1, n - 100))) }
        let span = Int64(max(1, n / 10))
        let ranges = (0..<Runner.w12Counts).map { _ -> (Int64, Int64) in
            let low = Int64(rng.next() % UInt64(max(1, Int64(n) - span)))
            return (low, low + span - 1)
        }
        let figures = try interleave(engines, reps: settings.reps) { engine, _ in
            let store = stores[engine]!
            var found: (rows: Int, checksum: UInt64) = (0, 0)
            let equality = try timed(engine == .yapdb) { found = try store.equality(equalities) }
            guard found.rows == expectedEqualities else { throw BenchError("W12 \(engine.rawValue): \(found.rows) rows by equality, not \(expectedEqualities)") }
            let range = try timed(engine == .yapdb) { found = try store.orderedRanges(starts, data: data) }
            guard found.rows == 100 * starts.count else { throw BenchError("W12 \(engine.rawValue): \(found.rows) rows in ranges") }
            var total = 0
            let count = try timed(engine == .yapdb) { total = try store.counts(ranges) }
            guard total == Int(span) * ranges.count else { throw BenchError("W12 \(engine.rawValue): counts sum to \(total)") }
            var minimumTimes: [Bool: Double] = [:]
            for preparedOnce in [true, false] {
                var minimum: Int64?
                minimumTimes[preparedOnce] = try timed(engine == .yapdb) {
                    minimum = try store.minimums(Runner.w12Minimums, preparedOnce: preparedOnce)
                }
                guard minimum == data.minimumA else { throw BenchError("W12 \(engine.rawValue): MIN(a) is \(String(describing: minimum))") }
            }
            return ["equality": equality / Double(equalities.count), "range": range / Double(starts.count),
                    "count": count / Double(ranges.count), "min": minimumTimes[true]! / Double(Runner.w12Minimums),
                    "minPerCall": minimumTimes[false]! / Double(Runner.w12Minimums)]
        }
        let rows = n.formatted()
        add("W12", "equality lookup `\(W12Query.equality)` among \(rows) rows, per query", .time, figures, "equality",
            note: "\(equalities.count.formatted()) lookups in one read transaction; keys returned")
        add("W12", "ordered range `\(W12Query.orderedRange)`, per query", .time, figures, "range",
            note: "\(starts.count.formatted()) ranges in one read transaction; each row's key and value (object) returned, order checked on `b` read from the value")
        add("W12", "`\(W12Query.count)` of a range of \((n / 10).formatted()) rows, per query", .time, figures, "count")
        add("W12", "`\(W12Query.minimum)` over \(rows) rows, per query", .time, figures, "min",
            note: "the query made once before the loop, as each engine's prepared statement is; YapDB's typed `aggregate(_:)`")
        add("W12", "`\(W12Query.minimum)` with the query made anew for each call, per query", .time, figures, "minPerCall",
            note: "SQLite and GRDB compile the SQL each time; YapDB makes a `YapDatabaseQuery` and calls `performAggregateQuery`", charted: false)
    }

    /// The same rows loaded into a new database with both indexes and without, in transactions
    /// of 1,000 rows; the added cost per write is the difference, per row.
    func runW12Maintenance(_ data: IndexedDataset, engines: [Engine]) throws {
        let rows = data.base.readOrder.prefix(min(data.count, 100_000))
        let figures = try interleave(engines, reps: settings.heavyReps) { engine, rep in
            var times: [Bool: Double] = [:]
            for indexed in [true, false] {
                let folder = try freshFolder("W12-load-\(engine.rawValue)-\(indexed)-\(rep)")
                defer { remove(folder) }
                let store = try openIndexedStore(engine, folder: folder, indexed: indexed)
                times[indexed] = try timed(engine == .yapdb) { try store.load(data, rows: rows, batch: Runner.w12Batch) }
                try store.close()
            }
            return ["with": times[true]! / Double(rows.count), "without": times[false]! / Double(rows.count),
                    "added": (times[true]! - times[false]!) / Double(rows.count)]
        }
        let n = rows.count.formatted()
        add("W12", "insert \(n) rows in transactions of 1,000, with two indexed columns, per row", .time, figures, "with", charted: false)
        add("W12", "insert \(n) rows in transactions of 1,000, without indexes, per row", .time, figures, "without", charted: false)
        add("W12", "added cost per write of maintaining two indexed columns", .time, figures, "added",
            note: "the difference of the two rows above, per run", charted: false)
    }
}
