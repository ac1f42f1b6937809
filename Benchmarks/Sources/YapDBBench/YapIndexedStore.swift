import Foundation
import YapDB

/// YapDB's side of W12: a database opened as `YapStore` opens it (relaxed durability, raw-bytes
/// serializer, caches off) and, when `indexed`, a `YapDatabaseSecondaryIndex` with two
/// `.integer` columns `a` and `b` whose handler reads them from the object
/// (`IndexedDataset.a(of:)` / `.b(of:)`). `W12Query`'s texts run through
/// `YapDatabaseQuery(string:parameters:)` — `iterateKeys(matching:)` for the lookups,
/// `iterateKeysAndObjects(matching:)` for the ordered ranges (the order is checked on `b` read
/// from each object), `performAggregateQuery` for `COUNT(*)` and `MIN(a)` — on one read
/// transaction per batch, as the SQL peers run the same texts.
func makeYapIndexedStore(folder: URL, indexed: Bool) throws -> any IndexedStore {
    try YapIndexedStore(folder: folder, indexed: indexed)
}

/// Whether `makeYapIndexedStore` is filled in.
let yapIndexedStoreIsBuilt = true

final class YapIndexedStore: IndexedStore {
    let database: YapDatabase
    let writer: YapDatabaseConnection
    static let indexName = "w12"

    init(folder: URL, indexed: Bool) throws {
        let options = YapDatabaseOptions()
        options.durability = .normal
        database = try YapDatabase.open(url: YapStore.fileURL(in: folder), options: options)
        YapStore.registerRawBytes(database)
        if indexed {
            let setup = YapDatabaseSecondaryIndexSetup()
            setup.addColumn("a", with: .integer)
            setup.addColumn("b", with: .integer)
            let handler = YapDatabaseSecondaryIndexHandler.withObjectBlock { _, dict, _, _, object in
                guard let value = object as? Data else { return }
                dict["a"] = IndexedDataset.a(of: value)
                dict["b"] = IndexedDataset.b(of: value)
            }
            let options = YapDatabaseSecondaryIndexOptions()
            options.allowedCollections = YapWhitelistBlacklist(whitelist: [Dataset.collection])
            guard database.register(YapDatabaseSecondaryIndex(setup: setup, handler: handler, versionTag: "1", options: options),
                                    withName: Self.indexName) else { throw BenchError("W12: the secondary index did not register") }
        }
        writer = database.newConnection()
        writer.objectCacheEnabled = false
        writer.metadataCacheEnabled = false
    }

    func load(_ data: IndexedDataset, rows: ArraySlice<Int>, batch: Int) throws {
        var start = rows.startIndex
        while start < rows.endIndex {
            let end = min(start + batch, rows.endIndex)
            try writer.write { tx in
                for i in rows[start..<end] { tx.setObject(data.values[i], forKey: data.base.keys[i], inCollection: Dataset.collection) }
            }
            start = end
        }
    }

    /// Runs `body` with the index transaction of one read transaction on a reader without caches.
    func reading<T>(_ body: (YapDatabaseSecondaryIndexTransaction) throws -> T) throws -> T {
        let reader = database.newConnection()
        reader.objectCacheEnabled = false
        reader.metadataCacheEnabled = false
        return try reader.read { tx in
            guard let index = tx.ext(Self.indexName) as? YapDatabaseSecondaryIndexTransaction else {
                throw BenchError("W12: no secondary index transaction")
            }
            return try body(index)
        }
    }

    func equality(_ values: [Int64]) throws -> (rows: Int, checksum: UInt64) {
        try reading { index in
            var rows = 0
            var sum: UInt64 = 0
            for value in values {
                let ok = index.iterateKeys(matching: YapDatabaseQuery(string: W12Query.equality, parameters: [value])) { _, key, _ in
                    rows += 1
                    sum &+= checksum(utf8: key)
                }
                guard ok else { throw BenchError("W12 YapDB: the equality query failed") }
            }
            return (rows, sum)
        }
    }

    func orderedRanges(_ starts: [Int64], data: IndexedDataset) throws -> (rows: Int, checksum: UInt64) {
        try reading { index in
            var rows = 0
            var sum: UInt64 = 0
            var inOrder = true
            for start in starts {
                var expected = start
                let ok = index.iterateKeysAndObjects(matching: YapDatabaseQuery(string: W12Query.orderedRange, parameters: [start])) { _, key, object, stop in
                    guard let value = object as? Data, IndexedDataset.b(of: value) == expected else {
                        inOrder = false
                        stop = true
                        return
                    }
                    expected += 1
                    rows += 1
                    sum &+= checksum(utf8: key)
                }
                guard ok, inOrder else { throw BenchError("W12 YapDB: range failed or out of order") }
            }
            return (rows, sum)
        }
    }

    func counts(_ ranges: [(Int64, Int64)]) throws -> Int {
        try reading { index in
            var total = 0
            for (low, high) in ranges {
                let query = YapDatabaseQuery(aggregateFunction: W12Query.count, string: W12Query.countRange, parameters: [low, high])
                guard let count = index.performAggregateQuery(query) as? Int else { throw BenchError("W12 YapDB: COUNT failed") }
                total += count
            }
            return total
        }
    }

    func minimums(_ times: Int, preparedOnce: Bool) throws -> Int64? {
        try reading { index in
            var result: Int64?
            if preparedOnce {
                // The query made once, as the peers prepare their statement once; the typed
                // result, as they read a typed column.
                let query = YapDatabaseQuery(aggregateFunction: W12Query.minimum, string: "")
                for _ in 0..<times { result = try index.aggregate(query).int64Value }
            } else {
                // YapDatabase's own spelling, as client code writes it.
                for _ in 0..<times {
                    result = (index.performAggregateQuery(YapDatabaseQuery(aggregateFunction: W12Query.minimum, string: "")) as? Int).map(Int64.init)
                }
            }
            return result
        }
    }

    func close() throws { try database.close() }
}
