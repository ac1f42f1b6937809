import CSQLite
import Foundation
import GRDB

// W12's engines: rows with two indexed integer columns, and the operations of issue 11's
// benchmark, written once as query text (`W12Query`) that the peers run as SQL and YapDB as
// `YapDatabaseQuery`.

/// W12's queries: the text after `SELECT … FROM`, the same for every engine.
enum W12Query {
    /// Equality lookup on column `a` (about one row per value).
    static let equality = "WHERE a = ?"
    /// 100 rows in the order of column `b` (unique) from a start value.
    static let orderedRange = "WHERE b >= ? ORDER BY b LIMIT 100"
    /// The rows with `b` in a range, to count.
    static let countRange = "WHERE b BETWEEN ? AND ?"
    /// The aggregate over `countRange`.
    static let count = "COUNT(*)"
    /// The aggregate over every row.
    static let minimum = "MIN(a)"
}

/// The rows of W12: the main dataset's keys, plus two integer columns. `a` is random in
/// 0..<count (an equality lookup finds about one row); `b` is a permutation of 0..<count (a
/// range of n values holds exactly n rows). Each value is the main value with `a` and `b`
/// written into its first 16 bytes (little-endian), where YapDB's index handler reads them.
final class IndexedDataset: @unchecked Sendable {  // immutable after init
    let base: Dataset
    let a: [Int64]
    let b: [Int64]
    let values: [Data]
    let minimumA: Int64

    var count: Int { base.count }

    init(base: Dataset, seed: UInt64) {
        self.base = base
        var rng = SplitMix64(seed: seed)
        let a = (0..<base.count).map { _ in Int64(rng.next() % UInt64(base.count)) }
        var b = (0..<base.count).map(Int64.init)
        b.shuffle(using: &rng)
        values = (0..<base.count).map { i in
            var value = base.values[i]
            withUnsafeBytes(of: a[i].littleEndian) { value.replaceSubrange(0..<8, with: $0) }
            withUnsafeBytes(of: b[i].littleEndian) { value.replaceSubrange(8..<16, with: $0) }
            return value
        }
        self.a = a
        self.b = b
        minimumA = a.min() ?? 0
    }

    /// Column `a` of a stored value (what YapDB's handler extracts).
    static func a(of value: Data) -> Int64 { value.withUnsafeBytes { Int64(littleEndian: $0.loadUnaligned(fromByteOffset: 0, as: Int64.self)) } }
    /// Column `b` of a stored value.
    static func b(of value: Data) -> Int64 { value.withUnsafeBytes { Int64(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: Int64.self)) } }
}

/// One engine's side of W12. Results are checked by the caller (counts, order, values).
protocol IndexedStore: AnyObject {
    /// Inserts `rows` in transactions of `batch` rows.
    func load(_ data: IndexedDataset, rows: ArraySlice<Int>, batch: Int) throws
    /// `W12Query.equality` for each value, in one read transaction: (rows found, checksum of their keys).
    func equality(_ values: [Int64]) throws -> (rows: Int, checksum: UInt64)
    /// `W12Query.orderedRange` from each start, in one read transaction, each row's key and value
    /// (object) returned, as YapDB's `iterateKeysAndObjects` returns them: (rows, checksum of the
    /// keys); throws unless every result came in ascending `b` order (read from the value) with no gap.
    func orderedRanges(_ starts: [Int64], data: IndexedDataset) throws -> (rows: Int, checksum: UInt64)
    /// `COUNT(*)` over `W12Query.countRange` for each (low, high), in one read transaction: the sum of the counts.
    func counts(_ ranges: [(Int64, Int64)]) throws -> Int
    /// `MIN(a)` over every row, `times` times in one read transaction: the last result. With
    /// `preparedOnce`, the query is made once before the loop (SQLite's prepared statement,
    /// GRDB's statement, YapDB's `YapDatabaseQuery`); without, it is made anew for every call
    /// (SQLite and GRDB compile the SQL each time).
    func minimums(_ times: Int, preparedOnce: Bool) throws -> Int64?
    func close() throws
}

/// SQLite through its C API: table `bench` (rowid, `collection`, `key`, `data`, `a`, `b`; primary
/// key (`collection`, `key`)), an index on `a` and one on `b` (or none, for the maintenance
/// baseline); WAL, `synchronous=NORMAL`; prepared statements.
final class SQLiteIndexedStore: IndexedStore {
    let connection: SQLiteConnection
    private let insert: OpaquePointer
    private let equalityStatement: OpaquePointer
    private let rangeStatement: OpaquePointer
    private let countStatement: OpaquePointer
    private let minimumStatement: OpaquePointer
    private let begin: OpaquePointer
    private let beginImmediate: OpaquePointer
    private let commit: OpaquePointer

