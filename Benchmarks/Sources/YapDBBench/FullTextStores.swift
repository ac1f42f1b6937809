import CSQLite
import Foundation
import GRDB

// W14's engines: documents stored by key with a full-text index on their text. The peers use
// SQLite FTS5 as a careful SQLite user would: the documents in table `docs` (rowid, key, body)
// and an external-content FTS5 table `fts(key UNINDEXED, body, content='docs')` (the index
// alone, no second copy of the text), the default `unicode61` tokenizer, kept in step in the
// same transaction (an update deletes the old text's entry with FTS5's 'delete' command).

/// One engine's side of W14. Each query method runs its query `times` times in one read
/// transaction and returns what the last run found; results are checked by the caller.
protocol FullTextStore: AnyObject {
    /// Stores every document of `corpus` (key "d<index>") in transactions of `batch`.
    func load(_ corpus: FullTextCorpus, batch: Int) throws
    /// The number of keys returned for the matches of `query`.
    func keys(_ query: String, times: Int) throws -> Int
    /// The keys of the best `limit` matches by bm25, best first.
    func top(_ query: String, limit: Int, times: Int) throws -> [String]
    /// The snippets of the best `limit` matches by bm25: their total length in characters.
    func snippets(_ query: String, limit: Int, times: Int) throws -> Int
    /// The number of matches, without reading documents.
    func count(_ query: String, times: Int) throws -> Int
    /// The bytes the index holds, without free space or superseded pages (YapDB: `stats()`'s
    /// entry bytes of its four trees; SQLite: the `dbstat` payload of the FTS5 shadow tables).
    func liveIndexBytes() throws -> Double
    /// Replaces document `index`'s text in a transaction of its own.
    func update(_ index: Int, text: String) throws
    func close() throws
}

enum FullTextSQL {
    static let schema = """
        CREATE TABLE docs (rowid INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, body TEXT NOT NULL);
        """
    static let index = """
        CREATE VIRTUAL TABLE fts USING fts5(key UNINDEXED, body, content='docs', content_rowid='rowid');
        """
    static let insertDoc = "INSERT INTO docs (rowid, key, body) VALUES (?, ?, ?)"
    static let insertIndex = "INSERT INTO fts (rowid, key, body) VALUES (?, ?, ?)"
    static let keys = "SELECT key FROM fts WHERE fts MATCH ?"
    static let top = "SELECT key FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT ?"
    static let snippets = "SELECT key, snippet(fts, 1, '<b>', '</b>', '...', 15) FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT ?"
    static let count = "SELECT count(*) FROM fts WHERE fts MATCH ?"
    static let live = "SELECT sum(payload) FROM dbstat WHERE name LIKE 'fts\\_%' ESCAPE '\\'"
    static let old = "SELECT body FROM docs WHERE rowid = ?"
    static let deleteIndex = "INSERT INTO fts (fts, rowid, key, body) VALUES ('delete', ?, ?, ?)"
    static let updateDoc = "UPDATE docs SET body = ? WHERE rowid = ?"
}

private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// Whether the system SQLite was compiled with FTS5 (`PRAGMA compile_options`).
func sqliteHasFTS5() -> Bool {
    var db: OpaquePointer?
    guard sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let db else { return false }
    defer { sqlite3_close_v2(db) }
    var statement: OpaquePointer?
    guard sqlite3_prepare_v2(db, "PRAGMA compile_options", -1, &statement, nil) == SQLITE_OK, let statement else { return false }
    defer { sqlite3_finalize(statement) }
    while sqlite3_step(statement) == SQLITE_ROW {
        if String(cString: sqlite3_column_text(statement, 0)) == "ENABLE_FTS5" { return true }
    }
    return false
}

/// SQLite FTS5 through the C API: WAL, `synchronous=NORMAL`, statements prepared once.
final class SQLiteFullTextStore: FullTextStore {
    let connection: SQLiteConnection
    let indexed: Bool
    private var statements: [String: OpaquePointer] = [:]

    init(folder: URL, indexed: Bool) throws {
        connection = try SQLiteConnection(path: folder.appendingPathComponent("fts.sqlite").path, synchronous: "NORMAL")
        self.indexed = indexed
        try connection.execute(FullTextSQL.schema + (indexed ? FullTextSQL.index : ""))
    }

