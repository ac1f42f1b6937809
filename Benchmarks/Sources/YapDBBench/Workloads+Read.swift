import Foundation

/// W4–W6: point reads, parallel readers, enumeration and ordered scans, on one database per
/// engine holding every row (the fixture).
extension Runner {
    static let readEngines: [Engine] = [.yapdb, .sqliteNormal, .grdb, .lmdb]

    /// The engine's fixture, loaded on first use (one durable transaction, not timed).
    func fixture(_ engine: Engine) throws -> any Store {
        if let store = fixtures[engine] { return store }
        let folder = try freshFolder("fixture-\(engine)")
        let store = try openStore(engine, in: folder, durability: .durable, mapSize: settings.lmdbMapSize)
        let start = nowNanoseconds()
        try store.write(main, rows: Array(0..<main.count)[...])
        log("  (fixture \(engine.rawValue): \(main.count) rows in \(format(Double(nowNanoseconds() - start), .time)))")
        fixtures[engine] = store
        return store
    }

    func fixtureFolder(_ engine: Engine) -> URL { settings.workFolder.appendingPathComponent("fixture-\(engine)") }

    /// The sum of the checksums of `rows`' values, straight from the dataset.
    func expectedChecksum(_ data: Dataset, _ rows: some Sequence<Int>) -> UInt64 {
        data.valueBytes.withUnsafeBytes { values in
            var sum: UInt64 = 0
            for i in rows {
                sum &+= checksum(UnsafeRawBufferPointer(rebasing: values[(i * data.valueSize)..<((i + 1) * data.valueSize)]))
            }
            return sum
        }
    }

    /// W4: every row read once in random order as raw bytes: in one read transaction, and
    /// with one read transaction per read. Nanoseconds per read.
    func runW4() throws {
        let data = main
        let rows = data.readOrder[...]
        let expected = expectedChecksum(data, rows)
        var readers: [Engine: any StoreReader] = [:]
        for engine in Runner.readEngines where settings.wants(engine) { readers[engine] = try fixture(engine).makeReader() }
        defer { readers.values.forEach { $0.close() } }
        let variants = try yapReaderVariants()
        defer { variants.values.forEach { $0.close() } }
        let figures = try interleave(Runner.readEngines, reps: settings.heavyReps) { engine, _ in
            var out: [String: Double] = [:]
            // YapDB reads again through the lending forms and in the default configuration.
            let forms: [(suffix: String, reader: any StoreReader)] = [("", readers[engine]!)]
                + (engine == .yapdb ? variants.sorted { $0.key < $1.key }.map { (":\($0.key)", $0.value as any StoreReader) } : [])
            for (suffix, reader) in forms {
                var sum: UInt64 = 0
                let one = try timed(engine == .yapdb && suffix.isEmpty) { sum = try reader.readInOneTransaction(data, rows: rows) }
                try expectChecksum(sum, expected, engine, "W4 reads in one transaction\(suffix)")
                let each = try timed(engine == .yapdb && suffix.isEmpty) { sum = try reader.readEachInItsOwnTransaction(data, rows: rows) }
                try expectChecksum(sum, expected, engine, "W4 reads, one transaction each\(suffix)")
                out["one" + suffix] = one / Double(rows.count)
                out["each" + suffix] = each / Double(rows.count)
            }
            return out
        }
        let n = rows.count.formatted()
        add("W4", "\(n) random point reads in one read transaction, per read", .time, figures, "one",
            note: "YapDB: serializedObject (a copy as Data); SQLite and LMDB: bytes in place")
        add("W4", "\(n) random point reads, one read transaction each, per read", .time, figures, "each")
        for (variant, how) in Self.yapVariantLabels {
            addYapVariant("W4", "\(n) random point reads in one read transaction, per read, YapDB \(how)", .time, figures,
                          base: "one", variant: "one:\(variant)")
            addYapVariant("W4", "\(n) random point reads, one read transaction each, per read, YapDB \(how)", .time, figures,
                          base: "each", variant: "each:\(variant)")
        }
    }

    /// The extra YapDB rows of W4 and W6: the variant's name in the figures, and how the row's
    /// label says it.
    static let yapVariantLabels: [(String, String)] = [
        ("lending", "through the lending forms (bytes lent in place)"),
        ("defaults", "in the default configuration (object cache on, object reads)"),
    ]

    /// Readers of the YapDB fixture for the extra rows, by variant name.
    func yapReaderVariants() throws -> [String: YapReader] {
        guard settings.wants(.yapdb), let store = try fixture(.yapdb) as? YapStore else { return [:] }
        return ["lending": store.makeReader(.lending), "defaults": store.makeReader(.defaults)]
    }

    /// W5: the same reads split over 1, 2 and 4 threads, each with its own connection and one
    /// read transaction; wall time per read, and the speed-up from 1 to 2 threads.
    func runW5() throws {
        let data = main
        let expected = expectedChecksum(data, data.readOrder)
        var perThreads: [Int: [String: [Engine: [Double]]]] = [:]
        for threads in [1, 2, 4] {
            var readers: [Engine: [any StoreReader]] = [:]
            for engine in Runner.readEngines where settings.wants(engine) {
                readers[engine] = try (0..<threads).map { _ in try fixture(engine).makeReader() }
            }
            defer { readers.values.joined().forEach { $0.close() } }
            let figures = try interleave(Runner.readEngines, reps: settings.heavyReps) { engine, _ in
                let slices = (0..<threads).map { t in
                    data.readOrder[(t * data.count / threads)..<((t + 1) * data.count / threads)]
                }
                let (time, sums) = try runThreads(readers[engine]!, profiled: engine == .yapdb) { reader, t in
                    try reader.readInOneTransaction(data, rows: slices[t])
                }
                try expectChecksum(sums.reduce(0, &+), expected, engine, "W5 with \(threads) threads")
                return ["time": time / Double(data.count)]
            }
            perThreads[threads] = figures
            add("W5", "\(data.count.formatted()) random point reads on \(threads) thread\(threads == 1 ? "" : "s"), wall time per read",
                .time, figures, "time", charted: threads != 1)
        }
        // Scaling: the 1-thread median over the 2-thread median, per engine.
        var scaling: [String: [Engine: [Double]]] = ["speedup": [:]]
        for engine in Runner.readEngines {
            guard let one = perThreads[1]?["time"]?[engine], let two = perThreads[2]?["time"]?[engine] else { continue }
            scaling["speedup"]![engine] = [median(one) / median(two)]
        }
        add("W5", "speed-up from 1 to 2 threads (higher is better)", .factor, scaling, "speedup", charted: false)
    }

