import Foundation
import YapDB

/// W11: YapDB's views (peers have none: n/a). A view putting every row of the collection in one
/// group, sorted by key with a plain string comparison, so the view's own cost shows.
extension Runner {
    static let viewName = "byKey"
    static let viewGroup = "all"
    static let viewVersionTag = "1"
    static let viewLookups = 10_000
    static let viewFinds = 1_000

    /// The view W11 registers, the same in every process.
    static func keyOrderView() -> YapDatabaseAutoView {
        let grouping = YapDatabaseViewGrouping.withKeyBlock { _, collection, _ in collection == Dataset.collection ? Runner.viewGroup : nil }
        let sorting = YapDatabaseViewSorting.withKeyBlock { _, _, _, key1, _, key2 in
            key1 == key2 ? .orderedSame : (key1 < key2 ? .orderedAscending : .orderedDescending)
        }
        return YapDatabaseAutoView(grouping: grouping, sorting: sorting, versionTag: Runner.viewVersionTag)
    }

    static func registerKeyOrderView(_ database: YapDatabase) throws {
        guard database.register(keyOrderView(), withName: viewName) else { throw BenchError("YapDB: the view did not register") }
    }

    func runW11() throws {
        try runW11Inserts()
        try runW11Open()
    }

    /// 100,000 rows in one durable transaction, in sorted and in random key order, on a new
    /// database with the view registered and without; interleaved.
    func runW11Inserts() throws {
        let data = dataset("views") { Dataset(count: 100_000, valueSize: 100, kind: .random, seed: 0x5EED_0011) }
        let cases: [(order: String, rows: [Int], view: Bool)] = [
            ("sorted", data.sortedOrder, true), ("sorted", data.sortedOrder, false),
            ("random", Array(0..<data.count), true), ("random", Array(0..<data.count), false),
        ]
        var times: [String: [Double]] = [:]
        for rep in 0..<settings.heavyReps {
            for item in cases {
                let folder = try freshFolder("W11-\(item.order)-\(item.view)-\(rep)")
                defer { remove(folder) }
                let store = try YapStore(folder: folder, durability: .durable)
                if item.view { try Runner.registerKeyOrderView(store.database) }
                let time = try timed(true) { try store.write(data, rows: item.rows[...]) }
                if item.view {
                    let count = store.writer.read { tx in (tx.ext(Runner.viewName) as? YapDatabaseViewTransaction)?.numberOfItems(inGroup: Runner.viewGroup) }
                    guard let count, Int(count) == data.count else { throw BenchError("W11: the view holds \(count.map { String($0) } ?? "no") rows, not \(data.count)") }
                }
                try store.close()
                times["\(item.order) \(item.view)", default: []].append(time)
            }
        }
        let n = data.count.formatted()
        for order in ["sorted", "random"] {
            add("W11", "insert \(n) rows in \(order) key order, one durable transaction, with a view sorted by key", .time,
                ["t": [.yapdb: times["\(order) true"]!]], "t", note: order == "sorted" ? "YapDB only: the peers have no views" : nil,
                charted: false, notApplicable: Runner.peers)
            add("W11", "insert \(n) rows in \(order) key order, one durable transaction, without a view", .time,
                ["t": [.yapdb: times["\(order) false"]!]], "t", charted: false, notApplicable: Runner.peers)
        }
    }

