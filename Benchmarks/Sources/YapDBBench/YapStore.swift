import Foundation
import YapDB

/// YapDB through its public API. Values are stored as raw bytes: the collection's serializer
/// and deserializer pass `Data` through untouched (no tag byte), and point reads use
/// `serializedObject(forKey:inCollection:)`, the raw-bytes read the API offers (it returns a
/// copy as `Data`). The object cache is off on these connections: the raw workloads compare
/// storage engines; W9 and W10 measure the cache.
final class YapStore: Store {
    let database: YapDatabase
    let writer: YapDatabaseConnection

    static func fileURL(in folder: URL) -> URL { folder.appendingPathComponent("bench.yapdb") }

    /// `defaults`: the writer keeps the caches a new connection has (object and metadata cache
    /// on), as an app that does not tune them gets (issue 24's "default configuration" rows).
    init(folder: URL, durability: Durability, defaults: Bool = false) throws {
        let options = YapDatabaseOptions()
        options.durability = durability == .durable ? .full : .normal
        database = try YapDatabase.open(url: YapStore.fileURL(in: folder), options: options)
        YapStore.registerRawBytes(database)
        writer = database.newConnection()
        if !defaults {
            writer.objectCacheEnabled = false
            writer.metadataCacheEnabled = false
        }
    }

    /// Stores `Data` as it is in the benchmark collection, both ways.
    static func registerRawBytes(_ database: YapDatabase) {
        database.registerSerializer({ _, _, object in
            guard let data = object as? Data else { throw BenchError("not Data") }
            return data
        }, forCollection: Dataset.collection)
        database.registerDeserializer({ _, _, data in data }, forCollection: Dataset.collection)
    }

    func write(_ data: Dataset, rows: ArraySlice<Int>) throws {
        try writer.write { tx in
            for i in rows { tx.setObject(data.values[i], forKey: data.keys[i], inCollection: Dataset.collection) }
        }
    }

    func delete(_ data: Dataset, rows: ArraySlice<Int>) throws {
        try writer.write { tx in
            for i in rows { tx.removeObject(forKey: data.keys[i], inCollection: Dataset.collection) }
        }
    }

    func makeReader() throws -> any StoreReader { YapReader(database.newConnection()) }

    /// A reader that reads through `form` (W4 and W6's extra YapDB rows).
    func makeReader(_ form: YapReader.Form) -> YapReader { YapReader(database.newConnection(), form: form) }

    func emptyWriteTransactions(_ count: Int) throws {
        for _ in 0..<count { try writer.write { _ in } }
    }

    func compact() throws { try database.compact() }

    func close() throws { try database.close() }
}

final class YapReader: StoreReader {
    let connection: YapDatabaseConnection
    /// `--lending`: W4–W6 read through the lending forms (`withSerializedObject`,
    /// `iterateKeysAndSerializedObjects`), which hand out the stored bytes in place, as the
    /// peers' reads do, instead of a `Data` copy per row. Set once, before any workload runs.
    nonisolated(unsafe) static var lends = false

    /// How a reader reads rows.
    enum Form {
        /// Caches off; `serializedObject` (a copy as `Data`) and `iterateKeysAndObjects` with the
        /// raw-bytes deserializer; the lending forms instead with `--lending`.
        case tuned
        /// Caches off; always the lending forms (`withSerializedObject`, `iterateKeysAndSerializedObjects`).
        case lending
        /// The configuration a new connection has (object and metadata cache on) and the object
        /// reads an app makes: `object(forKey:inCollection:)`, `iterateKeysAndObjects`.
        case defaults
    }
    let form: Form
    /// Whether this reader uses the lending forms.
    var lends: Bool { form == .lending || (form == .tuned && Self.lends) }

    init(_ connection: YapDatabaseConnection, form: Form = .tuned) {
        self.connection = connection
        self.form = form
        if form != .defaults {
            connection.objectCacheEnabled = false
            connection.metadataCacheEnabled = false
        }
    }

    func readInOneTransaction(_ data: Dataset, rows: ArraySlice<Int>) throws -> UInt64 {
        try connection.read { tx in
            var sum: UInt64 = 0
            if lends {
                for i in rows {
                    guard let value = try tx.withSerializedObject(forKey: data.keys[i], inCollection: Dataset.collection, { checksum($0) }) else {
                        throw BenchError("YapDB: row \(i) is missing")
                    }
                    sum &+= value
                }
                return sum
            }
            for i in rows {
                guard let value = read(tx, data.keys[i]) else {
                    throw BenchError("YapDB: row \(i) is missing")
                }
                sum &+= value.withUnsafeBytes { checksum($0) }
            }
            return sum
        }
    }

    /// A point read as this reader's form makes it (not the lending one).
    private func read(_ tx: YapDatabaseReadTransaction, _ key: String) -> Data? {
        form == .defaults ? tx.object(forKey: key, inCollection: Dataset.collection) as? Data
            : tx.serializedObject(forKey: key, inCollection: Dataset.collection)
    }

    func readEachInItsOwnTransaction(_ data: Dataset, rows: ArraySlice<Int>) throws -> UInt64 {
        var sum: UInt64 = 0
        if lends {
            for i in rows {
                let value = try connection.read { tx in try tx.withSerializedObject(forKey: data.keys[i], inCollection: Dataset.collection, { checksum($0) }) }
                guard let value else { throw BenchError("YapDB: row \(i) is missing") }
                sum &+= value
            }
            return sum
        }
        for i in rows {
            let value = connection.read { tx in read(tx, data.keys[i]) }
            guard let value else { throw BenchError("YapDB: row \(i) is missing") }
            sum &+= value.withUnsafeBytes { checksum($0) }
        }
        return sum
    }

    func enumerateAll() throws -> (count: Int, checksum: UInt64) {
        try connection.read { tx in
            var count = 0
            var sum: UInt64 = 0
            if lends {
                try tx.iterateKeysAndSerializedObjects(inCollection: Dataset.collection) { _, value, _ in
                    count += 1
                    sum &+= checksum(value)
                }
                return (count, sum)
            }
            tx.iterateKeysAndObjects(inCollection: Dataset.collection) { (_: String, value: Data, _: inout Bool) in
                count += 1
                sum &+= value.withUnsafeBytes { checksum($0) }
            }
            return (count, sum)
        }
    }

    /// `length` rows in key order from each start key, in one read transaction (the
    /// Swift-native range form: keys from `from`, no upper bound, stopped after `length`).
    func shortScans(_ data: Dataset, starts: ArraySlice<Int>, length: Int) throws -> UInt64? {
        try connection.read { tx in
            var sum: UInt64 = 0
            if lends {
                for i in starts {
                    var seen = 0
                    try tx.iterateKeysAndSerializedObjects(inCollection: Dataset.collection, from: data.keys[i]) { _, value, stop in
                        sum &+= checksum(value)
                        seen += 1
                        if seen == length { stop = true }
                    }
                }
                return sum
            }
            for i in starts {
                var seen = 0
                tx.iterateKeysAndObjects(inCollection: Dataset.collection, from: data.keys[i], through: nil) { (_: String, value: Data, stop: inout Bool) in
                    sum &+= value.withUnsafeBytes { checksum($0) }
                    seen += 1
                    if seen == length { stop = true }
                }
            }
            return sum
        }
    }

    func emptyReadTransactions(_ count: Int) throws {
        for _ in 0..<count { connection.read { _ in } }
    }

    func close() {}
}
