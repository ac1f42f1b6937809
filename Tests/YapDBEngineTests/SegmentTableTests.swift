import Foundation
import Testing
import YapDBIndex
import YapDBSimulatedDisk
import YapDBStorage
@testable import YapDBEngine

/// A segment table finds each segment by its number, whether the numbers are close together
/// (read by array index) or far apart (read through the dictionary), and reports a number it
/// does not hold as damage, not a trap.
@Suite struct SegmentTableTests {
    /// A file on a simulated disk holding one object record whose value is `text`, and where
    /// that record lies in it.
    static func segment(_ disk: SimulatedDisk, _ number: UInt32, _ text: String) throws -> (any StorageFile, ValueLocation) {
        var bytes = [UInt8](repeating: 0, count: 16)
        let value = Array(text.utf8)
        let (start, length) = value.withUnsafeBytes {
            RecordCodec.appendValue(.object, rowid: UInt64(number), collection: "c", key: "k\(number)", value: $0,
                                    noMetadata: false, compress: false, into: &bytes)
        }
        let file = try disk.open("/segment-\(number)", mode: .create)
        try file.write(bytes, at: 0)
        return (file, ValueLocation(segment: number, offset: UInt32(start), length: UInt32(length)))
    }

    static func text(_ table: SegmentTable, _ location: ValueLocation) throws(StorageError) -> String? {
        // Each test segment holds one record, of the row whose id is the segment's number.
        try table.withValue(at: location, owner: .object(UInt64(location.segment))) { $0.map { String(decoding: $0, as: UTF8.self) } }
    }

    @Test(arguments: [[3, 4, 6] as [UInt32], [1, 900, 70_000], [4_000_000_000, 7]])
    func everySegmentIsFoundByItsNumber(numbers: [UInt32]) throws {
        let disk = SimulatedDisk()
        var files: [UInt32: any StorageFile] = [:]
        var locations: [UInt32: ValueLocation] = [:]
        for number in numbers {
            let (file, location) = try Self.segment(disk, number, "value of \(number)")
            files[number] = file
            locations[number] = location
        }
        let table = SegmentTable(files: files)
        for number in numbers {
            #expect(try Self.text(table, locations[number]!) == "value of \(number)")
        }
        // A number between or beyond the ones held (inside the array's span, or outside it).
        for missing in [numbers.min()! &- 1, numbers.max()! &+ 1, 5] where !numbers.contains(missing) {
            var location = locations[numbers[0]]!
            location.segment = missing
            #expect(throws: StorageError.self) { try Self.text(table, location) }
        }
    }

    /// Mapped segments: a record inside its segment's map is read from the map, one past the
    /// map's end through the file, with the numbers close together or far apart (the value
    /// read goes through `readValue`, which looks the map up alone first). A copy of the
    /// file's bytes stands in for a memory map; each copy differs from the file in one byte of
    /// the value, so the test sees which path was taken.
    @Test(arguments: [[3, 4, 6] as [UInt32], [1, 900, 70_000], [4_000_000_000, 7]])
    func aRecordInsideTheMapIsReadFromItAndOnePastItFromTheFile(numbers: [UInt32]) throws {
        let disk = SimulatedDisk()
        var segments: [UInt32: SegmentTable.Segment] = [:]
        var locations: [UInt32: ValueLocation] = [:]
        let shortMap = numbers[1]
        for number in numbers {
            let (file, location) = try Self.segment(disk, number, "value of \(number)")
            var bytes = try file.readExactly(Int(location.offset + location.length), at: 0)
            // The map's copy says "VALUE" instead of "value"; its checksum is made to match.
            let end = Int(location.offset + location.length)
            let start = end - "value of \(number)".utf8.count
            for (i, byte) in "VALUE".utf8.enumerated() { bytes[start + i] = byte }
            bytes = Self.resealed(bytes, recordAt: Int(location.offset))
            // One segment's map stops a byte short of its record: read through the file.
            let mapped = number == shortMap ? Array(bytes[..<(end - 1)]) : bytes
            let mapping = mapped.withUnsafeBytes { FileMapping.copy(of: $0, path: "/segment-\(number)") }
            segments[number] = SegmentTable.Segment(file: file, mapping: mapping)
            locations[number] = location
        }
        let table = SegmentTable(segments: segments)
        for number in numbers {
            let expected = number == shortMap ? "value of \(number)" : "VALUE of \(number)"
            var read: String?
            try table.readValue(at: locations[number]!, owner: .object(UInt64(number))) { read = $0.map { String(decoding: $0, as: UTF8.self) } }
            // The record there is row `number`'s object: read for another row, or as the
            // row's metadata, it is corrupted (a location pointing at the wrong record).
            for wrong in [ValueOwner.object(UInt64(number) &+ 1), .metadata(UInt64(number))] {
                let error = #expect(throws: StorageError.self) { try table.readValue(at: locations[number]!, owner: wrong) { _ in } }
                if case .corrupted? = error {} else { Issue.record("\(wrong): expected corrupted, got \(String(describing: error))") }
            }
            #expect(read == expected)
            #expect(try Self.text(table, locations[number]!) == expected)
            table.prefetch(locations[number]!)
        }
        for missing in [numbers.min()! &- 1, numbers.max()! &+ 1, 5] where !numbers.contains(missing) {
            var location = locations[numbers[0]]!
            location.segment = missing
            table.prefetch(location)
            #expect(throws: StorageError.self) { try table.readValue(at: location, owner: .object(UInt64(missing))) { _ in } }
        }
    }

