import Foundation
import YapDB

// `yapdb-bench child-micro OP ROWS FOLDER [--lending]`: one operation of the row path through
// the public API, run once inside `microMeasured`, a function with a fixed symbol, so an
// instruction count can be switched on around it alone (the optimizer specializes it per
// operation, so the pattern has stars on both sides):
//   valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*yapdb_micro_measured*' \
//     yapdb-bench child-micro read 20000 /tmp/micro
// Operations: load, remove, read, readEach, iterate, scan (1,000 scans of 10 rows), emptyRead,
// emptyWrite; `--lending` reads through the lending forms (as `yapdb-bench --lending`). W11's
// view upkeep: loadSorted (the rows in key order), and viewLoad / viewLoadSorted (the same two
// loads with W11's view sorted by key registered first); each load is one transaction, its
// commit included. viewRead: `getCollectionKey(atIndex:inGroup:)` at every position of W11's view
// (registered before the load), in random order, in one read transaction.
// The setup (the dataset, a loaded database) is not counted. Connections as in W1–W6: the
// benchmark collection stores `Data` as it is, object and metadata caches off.

/// Runs `body`; the one function a count switches on (`--toggle-collect='*yapdb_micro_measured*'`).
@inline(never) @_silgen_name("yapdb_micro_measured")
func microMeasured(_ body: () throws -> Void) rethrows { try body() }

/// The operations, by name; each reports a checksum so nothing is optimized away.
func childMicro(op: String, rows: Int, folder: String) throws -> [String: String] {
    let data = Runner.mainDataset(rows: rows)
    let url = URL(fileURLWithPath: folder)
    try? FileManager.default.removeItem(at: url)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    let store = try YapStore(folder: url, durability: .relaxed)
    defer { try? store.close() }
    let reader = YapReader(store.database.newConnection())
    let all = Array(0..<rows)[...]
    var order = Array(0..<rows)
    var generator = SplitMix64(seed: 7)
    order.shuffle(using: &generator)
    var sum: UInt64 = 0
    if op == "viewRead" { try Runner.registerKeyOrderView(store.database) }
    if !["load", "loadSorted", "viewLoad", "viewLoadSorted"].contains(op) { try store.write(data, rows: all) }
    if op.hasPrefix("viewLoad") { try Runner.registerKeyOrderView(store.database) }
    let sorted = data.sortedOrder[...]
    switch op {
    case "loadSorted", "viewLoadSorted": try microMeasured { try store.write(data, rows: sorted) }
    case "viewLoad": try microMeasured { try store.write(data, rows: all) }
    case "load": try microMeasured { try store.write(data, rows: all) }
    case "remove": try microMeasured { try store.delete(data, rows: all) }
    case "read": try microMeasured { sum = try reader.readInOneTransaction(data, rows: order[...]) }
    case "readEach": try microMeasured { sum = try reader.readEachInItsOwnTransaction(data, rows: order[...]) }
    case "iterate": try microMeasured { sum = try reader.enumerateAll().checksum }
    case "scan": try microMeasured { sum = try reader.shortScans(data, starts: order[..<1000], length: 10) ?? 0 }
    case "emptyRead": try microMeasured { try reader.emptyReadTransactions(rows) }
    case "viewRead":
        try microMeasured {
            reader.connection.read { tx in
                guard let view = tx.ext(Runner.viewName) as? YapDatabaseViewTransaction else { return }
                for i in order { sum &+= UInt64(view.getCollectionKey(atIndex: i, inGroup: Runner.viewGroup)?.1.utf8.count ?? 0) }
            }
        }
    case "emptyWrite": try microMeasured { try store.emptyWriteTransactions(rows) }
    default: throw BenchError("unknown micro operation \(op)")
    }
    return ["op": op, "rows": String(rows), "sum": String(sum)]
}
