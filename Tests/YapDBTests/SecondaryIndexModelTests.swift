import Foundation
import Testing
import TestSupport
import YapDBQuery
import YapDBSimulatedDisk
@testable import YapDB

/// The seeded model test of secondary indexes: random writes, removes, clears, rollbacks,
/// re-registrations, reopens and power cuts on a simulated disk, with random queries from the
/// grammar checked against the brute-force evaluator over a plain dictionary of rows — at the
/// newest snapshot and at an older one held open by a long-lived read on another connection.
/// `verify()` checks the index against a rebuild along the way.
@Suite struct SecondaryIndexModelTests {
    typealias Rows = [String: [String: IndexedItem]]

    final class Runner {
        let seed: UInt64
        var rng: SeededRandom
        let disk: SimulatedDisk
        static let path = "/model/index.yapdb"
        /// Small segments, so compaction moves records the index's entries point at.
        static let segmentLimit = 8192
        var database: YapDatabase!
        var writer: YapDatabaseConnection!
        var model: Rows = [:]
        var tag = "1"
        /// A connection holding an older snapshot, and the rows it should see.
        var old: (connection: YapDatabaseConnection, rows: Rows)?
        var queriesChecked = 0
        /// Matches read through the object location their column entry keeps, and matches
        /// whose kept location no longer held the row's object (compaction moved it).
        var locatedReads = 0, movedReads = 0
        /// Matches of the key index read through their kept locations.
        var keyIndexReads = 0
        /// How many reopens, power cuts and re-registrations ran.
        var reopens = 0, crashes = 0, reregistrations = 0

        init(seed: UInt64) throws {
            self.seed = seed
            rng = SeededRandom(seed: seed)
            disk = SimulatedDisk(seed: seed)
            try disk.mkdir("/model")
            try open()
        }

        var options: YapDatabaseOptions {
            let options = YapDatabaseOptions()
            options.durability = .full
            return options
        }

        func open() throws {
            database = try YapDatabase.open(path: Self.path, options: options, fileSystem: disk, segmentLimit: Self.segmentLimit)
            SecondaryIndexModel.register(database, versionTag: tag)
            precondition(database.register(SecondaryIndexModel.makeKeyIndex(), withName: "keys"), "registration failed")
            writer = database.newConnection()
        }

        func endOld() {
            _ = old?.connection.endLongLivedReadTransaction()
            old = nil
        }

        func step() throws {
            let roll = rng.next() % 100
            switch roll {
            case 0..<45: try write { tx, rows in self.setRandom(tx, &rows) }
            case 45..<55: try write { tx, rows in
                for _ in 0..<5 { self.setRandom(tx, &rows) }
                self.removeRandom(tx, &rows)
            }
            case 55..<65: try write { tx, rows in self.removeRandom(tx, &rows) }
            case 65..<68:
                let collection = SecondaryIndexModel.collections[Int(rng.next() % 3)]
                try write { tx, rows in
                    tx.removeAllObjects(inCollection: collection)
                    rows[collection] = nil
                }
            case 68: try write { tx, rows in
                tx.removeAllObjectsInAllCollections()
                rows = [:]
            }
            case 69..<73:
                // A rolled-back transaction leaves nothing behind.
                _ = try writer.write { tx in
                    var scratch = model
                    self.setRandom(tx, &scratch)
                    self.removeRandom(tx, &scratch)
                    tx.rollback()
                }
            case 73..<76:
                let key = SecondaryIndexModel.key(rng.next() % 30), collection = SecondaryIndexModel.collections[Int(rng.next() % 3)]
                try write { tx, _ in tx.touchObject(forKey: key, inCollection: collection) }
            case 76..<79:
                // Re-registration: the same tag keeps the stored index, a new one rebuilds it.
                endOld()
                database.unregisterExtension(withName: "idx")
                if rng.next() % 2 == 0 { tag = "\(rng.next() % 3)" }
                SecondaryIndexModel.register(database, versionTag: tag)
                reregistrations += 1
            case 79..<82:
                reopens += 1
                endOld()
                try database.close()
                database = nil
                try open()
            case 82..<84:
                crashes += 1
                endOld()
                database.abandon()
                database = nil
                _ = disk.powerCut(seed: rng.next(), mode: .drop)
                try open()
            case 84..<88:
                endOld()
                let connection = database.newConnection()
                // No object cache: objects come from their records (the key index check).
                connection.objectCacheEnabled = false
                _ = connection.beginLongLivedReadTransaction()
                old = (connection, model)
            case 88:
                let report = try database.verify()
                #expect(report.isValid, "seed \(seed): verify: \(report.problems)")
            case 89:
                // A checkpoint writes the index's pages; compaction copies them into new files.
                if rng.next() % 2 == 0 { try database.checkpoint() } else { try database.compact() }
            default:
                try check()
            }
        }

