import ArgumentParser
import YapDBCrypto
import YapDBStorage

/// `yapdb-measure crypto`: what sealing and opening one unit costs (docs/format.md §12): a log
/// record of a given size and a 4 KiB index page, each with its per-file key and a fresh nonce,
/// so the cost of encryption at rest can be set beside the plain write and read paths.
struct MeasureCrypto: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crypto",
        abstract: "Measure AES-256-GCM seal and open of records and index pages.")

    @Option(help: "Units to seal and open per size.") var units = 100_000
    @Option(help: "Record sizes in bytes (plain record, header included).") var sizes: [Int] = [100, 1000, 4096 - 28]

    func run() throws {
        let header = FileHeader(kind: .logSegment, uuid: FileHeader.randomUUID(), fileNumber: 1, baseSnapshot: 0)
        let dataKey = DataKey.generate()
        let sealer = try CipherHeader.fresh(dataKeyID: dataKey.id).sealer(dataKey: dataKey, header: header)
        var rng = FastRandom(seed: 7)
        for size in sizes {
            let plain = (0..<size).map { _ in UInt8.random(in: 0...255, using: &rng) }
            var sealed: [[UInt8]] = []
            sealed.reserveCapacity(units)
            let t0 = now()
            for index in 0..<units {
                sealed.append(try sealer.seal(plain, at: header.unitAddress(position: UInt64(index), type: .logRecord)))
            }
            let sealSeconds = now() - t0
            let t1 = now()
            var check = 0
            for index in 0..<units {
                check &+= try sealer.open(sealed[index], at: header.unitAddress(position: UInt64(index), type: .logRecord)).count
            }
            let openSeconds = now() - t1
            let megabytes = Double(size * units) / 1e6
            print("\(size) B: seal \(fmt(sealSeconds / Double(units) * 1e6)) µs (\(fmt(megabytes / sealSeconds)) MB/s), open \(fmt(openSeconds / Double(units) * 1e6)) µs (\(fmt(megabytes / openSeconds)) MB/s) (check \(check))")
        }
        let t2 = now()
        let slot = try KeySlot.wrapping(dataKey, with: .passphrase(Array("passphrase".utf8)), databaseUUID: header.uuid)
        let derive = now() - t2
        let t3 = now()
        _ = try slot.unwrap(with: .passphrase(Array("passphrase".utf8)), databaseUUID: header.uuid)
        let unwrap = now() - t3
        print("PBKDF2-SHA512 at \(CipherFormat.defaultKDFIterations) iterations: wrap \(fmt(derive * 1000)) ms, unwrap \(fmt(unwrap * 1000)) ms")
    }
}
