import Foundation

/// W1–W3: bulk load, single-row commits, batches of commits.
extension Runner {
    /// W1: all rows in one durable transaction, random key order, then sequential order, then
    /// 1 KiB JSON-like values (a tenth of the rows) for compression; file size after closing.
    func runW1() throws {
        let engines: [Engine] = [.yapdb, .sqliteNormal, .sqliteFull, .grdb, .lmdb, .floor]
        let variants: [(name: String, data: Dataset, order: [Int])] = [
            ("random keys", main, Array(0..<main.count)),
            ("sequential keys", main, main.sortedOrder),
            ("1 KiB JSON values", json, Array(0..<json.count)),
        ]
        for variant in variants {
            let data = variant.data
            let figures = try interleave(engines, reps: settings.heavyReps) { engine, rep in
                let folder = try freshFolder("W1-\(engine)-\(rep)")
                defer { remove(folder) }
                if engine == .floor {
                    let payload = data.payloadBytes(rows: data.count)
                    return ["time": try FsyncFloor.bulk(in: folder, bytes: payload), "size": Double(payload)]
                }
                let store = try openStore(engine, in: folder, durability: .durable, mapSize: settings.lmdbMapSize)
                let time = try timed(engine == .yapdb) { try store.write(data, rows: variant.order[...]) }
                try store.close()
                var out = ["time": time, "size": Double(folderBytes(folder))]
                if engine == .yapdb && variant.name == "random keys" {
                    // Again with the writer's caches as a new connection has them (issue 24).
                    let again = try freshFolder("W1-defaults-\(rep)")
                    defer { remove(again) }
                    let defaults = try YapStore(folder: again, durability: .durable, defaults: true)
                    out["time:defaults"] = try timed { try defaults.write(data, rows: variant.order[...]) }
                    try defaults.close()
                }
                return out
            }
            let rows = data.count.formatted()
            add("W1", "load \(rows) rows, \(variant.name), one durable transaction", .time, figures, "time",
                note: variant.name == "1 KiB JSON values" ? "a tenth of the rows, values of 1 KiB" : nil)
            if variant.name == "random keys" {
                addYapVariant("W1", "load \(rows) rows, random keys, one durable transaction, YapDB in the default configuration "
                              + "(object and metadata cache on)", .time, figures, base: "time", variant: "time:defaults")
            }
            add("W1", "file size after loading \(rows) rows, \(variant.name)", .bytes, figures, "size",
                note: "fsync floor column: the raw payload (keys + values)", charted: variant.name != "sequential keys")
        }
        try runW1Memory()
    }

    /// W1's private memory: each engine loads every row of the main data in one durable
    /// transaction in a new process that samples its RssAnon every 2 ms; the peak above what
    /// the process held before the open (its copy of the dataset).
    func runW1Memory() throws {
        let figures = try interleave([.yapdb, .sqliteNormal, .grdb, .lmdb], reps: settings.heavyReps) { engine, rep in
            let folder = try freshFolder("W1-memory-\(engine)-\(rep)")
            defer { remove(folder) }
            let child = try runChild(["child-load", engine.rawValue, folder.path, String(settings.rows)])
            let peak = try child.number("peak"), baseline = try child.number("baseline")
            guard peak >= 0, baseline >= 0 else { return [:] }
            return ["above": peak - baseline, "baseline": baseline]
        }
        let baseline = figures["baseline"].map { format(median($0.values.flatMap { $0 }), .bytes) } ?? "n/a"
        add("W1", "private memory (RssAnon) peak during the load of \(settings.rows.formatted()) rows, above the process's baseline",
            .bytes, figures, "above", note: privateMemoryBytes() == nil ? "n/a: no /proc/self/status on this system"
                : "a new process per run, sampling RssAnon every 2 ms through open + load + commit; its baseline before "
                + "the open (the dataset it built) was \(baseline) and is subtracted", charted: false)
    }

