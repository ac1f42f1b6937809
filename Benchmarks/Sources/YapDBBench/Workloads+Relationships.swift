import Foundation
import CSQLite
import GRDB
import YapDB

/// W13: relationships (issue 22). YapDB's `YapDatabaseRelationship` against SQLite with foreign
/// keys (`ON DELETE CASCADE`, an index on each foreign-key column, `PRAGMA foreign_keys = ON`)
/// and GRDB's associations (`belongsTo(…, onDelete: .cascade)` columns, `hasMany` requests,
/// records), all with relaxed durability (YapDB `.normal`, SQLite and GRDB WAL `synchronous = NORMAL`):
/// - cascade delete of a parent with 10,000 children, and of 100 parents × 100 children in one
///   transaction (timed: the transaction that deletes the parents);
/// - edges by destination among `rows` edges (children spread over `rows / 100` parents): the
///   children of 1,000 random parents, one read transaction;
/// - the added cost per write of a node with 3 protocol edges: 20,000 nodes in transactions of
///   1,000, with the extension (YapDB) or the foreign keys and their indexes (SQLite), minus the
///   same writes without.
extension Runner {
    static let w13Children = 10_000
    static let w13Lookups = 1_000
    static let w13Writes = 20_000
    static let w13Targets = 1_000

    func runW13() throws {
        let engines: [Engine] = [.yapdb, .sqliteNormal, .grdb]
        try runW13Cascade(engines, parents: 1, children: Self.w13Children, label: "cascade delete of 1 parent with 10,000 children")
        try runW13Cascade(engines, parents: 100, children: 100, label: "cascade delete of 100 parents × 100 children, one transaction")
        try runW13Lookups(engines)
        try runW13Writes(engines)
    }

    /// W13's cascades and writes with YapDB alone (`--only W13P`), for a profiler: no report rows.
    func runW13ForProfiling() throws {
        for (parents, children) in [(1, Self.w13Children), (100, 100)] {
            let folder = try freshFolder("W13P-cascade-\(parents)")
            defer { remove(folder) }
            let store = try W13Store.open(.yapdb, folder: folder, withRelationships: true)
            defer { store.close() }
            try store.load(parents: parents, childrenPerParent: children)
            let time = try timed(true) { try store.deleteParents(parents) }
            log("  cascade \(parents) × \(children): \(format(time, .time))")
        }
        for with in [true, false] {
            let folder = try freshFolder("W13P-writes-\(with)")
            defer { remove(folder) }
            let store = try W13Store.open(.yapdb, folder: folder, withRelationships: with)
            defer { store.close() }
            try store.loadTargets(Self.w13Targets)
            let time = try timed(true) { try store.writeNodes(Self.w13Writes, targets: Self.w13Targets, batch: 1_000) }
            log("  writes (relationships: \(with)): \(format(time / Double(Self.w13Writes), .time)) per node")
        }
    }

    func runW13Cascade(_ engines: [Engine], parents: Int, children: Int, label: String) throws {
        let figures = try interleave(engines, reps: settings.heavyReps) { engine, rep in
            let folder = try freshFolder("W13-cascade-\(parents)-\(engine.rawValue)-\(rep)")
            defer { remove(folder) }
            let store = try W13Store.open(engine, folder: folder, withRelationships: true)
            defer { store.close() }
            try store.load(parents: parents, childrenPerParent: children)
            let time = try timed(engine == .yapdb) { try store.deleteParents(parents) }
            guard try store.childCount() == 0 else { throw BenchError("W13 \(engine.rawValue): children left after the cascade") }
            return ["delete": time]
        }
        add("W13", label, .time, figures, "delete", note: "the transaction that deletes the parents; every child goes with them")
    }

