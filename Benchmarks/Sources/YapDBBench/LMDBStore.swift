import CLMDB
import Foundation

/// LMDB through its C API: one environment in a single file (`MDB_NOSUBDIR`), the unnamed
/// database, keys "bench\0" + the 16-byte key (so a collection is a key prefix, as a
/// YapDatabase-like layer on LMDB would store it). Durable commits by default; `MDB_NOSYNC` for
/// the non-durable variant. Readers use `MDB_NOTLS` so each reader's transaction belongs to its
/// object, and reset/renew it between transactions (LMDB's fast path). Values are read in place.
final class LMDBStore: Store {
    let folder: URL
    let durability: Durability
    let mapSize: Int
    private(set) var environment: LMDBEnvironment

    static func fileURL(in folder: URL) -> URL { folder.appendingPathComponent("bench.lmdb") }

    init(folder: URL, durability: Durability, mapSize: Int) throws {
        self.folder = folder
        self.durability = durability
        self.mapSize = mapSize
        environment = try LMDBEnvironment(path: LMDBStore.fileURL(in: folder).path, durability: durability, mapSize: mapSize)
    }

    func write(_ data: Dataset, rows: ArraySlice<Int>) throws {
        try environment.writeTransaction { txn, dbi in
            let key = LMDBKey()
            try data.valueBytes.withUnsafeBytes { values in
                for i in rows {
                    var k = key.set(data, i)
                    var v = MDB_val(mv_size: data.valueSize, mv_data: UnsafeMutableRawPointer(mutating: values.baseAddress! + i * data.valueSize))
                    try lmdbCheck(mdb_put(txn, dbi, &k, &v, 0), "mdb_put")
                }
            }
        }
    }

    func delete(_ data: Dataset, rows: ArraySlice<Int>) throws {
        try environment.writeTransaction { txn, dbi in
            let key = LMDBKey()
            for i in rows {
                var k = key.set(data, i)
                try lmdbCheck(mdb_del(txn, dbi, &k, nil), "mdb_del")
            }
        }
    }

    func makeReader() throws -> any StoreReader { try LMDBReader(environment) }

    func emptyWriteTransactions(_ count: Int) throws {
        for _ in 0..<count { try environment.writeTransaction { _, _ in } }
    }

    /// LMDB never shrinks its file: it reuses free pages. Compaction is a compacting copy
    /// (`mdb_env_copy2` with `MDB_CP_COMPACT`) that then replaces the file.
    func compact() throws {
        let path = LMDBStore.fileURL(in: folder).path
        let copy = path + ".compact"
        try? FileManager.default.removeItem(atPath: copy)
        try lmdbCheck(mdb_env_copy2(environment.handle, copy, UInt32(MDB_CP_COMPACT)), "mdb_env_copy2")
        environment.close()
        _ = rename(copy, path)
        environment = try LMDBEnvironment(path: path, durability: durability, mapSize: mapSize)
    }

    func close() throws { environment.close() }
}

final class LMDBReader: StoreReader {
    let environment: LMDBEnvironment
    private let txn: OpaquePointer
    private let key = LMDBKey()

