import Foundation
import Testing
import YapDB
import YapDBSimulatedDisk
import YapDBStorage
@testable import YapDBFuzzEntry

/// Counters the engine adds to, read from a checkpoint whose checksums were recomputed (CRC32C
/// is no MAC: anyone can make damage look valid): a next row id or a segment's live bytes past
/// their bounds is `corrupted` at open, never a trap at the next insert, `stats()` or
/// `compact()`; a next row id at its bound opens, and a new row is refused with a typed error.
@Suite struct HostileCounterTests {
    static let path = "/d/db"

    /// A database with one row and a checkpoint, closed, on a fresh simulated disk.
    static func closedDatabase() throws -> SimulatedDisk {
        let disk = SimulatedDisk(seed: 1)
        try disk.mkdir("/d")
        let database = try YapDatabase.open(path: path, options: YapDatabaseOptions(), fileSystem: disk)
        try database.newConnection().write { $0.setObject("v", forKey: "k", inCollection: "c") }
        try database.checkpoint()
        try database.close()
        return disk
    }

    /// Rewrites the newest checkpoint: `edit` gets each record's type and the offset of its
    /// header and returns the record's replacement (nil: unchanged); every checksum is then
    /// recomputed.
    static func editCheckpoint(_ disk: SimulatedDisk, _ edit: (UInt8, Int, [UInt8]) -> [UInt8]?) throws {
        let files = DatabaseFiles(mainPath: path)
        let number = try #require(try files.list(disk).checkpoints.last)
        let file = try disk.open(files.checkpointPath(number), mode: .readWrite)
        defer { file.close() }
        let old = try file.readExactly(Int(try file.size()), at: 0)
        var bytes = Array(old[..<Format.headerSize])
        var offset = Format.headerSize
        while offset + Format.recordHeaderSize <= old.count {
            let length = (0..<4).reduce(0) { $0 | Int(old[offset + Format.recordLengthOffset + $1]) << (8 * $1) }
            let end = min(old.count, offset + Format.recordHeaderSize + length)
            let record = Array(old[offset..<end])
            bytes += edit(old[offset + Format.recordTypeOffset], offset, record) ?? record
            offset = end
        }
        ChecksumRepair.repairRecords(&bytes, from: Format.headerSize)
        try file.truncate(to: 0)
        try file.write(bytes, at: 0)
    }

    /// Sets the next row id in the info record and in the index root record inside the
    /// checkpoint (they must agree).
    static func setNextRowid(_ disk: SimulatedDisk, _ value: UInt64) throws {
        try editCheckpoint(disk) { type, _, record in
            let field: Int
            switch type {
            case RecordType.checkpointInfo.rawValue: field = Format.recordHeaderSize + 8
            case RecordType.checkpointIndexRoot.rawValue: field = Format.recordHeaderSize + Format.rootBodyOffset + 32
            default: return nil
            }
            var changed = record
            for i in 0..<8 { changed[field + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(i))) }
            return changed
        }
    }

    static func reopen(_ disk: SimulatedDisk) -> Result<YapDatabase, YapDatabaseError> {
        Result { () throws(YapDatabaseError) in try YapDatabase.open(path: path, options: YapDatabaseOptions(), fileSystem: disk) }
    }

    @Test func aNextRowidPastTheLimitIsCorruptedAtOpen() throws {
        for value in [Format.rowidLimit + 1, UInt64.max] {
            let disk = try Self.closedDatabase()
            try Self.setNextRowid(disk, value)
            guard case .failure(let error) = Self.reopen(disk) else {
                Issue.record("next row id \(value): the database opened")
                continue
            }
            guard case .corrupted = error else { Issue.record("next row id \(value): \(error)"); continue }
        }
    }

    @Test func theLastRowidOpensAndANewRowIsRefusedWithATypedError() throws {
        let disk = try Self.closedDatabase()
        try Self.setNextRowid(disk, Format.rowidLimit)
        let database = try Self.reopen(disk).get()
        defer { try? database.close() }
        let connection = database.newConnection()
        #expect(throws: YapDatabaseError.valueTooLarge) {
            try connection.write { $0.setObject("w", forKey: "new", inCollection: "c") }
        }
        try connection.write { $0.setObject("v2", forKey: "k", inCollection: "c") }
        #expect(connection.read { $0.object(forKey: "k", inCollection: "c") as? String } == "v2", "an existing row still updates")
        #expect(try database.stats().rowCount == 1)
    }

    @Test func segmentUsagePastASegmentIsCorruptedAtOpen() throws {
        let disk = try Self.closedDatabase()
        try Self.editCheckpoint(disk) { type, _, record in
            guard type == RecordType.checkpointSegmentUsage.rawValue else { return nil }
            // The payload: varint count, then (varint segment, varint live bytes) pairs.
            var reader = Array(record[Format.recordHeaderSize...])[...]
            func varint() -> UInt64 {
                var value: UInt64 = 0, shift: UInt64 = 0
                while let byte = reader.popFirst() {
                    value |= UInt64(byte & 0x7F) << shift
                    if byte & 0x80 == 0 { break }
                    shift += 7
                }
                return value
            }
            let count = varint()
            var payload: [UInt8] = []
            payload.appendVarint(count)
            for _ in 0..<count {
                payload.appendVarint(varint())
                _ = varint()
                payload.appendVarint(.max)
            }
            var replaced: [UInt8] = []
            let start = RecordCodec.begin(.checkpointSegmentUsage, in: &replaced)
            replaced += payload
            _ = RecordCodec.finish(&replaced, start: start)
            return replaced
        }
        guard case .failure(let error) = Self.reopen(disk) else { Issue.record("the database opened"); return }
        guard case .corrupted = error else { Issue.record("\(error)"); return }
    }
}