    func runW13Lookups(_ engines: [Engine]) throws {
        let edges = settings.rows
        let parents = edges / 100
        var stores: [Engine: any W13StoreProtocol] = [:]
        for engine in engines {
            let store = try W13Store.open(engine, folder: try freshFolder("W13-lookup-\(engine.rawValue)"), withRelationships: true)
            try store.load(parents: parents, childrenPerParent: 100)
            stores[engine] = store
        }
        defer { for store in stores.values { store.close() } }
        var rng = SplitMix64(seed: 0x5EED_0131)
        let probes = (0..<Self.w13Lookups).map { _ in Int(rng.next() % UInt64(parents)) }
        let figures = try interleave(engines, reps: settings.reps) { engine, _ in
            var found = 0
            let time = try timed(engine == .yapdb) { found = try stores[engine]!.children(ofParents: probes) }
            guard found == 100 * probes.count else { throw BenchError("W13 \(engine.rawValue): \(found) children found") }
            return ["lookup": time / Double(probes.count)]
        }
        add("W13", "edges by destination among \(edges.formatted()) edges (100 per parent), per lookup", .time, figures, "lookup",
            note: "YapDB `iterateEdgeSources(withName:destinationKey:collection:using:)` (each source key and collection as strings, no edge object; `enumerateEdges`, which makes a `YapDatabaseRelationshipEdge` per edge, measured 1.11× SQLite at full size before it), SQLite `SELECT id FROM child WHERE parent = ?` (indexed), GRDB `parent.request(for: Parent.children).select(Column(\"id\"), as: String.self)`; the 100 source keys returned")
    }

    func runW13Writes(_ engines: [Engine]) throws {
        let figures = try interleave(engines, reps: settings.heavyReps) { engine, rep in
            var times: [Bool: Double] = [:]
            for with in [true, false] {
                let folder = try freshFolder("W13-writes-\(engine.rawValue)-\(with)-\(rep)")
                defer { remove(folder) }
                let store = try W13Store.open(engine, folder: folder, withRelationships: with)
                defer { store.close() }
                try store.loadTargets(Self.w13Targets)
                times[with] = try timed(engine == .yapdb) { try store.writeNodes(Self.w13Writes, targets: Self.w13Targets, batch: 1_000) }
            }
            return ["with": times[true]! / Double(Self.w13Writes), "without": times[false]! / Double(Self.w13Writes),
                    "added": (times[true]! - times[false]!) / Double(Self.w13Writes)]
        }
        add("W13", "write 20,000 nodes with 3 edges each in transactions of 1,000, per node", .time, figures, "with", charted: false)
        add("W13", "write 20,000 nodes without edges (no extension; no foreign keys), per node", .time, figures, "without", charted: false)
        add("W13", "added cost per write of a node with 3 protocol edges", .time, figures, "added",
            note: "the difference of the two rows above, per run; SQLite's and GRDB's side is 3 foreign-key columns with their indexes", charted: false)
    }
}

protocol W13StoreProtocol {
    func load(parents: Int, childrenPerParent: Int) throws
    func deleteParents(_ count: Int) throws
    func childCount() throws -> Int
    func children(ofParents: [Int]) throws -> Int
    func loadTargets(_ count: Int) throws
    func writeNodes(_ count: Int, targets: Int, batch: Int) throws
    func close()
}

enum W13Store {
    static func open(_ engine: Engine, folder: URL, withRelationships: Bool) throws -> any W13StoreProtocol {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        switch engine {
        case .yapdb: return try W13YapStore(folder: folder, withRelationships: withRelationships)
        case .sqliteNormal: return try W13SQLiteStore(folder: folder, withForeignKeys: withRelationships)
        case .grdb: return try W13GRDBStore(folder: folder, withForeignKeys: withRelationships)
        default: throw BenchError("W13: \(engine.rawValue) is not a W13 engine")
        }
    }

    static func parentKey(_ i: Int) -> String { "p\(i)" }
    static func childKey(_ parent: Int, _ j: Int) -> String { "c\(parent)-\(j)" }
}

/// A child (or a written node): its parent, or up to three targets, as protocol edges.
struct W13Node: Codable, YapDatabaseRelationshipNode {
    var parent: String?
    var targets: [String]

    func yapDatabaseRelationshipEdges() -> [YapDatabaseRelationshipEdge]? {
        if let parent {
            return [YapDatabaseRelationshipEdge(name: "parent", destinationKey: parent, collection: "parents",
                                                nodeDeleteRules: .deleteSourceIfDestinationDeleted)]
        }
        return targets.map {
            YapDatabaseRelationshipEdge(name: "target", destinationKey: $0, collection: "targets", nodeDeleteRules: .deleteSourceIfDestinationDeleted)
        }
    }
}