    private func statement(_ sql: String) throws -> OpaquePointer {
        if let existing = statements[sql] { return existing }
        let made = try connection.prepare(sql)
        statements[sql] = made
        return made
    }

    private func bind(_ statement: OpaquePointer, _ index: Int32, _ text: String) {
        sqlite3_bind_text(statement, index, text, -1, transient)
    }

    func load(_ corpus: FullTextCorpus, batch: Int) throws {
        let doc = try statement(FullTextSQL.insertDoc)
        let targets = indexed ? [doc, try statement(FullTextSQL.insertIndex)] : [doc]
        var start = 0
        while start < corpus.documents.count {
            let end = min(start + batch, corpus.documents.count)
            try connection.execute("BEGIN IMMEDIATE")
            for i in start..<end {
                for target in targets {
                    sqlite3_bind_int64(target, 1, Int64(i + 1))
                    bind(target, 2, "d\(i)")
                    bind(target, 3, corpus.documents[i])
                    try connection.stepDone(target)
                }
            }
            try connection.execute("COMMIT")
            start = end
        }
    }

    private func reading<T>(_ body: () throws -> T) throws -> T {
        try connection.execute("BEGIN")
        defer { try? connection.execute("COMMIT") }
        return try body()
    }

    private func rows(_ statement: OpaquePointer, _ each: (OpaquePointer) -> Void) throws {
        defer { sqlite3_reset(statement) }
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { return }
            guard rc == SQLITE_ROW else { throw BenchError("SQLite: \(String(cString: sqlite3_errmsg(connection.handle)))") }
            each(statement)
        }
    }

    func keys(_ query: String, times: Int) throws -> Int {
        let select = try statement(FullTextSQL.keys)
        return try reading {
            var found = 0
            for _ in 0..<times {
                found = 0
                bind(select, 1, query)
                try rows(select) { row in
                    _ = String(cString: sqlite3_column_text(row, 0))
                    found += 1
                }
            }
            return found
        }
    }

    func top(_ query: String, limit: Int, times: Int) throws -> [String] {
        let select = try statement(FullTextSQL.top)
        return try reading {
            var keys: [String] = []
            for _ in 0..<times {
                keys = []
                bind(select, 1, query)
                sqlite3_bind_int64(select, 2, Int64(limit))
                try rows(select) { row in keys.append(String(cString: sqlite3_column_text(row, 0))) }
            }
            return keys
        }
    }

    func snippets(_ query: String, limit: Int, times: Int) throws -> Int {
        let select = try statement(FullTextSQL.snippets)
        return try reading {
            var length = 0
            for _ in 0..<times {
                length = 0
                bind(select, 1, query)
                sqlite3_bind_int64(select, 2, Int64(limit))
                try rows(select) { row in
                    _ = String(cString: sqlite3_column_text(row, 0))
                    length += String(cString: sqlite3_column_text(row, 1)).count
                }
            }
            return length
        }
    }

    func count(_ query: String, times: Int) throws -> Int {
        let select = try statement(FullTextSQL.count)
        return try reading {
            var found = 0
            for _ in 0..<times {
                bind(select, 1, query)
                try rows(select) { row in found = Int(sqlite3_column_int64(row, 0)) }
            }
            return found
        }
    }

    func liveIndexBytes() throws -> Double {
        let select = try statement(FullTextSQL.live)
        var bytes = 0.0
        try rows(select) { row in bytes = sqlite3_column_double(row, 0) }
        return bytes
    }

    func update(_ index: Int, text: String) throws {
        let old = try statement(FullTextSQL.old), delete = try statement(FullTextSQL.deleteIndex)
        let change = try statement(FullTextSQL.updateDoc), insert = try statement(FullTextSQL.insertIndex)
        try connection.execute("BEGIN IMMEDIATE")
        var previous = ""
        sqlite3_bind_int64(old, 1, Int64(index + 1))
        try rows(old) { row in previous = String(cString: sqlite3_column_text(row, 0)) }
        if indexed {
            sqlite3_bind_int64(delete, 1, Int64(index + 1))
            bind(delete, 2, "d\(index)")
            bind(delete, 3, previous)
            try connection.stepDone(delete)
        }
        bind(change, 1, text)
        sqlite3_bind_int64(change, 2, Int64(index + 1))
        try connection.stepDone(change)
        if indexed {
            sqlite3_bind_int64(insert, 1, Int64(index + 1))
            bind(insert, 2, "d\(index)")
            bind(insert, 3, text)
            try connection.stepDone(insert)
        }
        try connection.execute("COMMIT")
    }

    func close() throws {
        for statement in statements.values { sqlite3_finalize(statement) }
        statements = [:]
        try connection.close()
    }
}

