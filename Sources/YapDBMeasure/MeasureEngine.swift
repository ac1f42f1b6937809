import ArgumentParser
import YapDBStorage
import YapDBEngine
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `yapdb-measure engine`: bulk load, point reads, clean open, compaction, verify.
struct MeasureEngine: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "engine", abstract: "Measure the engine on a database of N rows.")

    @Option(help: "Rows to load.") var rows = 1_000_000
    @Option(help: "Value size in bytes.") var valueSize = 100
    @Option(help: "Point reads to time.") var reads = 200_000
    @Option(help: "Stop after this step (load, read, verify, open, reread), for profiling one step.") var stopAfter: String?
    @Flag(help: "Time with the thread's CPU clock instead of the wall clock (for a loaded machine).") var cpuTime = false
    @Option(help: "Keep the database in this folder (for `yapdb-measure open`) instead of a temporary one.") var keep: String?
    @Option(help: "Index read mode: mapped (default) or cached:N (pread through a cache of N pages).") var readMode = "mapped"
    @Option(help: "With --stop-after open: then overwrite this many rows in commits of 1,000 and exit without closing, as a killed process would (the next open replays them).") var tailRows = 0

    func run() throws {
        if cpuTime { measureClock = CLOCK_THREAD_CPUTIME_ID }
        let folder = try keep ?? TemporaryFolder.make()
        defer { if keep == nil { TemporaryFolder.remove(folder) } }
        let path = folder + "/bench.yapdb"
        var options = EngineOptions()
        options.checkpointThreshold = 0
        if readMode != "mapped" {
            guard readMode.hasPrefix("cached:"), let pages = Int(readMode.dropFirst(7)), pages > 0 else {
                throw ValidationError("--read-mode is mapped or cached:N, not \(readMode)")
            }
            options.indexReadMode = .cached(pages: pages)
        }
        var rng = FastRandom(seed: 7)
        let keys = (0..<rows).map { _ in String(format16: Int(rng.next() % 1_000_000_000_000)) }
        let values = (0..<1024).map { _ in (0..<valueSize).map { _ in UInt8(truncatingIfNeeded: rng.next()) } }

        // Bulk load in one transaction.
        var engine: Engine? = try Engine.open(path: path, options: options)
        let t0 = now()
        _ = try engine!.write { tx in
            for (i, key) in keys.enumerated() {
                try values[i & 1023].withUnsafeBytes { try tx.setObject($0, metadata: .clear, collection: "c", key: key) }
            }
        }
        let load = now() - t0
        let loaded = try engine!.stats()
        let payload = Double(loaded.rowCount * (16 + valueSize))
        print("bulk load: \(rows) rows (16-byte keys, \(valueSize)-byte values) in one transaction: \(fmt(load * 1000)) ms (\(fmt(Double(rows) / load / 1e6)) M rows/s)")
        print("file size after load: \(loaded.fileBytes) bytes = \(fmt(Double(loaded.fileBytes) / payload))× the raw payload (\(Int(payload)) bytes)")

        if stopAfter == "load" { try engine!.close(); return }
        // Point reads of uncached bytes (random keys, each a hash probe + one pread).
        let snapshot = engine!.snapshot()
        var check = 0
        /// Nanoseconds per point read of random keys (value bytes), then per key directory
        /// lookup alone (the entry only).
        func pointReads(_ snapshot: EngineSnapshot) throws -> (read: Double, lookup: Double) {
            let t0 = now()
            for i in 0..<reads {
                let key = keys[Int(rng.next() % UInt64(rows))]
                check &+= Int(try snapshot.object(collection: "c", key: key)?.first ?? 0) &+ i
            }
            let t1 = now()
            for i in 0..<reads {
                let key = keys[Int(rng.next() % UInt64(rows))]
                check &+= Int(try snapshot.entry(collection: "c", key: key)?.rowid ?? 0) &+ i
            }
            return ((t1 - t0) / Double(reads) * 1e9, (now() - t1) / Double(reads) * 1e9)
        }
        let (read, lookup) = try pointReads(snapshot)
        print("point read (random key, value bytes, page cache warm): \(fmt(read)) ns (check \(check & 0xFF))")
        print("  of which keydir lookup (random key, entry only): \(fmt(lookup)) ns (check \(check & 0xFF))")

        if stopAfter == "read" { try engine!.close(); return }
        // verify().
        let t2 = now()
        let report = try engine!.verify()
        print("verify(): \(fmt((now() - t2) * 1000)) ms, valid \(report.isValid), \(report.recordsChecked) records, \(report.bytesChecked) bytes")

        if stopAfter == "verify" { try engine!.close(); return }
        // Clean close (writes the checkpoint) and open.
        let t3 = now()
        try engine!.close()
        let closeTime = now() - t3
        engine = nil
        let t4 = now()
        engine = try Engine.open(path: path, options: options)
        let open = now() - t4
        print("close (checkpoint of \(rows) rows): \(fmt(closeTime * 1000)) ms; clean open (checkpoint + tail): \(fmt(open * 1000)) ms, \(engine!.snapshot().rowCount) rows")
        // Point reads again, now that every page comes from the index files (after a clean
        // close the whole index of a small database is in the active index file).
        if stopAfter != "open" {
            let (reread, relookup) = try pointReads(engine!.snapshot())
            print("point read after the clean open (index pages from the files): \(fmt(reread)) ns; keydir lookup only: \(fmt(relookup)) ns (check \(check & 0xFF))")
            if stopAfter == "reread" { try engine!.close(); return }
        }

        if stopAfter == "open" {
            guard tailRows > 0 else { try engine!.close(); return }
            for start in stride(from: 0, to: tailRows, by: 1_000) {
                _ = try engine!.write { tx in
                    for i in start..<min(start + 1_000, tailRows) {
                        try values[(i + 1) & 1023].withUnsafeBytes { try tx.setObject($0, metadata: .clear, collection: "c", key: keys[i % rows]) }
                    }
                }
            }
            print("wrote \(tailRows) rows after the checkpoint; exiting without closing")
            exitWithoutClosing()
        }
        // Delete half, compact.
        _ = try engine!.write { tx in
            for key in keys.enumerated() where key.offset % 2 == 0 { _ = try tx.remove(collection: "c", key: key.element) }
        }
        _ = try engine!.write { tx in try [1].withUnsafeBytes { try tx.setObject($0, metadata: .clear, collection: "c", key: "seal") } }
        let before = try engine!.stats()
        let t5 = now()
        let compaction = try engine!.compact()
        let compactTime = now() - t5
        let after = try engine!.stats()
        print("compaction after deleting half: \(fmt(compactTime * 1000)) ms, moved \(compaction.bytesMoved) bytes (\(fmt(Double(compaction.bytesMoved) / compactTime / 1e6)) MB/s of live data), file \(before.fileBytes) → \(after.fileBytes) bytes, live \(after.liveBytes) = \(fmt(Double(after.liveBytes) / Double(after.rowCount * (16 + valueSize))))× raw payload")
        try engine!.close()
    }
}

