import Testing
@testable import YapDBStorage
import TestSupport

@Suite struct CodecTests {
    @Test func crc32cKnownVectors() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(CRC32C.checksum([]) == 0)
    }

    @Test func crc32cIncrementalMatchesWholeAtEverySplitAndAlignment() {
        var rng = SeededRandom(seed: 7)
        let bytes = rng.bytes(301)
        let whole = CRC32C.checksum(bytes)
        for split in 0...bytes.count {
            let first = Array(bytes[..<split]), second = Array(bytes[split...])
            let combined = second.withUnsafeBytes { CRC32C.update(CRC32C.checksum(first), $0) }
            #expect(combined == whole, "split \(split)")
        }
        for shift in 0..<8 {
            let slice = Array(bytes[shift...])
            let bitwise = slice.reduce(~UInt32(0)) { c, b in
                var c = c ^ UInt32(b)
                for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
                return c
            }
            #expect(CRC32C.checksum(slice) == ~bitwise)
        }
    }

    @Test func crcMaskRoundTripsAndChangesTheValue() {
        for value: UInt32 in [0, 1, 0xE306_9283, .max] {
            #expect(CRC32C.unmask(CRC32C.mask(value)) == value)
            #expect(CRC32C.mask(value) != value)
        }
    }

    @Test func varintRoundTripAndRejectsOverlongInput() throws {
        let values: [UInt64] = [0, 1, 127, 128, 300, 16_383, 16_384, UInt64(UInt32.max), .max]
        var buffer: [UInt8] = []
        for v in values { buffer.appendVarint(v) }
        let decoded = try buffer.withBytes { (raw) throws(ByteReader.Overrun) -> [UInt64] in
            var reader = ByteReader(raw)
            var out: [UInt64] = []
            while !reader.isAtEnd { out.append(try reader.readVarint()) }
            return out
        }
        #expect(decoded == values)
        let overlong = [UInt8](repeating: 0xFF, count: 11)
        overlong.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            #expect(throws: ByteReader.Overrun.self) { try reader.readVarint() }
        }
        let overflow: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02]
        overflow.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            #expect(throws: ByteReader.Overrun.self) { try reader.readVarint() }
        }
        let truncated: [UInt8] = [0x80, 0x80]
        truncated.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            #expect(throws: ByteReader.Overrun.self) { try reader.readVarint() }
        }
    }

    @Test func lz4RoundTripAndHostileBlocks() {
        let text = Array(String(repeating: "{\"name\":\"Ada\",\"age\":36,\"tags\":[\"x\",\"y\"]},", count: 40).utf8)
        let packed = text.withUnsafeBytes { LZ4.compress($0) }!
        #expect(packed.count < text.count / 4)
        #expect(packed.withUnsafeBytes { LZ4.decompress($0, rawLength: text.count) } == text)
        // A wrong declared size is refused, not trusted.
        #expect(packed.withUnsafeBytes { LZ4.decompress($0, rawLength: text.count - 1) } == nil)
        #expect(packed.withUnsafeBytes { LZ4.decompress($0, rawLength: text.count + 1) } == nil)
        // Random bytes never trap.
        var rng = SeededRandom(seed: 3)
        for _ in 0..<200 {
            let junk = rng.bytes(Int(rng.next() % 64) + 1)
            _ = junk.withUnsafeBytes { LZ4.decompress($0, rawLength: 100) }
        }
    }

    @Test func valueRecordRoundTripCompressedAndRaw() throws {
        let json = Array(String(repeating: "{\"id\":1,\"title\":\"hello world\"}", count: 10).utf8)
        var rng = SeededRandom(seed: 9)
        let random = rng.bytes(300)
        for (value, expectCompressed) in [(json, true), (random, false), ([UInt8](), false)] {
            var buffer: [UInt8] = []
            let (start, length) = value.withUnsafeBytes { raw in
                RecordCodec.appendValue(.object, rowid: 42, collection: "people", key: "ada", value: raw,
                                        noMetadata: true, compress: true, into: &buffer)
            }
            #expect(start == 0 && length == buffer.count)
            let (record, decoded) = try SegmentReader.decodeValue(buffer, offset: 0, path: "test")
            #expect(record.rowid == 42 && record.collection == "people" && record.key == "ada" && record.noMetadata)
            #expect(decoded == value)
            #expect((record.flags & Format.flagCompressed != 0) == expectCompressed)
        }
    }

    /// A value record's row id is below `Format.rowidLimit`: one at or past it (with a valid
    /// checksum) is refused when decoded, so replaying it cannot push the next row id past
    /// what an insert can add to.
    @Test func aRowidAtOrPastTheLimitIsRefused() throws {
        for (rowid, valid) in [(Format.rowidLimit - 1, true), (Format.rowidLimit, false), (UInt64.max, false)] {
            var buffer: [UInt8] = []
            _ = [UInt8](repeating: 1, count: 3).withUnsafeBytes {
                RecordCodec.appendValue(.object, rowid: rowid, collection: "c", key: "k", value: $0, noMetadata: false, compress: false, into: &buffer)
            }
            let decoded = Result { () throws(StorageError) in try SegmentReader.decodeValue(buffer, offset: 0, path: "t").0.rowid }
            switch decoded {
            case .success(let back): #expect(valid && back == rowid, "row id \(rowid) decoded")
            case .failure(let error):
                #expect(!valid, "row id \(rowid): \(error)")
                guard case .corrupted(_, let reason) = error else { Issue.record("not corrupted: \(error)"); continue }
                #expect(reason.contains("row id"))
            }
        }
    }

    @Test func everyFlippedBitOfARecordIsDetected() {
        var buffer: [UInt8] = []
        let value = Array("a value that is long enough to matter".utf8)
        _ = value.withUnsafeBytes { RecordCodec.appendValue(.metadata, rowid: 7, collection: "c", key: "k", value: $0, noMetadata: false, compress: false, into: &buffer) }
        for bit in 0..<(buffer.count * 8) {
            var damaged = buffer
            damaged[bit / 8] ^= UInt8(1 << (bit % 8))
            #expect(throws: StorageError.self, "bit \(bit)") { _ = try SegmentReader.decodeValue(damaged, offset: 0, path: "t") }
        }
    }

    @Test func commitRecordRoundTrip() throws {
        let info = CommitInfo(snapshot: 99, recordCount: 3, recordsChecksum: 0xDEAD_BEEF, recordsLength: 1234,
                              durableThrough: LogPosition(segment: 4, offset: 5678))
        var buffer: [UInt8] = []
        RecordCodec.appendCommit(info, into: &buffer)
        #expect(buffer.count == RecordCodec.commitRecordSize)
        let decoded = try buffer.withBytes { (raw) throws(RecordCodec.FrameError) -> CommitInfo in
            RecordCodec.commitRecord(try RecordCodec.frame(in: raw, at: 0), in: raw)
        }
        #expect(decoded == info)
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let file = try PosixFileSystem.shared.open(dir.file("seg"), mode: .createNew)
        try file.write([1, 2, 3] + buffer + [9], at: 0)
        let window = SegmentWindow(file: file, size: 4 + buffer.count, windowSize: 8)
        defer { window.close() }
        let found = try LogScanner.firstCommit(in: window, from: 0, where: { _ in true })
        #expect(found?.offset == 3 && found?.info == info)
    }

    @Test func fileHeaderRoundTripAndChecksOrder() throws {
        let header = FileHeader(kind: .logSegment, uuid: FileHeader.randomUUID(), fileNumber: 12, baseSnapshot: 345)
        let bytes = header.encoded()
        #expect(bytes.count == Format.headerSize)
        #expect(try FileHeader.decode(bytes, path: "x") == header)
        var newer = bytes
        newer[Format.headerVersionOffset] = 9
        #expect(throws: StorageError.unsupportedVersion(found: 9, supported: Int(Format.version))) { try FileHeader.decode(newer, path: "x") }
        var flipped = bytes
        flipped[Format.headerBaseSnapshotOffset] ^= 1
        #expect { try FileHeader.decode(flipped, path: "x") } throws: { error in
            if case StorageError.corrupted = error { return true } else { return false }
        }
        var foreign = bytes
        foreign[0] = 0x50
        #expect(throws: StorageError.notADatabase(path: "x")) { try FileHeader.decode(foreign, path: "x") }
    }
}

@Test func hardwareAndSoftwareCRC32CAgreeAtEveryLengthAndAlignment() {
    var rng = SeededRandom(seed: 77)
    let bytes = rng.bytes(3 * 4096 * 2 + 100)
    for length in [0, 1, 7, 8, 9, 63, 4095, 4096, 12_287, 12_288, 12_289, 24_576, bytes.count - 5] {
        for shift in 0..<3 {
            bytes.withUnsafeBytes { raw in
                let slice = UnsafeRawBufferPointer(rebasing: raw[shift..<(shift + length)])
                #expect(CRC32C.update(0x1234, slice) == CRC32C.softwareUpdate(0x1234, slice), "length \(length) shift \(shift)")
            }
        }
    }
}
