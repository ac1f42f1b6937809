import Foundation

/// The engines and settings a workload can run on. Each is one column of the report.
enum Engine: String, CaseIterable, Codable, Sendable {
    /// YapDB, `durability = .full` (a commit returns after its bytes are synced).
    case yapdb = "YapDB"
    /// SQLite in WAL mode, `synchronous=NORMAL` (no sync per commit).
    case sqliteNormal = "SQLite NORMAL"
    /// SQLite in WAL mode, `synchronous=FULL` (the WAL is synced per commit).
    case sqliteFull = "SQLite FULL"
    /// GRDB (a `DatabasePool`: WAL, `synchronous=NORMAL`), as a Swift developer uses it.
    case grdb = "GRDB"
    /// LMDB with its default, durable commits.
    case lmdb = "LMDB"
    /// Raw `write` + `fdatasync` on a plain file: the floor any durable commit sits on.
    case floor = "fsync floor"

    var isPeer: Bool { self == .sqliteNormal || self == .sqliteFull || self == .grdb || self == .lmdb }
}

/// Whether commits wait for the disk. A workload's non-durable variant runs YapDB with
/// `.normal` and LMDB with `MDB_NOSYNC` (SQLite's columns say their own setting).
enum Durability: Sendable { case durable, relaxed }

/// One open database of one engine, storing `Dataset` rows in the collection "bench".
/// Row `i` means the dataset's key `i` and value `i`.
protocol Store: AnyObject {
    /// Inserts (or replaces) `rows` in one transaction.
    func write(_ data: Dataset, rows: ArraySlice<Int>) throws
    /// Removes `rows` in one transaction.
    func delete(_ data: Dataset, rows: ArraySlice<Int>) throws
    /// A reader with its own connection (or handle), for one thread.
    func makeReader() throws -> any StoreReader
    /// Begins and commits `count` read-write transactions that change nothing.
    func emptyWriteTransactions(_ count: Int) throws
    /// Reclaims space: YapDB `compact()`, SQLite `VACUUM`, LMDB a compacting copy swapped in.
    func compact() throws
    /// Closes the database; the store is unusable afterwards.
    func close() throws
}

/// Reads through one connection, on one thread at a time. Every result is checksummed.
protocol StoreReader: AnyObject {
    /// Reads `rows`' values in one read transaction; the sum of their checksums.
    func readInOneTransaction(_ data: Dataset, rows: ArraySlice<Int>) throws -> UInt64
    /// Reads `rows`' values, one read transaction per read.
    func readEachInItsOwnTransaction(_ data: Dataset, rows: ArraySlice<Int>) throws -> UInt64
    /// Every row of the collection: (rows seen, sum of checksums of the values).
    func enumerateAll() throws -> (count: Int, checksum: UInt64)
    /// `length` rows in key order from each of `starts`' keys, or nil when the engine has no
    /// ordered scan.
    func shortScans(_ data: Dataset, starts: ArraySlice<Int>, length: Int) throws -> UInt64?
    /// Begins and ends `count` read transactions that read nothing.
    func emptyReadTransactions(_ count: Int) throws
    /// Ends this reader's connection.
    func close()
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Opens `engine` on a database in `folder` (created when missing).
func openStore(_ engine: Engine, in folder: URL, durability: Durability, mapSize: Int) throws -> any Store {
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    switch engine {
    case .yapdb: return try YapStore(folder: folder, durability: durability)
    case .sqliteNormal: return try SQLiteStore(folder: folder, synchronous: "NORMAL")
    case .sqliteFull: return try SQLiteStore(folder: folder, synchronous: "FULL")
    case .grdb: return try GRDBStore(folder: folder)
    case .lmdb: return try LMDBStore(folder: folder, durability: durability, mapSize: mapSize)
    case .floor: throw BenchError("the fsync floor is not a store")
    }
}

/// The bytes of every file in `folder` (apparent sizes), so all engines are sized alike.
func folderBytes(_ folder: URL) -> Int64 {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    var total: Int64 = 0
    for name in names {
        let attributes = try? FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(name).path)
        total += (attributes?[.size] as? NSNumber)?.int64Value ?? 0
    }
    return total
}
