import YapDBStorage
import YapDBIndex

// The read-write transaction's rows, read through the engine's one read surface: they are the
// transaction's own so far. Point reads (`entry`) look in the write buffer first and apply
// nothing; reads that need the trees in order (counts, names, walks, owners by row id) apply
// the buffer first (`applyBuffer`: a damaged page fails the transaction, and the read throws).
// Values still in the log writer's staging buffer are read from there.
extension WriteTransaction: RowReader {
    package func owner(ofRowid rowid: UInt64) throws(EngineError) -> (collection: String, key: String)? {
        try applyBuffer()
        return try trees.readerOwner(ofRowid: rowid)
    }

    package func row(ofRowid rowid: UInt64, memo: inout CollectionMemo) throws(EngineError)
        -> (collection: String, key: String, entry: KeydirEntry?)? {
        try applyBuffer()
        return try trees.readerRow(ofRowid: rowid, memo: &memo)
    }

    /// (Applies the write buffer first; a failure to apply it fails the transaction, and the
    /// count is then that of the rows applied so far.)
    package var rowCount: Int { keydir.count }

    package func rowCount(inCollection collection: String) throws(EngineError) -> Int {
        try applyBuffer()
        return try trees.readerRowCount(inCollection: collection)
    }

    package func collectionCount() throws(EngineError) -> Int {
        try applyBuffer()
        return try trees.readerCollectionCount()
    }

    package func collectionNames() throws(EngineError) -> [String] {
        try applyBuffer()
        return try trees.readerCollectionNames()
    }

    /// Walks a copy of the trees, so a write made by `body` (which changes the trees in place)
    /// does not disturb the walk.
    package func forEachKey(inCollection collection: String, from: String?, through: String?, reversed: Bool,
                            prefetching prefetch: ((KeydirEntry) -> Void)?, _ body: (String, KeydirEntry) -> Bool) throws(EngineError) {
        try applyBuffer()
        let walked = trees
        try walked.readerForEachKey(inCollection: collection, from: from, through: through, reversed: reversed, prefetching: prefetch, body)
    }

    /// Walks a copy of the trees, as `forEachKey` does.
    package func forEachKeyBytes(inCollection collection: String, from: String?, through: String?, reversed: Bool,
                                 _ body: (UnsafeRawBufferPointer, KeydirEntry) -> Bool) throws(EngineError) {
        try applyBuffer()
        let walked = trees
        try walked.readerForEachKeyBytes(inCollection: collection, from: from, through: through, reversed: reversed, body)
    }

    /// Decoded from the log writer's staging buffer when the record is still there, else read
    /// in place as a snapshot reads it.
    package func readValue(at location: ValueLocation, owner: ValueOwner, _ body: (UnsafeRawBufferPointer?) -> Void) throws(EngineError) {
        try logging { () throws(StorageError) in
            if let staged = state.log.stagedRecord(at: RecordLocation(location)) {
                let value = try SegmentReader.decodeValue(staged, offset: Int64(location.offset), path: state.log.file.path, owner: owner).1
                if let value { value.withUnsafeBytes { body($0) } } else { body(nil) }
                return
            }
            try state.segments.readValue(at: location, owner: owner, body)
        }
    }

    /// Always false: a location an index kept may name a record this transaction has since
    /// replaced, so the caller looks the row up by key.
    package func readObject(at location: ValueLocation, ofRowid rowid: UInt64, _ body: (UnsafeRawBufferPointer) -> Void) -> Bool {
        false
    }

    package func holdsSegment(of location: ValueLocation) -> Bool { state.segments.holdsSegment(of: location) }

    package func prefetch(_ location: ValueLocation) { state.segments.prefetch(location) }

    /// (Applies the write buffer first, as `keydir` does.)
    package func withKeydir(_ body: (borrowing Keydir) -> Void) { body(keydir) }
}
