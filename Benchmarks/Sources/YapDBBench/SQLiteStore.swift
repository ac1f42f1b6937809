import CSQLite
import Foundation

/// SQLite through its C API, laid out as YapDatabase lays it out: table `database2` (`rowid`
/// INTEGER PRIMARY KEY, `collection`, `key`, `data` BLOB, `metadata` BLOB) with the unique index
/// `true_primary_key` on (`collection`, `key`); WAL journal; `synchronous` as the column says;
/// every other setting at SQLite's default. Statements are prepared once and values are bound
/// and read in place (no copies).
final class SQLiteStore: Store {
    let folder: URL
    let synchronous: String
    let connection: SQLiteConnection
    private let insert: OpaquePointer
    private let remove: OpaquePointer
    private let beginImmediate: OpaquePointer
    private let commit: OpaquePointer

    static func fileURL(in folder: URL) -> URL { folder.appendingPathComponent("bench.sqlite") }

    init(folder: URL, synchronous: String) throws {
        self.folder = folder
        self.synchronous = synchronous
        connection = try SQLiteConnection(path: SQLiteStore.fileURL(in: folder).path, synchronous: synchronous)
        try connection.execute("""
            CREATE TABLE IF NOT EXISTS "database2" ("rowid" INTEGER PRIMARY KEY, "collection" CHAR NOT NULL,
              "key" CHAR NOT NULL, "data" BLOB, "metadata" BLOB);
            CREATE UNIQUE INDEX IF NOT EXISTS "true_primary_key" ON "database2" ("collection", "key");
            """)
        insert = try connection.prepare("""
            INSERT INTO "database2" ("collection", "key", "data", "metadata") VALUES (?, ?, ?, NULL)
              ON CONFLICT ("collection", "key") DO UPDATE SET "data" = excluded."data", "metadata" = NULL
            """)
        remove = try connection.prepare(#"DELETE FROM "database2" WHERE "collection" = ? AND "key" = ?"#)
        beginImmediate = try connection.prepare("BEGIN IMMEDIATE")
        commit = try connection.prepare("COMMIT")
    }

    func write(_ data: Dataset, rows: ArraySlice<Int>) throws {
        try connection.stepDone(beginImmediate)
        try data.keyBytes.withUnsafeBytes { keys in
            try data.valueBytes.withUnsafeBytes { values in
                for i in rows {
                    connection.bindCollectionAndKey(insert, keys.baseAddress! + i * Dataset.keySize)
                    sqlite3_bind_blob(insert, 3, values.baseAddress! + i * data.valueSize, Int32(data.valueSize), nil)
                    try connection.stepDone(insert)
                }
            }
        }
        try connection.stepDone(commit)
    }

    func delete(_ data: Dataset, rows: ArraySlice<Int>) throws {
        try connection.stepDone(beginImmediate)
        try data.keyBytes.withUnsafeBytes { keys in
            for i in rows {
                connection.bindCollectionAndKey(remove, keys.baseAddress! + i * Dataset.keySize)
                try connection.stepDone(remove)
            }
        }
        try connection.stepDone(commit)
    }

    func makeReader() throws -> any StoreReader {
        try SQLiteReader(SQLiteConnection(path: SQLiteStore.fileURL(in: folder).path, synchronous: synchronous))
    }

    func emptyWriteTransactions(_ count: Int) throws {
        for _ in 0..<count {
            try connection.stepDone(beginImmediate)
            try connection.stepDone(commit)
        }
    }

    func compact() throws {
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE); VACUUM; PRAGMA wal_checkpoint(TRUNCATE);")
    }

    func close() throws {
        for statement in [insert, remove, beginImmediate, commit] { sqlite3_finalize(statement) }
        try connection.close()
    }
}

final class SQLiteReader: StoreReader {
    let connection: SQLiteConnection
    private let select: OpaquePointer
    private let scan: OpaquePointer
    private let enumerate: OpaquePointer
    private let begin: OpaquePointer
    private let commit: OpaquePointer

