import YapDBStorage
import YapDBIndex

/// Read handles of every segment a snapshot can reach, by segment number. Immutable: a roll
/// or a compaction makes a new table. A retired segment's handle closes when the last
/// snapshot holding it goes away (its file may already be unlinked; open handles still read).
package final class SegmentTable: Sendable {
    package let files: [UInt32: any StorageFile]

    package init(files: [UInt32: any StorageFile]) { self.files = files }

    /// A table with `file` added as segment `number`.
    package func adding(_ number: UInt32, _ file: any StorageFile) -> SegmentTable {
        var copy = files
        copy[number] = file
        return SegmentTable(files: copy)
    }

    /// A table without the given segments.
    package func removing(_ numbers: some Sequence<UInt32>) -> SegmentTable {
        var copy = files
        for n in numbers { copy[n] = nil }
        return SegmentTable(files: copy)
    }

    /// The verified record at `location`.
    package func value(at location: ValueLocation) throws(StorageError) -> (RecordCodec.ValueRecord, [UInt8]?) {
        guard let file = files[location.segment] else {
            throw .corrupted(offset: Int64(location.offset), reason: "segment \(location.segment) is referenced but missing")
        }
        return try SegmentReader.value(at: RecordLocation(location), in: file)
    }

    /// Calls `body` with the verified value at `location` (nil for a nil-metadata record),
    /// valid only during the call: one `pread`, no strings decoded, no intermediate arrays
    /// (`SegmentReader.withValue`).
    package func withValue<R>(at location: ValueLocation, _ body: (UnsafeRawBufferPointer?) throws(StorageError) -> R) throws(StorageError) -> R {
        guard let file = files[location.segment] else {
            throw .corrupted(offset: Int64(location.offset), reason: "segment \(location.segment) is referenced but missing")
        }
        return try SegmentReader.withValue(at: RecordLocation(location), in: file, body)
    }
}

extension RecordLocation {
    init(_ location: ValueLocation) {
        self.init(segment: location.segment, offset: location.offset, length: location.length)
    }
}

extension ValueLocation {
    init(_ location: RecordLocation) {
        self.init(segment: location.segment, offset: location.offset, length: location.length)
    }
}