    init(_ environment: LMDBEnvironment) throws {
        self.environment = environment
        var txn: OpaquePointer?
        try lmdbCheck(mdb_txn_begin(environment.handle, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
        self.txn = txn!
        mdb_txn_reset(self.txn)
    }

    private func readOne(_ data: Dataset, _ i: Int) throws -> UInt64 {
        var k = key.set(data, i)
        var v = MDB_val()
        try lmdbCheck(mdb_get(txn, environment.dbi, &k, &v), "mdb_get row \(i)")
        return checksum(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
    }

    func readInOneTransaction(_ data: Dataset, rows: ArraySlice<Int>) throws -> UInt64 {
        try lmdbCheck(mdb_txn_renew(txn), "mdb_txn_renew")
        defer { mdb_txn_reset(txn) }
        var sum: UInt64 = 0
        for i in rows { sum &+= try readOne(data, i) }
        return sum
    }

    func readEachInItsOwnTransaction(_ data: Dataset, rows: ArraySlice<Int>) throws -> UInt64 {
        var sum: UInt64 = 0
        for i in rows {
            try lmdbCheck(mdb_txn_renew(txn), "mdb_txn_renew")
            defer { mdb_txn_reset(txn) }
            sum &+= try readOne(data, i)
        }
        return sum
    }

    func enumerateAll() throws -> (count: Int, checksum: UInt64) {
        try lmdbCheck(mdb_txn_renew(txn), "mdb_txn_renew")
        defer { mdb_txn_reset(txn) }
        var count = 0
        var sum: UInt64 = 0
        try withCursor { cursor in
            var k = key.setPrefix()
            var v = MDB_val()
            var rc = mdb_cursor_get(cursor, &k, &v, MDB_SET_RANGE)
            while rc == 0 && LMDBKey.hasPrefix(k) {
                count += 1
                sum &+= checksum(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
                rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)
            }
        }
        return (count, sum)
    }

    func shortScans(_ data: Dataset, starts: ArraySlice<Int>, length: Int) throws -> UInt64? {
        try lmdbCheck(mdb_txn_renew(txn), "mdb_txn_renew")
        defer { mdb_txn_reset(txn) }
        var sum: UInt64 = 0
        try withCursor { cursor in
            for i in starts {
                var k = key.set(data, i)
                var v = MDB_val()
                var rc = mdb_cursor_get(cursor, &k, &v, MDB_SET_RANGE)
                var seen = 0
                while rc == 0 && seen < length && LMDBKey.hasPrefix(k) {
                    sum &+= checksum(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
                    seen += 1
                    if seen < length { rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT) }
                }
            }
        }
        return sum
    }

    func emptyReadTransactions(_ count: Int) throws {
        for _ in 0..<count {
            try lmdbCheck(mdb_txn_renew(txn), "mdb_txn_renew")
            mdb_txn_reset(txn)
        }
    }

    private func withCursor(_ body: (OpaquePointer) throws -> Void) throws {
        var cursor: OpaquePointer?
        try lmdbCheck(mdb_cursor_open(txn, environment.dbi, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        try body(cursor!)
    }

    func close() { mdb_txn_abort(txn) }
}

/// One LMDB environment and its unnamed database.
final class LMDBEnvironment: @unchecked Sendable {  // LMDB environments are thread-safe
    let handle: OpaquePointer
    private(set) var dbi: MDB_dbi = 0
    private var isOpen = true

    init(path: String, durability: Durability, mapSize: Int) throws {
        var env: OpaquePointer?
        try lmdbCheck(mdb_env_create(&env), "mdb_env_create")
        handle = env!
        try lmdbCheck(mdb_env_set_mapsize(handle, mapSize), "mdb_env_set_mapsize")
        try lmdbCheck(mdb_env_set_maxreaders(handle, 64), "mdb_env_set_maxreaders")
        var flags = UInt32(MDB_NOSUBDIR) | UInt32(MDB_NOTLS)
        if durability == .relaxed { flags |= UInt32(MDB_NOSYNC) }
        try lmdbCheck(mdb_env_open(handle, path, flags, 0o644), "mdb_env_open \(path)")
        var txn: OpaquePointer?
        try lmdbCheck(mdb_txn_begin(handle, nil, 0, &txn), "mdb_txn_begin")
        try lmdbCheck(mdb_dbi_open(txn, nil, 0, &dbi), "mdb_dbi_open")
        try lmdbCheck(mdb_txn_commit(txn), "mdb_txn_commit")
    }

    /// Runs `body` in a write transaction and commits it (aborts when `body` throws).
    func writeTransaction(_ body: (OpaquePointer, MDB_dbi) throws -> Void) throws {
        var txn: OpaquePointer?
        try lmdbCheck(mdb_txn_begin(handle, nil, 0, &txn), "mdb_txn_begin")
        do {
            try body(txn!, dbi)
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        try lmdbCheck(mdb_txn_commit(txn), "mdb_txn_commit")
    }

    func close() {
        guard isOpen else { return }
        isOpen = false
        mdb_env_close(handle)
    }
}

/// The LMDB key of a row: "bench\0" followed by the 16-byte key, in a reused buffer.
final class LMDBKey {
    static let prefix = Array(Dataset.collection.utf8) + [0]
    private let buffer: UnsafeMutableRawPointer

    init() {
        buffer = UnsafeMutableRawPointer.allocate(byteCount: LMDBKey.prefix.count + Dataset.keySize, alignment: 8)
        LMDBKey.prefix.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    }

    deinit { buffer.deallocate() }

    /// Points at row `i`'s key, valid until the next `set` or `setPrefix`.
    func set(_ data: Dataset, _ i: Int) -> MDB_val {
        data.withKey(i) { (buffer + LMDBKey.prefix.count).copyMemory(from: $0.baseAddress!, byteCount: Dataset.keySize) }
        return MDB_val(mv_size: LMDBKey.prefix.count + Dataset.keySize, mv_data: buffer)
    }

    /// The collection prefix alone (the first key of the collection in order).
    func setPrefix() -> MDB_val { MDB_val(mv_size: LMDBKey.prefix.count, mv_data: buffer) }

    static func hasPrefix(_ key: MDB_val) -> Bool {
        guard key.mv_size >= prefix.count else { return false }
        return prefix.withUnsafeBytes { memcmp(key.mv_data, $0.baseAddress!, prefix.count) == 0 }
    }
}

func lmdbCheck(_ rc: Int32, _ what: @autoclosure () -> String) throws {
    if rc != 0 { throw BenchError("LMDB: \(what()) failed: \(String(cString: mdb_strerror(rc)))") }
}
