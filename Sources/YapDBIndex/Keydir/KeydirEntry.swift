// The key directory's values: where a row's object and metadata live, and its row id.

/// Where one value's bytes live in the log: a byte range within a segment file.
package struct ValueLocation: Hashable, Sendable {
    /// The segment file number.
    package var segment: UInt32
    /// The byte offset of the value within the segment.
    package var offset: UInt32
    /// The value's length in bytes.
    package var length: UInt32

    package init(segment: UInt32, offset: UInt32, length: UInt32) {
        self.segment = segment
        self.offset = offset
        self.length = length
    }
}

/// One row of the key directory: its stable row id and where its object and (optional)
/// metadata values live. 33 bytes inline, a 40-byte stride (`MemoryLayout<KeydirEntry>`).
package struct KeydirEntry: Hashable, Sendable {
    /// The row's stable id, unique across the database; views address rows by it.
    package var rowid: UInt64
    /// The location of the object value.
    package var object: ValueLocation
    /// The location of the metadata value, or nil if the row has no metadata.
    package var metadata: ValueLocation?

    package init(rowid: UInt64, object: ValueLocation, metadata: ValueLocation? = nil) {
        self.rowid = rowid
        self.object = object
        self.metadata = metadata
    }
}

/// A row's address: its collection and key.
package struct CollectionKeyPair: Hashable, Sendable {
    package var collection: String
    package var key: String

    package init(collection: String, key: String) {
        self.collection = collection
        self.key = key
    }
}