/// `yapdb-measure open`: in a fresh process, the time to open a database that
/// `yapdb-measure engine --keep FOLDER` left and read its first row, then private memory
/// (`RssAnon`) after 1,000 random reads.
struct MeasureOpen: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "open", abstract: "Open a kept database: time to the first row, and private memory.")

    @Argument(help: "The folder given to `engine --keep`.") var folder: String
    @Option(help: "The rows it was loaded with (to know its keys).") var rows = 1_000_000
    @Flag(help: "Then read every row's value in key order and report private and file-backed memory again (values are read from maps of the log segments: file-backed memory grows, RssAnon must not).") var readAll = false

    func run() throws {
        // The keys of the rows to read, found by replaying the key generator of `engine`
        // without keeping the rest (a million strings would dwarf the figure measured).
        var pick = FastRandom(seed: 99)
        let wanted = [rows / 2] + (0..<1_000).map { _ in Int(pick.next() % UInt64(rows)) }
        let wantedSet = Set(wanted)
        var rng = FastRandom(seed: 7)
        var found: [Int: String] = [:]
        for index in 0..<rows {
            let draw = rng.next()
            if wantedSet.contains(index) { found[index] = String(format16: Int(draw % 1_000_000_000_000)) }
        }
        let keys = wanted.map { found[$0]! }
        let before = privateMemory()
        let t0 = now()
        let engine = try Engine.open(path: folder + "/bench.yapdb", options: EngineOptions())
        let first = try engine.snapshot().object(collection: "c", key: keys[0])
        let open = now() - t0
        var check = first?.count ?? 0
        let snapshot = engine.snapshot()
        for key in keys.dropFirst() {
            check &+= try snapshot.object(collection: "c", key: key)?.count ?? 0
        }
        let after = privateMemory()
        print("open + first read: \(fmt(open * 1000)) ms (\(engine.openReport.commitsReplayed) commits replayed); RssAnon before open \(before / 1024) KiB, after open + 1,000 reads \(after / 1024) KiB (check \(check))")
        if readAll {
            // File-backed pages count as RssFile, or as RssShmem on tmpfs.
            let fileBefore = memory("RssFile:") + memory("RssShmem:")
            var bytes = 0
            var failure: EngineError?
            try snapshot.forEachKey(inCollection: "c") { _, entry in
                do throws(EngineError) {
                    try snapshot.readValue(at: entry.object, owner: .object(entry.rowid)) { bytes += $0?.count ?? 0 }
                    return true
                } catch {
                    failure = error
                    return false
                }
            }
            if let failure { throw failure }
            print("after reading every value (\(bytes / 1024) KiB): RssAnon \(privateMemory() / 1024) KiB, RssFile + RssShmem \(fileBefore / 1024) → \((memory("RssFile:") + memory("RssShmem:")) / 1024) KiB")
        }
        try engine.close()
    }

    /// `RssAnon` of this process in bytes (Linux), or 0 where there is none.
    func privateMemory() -> Int { memory("RssAnon:") }

    /// The `/proc/self/status` figure named `field` in bytes (Linux), or 0 where there is none.
    func memory(_ field: String) -> Int {
        guard let file = fopen("/proc/self/status", "r") else { return 0 }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(cString: line)
            if text.hasPrefix(field) {
                let digits = text.filter(\.isNumber)
                return (Int(digits) ?? 0) * 1024
            }
        }
        return 0
    }
}

/// Ends the process at once, as a killed one would: nothing is closed or checkpointed.
func exitWithoutClosing() -> Never { exit(0) }