    init(folder: URL, indexed: Bool) throws {
        connection = try SQLiteConnection(path: folder.appendingPathComponent("w12.sqlite").path, synchronous: "NORMAL")
        try connection.execute("""
            CREATE TABLE IF NOT EXISTS bench (rowid INTEGER PRIMARY KEY, collection TEXT NOT NULL, key TEXT NOT NULL,
              data BLOB, a INTEGER, b INTEGER);
            CREATE UNIQUE INDEX IF NOT EXISTS bench_key ON bench (collection, key);
            """ + (indexed ? "CREATE INDEX IF NOT EXISTS bench_a ON bench (a); CREATE INDEX IF NOT EXISTS bench_b ON bench (b);" : ""))
        insert = try connection.prepare("INSERT OR REPLACE INTO bench (collection, key, data, a, b) VALUES (?, ?, ?, ?, ?)")
        equalityStatement = try connection.prepare("SELECT key FROM bench " + W12Query.equality)
        rangeStatement = try connection.prepare("SELECT key, data FROM bench " + W12Query.orderedRange)
        countStatement = try connection.prepare("SELECT \(W12Query.count) FROM bench " + W12Query.countRange)
        minimumStatement = try connection.prepare("SELECT \(W12Query.minimum) FROM bench")
        begin = try connection.prepare("BEGIN")
        beginImmediate = try connection.prepare("BEGIN IMMEDIATE")
        commit = try connection.prepare("COMMIT")
    }

    func load(_ data: IndexedDataset, rows: ArraySlice<Int>, batch: Int) throws {
        var start = rows.startIndex
        while start < rows.endIndex {
            let end = min(start + batch, rows.endIndex)
            try connection.stepDone(beginImmediate)
            try data.base.keyBytes.withUnsafeBytes { keys in
                for i in rows[start..<end] {
                    connection.bindCollectionAndKey(insert, keys.baseAddress! + i * Dataset.keySize)
                    try data.values[i].withUnsafeBytes { value in
                        sqlite3_bind_blob(insert, 3, value.baseAddress, Int32(value.count), nil)
                        sqlite3_bind_int64(insert, 4, data.a[i])
                        sqlite3_bind_int64(insert, 5, data.b[i])
                        try connection.stepDone(insert)
                    }
                }
            }
            try connection.stepDone(commit)
            start = end
        }
    }

    private func inReadTransaction<R>(_ body: () throws -> R) throws -> R {
        try connection.stepDone(begin)
        defer { _ = try? connection.stepDone(commit) }
        return try body()
    }

    private static func text(_ statement: OpaquePointer, _ column: Int32) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: sqlite3_column_text(statement, column), count: Int(sqlite3_column_bytes(statement, column)))
    }

    func equality(_ values: [Int64]) throws -> (rows: Int, checksum: UInt64) {
        try inReadTransaction {
            var rows = 0
            var sum: UInt64 = 0
            for value in values {
                sqlite3_bind_int64(equalityStatement, 1, value)
                while sqlite3_step(equalityStatement) == SQLITE_ROW {
                    rows += 1
                    sum &+= checksum(Self.text(equalityStatement, 0))
                }
                sqlite3_reset(equalityStatement)
            }
            return (rows, sum)
        }
    }

    func orderedRanges(_ starts: [Int64], data: IndexedDataset) throws -> (rows: Int, checksum: UInt64) {
        try inReadTransaction {
            var rows = 0
            var sum: UInt64 = 0
            for start in starts {
                sqlite3_bind_int64(rangeStatement, 1, start)
                var expected = start
                while sqlite3_step(rangeStatement) == SQLITE_ROW {
                    // The row's value as an object, as YapDB hands it out; `b` is read from it.
                    guard let blob = sqlite3_column_blob(rangeStatement, 1) else { throw BenchError("SQLite W12: no value") }
                    let value = Data(bytes: blob, count: Int(sqlite3_column_bytes(rangeStatement, 1)))
                    if IndexedDataset.b(of: value) != expected { throw BenchError("SQLite W12: range out of order") }
                    expected += 1
                    rows += 1
                    sum &+= checksum(Self.text(rangeStatement, 0))
                }
                sqlite3_reset(rangeStatement)
            }
            return (rows, sum)
        }
    }

    func counts(_ ranges: [(Int64, Int64)]) throws -> Int {
        try inReadTransaction {
            var total = 0
            for (low, high) in ranges {
                sqlite3_bind_int64(countStatement, 1, low)
                sqlite3_bind_int64(countStatement, 2, high)
                if sqlite3_step(countStatement) == SQLITE_ROW { total += Int(sqlite3_column_int64(countStatement, 0)) }
                sqlite3_reset(countStatement)
            }
            return total
        }
    }

    func minimums(_ times: Int, preparedOnce: Bool) throws -> Int64? {
        try inReadTransaction {
            var result: Int64?
            for _ in 0..<times {
                let statement = preparedOnce ? minimumStatement : try connection.prepare("SELECT \(W12Query.minimum) FROM bench")
                if sqlite3_step(statement) == SQLITE_ROW { result = sqlite3_column_int64(statement, 0) }
                if preparedOnce { sqlite3_reset(statement) } else { sqlite3_finalize(statement) }
            }
            return result
        }
    }

    func close() throws {
        for statement in [insert, equalityStatement, rangeStatement, countStatement, minimumStatement, begin, beginImmediate, commit] {
            sqlite3_finalize(statement)
        }
        try connection.close()
    }
}

