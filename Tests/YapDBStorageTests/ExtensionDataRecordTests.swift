import Testing
import YapDBStorage
import YapDBSimulatedDisk

/// Extension data records (docs/format.md §3, type 7): the round trip, hostile payloads (each a
/// typed error, never a trap), and what recovery makes of them inside and outside a commit.
@Suite struct ExtensionDataRecordTests {
    /// A record of `type` 7 with `payload`, framed and checksummed as the writer frames records.
    static func record(_ payload: [UInt8]) -> [UInt8] {
        var buffer: [UInt8] = []
        let start = RecordCodec.begin(.extensionData, in: &buffer)
        buffer.append(contentsOf: payload)
        _ = RecordCodec.finish(&buffer, start: start)
        return buffer
    }

    static func decode(_ bytes: [UInt8]) throws(RecordCodec.FrameError) -> (name: String, payload: [UInt8]) {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(RecordCodec.FrameError) in
                let frame = try RecordCodec.frame(in: raw, at: 0)
                return try RecordCodec.extensionDataRecord(frame, in: raw)
            }
        }
        return try result.get()
    }

    @Test func roundTripsNameAndPayload() throws {
        var buffer: [UInt8] = []
        RecordCodec.appendExtensionData(name: "relationship:r", payload: [0, 1, 2, 255], into: &buffer)
        let decoded = try Self.decode(buffer)
        #expect(decoded.name == "relationship:r" && decoded.payload == [0, 1, 2, 255])
        var empty: [UInt8] = []
        RecordCodec.appendExtensionData(name: "x", payload: [], into: &empty)
        #expect(try Self.decode(empty).payload == [])
    }

    @Test func hostilePayloadsAreTypedErrors() {
        // A name length past the record's end.
        #expect(throws: RecordCodec.FrameError.self) { try Self.decode(Self.record([0x20, 0x61])) }
        // An empty name.
        #expect(throws: RecordCodec.FrameError.self) { try Self.decode(Self.record([0x00, 1, 2])) }
        // A name that is not UTF-8.
        #expect(throws: RecordCodec.FrameError.self) { try Self.decode(Self.record([0x02, 0xC3, 0x28, 7])) }
        // An overlong varint as the name length.
        #expect(throws: RecordCodec.FrameError.self) { try Self.decode(Self.record([UInt8](repeating: 0xFF, count: 11))) }
        // Nothing at all.
        #expect(throws: RecordCodec.FrameError.self) { try Self.decode(Self.record([])) }
        // Flags are not allowed on type 7.
        var flagged = Self.record([0x01, 0x61])
        flagged[Format.recordFlagsOffset] = Format.flagCompressed
        #expect(throws: RecordCodec.FrameError.self) { try Self.decode(flagged) }
        // A record cut short.
        var buffer: [UInt8] = []
        RecordCodec.appendExtensionData(name: "relationship:r", payload: [1, 2, 3], into: &buffer)
        #expect(throws: RecordCodec.FrameError.truncated) { try Self.decode(Array(buffer.dropLast(2))) }
    }

    // MARK: Recovery

    static let uuid = [UInt8](repeating: 0x33, count: 16)
    static let files = DatabaseFiles(mainPath: "/x/db")

    /// A log segment 1 holding `body` after its header; returns the scan's commits (with their
    /// operations) and report.
    static func scan(_ body: [UInt8]) throws(StorageError) -> ([ScannedCommit], ScanReport) {
        let disk = SimulatedDisk()
        do throws(IOFailure) {
            try disk.mkdir("/x")
            let header = FileHeader(kind: .logSegment, uuid: uuid, fileNumber: 1, baseSnapshot: 0, createdAtMilliseconds: 0)
            let file = try disk.open(files.segmentPath(1), mode: .createNew)
            try file.write(header.encoded() + body, at: 0)
            try file.sync()
            file.close()
            try disk.syncDirectory("/x")
        } catch { throw .io(error) }
        var commits: [ScannedCommit] = []
        let report = try LogScanner(files: files, fileSystem: disk, uuid: uuid)
            .scan(segments: [1], from: LogPosition(segment: 1, offset: UInt32(Format.headerSize)), baseSnapshot: 0, repair: true) {
                commits.append($0)
            }
        return (commits, report)
    }

    /// A commit of `records` (already framed) with snapshot `snapshot`, durable through `through`.
    static func commit(_ records: [[UInt8]], snapshot: UInt64, through: LogPosition) -> [UInt8] {
        let bytes = records.flatMap { $0 }
        var buffer = bytes
        RecordCodec.appendCommit(CommitInfo(snapshot: snapshot, recordCount: UInt32(records.count), recordsChecksum: CRC32C.checksum(bytes),
                                            recordsLength: UInt64(bytes.count), durableThrough: through), into: &buffer)
        return buffer
    }

    @Test func recoveryHandsTheRecordsOverInCommitOrder() throws {
        var a: [UInt8] = [], b: [UInt8] = [], c: [UInt8] = []
        RecordCodec.appendExtensionData(name: "relationship:r", payload: [1], into: &a)
        RecordCodec.appendRemove(collection: "c", key: "k", into: &b)
        RecordCodec.appendExtensionData(name: "nobody", payload: [9, 9], into: &c)
        let start = LogPosition(segment: 1, offset: UInt32(Format.headerSize))
        let first = Self.commit([a, b], snapshot: 1, through: start)
        let second = Self.commit([c], snapshot: 2, through: LogPosition(segment: 1, offset: start.offset + UInt32(first.count)))
        let (commits, report) = try Self.scan(first + second)
        #expect(report.tornAt == nil && report.commits == 2)
        #expect(commits.map(\.operations) == [[.extensionData(name: "relationship:r", payload: [1]), .remove(collection: "c", key: "k")],
                                               [.extensionData(name: "nobody", payload: [9, 9])]])
    }

    @Test func aBadRecordInTheTailIsTornAndBeforeASyncedCommitIsCorruption() throws {
        let start = LogPosition(segment: 1, offset: UInt32(Format.headerSize))
        var good: [UInt8] = []
        RecordCodec.appendExtensionData(name: "relationship:r", payload: [1], into: &good)
        let first = Self.commit([good], snapshot: 1, through: start)
        // A name length that runs past the record, checksum intact: damage at the second commit.
        let bad = Self.commit([Self.record([0x40, 0x61])], snapshot: 2, through: start)
        let (commits, report) = try Self.scan(first + bad)
        #expect(commits.count == 1, "the valid commit before the damage is kept")
        #expect(report.tornAt == LogPosition(segment: 1, offset: start.offset + UInt32(first.count)))
        #expect(report.truncatedBytes == Int64(bad.count))
        // The same damage followed by a commit that says it was synced: corruption, not a drop.
        let afterBad = LogPosition(segment: 1, offset: start.offset + UInt32(first.count + bad.count))
        let proof = Self.commit([], snapshot: 2, through: afterBad)
        do {
            _ = try Self.scan(first + bad + proof)
            Issue.record("a damaged commit before a synced one was not refused")
        } catch {
            guard case .corrupted = error else { Issue.record("expected corrupted, got \(error)"); return }
        }
    }
}
