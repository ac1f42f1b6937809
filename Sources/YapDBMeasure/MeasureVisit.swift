import ArgumentParser
import YapDBStorage
import YapDBEngine

/// `yapdb-measure visit`: one kind of key directory read, repeated, on a database that
/// `yapdb-measure engine --keep FOLDER --stop-after open` left — for counting instructions per
/// operation with callgrind (`--collect-atstart=no --toggle-collect='*visitLoop*'`: the total
/// divided by `--count` is the cost of one operation, the open excluded).
struct MeasureVisit: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "visit", abstract: "Repeat one kind of read on a kept database (for instruction counts).")

    @Argument(help: "The folder given to `engine --keep`.") var folder: String
    @Option(help: "The rows it was loaded with (to know its keys).") var rows = 100_000
    @Option(help: "The operation: read (point read, value bytes), lookup (key directory entry only), scan (10 keys in order from a random key) or count (the rows of the collection: two ranks).") var operation = "lookup"
    @Option(help: "Operations to run.") var count = 10_000
    @Option(help: "Index read mode: mapped (default) or cached:N (pread through a cache of N pages).") var readMode = "mapped"

    func run() throws {
        var rng = FastRandom(seed: 7)
        let keys = (0..<rows).map { _ in String(format16: Int(rng.next() % 1_000_000_000_000)) }
        var pick = FastRandom(seed: 5)
        let order = (0..<count).map { _ in keys[Int(pick.next() % UInt64(rows))] }
        var options = EngineOptions()
        if readMode != "mapped" {
            guard readMode.hasPrefix("cached:"), let pages = Int(readMode.dropFirst(7)), pages > 0 else {
                throw ValidationError("--read-mode is mapped or cached:N, not \(readMode)")
            }
            options.indexReadMode = .cached(pages: pages)
        }
        let engine = try Engine.open(path: folder + "/bench.yapdb", options: options)
        let snapshot = engine.snapshot()
        guard ["read", "lookup", "scan", "count"].contains(operation) else { throw ValidationError("--operation is read, lookup, scan or count") }
        let check = try visitLoop(snapshot, order)
        print("\(operation) × \(count): check \(check)")
        try engine.close()
    }

    /// The measured loop: `count` operations of the chosen kind.
    @inline(never)
    func visitLoop(_ snapshot: EngineSnapshot, _ order: [String]) throws -> Int {
        var check = 0
        switch operation {
        case "read":
            for key in order { check &+= Int(try snapshot.object(collection: "c", key: key)?.first ?? 0) }
        case "lookup":
            for key in order { check &+= Int(try snapshot.entry(collection: "c", key: key)?.rowid ?? 0) }
        case "count":
            for _ in order { check &+= try snapshot.rowCount(inCollection: "c") }
        default:
            for key in order {
                var left = 10
                try snapshot.forEachKey(inCollection: "c", from: key, through: nil, reversed: false, prefetching: nil) { _, entry in
                    check &+= Int(truncatingIfNeeded: entry.rowid)
                    left -= 1
                    return left > 0
                }
            }
        }
        return check
    }
}