/// GRDB as a Swift developer uses it: a `DatabasePool`, the same table and indexes as
/// `SQLiteIndexedStore` declared with GRDB's schema API, cached statements, `pool.read { }`.
final class GRDBIndexedStore: IndexedStore {
    let pool: DatabasePool

    init(folder: URL, indexed: Bool) throws {
        pool = try DatabasePool(path: folder.appendingPathComponent("w12.grdb.sqlite").path)
        try pool.write { db in
            try db.create(table: "bench", ifNotExists: true) { t in
                t.column("collection", .text).notNull()
                t.column("key", .text).notNull()
                t.column("data", .blob)
                t.column("a", .integer)
                t.column("b", .integer)
                t.uniqueKey(["collection", "key"])
            }
            if indexed {
                try db.create(index: "bench_a", on: "bench", columns: ["a"], ifNotExists: true)
                try db.create(index: "bench_b", on: "bench", columns: ["b"], ifNotExists: true)
            }
        }
    }

    func load(_ data: IndexedDataset, rows: ArraySlice<Int>, batch: Int) throws {
        var start = rows.startIndex
        while start < rows.endIndex {
            let end = min(start + batch, rows.endIndex)
            try pool.write { db in
                let statement = try db.cachedStatement(sql: "INSERT OR REPLACE INTO bench (collection, key, data, a, b) VALUES (?, ?, ?, ?, ?)")
                for i in rows[start..<end] {
                    try statement.execute(arguments: [Dataset.collection, data.base.keys[i], data.values[i], data.a[i], data.b[i]])
                }
            }
            start = end
        }
    }

    func equality(_ values: [Int64]) throws -> (rows: Int, checksum: UInt64) {
        try pool.read { db in
            let statement = try db.cachedStatement(sql: "SELECT key FROM bench " + W12Query.equality)
            var rows = 0
            var sum: UInt64 = 0
            for value in values {
                let keys = try String.fetchCursor(statement, arguments: [value])
                while let key = try keys.next() {
                    rows += 1
                    sum &+= checksum(utf8: key)
                }
            }
            return (rows, sum)
        }
    }

    func orderedRanges(_ starts: [Int64], data: IndexedDataset) throws -> (rows: Int, checksum: UInt64) {
        try pool.read { db in
            let statement = try db.cachedStatement(sql: "SELECT key, data FROM bench " + W12Query.orderedRange)
            var rows = 0
            var sum: UInt64 = 0
            for start in starts {
                var expected = start
                let cursor = try GRDB.Row.fetchCursor(statement, arguments: [start])
                while let row = try cursor.next() {
                    let value: Data = row[1]
                    if IndexedDataset.b(of: value) != expected { throw BenchError("GRDB W12: range out of order") }
                    expected += 1
                    rows += 1
                    let key: String = row[0]
                    sum &+= checksum(utf8: key)
                }
            }
            return (rows, sum)
        }
    }

    func counts(_ ranges: [(Int64, Int64)]) throws -> Int {
        try pool.read { db in
            let statement = try db.cachedStatement(sql: "SELECT \(W12Query.count) FROM bench " + W12Query.countRange)
            var total = 0
            for (low, high) in ranges { total += try Int.fetchOne(statement, arguments: [low, high]) ?? 0 }
            return total
        }
    }

    func minimums(_ times: Int, preparedOnce: Bool) throws -> Int64? {
        try pool.read { db in
            let sql = "SELECT \(W12Query.minimum) FROM bench"
            var result: Int64?
            if preparedOnce {
                let statement = try db.cachedStatement(sql: sql)
                for _ in 0..<times { result = try Int64.fetchOne(statement) }
            } else {
                for _ in 0..<times { result = try Int64.fetchOne(db.makeStatement(sql: sql)) }
            }
            return result
        }
    }

    func close() throws { try pool.close() }
}