    /// A location kept outside the key directory (a secondary index's column entry) is read
    /// only when the record there is the object record of the expected row: another row's
    /// record, a metadata record of the row, a segment the table lacks, damage and a location
    /// past the file's end all read as "not here" (false, the body not called), mapped or not.
    @Test(arguments: [false, true])
    func aKeptLocationIsReadOnlyWhenItHoldsThatRowsObject(mapped: Bool) throws {
        let disk = SimulatedDisk()
        var segments: [UInt32: SegmentTable.Segment] = [:]
        var locations: [UInt32: ValueLocation] = [:]
        func add(_ number: UInt32, _ file: any StorageFile, _ location: ValueLocation) throws {
            let bytes = try file.readExactly(Int(location.offset + location.length), at: 0)
            let mapping = mapped ? bytes.withUnsafeBytes { FileMapping.copy(of: $0, path: "/segment-\(number)") } : nil
            segments[number] = SegmentTable.Segment(file: file, mapping: mapping)
            locations[number] = location
        }
        for number: UInt32 in [3, 4] {
            let (file, location) = try Self.segment(disk, number, "value of \(number)")
            try add(number, file, location)
        }
        // Segment 5: row 3's metadata record.
        var bytes = [UInt8](repeating: 0, count: 16)
        let (start, length) = Array("meta".utf8).withUnsafeBytes {
            RecordCodec.appendValue(.metadata, rowid: 3, collection: "c", key: "k3", value: $0, noMetadata: false, compress: false, into: &bytes)
        }
        let metadataFile = try disk.open("/segment-5", mode: .create)
        try metadataFile.write(bytes, at: 0)
        try add(5, metadataFile, ValueLocation(segment: 5, offset: UInt32(start), length: UInt32(length)))
        // Segment 6: row 6's object with one byte of its value changed (the checksum no longer matches).
        let (damagedFile, damaged) = try Self.segment(disk, 6, "value of 6")
        var damagedBytes = try damagedFile.readExactly(Int(damaged.offset + damaged.length), at: 0)
        damagedBytes[damagedBytes.count - 1] ^= 1
        try damagedFile.write(damagedBytes, at: 0)
        try add(6, damagedFile, damaged)
        let table = SegmentTable(segments: segments)

        func read(_ location: ValueLocation, _ rowid: UInt64) -> String? {
            var text: String?
            let found = table.readObject(at: location, ofRowid: rowid) { text = String(decoding: $0, as: UTF8.self) }
            #expect(found == (text != nil), "the body runs exactly when the record is read")
            return text
        }
        #expect(read(locations[3]!, 3) == "value of 3")
        #expect(read(locations[4]!, 4) == "value of 4")
        #expect(read(locations[4]!, 3) == nil, "another row's object")
        #expect(read(locations[5]!, 3) == nil, "the row's metadata record")
        #expect(read(locations[6]!, 6) == nil, "a damaged record")
        var missing = locations[3]!
        missing.segment = 9
        #expect(read(missing, 3) == nil, "a segment the table lacks")
        var past = locations[3]!
        past.offset += 1_000
        #expect(read(past, 3) == nil, "past the end of the file")
        var shifted = locations[3]!
        shifted.offset += 1
        #expect(read(shifted, 3) == nil, "not at a record's start")
    }

    /// `bytes` with the checksum of the record at `offset` written again for its bytes.
    static func resealed(_ bytes: [UInt8], recordAt offset: Int) -> [UInt8] {
        var bytes = bytes
        bytes.withUnsafeMutableBytes { raw in
            let length = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset + Format.recordLengthOffset, as: UInt32.self)))
            let checksum = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[(offset + 4)..<(offset + Format.recordHeaderSize + length)]))
            raw.storeBytes(of: CRC32C.mask(checksum).littleEndian, toByteOffset: offset, as: UInt32.self)
        }
        return bytes
    }
}