    /// W2: single-row commits on a new database, durable and not; p50 and p99 per commit.
    /// Interleaved commit by commit (YapDB, SQLite, LMDB, floor, YapDB, …), so each engine's
    /// commits meet the same moment-to-moment disk latency.
    func runW2() throws {
        let data = main
        let count = settings.singleCommits
        for durability in [Durability.durable, .relaxed] {
            let engines = (durability == .durable ? [Engine.yapdb, .sqliteFull, .lmdb, .floor] : [.yapdb, .sqliteNormal, .grdb, .lmdb])
                .filter { settings.wants($0) }
            var figures: [String: [Engine: [Double]]] = [:]
            for rep in 0..<settings.reps {
                var stores: [Engine: any Store] = [:]
                var folders: [URL] = []
                var floor: FsyncFloor?
                for engine in engines {
                    let folder = try freshFolder("W2-\(engine)-\(rep)")
                    folders.append(folder)
                    if engine == .floor {
                        floor = try FsyncFloor(in: folder, bytesPerCommit: 256, overwriteCommits: count)
                    } else {
                        stores[engine] = try openStore(engine, in: folder, durability: durability, mapSize: settings.lmdbMapSize)
                    }
                }
                var times: [Engine: [Double]] = [:]
                var overwrites: [Double] = []
                for j in 0..<count {
                    for engine in engines {
                        if engine == .floor, let floor {
                            times[engine, default: []].append(try floor.append())
                            overwrites.append(try floor.overwrite())
                            continue
                        }
                        let store = stores[engine]!
                        times[engine, default: []].append(try timed(engine == .yapdb) { try store.write(data, rows: data.readOrder[j...j]) })
                    }
                }
                for store in stores.values { try store.close() }
                floor = nil
                folders.forEach(remove)
                for (engine, values) in times {
                    figures["p50", default: [:]][engine, default: []].append(percentile(values, 50))
                    figures["p99", default: [:]][engine, default: []].append(percentile(values, 99))
                }
                if !overwrites.isEmpty {
                    figures["overwriteP50", default: [:]][.floor, default: []].append(percentile(overwrites, 50))
                    figures["overwriteP99", default: [:]][.floor, default: []].append(percentile(overwrites, 99))
                }
            }
            let what = durability == .durable ? "durable single-row commit" : "non-durable single-row commit"
            let setting = durability == .durable
                ? "YapDB .full, SQLite FULL, LMDB default; floor: 256-byte append + fdatasync"
                : "YapDB .normal, SQLite NORMAL, GRDB (NORMAL), LMDB MDB_NOSYNC"
            add("W2", "\(what), p50 of \(count)", .time, figures, "p50", note: setting)
            add("W2", "\(what), p99 of \(count)", .time, figures, "p99", note: setting, charted: false)
            if durability == .durable && settings.wants(.floor) {
                let overwrite = "fsync floor column: 256-byte pwrite over a file written and synced before, then fdatasync "
                    + "(no size change, nothing for the file system to journal: how SQLite's reused WAL and LMDB's reused pages commit)"
                add("W2", "raw overwrite + fdatasync, p50 of \(count)", .time, figures, "overwriteP50", note: overwrite, charted: false)
                add("W2", "raw overwrite + fdatasync, p99 of \(count)", .time, figures, "overwriteP99", charted: false)
            }
        }
    }

    /// W3: 100 durable transactions of 1,000 rows each, on a new database.
    func runW3() throws {
        let data = main
        let transactions = 100, perTransaction = 1_000
        let total = min(transactions * perTransaction, data.count)
        let figures = try interleave([.yapdb, .sqliteNormal, .sqliteFull, .grdb, .lmdb, .floor], reps: settings.reps) { engine, rep in
            let folder = try freshFolder("W3-\(engine)-\(rep)")
            defer { remove(folder) }
            if engine == .floor {
                let floor = try FsyncFloor(in: folder, bytesPerCommit: Int(data.payloadBytes(rows: perTransaction)))
                return ["time": try (0..<transactions).reduce(0) { sum, _ in sum + (try floor.append()) }]
            }
            let store = try openStore(engine, in: folder, durability: .durable, mapSize: settings.lmdbMapSize)
            let time = try timed(engine == .yapdb) {
                for start in stride(from: 0, to: total, by: perTransaction) {
                    try store.write(data, rows: data.readOrder[start..<min(start + perTransaction, total)])
                }
            }
            try store.close()
            return ["time": time]
        }
        add("W3", "\(transactions) durable transactions × \(perTransaction.formatted()) rows", .time, figures, "time",
            note: "floor: 100 × (116 KB write + fdatasync)")
    }
}