final class W13YapStore: W13StoreProtocol {
    let database: YapDatabase
    let connection: YapDatabaseConnection

    init(folder: URL, withRelationships: Bool) throws {
        let options = YapDatabaseOptions()
        options.durability = .normal
        database = try YapDatabase.open(url: YapStore.fileURL(in: folder), options: options)
        for collection in ["parents", "children", "targets", "nodes"] {
            database.registerCodableSerialization(W13Node.self, forCollection: collection)
        }
        if withRelationships {
            guard database.register(YapDatabaseRelationship(), withName: "rel") else { throw BenchError("W13: no relationship extension") }
        }
        connection = database.newConnection()
        connection.objectCacheEnabled = false
        connection.metadataCacheEnabled = false
    }

    func load(parents: Int, childrenPerParent: Int) throws {
        try connection.write { tx in
            for p in 0..<parents {
                tx.setObject(W13Node(parent: nil, targets: []), forKey: W13Store.parentKey(p), inCollection: "parents")
                for j in 0..<childrenPerParent {
                    tx.setObject(W13Node(parent: W13Store.parentKey(p), targets: []), forKey: W13Store.childKey(p, j), inCollection: "children")
                }
            }
        }
    }

    func deleteParents(_ count: Int) throws {
        try connection.write { tx in
            for p in 0..<count { tx.removeObject(forKey: W13Store.parentKey(p), inCollection: "parents") }
        }
    }

    func childCount() throws -> Int { connection.read { Int($0.numberOfKeys(inCollection: "children")) } }

    func children(ofParents parents: [Int]) throws -> Int {
        connection.read { tx in
            guard let rel = tx.ext("rel") as? YapDatabaseRelationshipTransaction else { return 0 }
            var found = 0
            for p in parents {
                rel.iterateEdgeSources(withName: "parent", destinationKey: W13Store.parentKey(p), collection: "parents") { key, _, _ in
                    if !key.isEmpty { found += 1 }
                }
            }
            return found
        }
    }

    func loadTargets(_ count: Int) throws {
        try connection.write { tx in
            for i in 0..<count { tx.setObject(W13Node(parent: nil, targets: []), forKey: "t\(i)", inCollection: "targets") }
        }
    }

    func writeNodes(_ count: Int, targets: Int, batch: Int) throws {
        var start = 0
        while start < count {
            let end = min(count, start + batch)
            try connection.write { tx in
                for i in start..<end {
                    let node = W13Node(parent: nil, targets: ["t\(i % targets)", "t\((i * 7 + 1) % targets)", "t\((i * 13 + 2) % targets)"])
                    tx.setObject(node, forKey: "n\(i)", inCollection: "nodes")
                }
            }
            start = end
        }
    }

    func close() { try? database.close() }
}

final class W13SQLiteStore: W13StoreProtocol {
    let connection: SQLiteConnection
    let withForeignKeys: Bool

    init(folder: URL, withForeignKeys: Bool) throws {
        connection = try SQLiteConnection(path: folder.appendingPathComponent("w13.sqlite").path, synchronous: "NORMAL")
        self.withForeignKeys = withForeignKeys
        try connection.execute("""
            PRAGMA foreign_keys = ON;
            CREATE TABLE parent (id TEXT PRIMARY KEY, data BLOB);
            CREATE TABLE child (id TEXT PRIMARY KEY, parent TEXT REFERENCES parent(id) ON DELETE CASCADE, data BLOB);
            CREATE INDEX child_parent ON child (parent);
            CREATE TABLE target (id TEXT PRIMARY KEY, data BLOB);
            """ + (withForeignKeys ? """
            CREATE TABLE node (id TEXT PRIMARY KEY, t1 TEXT REFERENCES target(id) ON DELETE CASCADE,
              t2 TEXT REFERENCES target(id) ON DELETE CASCADE, t3 TEXT REFERENCES target(id) ON DELETE CASCADE, data BLOB);
            CREATE INDEX node_t1 ON node (t1); CREATE INDEX node_t2 ON node (t2); CREATE INDEX node_t3 ON node (t3);
            """ : "CREATE TABLE node (id TEXT PRIMARY KEY, t1 TEXT, t2 TEXT, t3 TEXT, data BLOB);"))
    }

