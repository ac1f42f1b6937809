import Foundation
import GRDB

/// GRDB (groue/GRDB.swift) used the way a Swift developer uses it: a `DatabasePool` (WAL mode,
/// which GRDB runs with `synchronous=NORMAL`), a table `bench` with the primary key
/// (`collection`, `key`) and a blob column `data`, cached statements
/// (`db.cachedStatement(sql:)` + `execute(arguments:)`), `pool.write { }` per transaction and
/// `pool.read { }` for readers. Values come back as `Data` (`Data.fetchOne`, a copy), as
/// YapDB's `serializedObject` returns them.
final class GRDBStore: Store {
    let pool: DatabasePool

    static func fileURL(in folder: URL) -> URL { folder.appendingPathComponent("bench.grdb.sqlite") }

    static let upsert = """
        INSERT INTO bench (collection, key, data) VALUES (?, ?, ?)
          ON CONFLICT (collection, key) DO UPDATE SET data = excluded.data
        """

    init(folder: URL) throws {
        pool = try DatabasePool(path: GRDBStore.fileURL(in: folder).path)
        try pool.write { db in
            try db.create(table: "bench", ifNotExists: true) { t in
                t.column("collection", .text).notNull()
                t.column("key", .text).notNull()
                t.column("data", .blob).notNull()
                t.primaryKey(["collection", "key"])
            }
        }
    }

    func write(_ data: Dataset, rows: ArraySlice<Int>) throws {
        try pool.write { db in
            let statement = try db.cachedStatement(sql: GRDBStore.upsert)
            for i in rows { try statement.execute(arguments: [Dataset.collection, data.keys[i], data.values[i]]) }
        }
    }

    func delete(_ data: Dataset, rows: ArraySlice<Int>) throws {
        try pool.write { db in
            let statement = try db.cachedStatement(sql: "DELETE FROM bench WHERE collection = ? AND key = ?")
            for i in rows { try statement.execute(arguments: [Dataset.collection, data.keys[i]]) }
        }
    }

    func makeReader() throws -> any StoreReader { GRDBReader(pool) }

    func emptyWriteTransactions(_ count: Int) throws {
        for _ in 0..<count { try pool.write { _ in } }
    }

    func compact() throws {
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            try db.execute(sql: "VACUUM")
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    func close() throws { try pool.close() }
}

/// Reads through the pool: `pool.read { }` takes one of the pool's reader connections.
final class GRDBReader: StoreReader {
    let pool: DatabasePool

    init(_ pool: DatabasePool) { self.pool = pool }

    static let select = "SELECT data FROM bench WHERE collection = ? AND key = ?"

    private static func readOne(_ db: Database, _ data: Dataset, _ i: Int) throws -> UInt64 {
        let statement = try db.cachedStatement(sql: select)
        guard let value = try Data.fetchOne(statement, arguments: [Dataset.collection, data.keys[i]]) else {
            throw BenchError("GRDB: row \(i) is missing")
        }
        return value.withUnsafeBytes { checksum($0) }
    }

    func readInOneTransaction(_ data: Dataset, rows: ArraySlice<Int>) throws -> UInt64 {
        try pool.read { db in
            var sum: UInt64 = 0
            for i in rows { sum &+= try GRDBReader.readOne(db, data, i) }
            return sum
        }
    }

    func readEachInItsOwnTransaction(_ data: Dataset, rows: ArraySlice<Int>) throws -> UInt64 {
        var sum: UInt64 = 0
        for i in rows { sum &+= try pool.read { db in try GRDBReader.readOne(db, data, i) } }
        return sum
    }

    func enumerateAll() throws -> (count: Int, checksum: UInt64) {
        try pool.read { db in
            let rows = try GRDB.Row.fetchCursor(db, sql: "SELECT key, data FROM bench WHERE collection = ?", arguments: [Dataset.collection])
            var count = 0
            var sum: UInt64 = 0
            while let row = try rows.next() {
                count += 1
                let value: Data = row[1]
                sum &+= value.withUnsafeBytes { checksum($0) }
            }
            return (count, sum)
        }
    }

    func shortScans(_ data: Dataset, starts: ArraySlice<Int>, length: Int) throws -> UInt64? {
        try pool.read { db in
            let statement = try db.cachedStatement(sql: "SELECT data FROM bench WHERE collection = ? AND key >= ? ORDER BY key LIMIT ?")
            var sum: UInt64 = 0
            for i in starts {
                let values = try Data.fetchCursor(statement, arguments: [Dataset.collection, data.keys[i], length])
                while let value = try values.next() { sum &+= value.withUnsafeBytes { checksum($0) } }
            }
            return sum
        }
    }

    func emptyReadTransactions(_ count: Int) throws {
        for _ in 0..<count { try pool.read { _ in } }
    }

    func close() {}
}