    /// A database of every main row under the view (not timed), then per run a new process that
    /// opens it, re-registers the view (same version tag) and reads its first row by index;
    /// then index lookups and `findRange` in that process.
    func runW11Open() throws {
        let data = main
        let folder = try freshFolder("W11-view")
        defer { remove(folder) }
        let store = try YapStore(folder: folder, durability: .relaxed)
        try Runner.registerKeyOrderView(store.database)
        let start = nowNanoseconds()
        for from in stride(from: 0, to: data.count, by: 100_000) {
            try store.write(data, rows: data.sortedOrder[from..<min(from + 100_000, data.count)])
        }
        log("  (W11 view of \(data.count.formatted()) rows built in \(format(Double(nowNanoseconds() - start), .time)))")
        try store.close()
        // The probe: keys to find and where they sit in key order.
        var rank = [Int](repeating: 0, count: data.count)
        for (position, row) in data.sortedOrder.enumerated() { rank[row] = position }
        let probe = data.readOrder.prefix(Runner.viewFinds).map { "\(data.keys[$0]) \(rank[$0])" }
        let probePath = settings.workFolder.appendingPathComponent("W11.keys").path
        try probe.joined(separator: "\n").write(toFile: probePath, atomically: true, encoding: .utf8)
        var figures: [String: [Engine: [Double]]] = [:]
        for _ in 0..<settings.reps {
            let child = try runChild(["child-view", folder.path, probePath])
            for name in ["open", "object", "key", "find"] { figures[name, default: [:]][.yapdb, default: []].append(try child.number(name)) }
            if let memory = try? child.number("memory"), memory >= 0 { figures["memory", default: [:]][.yapdb, default: []].append(memory) }
        }
        let n = data.count.formatted()
        add("W11", "reopen, re-register the view (same versionTag) and read its first row by index, \(n)-row view (fresh process)",
            .time, figures, "open", note: "a new process per run, from the open call to object(atIndex: 0, inGroup:)", charted: false,
            notApplicable: Runner.peers)
        add("W11", "private memory (RssAnon) after that + 1,000 random index reads, \(n)-row view (fresh process)", .bytes, figures,
            "memory", charted: false, notApplicable: Runner.peers)
        add("W11", "object(atIndex:inGroup:) at random indices of the \(n)-row view, per call", .time, figures, "object",
            note: "\(Runner.viewLookups.formatted()) calls in one read transaction, in the same new process", charted: false,
            notApplicable: Runner.peers)
        add("W11", "getCollectionKey(atIndex:inGroup:) at random indices of the \(n)-row view, per call", .time, figures, "key",
            charted: false, notApplicable: Runner.peers)
        add("W11", "findRange(inGroup:using:) for one key in the \(n)-row view, per call", .time, figures, "find",
            note: "\(Runner.viewFinds.formatted()) keys, a key find block; each result checked against the key's rank",
            charted: false, notApplicable: Runner.peers)
    }
}

/// The child of W11: opens the database in `folder`, re-registers the view, reads its first row
/// by index (timed from the open call: `open`), then 1,000 random index reads (`memory`: RssAnon
/// after them), then timed lookups: `object` and `key` (ns per call of `object(atIndex:)` and
/// `getCollectionKey(atIndex:)`) and `find` (ns per `findRange` of one probe key, checked).
func childView(folder: String, probePath: String) throws -> [String: String] {
    let probe = try readLines(probePath).map { (key: $0[0], rank: Int($0[1]) ?? -1) }
    let start = nowNanoseconds()
    let database = try YapDatabase.open(url: YapStore.fileURL(in: URL(fileURLWithPath: folder)), options: YapDatabaseOptions())
    YapStore.registerRawBytes(database)
    try Runner.registerKeyOrderView(database)
    let connection = database.newConnection()
    connection.objectCacheEnabled = false
    let first = connection.read { tx in (tx.ext(Runner.viewName) as? YapDatabaseViewTransaction)?.object(atIndex: 0, inGroup: Runner.viewGroup) }
    let open = nowNanoseconds() - start
    guard first is Data else { throw BenchError("W11: no first row in the view") }
    var rng = SplitMix64(seed: 0x5EED_0012)
    let figures = try connection.read { tx -> [String: String] in
        guard let view = tx.ext(Runner.viewName) as? YapDatabaseViewTransaction else { throw BenchError("W11: no view transaction") }
        let count = view.numberOfItems(inGroup: Runner.viewGroup)
        guard count > 0 else { throw BenchError("W11: the view is empty") }
        var found = 0
        for _ in 0..<1_000 where view.object(atIndex: Int(rng.next() % UInt64(count)), inGroup: Runner.viewGroup) != nil { found += 1 }
        let memory = reportedMemory()
        let indices = (0..<Runner.viewLookups).map { _ in Int(rng.next() % UInt64(count)) }
        let object = timed(true) {
            for i in indices where view.object(atIndex: i, inGroup: Runner.viewGroup) != nil { found += 1 }
        }
        let key = timed(true) {
            for i in indices where view.getCollectionKey(atIndex: i, inGroup: Runner.viewGroup) != nil { found += 1 }
        }
        guard found == 1_000 + 2 * indices.count else { throw BenchError("W11: \(found) index lookups found a row") }
        var wrong = 0
        let find = timed(true) {
            for target in probe {
                let range = view.findRange(inGroup: Runner.viewGroup, using: .withKeyBlock { _, key in
                    key == target.key ? .orderedSame : (key < target.key ? .orderedAscending : .orderedDescending)
                })
                if range.location != target.rank || range.length != 1 { wrong += 1 }
            }
        }
        guard wrong == 0 else { throw BenchError("W11: findRange missed \(wrong) of \(probe.count) keys") }
        return ["memory": memory, "object": String(object / Double(indices.count)), "key": String(key / Double(indices.count)),
                "find": String(find / Double(probe.count))]
    }
    try database.close()
    return figures.merging(["open": String(open)]) { a, _ in a }
}
