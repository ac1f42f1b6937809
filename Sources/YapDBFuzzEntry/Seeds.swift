import Foundation
import YapDB
import YapDBStorage
import YapDBSimulatedDisk

/// Seed inputs for the three targets, generated from real workloads so the fuzzer starts
/// from valid structures. Deterministic (apart from the creation times in file headers).
enum Seeds {
    // MARK: (c) operation scripts

    /// Builds operation scripts byte by byte, following `OperationScript`'s layout.
    struct Script {
        var out = FuzzOutput()

        init(durability: Int, compression: Bool = true, segmentLimit: Int = 0, checkpoint: Int = 0,
             smallMaxValue: Bool = false, compaction: Int = 0) {
            var config = OperationScript.Config()
            config.durability = durability
            config.compression = compression
            config.segmentLimit = segmentLimit
            config.checkpointThreshold = checkpoint
            config.smallMaxValue = smallMaxValue
            config.compactionThreshold = compaction
            config.encode(&out)
        }

        /// One action: kind, collection, key, value size, value fill, metadata (see `OperationScript`).
        static func set(_ c: Int, _ k: Int, size: Int = 5, fill: Int = 1, metadata: Int = 0) -> [Int] { [0, c, k, size, fill, metadata] }
        static func replace(_ c: Int, _ k: Int, size: Int = 9) -> [Int] { [5, c, k, size, 3, 0] }
        static func replaceMetadata(_ c: Int, _ k: Int, metadata: Int) -> [Int] { [7, c, k, 6, 2, metadata] }
        static func remove(_ c: Int, _ k: Int) -> [Int] { [9, c, k, 0, 0, 0] }
        static func removeCollection(_ c: Int) -> [Int] { [11, c, 0, 0, 0, 0] }
        static let removeAll = [12, 0, 0, 0, 0, 0]
        static func touch(_ c: Int, _ k: Int) -> [Int] { [13, c, k, 0, 0, 0] }
        static func readBack(_ c: Int, _ k: Int) -> [Int] { [14, c, k, 0, 0, 0] }

        /// Ending 0 rollback, 1 throw, 2 commit.
        mutating func transaction(_ connection: Int, _ actions: [[Int]], ending: Int = 2) {
            out.byte(0); out.byte(connection); out.byte(actions.count - 1)
            for action in actions { for byte in action { out.byte(byte) } }
            out.byte(ending)
        }
        mutating func check(_ connection: Int) { out.byte(7); out.byte(connection) }
        mutating func checkAll() { out.byte(8) }
        mutating func reopen() { out.byte(9) }
        /// Mode 0 drop, 1 torn, 2 garble, 3 keep all.
        mutating func powerCut(mode: Int, seed: Int, crashInRecoveryAfter: Int = 0) {
            out.byte(10); out.byte(mode); out.byte(seed)
            out.byte(crashInRecoveryAfter == 0 ? 1 : (crashInRecoveryAfter - 1) << 2)
        }
        mutating func crashPoint(after: Int, mode: Int, seed: Int) { out.byte(11); out.byte(after - 1); out.byte(mode); out.byte(seed) }
        mutating func checkpoint() { out.byte(12) }
        mutating func compact() { out.byte(13) }
        mutating func flush(_ connection: Int) { out.byte(14); out.byte(connection) }

        /// A workload touching every kind of action, on rotating connections.
        mutating func workload(rounds: Int, sizes: [Int] = [5, 9, 38, 203]) {
            for round in 0..<rounds {
                let size = sizes[round % sizes.count]
                transaction(round % 3, [Self.set(round % 3, round % 8, size: size, fill: round, metadata: round % 2 == 0 ? 1 : 0),
                                        Self.set((round + 1) % 3, (round + 3) % 8, size: size + 4, fill: round + 7, metadata: 2),
                                        Self.readBack(round % 3, round % 8)])
                transaction((round + 1) % 3, [Self.replace(round % 3, round % 8), Self.replaceMetadata(round % 3, (round + 1) % 8, metadata: 4),
                                              Self.touch(0, 0), Self.readBack(round % 3, round % 8)])
                checkAll()
                if round % 3 == 2 { transaction(round % 3, [Self.remove(round % 3, (round + 5) % 8), Self.readBack(round % 3, (round + 5) % 8)]) }
            }
        }
    }