    init(_ connection: SQLiteConnection) throws {
        self.connection = connection
        select = try connection.prepare(#"SELECT "data" FROM "database2" WHERE "collection" = ? AND "key" = ?"#)
        scan = try connection.prepare(#"""
            SELECT "key", "data" FROM "database2" WHERE "collection" = ? AND "key" >= ? ORDER BY "key" LIMIT ?
            """#)
        enumerate = try connection.prepare(#"SELECT "rowid", "key", "data" FROM "database2" WHERE "collection" = ?"#)
        begin = try connection.prepare("BEGIN")
        commit = try connection.prepare("COMMIT")
    }

    private func readOne(_ key: UnsafeRawPointer, row: Int) throws -> UInt64 {
        connection.bindCollectionAndKey(select, key)
        guard sqlite3_step(select) == SQLITE_ROW else {
            sqlite3_reset(select)
            throw BenchError("SQLite: row \(row) is missing")
        }
        let sum = checksum(SQLiteConnection.blob(select, column: 0))
        sqlite3_reset(select)
        return sum
    }

    func readInOneTransaction(_ data: Dataset, rows: ArraySlice<Int>) throws -> UInt64 {
        try connection.stepDone(begin)
        defer { _ = try? connection.stepDone(commit) }
        return try data.keyBytes.withUnsafeBytes { keys in
            var sum: UInt64 = 0
            for i in rows { sum &+= try readOne(keys.baseAddress! + i * Dataset.keySize, row: i) }
            return sum
        }
    }

    /// Each `SELECT` in autocommit mode is its own read transaction.
    func readEachInItsOwnTransaction(_ data: Dataset, rows: ArraySlice<Int>) throws -> UInt64 {
        try data.keyBytes.withUnsafeBytes { keys in
            var sum: UInt64 = 0
            for i in rows { sum &+= try readOne(keys.baseAddress! + i * Dataset.keySize, row: i) }
            return sum
        }
    }

    func enumerateAll() throws -> (count: Int, checksum: UInt64) {
        connection.bindCollection(enumerate)
        var count = 0
        var sum: UInt64 = 0
        while sqlite3_step(enumerate) == SQLITE_ROW {
            count += 1
            sum &+= checksum(SQLiteConnection.blob(enumerate, column: 2))
        }
        sqlite3_reset(enumerate)
        return (count, sum)
    }

    func shortScans(_ data: Dataset, starts: ArraySlice<Int>, length: Int) throws -> UInt64? {
        try connection.stepDone(begin)
        defer { _ = try? connection.stepDone(commit) }
        return data.keyBytes.withUnsafeBytes { keys in
            var sum: UInt64 = 0
            for i in starts {
                connection.bindCollectionAndKey(scan, keys.baseAddress! + i * Dataset.keySize)
                sqlite3_bind_int(scan, 3, Int32(length))
                while sqlite3_step(scan) == SQLITE_ROW { sum &+= checksum(SQLiteConnection.blob(scan, column: 1)) }
                sqlite3_reset(scan)
            }
            return sum
        }
    }

    /// `BEGIN` + `COMMIT` with nothing between: SQLite takes its read snapshot lazily, at the
    /// first read, so this measures the statement overhead only.
    func emptyReadTransactions(_ count: Int) throws {
        for _ in 0..<count {
            try connection.stepDone(begin)
            try connection.stepDone(commit)
        }
    }

    func close() {
        for statement in [select, scan, enumerate, begin, commit] { sqlite3_finalize(statement) }
        try? connection.close()
    }
}

/// One `sqlite3` handle (opened `NOMUTEX`: each handle is used by one thread at a time).
final class SQLiteConnection {
    let handle: OpaquePointer
    /// "bench", NUL-terminated, alive as long as the connection (bound with `SQLITE_STATIC`).
    private let collection: UnsafeMutablePointer<CChar>

    init(path: String, synchronous: String) throws {
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let db else {
            sqlite3_close_v2(db)
            throw BenchError("SQLite: cannot open \(path) (\(rc))")
        }
        handle = db
        collection = strdup(Dataset.collection)
        try execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = \(synchronous);")
    }

    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(handle, sql, nil, nil, &message) != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? "unknown error"
            sqlite3_free(message)
            throw BenchError("SQLite: \(text) in \(sql)")
        }
    }

    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw BenchError("SQLite: \(String(cString: sqlite3_errmsg(handle))) in \(sql)")
        }
        return statement
    }

    /// Steps a statement that returns no rows, then resets it.
    func stepDone(_ statement: OpaquePointer) throws {
        let rc = sqlite3_step(statement)
        sqlite3_reset(statement)
        guard rc == SQLITE_DONE else { throw BenchError("SQLite: \(String(cString: sqlite3_errmsg(handle)))") }
    }

    func bindCollection(_ statement: OpaquePointer) {
        sqlite3_bind_text(statement, 1, collection, Int32(Dataset.collection.utf8.count), nil)
    }

    /// Binds parameter 1 to the collection and 2 to the 16-byte key at `key` (in place).
    func bindCollectionAndKey(_ statement: OpaquePointer, _ key: UnsafeRawPointer) {
        bindCollection(statement)
        sqlite3_bind_text(statement, 2, key.assumingMemoryBound(to: CChar.self), Int32(Dataset.keySize), nil)
    }

    /// The blob in `column` of the current row, in place.
    static func blob(_ statement: OpaquePointer, column: Int32) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: sqlite3_column_blob(statement, column), count: Int(sqlite3_column_bytes(statement, column)))
    }

    func close() throws {
        free(collection)
        guard sqlite3_close_v2(handle) == SQLITE_OK else { throw BenchError("SQLite: close failed") }
    }
}
