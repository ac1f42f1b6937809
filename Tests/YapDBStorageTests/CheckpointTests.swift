import Testing
import YapDBStorage
import YapDBSimulatedDisk
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One collection of a checkpoint image as the tests model it.
struct CollectionImage: Equatable {
    var name: String
    var rows: [CheckpointEntry]
}

/// A checkpoint's whole content: what the writer is given and the reader must give back.
struct CheckpointImage: Equatable {
    var info: CheckpointInfo
    var collections: [CollectionImage]
    var usage: [UInt32: UInt64]

    /// A seeded image of `rows` rows over collections "", "users", "🗝 ключи" and an empty one,
    /// with and without metadata, with extreme field values and an empty key.
    static func make(rows: Int, seed: UInt64, snapshot: UInt64 = 77) -> CheckpointImage {
        var rng = SeededRandom(seed: seed)
        func location() -> RecordLocation {
            RecordLocation(segment: UInt32(rng.next() % 40) + 1, offset: UInt32(truncatingIfNeeded: rng.next()),
                           length: UInt32(Format.recordHeaderSize) + UInt32(rng.next() % 5_000))
        }
        let counts = [rows / 5, rows / 2, rows - rows / 5 - rows / 2, 0]
        let names = ["", "users", "🗝 ключи", "empty"]
        var collections: [CollectionImage] = []
        var rowid: UInt64 = 1
        for (name, count) in zip(names, counts) {
            var entries: [CheckpointEntry] = []
            for i in 0..<count {
                let key = i == 0 ? "" : "key-\(i)-" + String(repeating: "x", count: Int(rng.next() % 24))
                rowid += 1 + rng.next() % 3
                entries.append(CheckpointEntry(key: key, rowid: i == 1 ? .max : rowid, object: location(),
                                               metadata: i % 3 == 0 ? nil : location()))
            }
            if count > 2 { entries[2].object = RecordLocation(segment: .max, offset: .max, length: UInt32(Format.recordHeaderSize + Format.maxRecordPayload)) }
            collections.append(CollectionImage(name: name, rows: entries))
        }
        let info = CheckpointInfo(snapshot: snapshot, nextRowid: rowid + 1, replay: LogPosition(segment: 41, offset: 12_345),
                                  rowCount: UInt64(rows), collectionCount: UInt32(collections.count))
        let usage: [UInt32: UInt64] = [1: 500, 2: 0, 7: 1 << 31, UInt32.max: Format.maxSegmentUsage]
        return CheckpointImage(info: info, collections: collections, usage: usage)
    }
}

/// Helpers shared by the checkpoint tests.
enum CheckpointFixture {
    static let uuid: [UInt8] = Array(1...16)

    /// Writes `image` as checkpoint `number` and returns the final path.
    @discardableResult
    static func write(_ image: CheckpointImage, fs: any FileSystem, files: DatabaseFiles, number: UInt32 = 3,
                      compress: Bool = true, blockLimit: Int = Format.checkpointBlockSize) throws(StorageError) -> String {
        let writer = try CheckpointWriter(files: files, fileSystem: fs, uuid: uuid, number: number, info: image.info, compress: compress)
        writer.blockLimit = blockLimit
        for collection in image.collections {
            try writer.beginCollection(collection.name, rowCount: collection.rows.count)
            for row in collection.rows { try writer.add(row) }
        }
        try writer.setSegmentUsage(image.usage)
        return try writer.finish()
    }

    /// Reads checkpoint `number` back into an image.
    static func read(fs: any FileSystem, files: DatabaseFiles, number: UInt32 = 3, uuid: [UInt8] = uuid) throws(StorageError) -> CheckpointImage {
        var collections: [CollectionImage] = []
        var orphanRows = 0
        let (info, usage) = try CheckpointReader.read(
            files: files, fileSystem: fs, uuid: uuid, number: number,
            collection: { name, count in collections.append(CollectionImage(name: name, rows: [])) },
            entry: { entry in
                if collections.isEmpty { orphanRows += 1 } else { collections[collections.count - 1].rows.append(entry) }
            })
        #expect(orphanRows == 0, "no entry before a collection callback")
        return CheckpointImage(info: info, collections: collections, usage: usage)
    }

    /// The error reading checkpoint `number` throws, or nil when it reads.
    static func readError(fs: any FileSystem, files: DatabaseFiles, number: UInt32 = 3, uuid: [UInt8] = uuid) -> StorageError? {
        do { _ = try read(fs: fs, files: files, number: number, uuid: uuid); return nil } catch { return error }
    }