    /// Runs `sql` statements in one transaction, each prepared once.
    func transaction(_ body: () throws -> Void) throws {
        try connection.execute("BEGIN IMMEDIATE")
        try body()
        try connection.execute("COMMIT")
    }

    static let payload = [UInt8](repeating: 7, count: 24)

    func bind(_ statement: OpaquePointer, _ index: Int32, _ text: String) {
        sqlite3_bind_text(statement, index, text, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
    }

    func load(parents: Int, childrenPerParent: Int) throws {
        let insertParent = try connection.prepare("INSERT INTO parent (id, data) VALUES (?, ?)")
        let insertChild = try connection.prepare("INSERT INTO child (id, parent, data) VALUES (?, ?, ?)")
        defer { sqlite3_finalize(insertParent); sqlite3_finalize(insertChild) }
        try transaction {
            for p in 0..<parents {
                bind(insertParent, 1, W13Store.parentKey(p))
                sqlite3_bind_blob(insertParent, 2, Self.payload, Int32(Self.payload.count), nil)
                try connection.stepDone(insertParent)
                for j in 0..<childrenPerParent {
                    bind(insertChild, 1, W13Store.childKey(p, j))
                    bind(insertChild, 2, W13Store.parentKey(p))
                    sqlite3_bind_blob(insertChild, 3, Self.payload, Int32(Self.payload.count), nil)
                    try connection.stepDone(insertChild)
                }
            }
        }
    }

    func deleteParents(_ count: Int) throws {
        let delete = try connection.prepare("DELETE FROM parent WHERE id = ?")
        defer { sqlite3_finalize(delete) }
        try transaction {
            for p in 0..<count {
                bind(delete, 1, W13Store.parentKey(p))
                try connection.stepDone(delete)
            }
        }
    }

    func childCount() throws -> Int {
        let count = try connection.prepare("SELECT COUNT(*) FROM child")
        defer { sqlite3_finalize(count) }
        guard sqlite3_step(count) == SQLITE_ROW else { throw BenchError("W13: count failed") }
        return Int(sqlite3_column_int64(count, 0))
    }

    func children(ofParents parents: [Int]) throws -> Int {
        let select = try connection.prepare("SELECT id FROM child WHERE parent = ?")
        defer { sqlite3_finalize(select) }
        var found = 0
        try connection.execute("BEGIN")
        for p in parents {
            bind(select, 1, W13Store.parentKey(p))
            while sqlite3_step(select) == SQLITE_ROW {
                if sqlite3_column_bytes(select, 0) > 0 { found += 1 }
            }
            sqlite3_reset(select)
        }
        try connection.execute("COMMIT")
        return found
    }

    func loadTargets(_ count: Int) throws {
        let insert = try connection.prepare("INSERT INTO target (id, data) VALUES (?, ?)")
        defer { sqlite3_finalize(insert) }
        try transaction {
            for i in 0..<count {
                bind(insert, 1, "t\(i)")
                sqlite3_bind_blob(insert, 2, Self.payload, Int32(Self.payload.count), nil)
                try connection.stepDone(insert)
            }
        }
    }

    func writeNodes(_ count: Int, targets: Int, batch: Int) throws {
        let insert = try connection.prepare("INSERT OR REPLACE INTO node (id, t1, t2, t3, data) VALUES (?, ?, ?, ?, ?)")
        defer { sqlite3_finalize(insert) }
        var start = 0
        while start < count {
            let end = min(count, start + batch)
            try transaction {
                for i in start..<end {
                    bind(insert, 1, "n\(i)")
                    bind(insert, 2, "t\(i % targets)")
                    bind(insert, 3, "t\((i * 7 + 1) % targets)")
                    bind(insert, 4, "t\((i * 13 + 2) % targets)")
                    sqlite3_bind_blob(insert, 5, Self.payload, Int32(Self.payload.count), nil)
                    try connection.stepDone(insert)
                }
            }
            start = end
        }
    }

    func close() { try? connection.close() }
}

/// GRDB as an app models the same graph: records with associations (`Child.parent =
/// belongsTo(Parent.self)`, `Parent.children = hasMany(Child.self)`), tables made with
/// `belongsTo(…, onDelete: .cascade)` (a foreign key and an index per column; GRDB turns foreign
/// keys on), a `DatabasePool` (WAL, `synchronous = NORMAL`). Without relationships the node
/// table has the same columns, no foreign keys and no indexes.
final class W13GRDBStore: W13StoreProtocol {
    struct Parent: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "parent"
        static let children = hasMany(Child.self)
        var id: String
        var data: Data
    }

