import Testing
import YapDBStorage
import YapDBSimulatedDisk
import TestSupport

/// Pending-extension records (docs/format.md §4, type 23): what a checkpoint carries for an
/// extension not registered since the open. Round trip, and hostile records as `corrupted`.
@Suite struct CheckpointPendingExtensionTests {
    static let files = DatabaseFiles(mainPath: "/db/main")
    static let info = CheckpointInfo(snapshot: 3, nextRowid: 2, replay: LogPosition(segment: 1, offset: 64))

    static func read(_ disk: SimulatedDisk, _ uuid: [UInt8]) throws(StorageError) -> [CheckpointPendingExtension] {
        var found: [CheckpointPendingExtension] = []
        _ = try CheckpointReader.read(files: files, fileSystem: disk, uuid: uuid, number: 1,
                                      pendingExtension: { found.append($0) })
        return found
    }

    @Test func roundTrips() throws {
        let disk = SimulatedDisk(seed: 1)
        try disk.mkdir("/db")
        let uuid = FileHeader.randomUUID()
        let writer = try CheckpointWriter(files: Self.files, fileSystem: disk, uuid: uuid, number: 1, info: Self.info)
        try writer.setSegmentUsage([:])
        let carried = [CheckpointPendingExtension(name: "relationship:r", rowChangesLost: true, records: [[1, 0, 0], [], [9]]),
                       CheckpointPendingExtension(name: "view:v", rowChangesLost: false, records: [])]
        for pending in carried { try writer.addPendingExtension(pending) }
        _ = try writer.finish()
        #expect(try Self.read(disk, uuid) == carried)
    }

    /// A checkpoint made of the info record, the segment usage record, `records` (type, payload)
    /// and a valid end record.
    static func file(_ records: [(RecordType, [UInt8])], uuid: [UInt8]) -> [UInt8] {
        func record(_ type: RecordType, _ payload: [UInt8]) -> [UInt8] {
            var buffer: [UInt8] = []
            let start = RecordCodec.begin(type, in: &buffer)
            buffer.append(contentsOf: payload)
            _ = RecordCodec.finish(&buffer, start: start)
            return buffer
        }
        var infoPayload: [UInt8] = []
        infoPayload.appendLE(info.snapshot)
        infoPayload.appendLE(info.nextRowid)
        infoPayload.appendLE(info.replay.segment)
        infoPayload.appendLE(info.replay.offset)
        infoPayload.appendLE(UInt64(0))
        infoPayload.appendLE(UInt32(0))
        infoPayload.appendLE(UInt32(0))
        var body = record(.checkpointInfo, infoPayload) + record(.checkpointSegmentUsage, [0])
        for (type, payload) in records { body += record(type, payload) }
        var end: [UInt8] = []
        end.appendLE(UInt64(0))
        end.appendLE(UInt32(2 + records.count))
        end.appendLE(CRC32C.mask(CRC32C.checksum(body)))
        let header = FileHeader(kind: .checkpoint, uuid: uuid, fileNumber: 1, baseSnapshot: info.snapshot, createdAtMilliseconds: 0)
        return header.encoded() + body + record(.checkpointEnd, end)
    }

    static func readError(_ records: [(RecordType, [UInt8])]) throws -> StorageError? {
        let disk = SimulatedDisk(seed: 2)
        try disk.mkdir("/db")
        let uuid = FileHeader.randomUUID()
        let file = try disk.open(files.checkpointPath(1), mode: .createNew)
        try file.write(Self.file(records, uuid: uuid), at: 0)
        file.close()
        do { _ = try read(disk, uuid); return nil } catch { return error }
    }

    @Test func hostileRecordsAreCorrupt() throws {
        let good: [UInt8] = [3, 0x61, 0x3A, 0x62, 1, 1, 2, 7, 7]   // "a:b", lost, 1 record of 2 bytes
        #expect(try Self.readError([(.checkpointPendingExtension, good)]) == nil, "the baseline reads")
        let hostile: [[UInt8]] = [
            [],                                     // nothing
            [0, 0, 0],                              // empty name
            [3, 0x61, 0x3A, 0x62, 2, 0],            // unknown flag
            [3, 0x61, 0x3A, 0x62, 0, 9, 1, 1],      // more records than bytes
            [3, 0x61, 0x3A, 0x62, 0, 1, 5, 1],      // a record past the end
            [3, 0x61, 0x3A, 0x62, 0, 0, 0xEE],      // bytes after the records
            [2, 0xC3, 0x28, 0, 0],                  // a name that is not UTF-8
        ]
        for payload in hostile {
            guard case .corrupted? = try Self.readError([(.checkpointPendingExtension, payload)]) else {
                Issue.record("payload \(payload) was not refused as corrupted")
                continue
            }
        }
        // The same name twice, and a log record (type 7) in a checkpoint.
        guard case .corrupted? = try Self.readError([(.checkpointPendingExtension, good), (.checkpointPendingExtension, good)]) else {
            Issue.record("a second record of one name was accepted"); return
        }
        guard case .corrupted? = try Self.readError([(.extensionData, [1, 0x61, 0])]) else {
            Issue.record("an extension data record in a checkpoint was accepted"); return
        }
    }
}