        func write(_ body: @escaping (YapDatabaseReadWriteTransaction, inout Rows) -> Void) throws {
            var rows = model
            try writer.write { tx in body(tx, &rows) }
            model = rows
        }

        func setRandom(_ tx: YapDatabaseReadWriteTransaction, _ rows: inout Rows) {
            let key = SecondaryIndexModel.key(rng.next() % 30), collection = SecondaryIndexModel.collections[Int(rng.next() % 3)]
            let item = SecondaryIndexModel.randomItem(&rng)
            if rng.next() % 4 == 0 && rows[collection]?[key] != nil {
                tx.replace(item, forKey: key, inCollection: collection)
            } else {
                tx.setObject(item, forKey: key, inCollection: collection)
            }
            rows[collection, default: [:]][key] = item
        }

        func removeRandom(_ tx: YapDatabaseReadWriteTransaction, _ rows: inout Rows) {
            let key = SecondaryIndexModel.key(rng.next() % 30), collection = SecondaryIndexModel.collections[Int(rng.next() % 3)]
            tx.removeObject(forKey: key, inCollection: collection)
            rows[collection]?[key] = nil
            if rows[collection]?.isEmpty == true { rows[collection] = nil }
        }

        func check() throws {
            try check(writer, model, "newest")
            // Objects from their records, not the writer's cache: a fresh connection without one.
            let plain = database.newConnection()
            plain.objectCacheEnabled = false
            var failure: (any Error)?
            plain.read { tx in
                do { try checkKeyIndex(tx, model, "newest, no cache") } catch { failure = error }
            }
            if let failure { throw failure }
            if let old { try check(old.connection, old.rows, "old snapshot") }
        }

        /// Asks random queries on `connection` and compares every answer with the evaluator's
        /// over `rows`.
        func check(_ connection: YapDatabaseConnection, _ rows: Rows, _ label: String) throws {
            var failure: (any Error)?
            connection.read { tx in
                guard let ext = tx.ext("idx") as? YapDatabaseSecondaryIndexTransaction else {
                    Issue.record("seed \(seed): no index transaction")
                    return
                }
                var queryRows: [QueryRow] = []
                var keyOf: [Int64: String] = [:]
                for collection in SecondaryIndexModel.allowed.sorted() {
                    for (key, item) in rows[collection] ?? [:] where !item.isEmpty {
                        guard let rowid = ext.rowids(forKeys: [key], inCollection: collection)[key]?.int64Value else {
                            Issue.record("seed \(seed) \(label): \(collection)/\(key) has no row")
                            continue
                        }
                        var columns = item.columns
                        columns["rowid"] = .integer(rowid)
                        queryRows.append((rowid, columns))
                        keyOf[rowid] = collection + "/" + key
                    }
                }
                do {
                    try checkKeyIndex(tx, rows, label)
                } catch {
                    failure = error
                    return
                }
                let evaluator = SecondaryIndexModel.evaluator
                for _ in 0..<12 {
                    let (text, parameters) = SecondaryIndexModel.randomQuery(&rng)
                    do {
                        try checkQuery(text, parameters, ext, queryRows, keyOf, evaluator, label)
                    } catch {
                        failure = error
                        return
                    }
                }
            }
            if let failure { throw failure }
        }

        /// The key index holds every allowed row, and each match read through the object
        /// location its entry keeps is the row's object in `rows` (the handler never ran
        /// again for a changed object: only the location moved).
        func checkKeyIndex(_ tx: YapDatabaseReadTransaction, _ rows: Rows, _ label: String) throws {
            guard let keys = tx.ext("keys") as? YapDatabaseSecondaryIndexTransaction else {
                Issue.record("seed \(seed): no key index transaction")
                return
            }
            var expected: [String: IndexedItem] = [:]
            for collection in SecondaryIndexModel.allowed {
                for (key, item) in rows[collection] ?? [:] { expected[collection + "/" + key] = item }
            }
            var seen: [String: IndexedItem] = [:], located = 0
            let query = try keys.index.bind(YapDatabaseQuery(string: "WHERE key >= ? ORDER BY key", parameters: [""]))
            try keys.forEachMatch(query, entries: true, objects: true, located: true) { collection, key, rowid, _, entry, object, _ in
                let value = if let object {
                    tx.object(forKey: key, inCollection: collection, rowid: rowid, at: object)
                } else {
                    tx.object(forKey: key, inCollection: collection, entry: entry)
                }
                if object != nil { located += 1 }
                seen[collection + "/" + key] = value as? IndexedItem
            }
            #expect(seen == expected, "seed \(seed) \(label): the key index's objects")
            keyIndexReads += located
        }