    struct Child: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "child"
        static let parent = belongsTo(Parent.self)
        var id: String
        var parentId: String
        var data: Data
    }

    struct Target: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "target"
        var id: String
        var data: Data
    }

    struct Node: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "node"
        var id: String
        var t1Id: String
        var t2Id: String
        var t3Id: String
        var data: Data
    }

    let pool: DatabasePool
    static let payload = Data(repeating: 7, count: 24)

    init(folder: URL, withForeignKeys: Bool) throws {
        pool = try DatabasePool(path: folder.appendingPathComponent("w13.grdb.sqlite").path)
        try pool.write { db in
            try db.create(table: "parent") { t in
                t.primaryKey("id", .text)
                t.column("data", .blob)
            }
            try db.create(table: "child") { t in
                t.primaryKey("id", .text)
                t.belongsTo("parent", onDelete: .cascade).notNull()
                t.column("data", .blob)
            }
            try db.create(table: "target") { t in
                t.primaryKey("id", .text)
                t.column("data", .blob)
            }
            try db.create(table: "node") { t in
                t.primaryKey("id", .text)
                for column in ["t1", "t2", "t3"] {
                    if withForeignKeys {
                        t.belongsTo(column, inTable: "target", onDelete: .cascade)
                    } else {
                        t.column(column + "Id", .text)
                    }
                }
                t.column("data", .blob)
            }
        }
    }

    func load(parents: Int, childrenPerParent: Int) throws {
        try pool.write { db in
            for p in 0..<parents {
                try Parent(id: W13Store.parentKey(p), data: Self.payload).insert(db)
                for j in 0..<childrenPerParent {
                    try Child(id: W13Store.childKey(p, j), parentId: W13Store.parentKey(p), data: Self.payload).insert(db)
                }
            }
        }
    }

    func deleteParents(_ count: Int) throws {
        try pool.write { db in
            for p in 0..<count { _ = try Parent.deleteOne(db, key: W13Store.parentKey(p)) }
        }
    }

    func childCount() throws -> Int { try pool.read { db in try Child.fetchCount(db) } }

    func children(ofParents parents: [Int]) throws -> Int {
        try pool.read { db in
            var found = 0
            for p in parents {
                let request = Parent(id: W13Store.parentKey(p), data: Data())
                    .request(for: Parent.children).select(Column("id"), as: String.self)
                let ids = try request.fetchCursor(db)
                while let id = try ids.next() { if !id.isEmpty { found += 1 } }
            }
            return found
        }
    }

    func loadTargets(_ count: Int) throws {
        try pool.write { db in
            for i in 0..<count { try Target(id: "t\(i)", data: Self.payload).insert(db) }
        }
    }

    func writeNodes(_ count: Int, targets: Int, batch: Int) throws {
        var start = 0
        while start < count {
            let end = min(count, start + batch)
            try pool.write { db in
                for i in start..<end {
                    try Node(id: "n\(i)", t1Id: "t\(i % targets)", t2Id: "t\((i * 7 + 1) % targets)", t3Id: "t\((i * 13 + 2) % targets)",
                             data: Self.payload).insert(db, onConflict: .replace)
                }
            }
            start = end
        }
    }

    func close() { try? pool.close() }
}
