import Foundation
import YapDB

/// The object the object-path workloads store: a small Codable value.
struct Item: Codable, Sendable {
    var name: String
    var count: Int
    var tags: [String]
}

/// W9 and W10: YapDatabase's object path (Codable objects, the per-connection object cache,
/// transactions, cache sync between connections). Peers have no object layer: n/a, except the
/// empty transactions, measured on a small database of each engine.
extension Runner {
    static let objectCollection = "objects"
    static let objectRows = 10_000
    static let peers: [Engine] = [.sqliteNormal, .sqliteFull, .grdb, .lmdb]

    /// A YapDB database (`.normal`: setting up is not timed) with `objectRows` Codable items.
    func objectDatabase(_ name: String) throws -> (YapDatabase, URL) {
        let folder = try freshFolder(name)
        let options = YapDatabaseOptions()
        options.durability = .normal
        let database = try YapDatabase.open(url: folder.appendingPathComponent("objects.yapdb"), options: options)
        database.registerCodableSerialization(Item.self, forCollection: Runner.objectCollection)
        try database.newConnection().write { tx in
            for i in 0..<Runner.objectRows {
                tx.setObject(Item(name: "item \(i)", count: i, tags: ["a", "b"]), forKey: Runner.objectKey(i), inCollection: Runner.objectCollection)
            }
        }
        return (database, folder)
    }

    static func objectKey(_ i: Int) -> String { "object-\(i)" }

    /// Calls `object(forKey:)` for each key of `sequence` in one read transaction; ns per call.
    func timeObjectReads(_ connection: YapDatabaseConnection, _ keys: [String], _ sequence: [Int]) throws -> Double {
        try connection.read { tx in
            var found = 0
            for i in sequence.prefix(min(sequence.count, 4 * 250)) where tx.object(forKey: keys[i], inCollection: Runner.objectCollection) != nil {
                found += 1
            }
            let time = timed(true) {
                for i in sequence where tx.object(forKey: keys[i], inCollection: Runner.objectCollection) != nil { found += 1 }
            }
            guard found > 0 else { throw BenchError("W9: no object found") }
            return time / Double(sequence.count)
        }
    }

    /// W9: object-cache hits (limit 250) at 5–95 % hit rates, the cache alone (every read a
    /// hit), reads with the cache off, and 1,000 empty read, long-lived read and read-write
    /// transactions.
    func runW9() throws {
        let (database, folder) = try objectDatabase("W9")
        defer { try? database.close(); remove(folder) }
        let keys = (0..<Runner.objectRows).map(Runner.objectKey)
        let operations = settings.objectOperations
        var rng = SplitMix64(seed: 0x5EED_0009)
        // Uniform reads over a working set of W keys with an LRU of 250 hit 250/W of the time.
        var cases: [(label: String, sequence: [Int], cache: Bool)] = [
            ("object(): cache hit, the same key every time", Array(repeating: 7, count: operations), true),
            ("object(): cache alone, 250 cached keys in random order (every read a hit)",
             (0..<operations).map { _ in Int(rng.next() % 250) }, true),
        ]
        for rate in [95, 75, 50, 25, 5] {
            let working = 250 * 100 / rate
            cases.append(("object(): \(rate) % hit rate (uniform over \(working) keys, limit 250)",
                          (0..<operations).map { _ in Int(rng.next() % UInt64(working)) }, true))
        }
        cases.append(("object(): cache off, every read decoded", (0..<operations).map { _ in Int(rng.next() % UInt64(keys.count)) }, false))
        for item in cases {
            var times: [Double] = []
            for _ in 0..<settings.reps {
                let connection = database.newConnection()
                connection.objectCacheLimit = 250
                connection.objectCacheEnabled = item.cache
                times.append(try timeObjectReads(connection, keys, item.sequence))
            }
            add("W9", item.label, .time, ["t": [.yapdb: times]], "t", charted: false, notApplicable: Runner.peers)
        }
        try runW9Transactions(database)
    }

