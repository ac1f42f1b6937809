/// A position in the log: a segment number and a byte offset inside that segment.
/// Ordered by segment, then offset (docs/format.md §3, durable-through).
package struct LogPosition: Hashable, Comparable, Sendable, CustomStringConvertible {
    package var segment: UInt32
    package var offset: UInt32

    package init(segment: UInt32, offset: UInt32) {
        self.segment = segment
        self.offset = offset
    }

    /// Before every real position.
    package static let zero = LogPosition(segment: 0, offset: 0)

    package static func < (a: LogPosition, b: LogPosition) -> Bool {
        a.segment != b.segment ? a.segment < b.segment : a.offset < b.offset
    }

    package var description: String { "\(segment):\(offset)" }
}

/// Where a value record lives: segment, offset of the record's first byte, whole record length.
package struct RecordLocation: Hashable, Sendable {
    package var segment: UInt32
    package var offset: UInt32
    package var length: UInt32

    package init(segment: UInt32, offset: UInt32, length: UInt32) {
        self.segment = segment
        self.offset = offset
        self.length = length
    }
}