        func checkQuery(_ text: String, _ parameters: [QueryParameter], _ ext: YapDatabaseSecondaryIndexTransaction,
                        _ rows: [QueryRow], _ keyOf: [Int64: String], _ evaluator: QueryEvaluator, _ label: String) throws {
            let context = "seed \(seed) \(label): \(text) \(parameters)"
            let parsed = try ParsedQuery(parsing: text)
            let bound = try parsed.bind(parameters)
            queriesChecked += 1
            var actual: [String] = []
            try ext.forEachMatch(bound) { collection, key, _, _, _, _, _ in actual.append(collection + "/" + key) }
            // The same walk with entries (their lookups batched): the same rows, each with its own entry.
            var withEntries: [String] = [], entriesMatch = true
            try ext.forEachMatch(bound, entries: true, objects: rng.next() % 2 == 0) { collection, key, rowid, _, entry, _, _ in
                withEntries.append(collection + "/" + key)
                entriesMatch = entriesMatch && entry != nil && entry == ext.databaseTransaction.entry(collection: collection, key: key) && entry?.rowid == rowid
            }
            #expect(withEntries == actual && entriesMatch, "\(context): with entries")
            // The same walk with the objects' locations the column entries keep: where the
            // record there is still the row's object, it is the row's current object.
            var withLocations: [String] = [], locationsMatch = true
            let reader = ext.databaseTransaction.readsSnapshot ? ext.databaseTransaction.reader : nil
            try ext.forEachMatch(bound, entries: true, objects: true, located: true) { collection, key, rowid, _, entry, object, _ in
                withLocations.append(collection + "/" + key)
                if object == nil, entry != nil {
                    // Its batch held a record compaction moved: entries were looked up instead.
                    movedReads += 1
                    locationsMatch = locationsMatch && entry == ext.databaseTransaction.entry(collection: collection, key: key)
                }
                guard let reader, let object else { return }
                var kept: Data?
                if reader.readObject(at: object, ofRowid: rowid, { kept = Data($0) }) {
                    locatedReads += 1
                    locationsMatch = locationsMatch && kept == ext.databaseTransaction.serializedObject(forKey: key, inCollection: collection)
                } else {
                    movedReads += 1
                }
            }
            #expect(withLocations == actual && locationsMatch, "\(context): with object locations")
            let expected = evaluator.run(bound, over: rows).map { keyOf[$0]! }
            let all = evaluator.run(BoundQuery(whereClause: bound.whereClause), over: rows).map { keyOf[$0]! }
            #expect(Set(actual).count == actual.count, "\(context): a row came twice")
            if !bound.orderBy.isEmpty {
                #expect(actual == expected, "\(context)")
            } else if bound.limit == nil && bound.offset == 0 {
                #expect(Set(actual) == Set(expected), "\(context)")
            } else {
                #expect(actual.count == expected.count && Set(actual).isSubset(of: Set(all)), "\(context)")
            }
            #expect(try ext.count(bound) == all.count, "\(context): count")
            // Without ORDER BY, LIMIT and OFFSET may pick any rows: aggregate only what is defined.
            guard !bound.orderBy.isEmpty || (bound.limit == nil && bound.offset == 0) else { return }
            let kinds = AggregateFunction.Kind.allCases
            let kind = kinds[Int(rng.next() % UInt64(kinds.count))]
            let column: String? = kind == .count && rng.next() % 2 == 0
                ? nil : SecondaryIndexModel.columnTypes[Int(rng.next() % 5)].0
            let function = AggregateFunction(kind, column: column, distinct: kind != .total && rng.next() % 5 == 0)
            let want = evaluator.aggregate(function, of: bound, over: rows)
            let got = try ext.aggregate(function, bound)
            switch (want, got) {
            case let (.real(a)?, .real(b)?):
                #expect(abs(a - b) <= 1e-9 * max(1, abs(a)), "\(context): \(function.sql) \(a) vs \(b)")
            default:
                #expect(want == got, "\(context): \(function.sql)")
            }
        }
    }

    /// `YAPDB_SI_SEEDS` (a count) and `YAPDB_SI_STEPS` widen the run by hand; the default is small.
    static var seeds: [UInt64] {
        let count = ProcessInfo.processInfo.environment["YAPDB_SI_SEEDS"].flatMap { UInt64($0) } ?? 4
        return Array(1...count)
    }
    static var steps: Int { ProcessInfo.processInfo.environment["YAPDB_SI_STEPS"].flatMap { Int($0) } ?? 250 }

    @Test(arguments: seeds)
    func randomHistoryMatchesTheModel(seed: UInt64) throws {
        let runner = try Runner(seed: seed)
        for _ in 0..<Self.steps { try runner.step() }
        try runner.check()
        runner.endOld()
        let report = try runner.database.verify()
        #expect(report.isValid, "seed \(seed): \(report.problems)")
        #expect(runner.queriesChecked > 50)
        #expect(runner.locatedReads > 0 && runner.keyIndexReads > 0, "seed \(seed): no match was read through its kept location")
        #expect(runner.reopens > 0 && runner.crashes > 0 && runner.reregistrations > 0, "seed \(seed) skipped a kind of step")
        try runner.database.close()
    }
}