    static func operations() -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        for durability in 0..<3 {
            var basic = Script(durability: durability)
            basic.workload(rounds: 6)
            basic.transaction(1, [Script.set(1, 1, size: 2), Script.remove(1, 1)], ending: 0)
            basic.transaction(2, [Script.set(2, 2, size: 2)], ending: 1)
            basic.reopen()
            basic.check(0)
            seeds.append(basic.out.bytes)

            for mode in 0..<4 {
                var cut = Script(durability: durability, segmentLimit: 1, checkpoint: 2)
                cut.workload(rounds: 4, sizes: [11, 203, 7])
                cut.powerCut(mode: mode, seed: 3 + mode)
                cut.workload(rounds: 2)
                cut.crashPoint(after: 4 + mode, mode: mode, seed: mode)
                cut.workload(rounds: 2)
                cut.powerCut(mode: mode, seed: 9, crashInRecoveryAfter: 2 + mode)
                cut.checkAll()
                seeds.append(cut.out.bytes)
            }
        }
        var maintenance = Script(durability: 2, segmentLimit: 1, checkpoint: 1, compaction: 2)
        maintenance.workload(rounds: 5, sizes: [203, 151, 90])
        maintenance.transaction(0, [Script.removeCollection(1), Script.removeCollection(2)])
        maintenance.checkpoint()
        maintenance.compact()
        maintenance.flush(2)
        maintenance.checkAll()
        maintenance.transaction(1, [Script.removeAll, Script.readBack(0, 0)])
        maintenance.reopen()
        seeds.append(maintenance.out.bytes)

        var limits = Script(durability: 1, compression: false, smallMaxValue: true)
        limits.workload(rounds: 2)
        limits.transaction(0, [Script.set(0, 0, size: 3 + 4 * 40, fill: 9)])   // 2,460 bytes: over 2,000
        limits.transaction(1, [Script.set(0, 1, size: 3, fill: 9)])            // 1,500 bytes: fits
        limits.checkpoint()
        limits.powerCut(mode: 1, seed: 77)
        seeds.append(limits.out.bytes)

        var random = ValueRandom(seed: 2024)
        for length in [64, 256, 1024] {
            seeds.append((0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        }
        return seeds
    }

    // MARK: Databases made by a workload

    static let workloadPath = RecoveryImage.mainPath

    /// A database on a fresh simulated disk after `rounds` rounds of writes through the public
    /// API (values small and large, compressible and not; removes; a cleared collection).
    static func workload(rounds: Int, durability: YapDatabaseDurability = .full, segmentLimit: Int? = nil,
                         checkpointEvery: Int = 0, compact: Bool = false, indexPageSize: Int? = nil) -> (SimulatedDisk, YapDatabase) {
        let disk = SimulatedDisk(seed: 3)
        try? disk.mkdir(RecoveryImage.directory)
        let options = YapDatabaseOptions()
        options.durability = durability
        options.compactionThreshold = 0.2
        guard let database = try? YapDatabase.open(path: workloadPath, options: options, fileSystem: disk, segmentLimit: segmentLimit,
                                                   indexPageSize: indexPageSize) else {
            fatalError("Seeds: cannot create a database on the simulated disk")
        }
        let connection = database.newConnection()
        for round in 0..<rounds {
            try? connection.write { tx in
                let value = OperationScript.Value(size: UInt8(truncatingIfNeeded: round * 5), fill: UInt8(truncatingIfNeeded: round)).data
                tx.setObject(value, forKey: "k\(round % 6)", inCollection: ["", "a", "people"][round % 3],
                             withMetadata: round % 2 == 0 ? Data([UInt8(round)]) : nil)
                if round % 4 == 3 { tx.removeObject(forKey: "k\((round + 2) % 6)", inCollection: "a") }
                if round % 7 == 6 { tx.removeAllObjects(inCollection: "people") }
                if round % 5 == 4 { tx.replaceMetadata(Data("m\(round)".utf8), forKey: "k\(round % 6)", inCollection: ["", "a", "people"][round % 3]) }
            }
            if checkpointEvery > 0 && round % checkpointEvery == checkpointEvery - 1 { try? database.checkpoint() }
        }
        if compact { try? database.compact() }
        return (disk, database)
    }

    // MARK: (b) database images

    /// Index page size of the recovery seeds: small, so a short workload's index files have
    /// several pages and levels and fit an image's 65,535-byte file limit (256-byte pages hold
    /// no row key at all: `Keydir.maximumRowKeyLength`).
    static let recoveryIndexPageSize = 512

    static func recovery() -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        let base = RecoveryImage()
        // Clean shutdowns: log only, log plus checkpoint (index files and a record-22 root),
        // several segments, after compaction; some read in the cached index mode.
        let shapes: [(rounds: Int, segmentLimit: Int?, checkpointEvery: Int, compact: Bool, close: Bool)] = [
            (6, nil, 0, false, false), (12, nil, 5, false, true), (14, 2048, 0, false, false),
            (16, 2048, 6, true, true), (0, nil, 0, false, true), (40, nil, 8, false, true), (60, 2048, 15, true, false),
        ]
        for (index, shape) in shapes.enumerated() {
            let (disk, database) = workload(rounds: shape.rounds, segmentLimit: shape.segmentLimit,
                                            checkpointEvery: shape.checkpointEvery, compact: shape.compact,
                                            indexPageSize: recoveryIndexPageSize)
            if shape.close { try? database.close() } else { database.abandon() }
            var options = base
            options.repairChecksums = shape.rounds % 4 == 0
            options.cachedIndexPages = index % 2 == 1
            seeds.append(RecoveryImage.capture(disk, options: options).encoded())
        }
        // Power cuts with unsynced commits (durability normal), each damage mode.
        for (index, mode) in PowerCutMode.allCases.enumerated() {
            let (disk, database) = workload(rounds: 10, durability: .normal, segmentLimit: 4096, checkpointEvery: 4,
                                            indexPageSize: recoveryIndexPageSize)
            database.abandon()
            disk.powerCut(seed: UInt64(index + 1), mode: mode)
            var options = base
            options.normalDurability = true
            options.corruptAction = index % 3
            options.compact = index % 2 == 0
            options.repairChecksums = index % 2 == 1
            options.cachedIndexPages = index % 2 == 0
            seeds.append(RecoveryImage.capture(disk, options: options).encoded())
        }
        // A torn creation: only the temporary main file, and a missing main file.
        var creating = base
        creating.createIfMissing = true
        creating.files = [RecoveryImage.File(kind: .temporary, number: 0, bytes: [0x59, 0x61, 0x70])]
        seeds.append(creating.encoded())
        return seeds
    }