    /// A fresh simulated disk with directory "/d"; the database's main path is "/d/db".
    static func disk(seed: UInt64 = 1) throws -> (SimulatedDisk, DatabaseFiles) {
        let disk = SimulatedDisk(seed: seed)
        try disk.mkdir("/d")
        return (disk, DatabaseFiles(mainPath: "/d/db"))
    }

    static func bytes(_ path: String, fs: any FileSystem) throws -> [UInt8] {
        let file = try fs.open(path, mode: .readOnly)
        defer { file.close() }
        return try file.readExactly(Int(try file.size()), at: 0)
    }

    /// Replaces the whole content of `path`.
    static func put(_ bytes: [UInt8], _ path: String, fs: any FileSystem) throws {
        let file = try fs.open(path, mode: .create)
        defer { file.close() }
        try file.truncate(to: 0)
        try file.write(bytes, at: 0)
    }

    /// (offset, type byte, payload length) of every record after the header, walking lengths.
    static func records(_ bytes: [UInt8]) -> [(offset: Int, type: UInt8, length: Int)] {
        var out: [(Int, UInt8, Int)] = []
        var offset = Format.headerSize
        while offset + Format.recordHeaderSize <= bytes.count {
            let length = bytes.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: offset + Format.recordLengthOffset, as: UInt32.self))) }
            out.append((offset, bytes[offset + Format.recordTypeOffset], length))
            offset += Format.recordHeaderSize + length
        }
        return out
    }
}

