import ArgumentParser
import YapDBStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `yapdb-measure storage`: the storage layer's figures (append throughput beside raw
/// `write`, CRC32C speed, compression ratio and speed), measured in one run.
struct MeasureStorage: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storage",
        abstract: "Measure append throughput, CRC32C speed and compression.")

    @Option(help: "Records to append.") var records = 1_000_000
    @Option(help: "Records per commit.") var perCommit = 1_000
    @Option(help: "Value size in bytes.") var valueSize = 100
    @Flag(help: "Measure only the append path.") var appendOnly = false

    func run() throws {
        let folder = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(folder) }
        let fs = PosixFileSystem.shared

        // Append: records in commits, one sync at the end.
        var options = LogStore.Options()
        options.syncMode = .off
        let opened = try LogStore.open(path: Paths.join(folder, "m.yapdb"), fileSystem: fs, options: options) { _ in }
        var rng = FastRandom(seed: 42)
        let value = (0..<valueSize).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let keys = (0..<perCommit).map { String(format16: $0) }
        let start0 = opened.writer.end
        let t0 = now()
        var n = 0
        while n < records {
            try opened.writer.begin()
            for k in 0..<min(perCommit, records - n) {
                _ = try value.withBytes { (raw) throws(StorageError) in
                    try opened.writer.appendValue(.object, rowid: UInt64(n + k), collection: "c", key: keys[k], value: raw, noMetadata: true, compress: false)
                }
            }
            _ = try opened.writer.commit(snapshot: opened.writer.lastSnapshot + 1)
            n += perCommit
        }
        try opened.writer.syncCommitted()
        let appendSeconds = now() - t0
        var logBytes = Int64(opened.writer.end - start0)
        if opened.writer.segmentNumber > 1 { logBytes = Int64(records) * Int64(value.count + 16 + 16) }
        opened.lock?.unlock()

        // Raw write() of the same number of bytes in the same chunk sizes, one fdatasync.
        let rawFile = try fs.open(Paths.join(folder, "raw"), mode: .createNew)
        let chunk = [UInt8](repeating: 0x5A, count: Int(logBytes) / max(1, records / perCommit))
        let t1 = now()
        var offset: Int64 = 0
        for _ in 0..<max(1, records / perCommit) {
            try rawFile.write(chunk, at: offset)
            offset += Int64(chunk.count)
        }
        try rawFile.sync()
        let rawSeconds = now() - t1
        rawFile.close()

        print("append: \(records) records of \(valueSize) B in commits of \(perCommit), one sync: \(fmt(appendSeconds * 1000)) ms, \(fmt(Double(records) / appendSeconds / 1e6)) M records/s, \(fmt(Double(logBytes) / appendSeconds / 1e6)) MB/s")
        print("raw write(): the same \(logBytes) bytes in \(max(1, records / perCommit)) writes, one fdatasync: \(fmt(rawSeconds * 1000)) ms, \(fmt(Double(logBytes) / rawSeconds / 1e6)) MB/s; append/raw time ratio \(fmt(appendSeconds / rawSeconds))")

        if appendOnly { return }
        // CRC32C.
        let big = (0..<(64 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        var crc: UInt32 = 0
        let t2 = now()
        for _ in 0..<8 { crc ^= big.withUnsafeBytes { CRC32C.checksum($0) } }
        let crcSeconds = now() - t2
        let t2s = now()
        for _ in 0..<2 { crc ^= big.withUnsafeBytes { CRC32C.softwareUpdate(0, $0) } }
        let softwareSeconds = now() - t2s
        print("crc32c: \(fmt(Double(8 * big.count) / crcSeconds / 1e9)) GB/s in use (hardware instruction: \(CRC32C.usesHardware)); software slicing-by-8: \(fmt(Double(2 * big.count) / softwareSeconds / 1e9)) GB/s (check \(crc))")

        // Compression: JSON-like and incompressible values, per value and per 64 KiB block.
        for (label, size) in [("100 B", 100), ("1 KiB", 1024)] {
            let json = jsonValues(count: 20_000, size: size)
            let random = (0..<20_000).map { _ in (0..<size).map { _ in UInt8(truncatingIfNeeded: rng.next()) } }
            for (kind, values) in [("JSON-like", json), ("random", random)] {
                let raw = values.reduce(0) { $0 + $1.count }
                var packed = 0
                let t3 = now()
                var compressedValues: [[UInt8]] = []
                for v in values {
                    let c = v.withUnsafeBytes { LZ4.compress($0) } ?? v
                    packed += c.count
                    compressedValues.append(c)
                }
                let cs = now() - t3
                let t4 = now()
                for (i, c) in compressedValues.enumerated() where c.count != values[i].count || c != values[i] {
                    _ = c.withUnsafeBytes { LZ4.decompress($0, rawLength: values[i].count) }
                }
                let ds = now() - t4
                var block: [UInt8] = []
                var blockPacked = 0
                for v in values {
                    block += v
                    if block.count >= 65536 { blockPacked += block.withUnsafeBytes { LZ4.compress($0) }!.count; block.removeAll(keepingCapacity: true) }
                }
                if !block.isEmpty { blockPacked += block.withUnsafeBytes { LZ4.compress($0) }!.count }
                print("lz4 \(kind) \(label) values: per value ratio \(fmt(Double(raw) / Double(packed))) (compress \(fmt(Double(raw) / cs / 1e6)) MB/s, decompress \(fmt(Double(raw) / ds / 1e6)) MB/s); per 64 KiB block ratio \(fmt(Double(raw) / Double(blockPacked)))")
            }
        }
    }

    func jsonValues(count: Int, size: Int) -> [[UInt8]] {
        let names = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "John"]
        let cities = ["London", "New York", "Zurich", "Austin", "Paris", "Tokyo"]
        var rng = FastRandom(seed: UInt64(size))
        return (0..<count).map { i in
            var s = "{\"id\":\(i),\"name\":\"\(names.randomElement(using: &rng)!)\",\"city\":\"\(cities.randomElement(using: &rng)!)\",\"score\":\(Int.random(in: 0...100_000, using: &rng)),\"tags\":["
            while s.utf8.count < size - 12 { s += "\"\(names.randomElement(using: &rng)!.lowercased())\"," }
            s += "\"end\"]}"
            return Array(s.utf8.prefix(size))
        }
    }
}

/// The clock `now()` reads: wall time by default; the measuring thread's CPU time with
/// `--cpu-time` (steadier on a shared, loaded machine; leaves out time spent waiting, e.g. in
/// `fdatasync`). Set once at the start of a command.
nonisolated(unsafe) var measureClock = CLOCK_MONOTONIC

func now() -> Double {
    var ts = timespec()
    clock_gettime(measureClock, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func fmt(_ x: Double) -> String {
    let scaled = (x * 100).rounded() / 100
    return String(scaled)
}

extension String {
    /// A 16-byte key: "key-" and a 12-digit zero-padded number.
    init(format16 n: Int) {
        let digits = String(n)
        let padding = String(repeating: "0", count: Swift.max(0, 12 - digits.count))
        self = "key-" + padding + digits
    }
}

/// SplitMix64: a fast seeded generator, so producing test data costs nothing next to what is measured.
struct FastRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