    /// W9's transactions: batches of 1,000, interleaved across engines; ns per transaction.
    private func runW9Transactions(_ database: YapDatabase) throws {
        let batch = 1_000
        let batches = settings.size == .full ? 21 : 9
        let small = Dataset(count: 1_000, valueSize: 100, kind: .random, seed: 0x5EED_0010)
        var peers: [Engine: (store: any Store, reader: any StoreReader, folder: URL)] = [:]
        for engine in [Engine.sqliteNormal, .grdb, .lmdb] where settings.wants(engine) {
            let folder = try freshFolder("W9-\(engine)")
            let store = try openStore(engine, in: folder, durability: .durable, mapSize: settings.lmdbMapSize)
            try store.write(small, rows: Array(0..<small.count)[...])
            peers[engine] = (store, try store.makeReader(), folder)
        }
        defer {
            for peer in peers.values {
                peer.reader.close()
                try? peer.store.close()
                remove(peer.folder)
            }
        }
        let connection = database.newConnection()
        let writer = database.newConnection()
        let figures = try interleave([.yapdb, .sqliteNormal, .grdb, .lmdb], reps: batches) { engine, _ in
            if let peer = peers[engine] {
                let read = try timed { try peer.reader.emptyReadTransactions(batch) }
                let write = try timed { try peer.store.emptyWriteTransactions(batch) }
                return ["read": read / Double(batch), "write": write / Double(batch)]
            }
            var sink = 0
            let read = timed(true) { for _ in 0..<batch { connection.read { _ in sink &+= 1 } } }
            let longLived = timed(true) {
                for _ in 0..<batch {
                    _ = connection.beginLongLivedReadTransaction()
                    connection.read { _ in sink &+= 1 }
                    _ = connection.endLongLivedReadTransaction()
                }
            }
            let write = timed(true) { for _ in 0..<batch { writer.readWrite { _ in sink &+= 1 } } }
            precondition(sink == 3 * batch)
            return ["read": read / Double(batch), "longLived": longLived / Double(batch), "write": write / Double(batch)]
        }
        add("W9", "empty read transaction (batches of 1,000)", .time, figures, "read",
            note: "SQLite: BEGIN + COMMIT (SQLite takes its snapshot at the first read); GRDB: pool.read { }; LMDB: mdb_txn_renew + mdb_txn_reset")
        add("W9", "long-lived read: begin, one empty read, end (batches of 1,000)", .time, figures, "longLived", charted: false,
            notApplicable: Runner.peers)
        add("W9", "empty read-write transaction (batches of 1,000)", .time, figures, "write",
            note: "SQLite: BEGIN IMMEDIATE + COMMIT; GRDB: pool.write { }; LMDB: mdb_txn_begin + mdb_txn_commit (nothing to sync)")
    }

    /// W10: connection A commits 1, 100 and 10,000 changed keys that connection B holds in its
    /// cache; B's next transaction start (where it syncs its caches), then B reading those keys;
    /// and a long-lived reader moving across 1,000 commits.
    func runW10() throws {
        let (database, folder) = try objectDatabase("W10")
        defer { try? database.close(); remove(folder) }
        let keys = (0..<Runner.objectRows).map(Runner.objectKey)
        let writerA = database.newConnection()
        var round = 0
        for changed in [1, 100, 10_000] {
            var start: [Double] = [], reread: [Double] = []
            for _ in 0..<settings.reps {
                let readerB = database.newConnection()
                readerB.objectCacheLimit = 0
                readerB.read { tx in for key in keys.prefix(changed) { _ = tx.object(forKey: key, inCollection: Runner.objectCollection) } }
                round += 1
                try writerA.write { tx in
                    for (i, key) in keys.prefix(changed).enumerated() {
                        tx.setObject(Item(name: "item \(i)", count: round, tags: []), forKey: key, inCollection: Runner.objectCollection)
                    }
                }
                var sink = 0
                start.append(timed(true) { readerB.read { _ in sink &+= 1 } } / Double(changed))
                reread.append(timed(true) {
                    readerB.read { tx in
                        for key in keys.prefix(changed) where (tx.object(forKey: key, inCollection: Runner.objectCollection) as? Item)?.count == round {
                            sink &+= 1
                        }
                    }
                } / Double(changed))
                guard sink == changed + 1 else { throw BenchError("W10: B read stale objects") }
            }
            add("W10", "B's next transaction start after A changed \(changed.formatted()) cached keys, per changed key", .time,
                ["t": [.yapdb: start]], "t", charted: false, notApplicable: Runner.peers)
            add("W10", "B then reading those \(changed.formatted()) keys (decoded again), per key", .time,
                ["t": [.yapdb: reread]], "t", charted: false, notApplicable: Runner.peers)
        }
        var advance: [Double] = []
        for _ in 0..<settings.reps {
            let readerB = database.newConnection()
            _ = readerB.beginLongLivedReadTransaction()
            for i in 0..<1_000 {
                try writerA.write { tx in
                    tx.setObject(Item(name: "commit", count: i, tags: []), forKey: keys[i % 100], inCollection: Runner.objectCollection)
                }
            }
            var skipped = 0
            advance.append(timed(true) { skipped = readerB.beginLongLivedReadTransaction().count } / 1_000)
            guard skipped == 1_000 else { throw BenchError("W10: the long-lived reader skipped \(skipped) commits, not 1,000") }
            _ = readerB.endLongLivedReadTransaction()
        }
        add("W10", "long-lived reader moving across 1,000 commits, per commit", .time, ["t": [.yapdb: advance]], "t", charted: false, notApplicable: Runner.peers)
    }
}