/// GRDB 7.10.0's FTS5 as a Swift developer uses it: a `DatabasePool`, the same tables made with
/// GRDB's schema API (`create(virtualTable:using: FTS5())`, external content), cached
/// statements, `pool.write { }` per transaction and `pool.read { }` per read transaction.
final class GRDBFullTextStore: FullTextStore {
    let pool: DatabasePool
    let indexed: Bool

    init(folder: URL, indexed: Bool) throws {
        pool = try DatabasePool(path: folder.appendingPathComponent("fts.grdb.sqlite").path)
        self.indexed = indexed
        try pool.write { db in
            try db.execute(sql: FullTextSQL.schema)
            if indexed {
                try db.create(virtualTable: "fts", using: FTS5()) { t in
                    t.content = "docs"
                    t.contentRowID = "rowid"
                    t.column("key").notIndexed()
                    t.column("body")
                }
            }
        }
    }

    func load(_ corpus: FullTextCorpus, batch: Int) throws {
        var start = 0
        while start < corpus.documents.count {
            let end = min(start + batch, corpus.documents.count)
            try pool.write { db in
                let doc = try db.cachedStatement(sql: FullTextSQL.insertDoc)
                let fts = indexed ? try db.cachedStatement(sql: FullTextSQL.insertIndex) : nil
                for i in start..<end {
                    let arguments: StatementArguments = [i + 1, "d\(i)", corpus.documents[i]]
                    try doc.execute(arguments: arguments)
                    try fts?.execute(arguments: arguments)
                }
            }
            start = end
        }
    }

    func keys(_ query: String, times: Int) throws -> Int {
        try pool.read { db in
            var found = 0
            for _ in 0..<times {
                found = try String.fetchAll(db.cachedStatement(sql: FullTextSQL.keys), arguments: [query]).count
            }
            return found
        }
    }

    func top(_ query: String, limit: Int, times: Int) throws -> [String] {
        try pool.read { db in
            var keys: [String] = []
            for _ in 0..<times { keys = try String.fetchAll(db.cachedStatement(sql: FullTextSQL.top), arguments: [query, limit]) }
            return keys
        }
    }

    func snippets(_ query: String, limit: Int, times: Int) throws -> Int {
        try pool.read { db in
            var length = 0
            for _ in 0..<times {
                length = 0
                let rows = try GRDB.Row.fetchCursor(db.cachedStatement(sql: FullTextSQL.snippets), arguments: [query, limit])
                while let row = try rows.next() {
                    let _: String = row[0]
                    let snippet: String = row[1]
                    length += snippet.count
                }
            }
            return length
        }
    }

    func count(_ query: String, times: Int) throws -> Int {
        try pool.read { db in
            var found = 0
            for _ in 0..<times { found = try Int.fetchOne(db.cachedStatement(sql: FullTextSQL.count), arguments: [query]) ?? 0 }
            return found
        }
    }

    func liveIndexBytes() throws -> Double {
        try pool.read { db in try Double.fetchOne(db, sql: FullTextSQL.live) ?? 0 }
    }

    func update(_ index: Int, text: String) throws {
        try pool.write { db in
            let previous = try String.fetchOne(db.cachedStatement(sql: FullTextSQL.old), arguments: [index + 1]) ?? ""
            if indexed { try db.cachedStatement(sql: FullTextSQL.deleteIndex).execute(arguments: [index + 1, "d\(index)", previous]) }
            try db.cachedStatement(sql: FullTextSQL.updateDoc).execute(arguments: [text, index + 1])
            if indexed { try db.cachedStatement(sql: FullTextSQL.insertIndex).execute(arguments: [index + 1, "d\(index)", text]) }
        }
    }

    func close() throws { try pool.close() }
}