    /// W6: enumerate the collection (keys and values), then short ordered scans of 10 rows
    /// from random keys where the engine keeps keys in order.
    func runW6() throws {
        let data = main
        let expectedAll = expectedChecksum(data, 0..<data.count)
        let starts = data.readOrder[0..<settings.scans]
        let length = 10
        // Where each row sits in key order, to know which rows a scan returns.
        var rank = [Int](repeating: 0, count: data.count)
        for (position, row) in data.sortedOrder.enumerated() { rank[row] = position }
        let expectedScans = expectedChecksum(data, starts.flatMap { row in
            data.sortedOrder[rank[row]..<min(rank[row] + length, data.count)]
        })
        var readers: [Engine: any StoreReader] = [:]
        for engine in Runner.readEngines where settings.wants(engine) { readers[engine] = try fixture(engine).makeReader() }
        defer { readers.values.forEach { $0.close() } }
        let variants = try yapReaderVariants()
        defer { variants.values.forEach { $0.close() } }
        let figures = try interleave(Runner.readEngines, reps: settings.heavyReps) { engine, _ in
            var figures: [String: Double] = [:]
            let forms: [(suffix: String, reader: any StoreReader)] = [("", readers[engine]!)]
                + (engine == .yapdb ? variants.sorted { $0.key < $1.key }.map { (":\($0.key)", $0.value as any StoreReader) } : [])
            for (suffix, reader) in forms {
                var result: (count: Int, checksum: UInt64) = (0, 0)
                let all = try timed(engine == .yapdb && suffix.isEmpty) { result = try reader.enumerateAll() }
                guard result.count == data.count else { throw BenchError("\(engine.rawValue) W6\(suffix): enumerated \(result.count) rows") }
                try expectChecksum(result.checksum, expectedAll, engine, "W6 enumeration\(suffix)")
                figures["all" + suffix] = all
                var scanned: UInt64?
                let scans = try timed { scanned = try reader.shortScans(data, starts: starts, length: length) }
                if let scanned {
                    try expectChecksum(scanned, expectedScans, engine, "W6 scans\(suffix)")
                    figures["scans" + suffix] = scans / Double(starts.count)
                }
            }
            return figures
        }
        add("W6", "enumerate all \(data.count.formatted()) rows of the collection (keys and values)", .time, figures, "all",
            note: "YapDB: iterateKeysAndObjects with the raw-bytes deserializer")
        add("W6", "\(starts.count.formatted()) ordered scans of \(length) rows, per scan", .time, figures, "scans",
            note: "YapDB: iterateKeysAndObjects(inCollection:from:through:), stopped after 10 rows", charted: false)
        for (variant, how) in Self.yapVariantLabels {
            addYapVariant("W6", "enumerate all \(data.count.formatted()) rows of the collection (keys and values), YapDB \(how)", .time,
                          figures, base: "all", variant: "all:\(variant)")
            addYapVariant("W6", "\(starts.count.formatted()) ordered scans of \(length) rows, per scan, YapDB \(how)", .time,
                          figures, base: "scans", variant: "scans:\(variant)")
        }
    }
}

/// Runs `body` on one thread per element of `items`, all released at once; returns the wall
/// time from release to the last finish and each thread's result.
func runThreads<Item, Result>(_ items: [Item], profiled: Bool,
                              _ body: @escaping (Item, Int) throws -> Result) throws -> (Double, [Result]) {
    let shared = ThreadSlots(items, body)
    let start = DispatchSemaphore(value: 0)
    let ready = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    for t in 0..<items.count {
        done.enter()
        let thread = Thread {
            ready.signal()
            start.wait()
            do { shared.results[t] = try shared.body(shared.items[t], t) } catch { shared.errors[t] = error }
            done.leave()
        }
        thread.start()
    }
    for _ in items { ready.wait() }
    let time = timed(profiled) {
        for _ in items { start.signal() }
        done.wait()
    }
    for t in 0..<items.count { if let error = shared.errors[t] { throw error } }
    return (time, (0..<items.count).map { shared.results[$0]! })
}

/// Each thread writes only its own slot; the slots are read after `done` is waited for.
final class ThreadSlots<Item, Result>: @unchecked Sendable {
    let results: UnsafeMutablePointer<Result?>
    let errors: UnsafeMutablePointer<(any Error)?>
    let items: [Item]
    let body: (Item, Int) throws -> Result
    init(_ items: [Item], _ body: @escaping (Item, Int) throws -> Result) {
        self.items = items
        self.body = body
        results = .allocate(capacity: items.count)
        results.initialize(repeating: nil, count: items.count)
        errors = .allocate(capacity: items.count)
        errors.initialize(repeating: nil, count: items.count)
    }
    deinit {
        results.deinitialize(count: items.count).deallocate()
        errors.deinitialize(count: items.count).deallocate()
    }
}