    // MARK: (a) record streams

    static func records() -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        let files = DatabaseFiles(mainPath: workloadPath)
        for (rounds, compact) in [(5, false), (12, true)] {
            let (disk, database) = workload(rounds: rounds, segmentLimit: 2048, checkpointEvery: 6, compact: compact)
            try? database.close()
            guard let listing = try? files.list(disk) else { continue }
            for number in listing.segments.prefix(3) {
                if let bytes = disk.durableBytes(of: files.segmentPath(number)), bytes.count > Format.headerSize {
                    seeds.append([number == 1 ? 0 : 1] + bytes[Format.headerSize...])
                }
            }
            for number in listing.checkpoints {
                if let bytes = disk.durableBytes(of: files.checkpointPath(number)), bytes.count > Format.headerSize {
                    seeds.append([0] + bytes[Format.headerSize...])
                    seeds.append([1] + bytes[Format.headerSize...].prefix(200))   // cut short, checksums repaired
                }
            }
        }
        // One of each value record shape: compressed, raw, nil metadata; an extension data
        // record (a relationship's manual-edge change); a commit after them.
        var buffer: [UInt8] = []
        let big = [UInt8](repeating: 0x41, count: 600)
        big.withUnsafeBytes { raw in
            _ = RecordCodec.appendValue(.object, rowid: 1, collection: "c", key: "k", value: raw, noMetadata: true, compress: true, into: &buffer)
            _ = RecordCodec.appendValue(.metadata, rowid: 1, collection: "c", key: "k", value: UnsafeRawBufferPointer(rebasing: raw[0..<3]),
                                        noMetadata: false, compress: false, into: &buffer)
        }
        _ = RecordCodec.appendValue(.metadata, rowid: 1, collection: "c", key: "k", value: nil, noMetadata: true, compress: false, into: &buffer)
        RecordCodec.appendRemove(collection: "c", key: "k", into: &buffer)
        RecordCodec.appendRemoveCollection("c", into: &buffer)
        RecordCodec.appendRemoveAll(into: &buffer)
        RecordCodec.appendExtensionData(name: "relationship:r", payload: [1, 0, 1, 1, 9, 0x61, 0, 0, 0x62, 0, 0, 0x6D, 0, 0], into: &buffer)
        let checksum = buffer.withUnsafeBytes { CRC32C.checksum($0) }
        RecordCodec.appendCommit(CommitInfo(snapshot: 1, recordCount: 7, recordsChecksum: checksum, recordsLength: UInt64(buffer.count),
                                            durableThrough: LogPosition(segment: 1, offset: UInt32(Format.headerSize))), into: &buffer)
        seeds.append([0] + buffer)
        seeds.append([1] + buffer.prefix(buffer.count - RecordCodec.commitRecordSize) + buffer.suffix(RecordCodec.commitRecordSize))
        return seeds
    }
}
