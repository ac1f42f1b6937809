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
        try table.withValue(at: location) { $0.map { String(decoding: $0, as: UTF8.self) } }
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
}
