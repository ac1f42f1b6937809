import ArgumentParser
import Foundation
import YapDB

/// `yapdb measure-api`: the public API's hot paths, measured in one run (build with -c release).
struct MeasureAPI: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "measure-api",
        abstract: "Measure cache hits, reads, empty transactions and cache sync through the public API.",
        shouldDisplay: false)

    @Option(help: "Iterations per figure.") var iterations = 200_000
    @Option(help: "Changed keys for the cache-sync figure.") var changedKeys = 10_000

    struct Item: Codable {
        var name: String
        var count: Int
        var tags: [String]
    }

    func run() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("yapdb-measure-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let options = YapDatabaseOptions()
        options.durability = .normal
        let database = try YapDatabase.open(url: folder.appendingPathComponent("m.yapdb"), options: options)
        database.registerCodableSerialization(Item.self, forCollection: "items")
        let writer = database.newConnection()
        let keys = (0..<changedKeys).map { "key-\($0)" }
        try writer.write { tx in
            for key in keys { tx.setObject(Item(name: key, count: 1, tags: ["a", "b"]), forKey: key, inCollection: "items") }
        }

        // Object-cache hit: one read transaction, the same key over and over.
        let reader = database.newConnection()
        var sink = 0
        let hit = reader.read { tx -> Double in
            _ = tx.object(forKey: "key-1", inCollection: "items")
            return time(iterations) { if tx.object(forKey: "key-1", inCollection: "items") != nil { sink &+= 1 } }
        }
        // Uncached read with decode: caches off.
        let cold = database.newConnection()
        cold.objectCacheEnabled = false
        let uncached = cold.read { tx -> Double in
            var i = 0
            return time(min(iterations, 100_000)) {
                if tx.object(forKey: keys[i % keys.count], inCollection: "items") != nil { sink &+= 1 }
                i &+= 1
            }
        }
        let emptyRead = time(iterations) { reader.read { _ in sink &+= 1 } }
        let emptyWrite = time(min(iterations, 50_000)) { writer.readWrite { _ in sink &+= 1 } }

        // Cache sync: another connection advances across N changed keys.
        let follower = database.newConnection()
        follower.objectCacheLimit = 0
        follower.read { tx in for key in keys { _ = tx.object(forKey: key, inCollection: "items") } }
        try writer.write { tx in
            for key in keys { tx.setObject(Item(name: key, count: 2, tags: []), forKey: key, inCollection: "items") }
        }
        let start = DispatchTime.now().uptimeNanoseconds
        follower.read { _ in sink &+= 1 }
        let sync = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(changedKeys)

        print("object-cache hit: \(format(hit)) ns")
        print("uncached object read with decode (cache off): \(format(uncached)) ns")
        print("empty read transaction: \(format(emptyRead)) ns")
        print("empty read-write transaction: \(format(emptyWrite)) ns")
        print("cache sync when another connection advances across \(changedKeys) changed keys: \(format(sync)) ns per key")
        if sink == 42 { print("") }
        try database.close()
    }

    func time(_ n: Int, _ body: () -> Void) -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<n { body() }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / Double(n)
    }

    func format(_ ns: Double) -> String { String(format: "%.0f", ns) }
}