/// Checks that `error` is `corrupted` at `offset` with a reason naming `file` (and holding
/// `fragment`, when given).
func expectCorrupted(_ error: StorageError?, at offset: Int64, file: String, _ fragment: String? = nil,
                     sourceLocation: SourceLocation = #_sourceLocation) {
    guard case .corrupted(let actual, let reason)? = error else {
        Issue.record("expected corrupted at \(offset), got \(String(describing: error))", sourceLocation: sourceLocation)
        return
    }
    #expect(actual == offset, "reason: \(reason)", sourceLocation: sourceLocation)
    #expect(reason.hasPrefix(file + ": "), "reason: \(reason)", sourceLocation: sourceLocation)
    if let fragment { #expect(reason.contains(fragment), "reason: \(reason)", sourceLocation: sourceLocation) }
}

@Suite struct CheckpointTests {
    typealias F = CheckpointFixture

    @Test(arguments: [true, false])
    func roundTripOnRealFiles(compress: Bool) throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let files = DatabaseFiles(mainPath: dir.file("db"))
        let image = CheckpointImage.make(rows: 5_000, seed: 11)
        let path = try F.write(image, fs: PosixFileSystem.shared, files: files, compress: compress)
        #expect(path == files.checkpointPath(3))
        #expect(PosixFileSystem.shared.kind(of: path + Format.temporarySuffix) == .missing)
        let back = try F.read(fs: PosixFileSystem.shared, files: files)
        #expect(back == image)
        #expect(back.collections.map(\.name) == ["", "users", "🗝 ключи", "empty"])
        #expect(back.collections.flatMap(\.rows).contains { $0.metadata == nil })
        #expect(back.collections.flatMap(\.rows).contains { $0.metadata != nil })
        let records = F.records(try F.bytes(path, fs: PosixFileSystem.shared))
        let entries = records.filter { $0.type == RecordType.checkpointEntries.rawValue }
        #expect(!entries.isEmpty && entries.allSatisfy { $0.length <= Format.checkpointBlockSize })
        let bytes = try F.bytes(path, fs: PosixFileSystem.shared)
        let compressedRecords = entries.filter { bytes[$0.offset + Format.recordFlagsOffset] & Format.flagCompressed != 0 }
        #expect(compressedRecords.isEmpty != compress, "entries are LZ4-compressed exactly when asked")
    }

    @Test func roundTripOnSimulatedDiskWithSmallBlocksIsDurable() throws {
        let (disk, files) = try F.disk()
        let image = CheckpointImage.make(rows: 5_000, seed: 12)
        for (number, compress) in [(UInt32(1), true), (UInt32(2), false)] {
            let path = try F.write(image, fs: disk, files: files, number: number, compress: compress, blockLimit: 1_000)
            let durable = disk.durableBytes(of: path) == disk.currentBytes(of: path)
            #expect(durable, "synced and renamed durably")
            #expect(try F.read(fs: disk, files: files, number: number) == image)
            let entries = F.records(try #require(disk.currentBytes(of: path))).filter { $0.type == RecordType.checkpointEntries.rawValue }
            #expect(entries.count > 100, "a 1,000-byte block limit splits 5,000 rows into many records")
        }
        #expect(disk.pendingOperationCount == 0)
    }

    @Test func segmentUsageAndEmptyCheckpointsRoundTrip() throws {
        let (disk, files) = try F.disk()
        var image = CheckpointImage.make(rows: 0, seed: 1)
        image.collections = []
        image.info.collectionCount = 0
        for (number, usage) in [(UInt32(1), [:]), (2, [5: 9]), (3, Dictionary(uniqueKeysWithValues: (1...3_000).map { (UInt32($0 * 7), UInt64($0) << 20) })),
                                (4, [0: 0, UInt32.max: Format.maxSegmentUsage])] as [(UInt32, [UInt32: UInt64])] {
            image.usage = usage
            try F.write(image, fs: disk, files: files, number: number)
            let back = try F.read(fs: disk, files: files, number: number)
            #expect(back.usage == usage)
            #expect(back == image)
        }
    }

    /// The writer streams: before `finish`, everything but the last block or two is already
    /// in the file, and every entries record holds at most one block.
    @Test func writerStreamsInBlocks() throws {
        let (disk, files) = try F.disk()
        let image = CheckpointImage.make(rows: 30_000, seed: 13)
        let writer = try CheckpointWriter(files: files, fileSystem: disk, uuid: F.uuid, number: 1, info: image.info, compress: false)
        for collection in image.collections {
            try writer.beginCollection(collection.name, rowCount: collection.rows.count)
            for row in collection.rows { try writer.add(row) }
        }
        let before = try #require(disk.currentBytes(of: writer.temporaryPath)).count
        try writer.setSegmentUsage(image.usage)
        let path = try writer.finish()
        let after = try #require(disk.currentBytes(of: path))
        #expect(after.count > 3 * Format.checkpointBlockSize)
        #expect(after.count - before <= 2 * Format.checkpointBlockSize + 200, "at most a block of entries and a block of output were buffered")
        let entries = F.records(after).filter { $0.type == RecordType.checkpointEntries.rawValue }
        #expect(entries.count >= 3 && entries.allSatisfy { $0.length <= Format.checkpointBlockSize })
        #expect(try F.read(fs: disk, files: files, number: 1) == image)
    }

    /// Crash at every mutating call of a checkpoint write, then every power-cut mode: the final
    /// name is either missing or a complete, correct checkpoint.
    @Test func crashAtEveryStepNeverLeavesAPartialCheckpoint() throws {
        let image = CheckpointImage.make(rows: 300, seed: 14)
        let (probe, probeFiles) = try F.disk()
        try F.write(image, fs: probe, files: probeFiles, blockLimit: 512)
        let total = probe.operationCount
        #expect(total > 10, "the write spans many calls (\(total))")
        var outcomes: [Bool: Int] = [:]
        for n in 0...total {
            for (m, mode) in PowerCutMode.allCases.enumerated() {
                let (disk, files) = try F.disk(seed: UInt64(n))
                disk.crashAfter(operations: n)
                let completed = (try? F.write(image, fs: disk, files: files, blockLimit: 512)) != nil
                #expect(completed == (n == total), "n \(n)")
                disk.powerCut(seed: UInt64(n * 8 + m), mode: mode)
                let exists = disk.kind(of: files.checkpointPath(3)) == .file
                outcomes[exists, default: 0] += 1
                if completed { #expect(exists, "a finished checkpoint survives any power cut (\(mode))") }
                if exists {
                    do { let same = try F.read(fs: disk, files: files) == image; #expect(same, "n \(n) \(mode)") } catch {
                        Issue.record("n \(n) \(mode): a checkpoint under its final name fails to read: \(error)")
                    }
                }
            }
        }
        #expect(outcomes[true, default: 0] >= PowerCutMode.allCases.count && outcomes[false, default: 0] > total,
                "both outcomes occur: \(outcomes)")
    }

    /// The simulated disk never persists an unsynced rename, so the crash test cannot see a
    /// rename that comes before the data sync (real file systems may persist it with a later
    /// journal commit). Check the order of the calls instead: every write, then the file sync,
    /// then the rename, then the directory sync, and nothing after.
    @Test func callsComeInTheCrashSafeOrder() throws {
        let (disk, files) = try F.disk()
        try F.write(CheckpointImage.make(rows: 300, seed: 20), fs: disk, files: files, blockLimit: 512)
        let calls = disk.log.filter { $0.hasPrefix("#") }.map { String($0.drop { $0 != " " }.dropFirst()) }
        let tmp = files.checkpointPath(3) + Format.temporarySuffix
        #expect(calls.first == "open(createNew)(\(tmp))")
        #expect(Array(calls.suffix(3)) == ["sync(\(tmp))", "rename(\(tmp) -> \(files.checkpointPath(3)))", "syncDirectory(/d)"])
        #expect(calls.dropFirst().dropLast(3).allSatisfy { $0.hasPrefix("write ") && $0.hasSuffix("(\(tmp))") })
        #expect(calls.count > 8, "several streamed writes: \(calls.count) calls")
    }

    @Test func abandonLeavesNoFileAtAnyStage() throws {
        let image = CheckpointImage.make(rows: 500, seed: 15)
        for stage in 0..<3 {
            let (disk, files) = try F.disk()
            let writer = try CheckpointWriter(files: files, fileSystem: disk, uuid: F.uuid, number: 9, info: image.info)
            writer.blockLimit = 256
            #expect(disk.kind(of: writer.temporaryPath) == .file)
            if stage >= 1 {
                try writer.beginCollection(image.collections[0].name, rowCount: image.collections[0].rows.count)
                for row in image.collections[0].rows { try writer.add(row) }
            }
            if stage == 2 {
                disk.inject(Fault(.syncDirectory))
                for collection in image.collections.dropFirst() {
                    try writer.beginCollection(collection.name, rowCount: collection.rows.count)
                    for row in collection.rows { try writer.add(row) }
                }
                try writer.setSegmentUsage(image.usage)
                #expect(throws: StorageError.self) { try writer.finish() }
                #expect(disk.kind(of: files.checkpointPath(9)) == .file, "renamed before the directory sync failed")
            }
            writer.abandon()
            #expect(try disk.listDirectory("/d") == [], "stage \(stage)")
            #expect(throws: StorageError.self, "an abandoned writer refuses work") { try writer.setSegmentUsage([:]) }
        }
    }

    @Test func failedWriteIsTypedAndPoisonsTheWriter() throws {
        let (disk, files) = try F.disk()
        let image = CheckpointImage.make(rows: 2_000, seed: 16)
        disk.inject(Fault(.write, nth: 2, effect: .shortWrite(ENOSPC)))
        let writer = try CheckpointWriter(files: files, fileSystem: disk, uuid: F.uuid, number: 1, info: image.info)
        writer.blockLimit = 300
        var thrown: StorageError?
        do {
            for collection in image.collections {
                try writer.beginCollection(collection.name, rowCount: collection.rows.count)
                for row in collection.rows { try writer.add(row) }
            }
        } catch { thrown = error }
        guard case .io(let failure)? = thrown else { Issue.record("expected io, got \(String(describing: thrown))"); return }
        #expect(failure.errno == ENOSPC)
        #expect(throws: StorageError.io(failure), "later calls rethrow the failure") { try writer.setSegmentUsage([:]) }
        writer.abandon()
        #expect(try disk.listDirectory("/d") == [])
    }

    @Test func existingCheckpointIsNeverOverwrittenAndAStaleTemporaryIsReplaced() throws {
        let (disk, files) = try F.disk()
        let image = CheckpointImage.make(rows: 50, seed: 17)
        let stale = files.checkpointPath(3) + Format.temporarySuffix
        try F.put([1, 2, 3], stale, fs: disk)
        try F.write(image, fs: disk, files: files)
        #expect(disk.kind(of: stale) == .missing)
        let written = disk.currentBytes(of: files.checkpointPath(3))
        #expect(throws: StorageError.io(IOFailure(errno: EEXIST, operation: "create checkpoint", path: files.checkpointPath(3)))) {
            try F.write(CheckpointImage.make(rows: 10, seed: 18), fs: disk, files: files)
        }
        #expect(disk.currentBytes(of: files.checkpointPath(3)) == written)
    }

    @Test func readFailuresAreIOAndCallbackErrorsPassThrough() throws {
        let (disk, files) = try F.disk()
        guard case .io(let missing)? = F.readError(fs: disk, files: files) else { Issue.record("missing file must be io"); return }
        #expect(missing.errno == ENOENT)
        try F.write(CheckpointImage.make(rows: 100, seed: 19), fs: disk, files: files)
        disk.inject(Fault(.read, nth: 1, effect: .error(EIO)))
        guard case .io(let failure)? = F.readError(fs: disk, files: files) else { Issue.record("read fault must be io"); return }
        #expect(failure.errno == EIO)
        let mine = StorageError.tooLarge("stop here")
        var seen = 0
        #expect(throws: mine) {
            _ = try CheckpointReader.read(files: files, fileSystem: disk, uuid: F.uuid, number: 3,
                                          collection: { _, _ in }, entry: { _ throws(StorageError) in seen += 1; if seen == 5 { throw mine } })
        }
        #expect(seen == 5)
    }
}
