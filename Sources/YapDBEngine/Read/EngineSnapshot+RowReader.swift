import YapDBStorage
import YapDBIndex

// A snapshot's rows, read through the engine's one read surface: its key directory and the
// segments it reaches. Nothing here locks.
extension EngineSnapshot: RowReader {
    package func entry(collection: String, key: String) throws(EngineError) -> KeydirEntry? {
        try keydir.readerEntry(collection: collection, key: key)
    }

    package func entry(rowKey: UnsafeRawBufferPointer) throws(EngineError) -> KeydirEntry? {
        try keydir.readerEntry(rowKey: rowKey)
    }

    package func owner(ofRowid rowid: UInt64) throws(EngineError) -> (collection: String, key: String)? {
        try keydir.readerOwner(ofRowid: rowid)
    }

    package func row(ofRowid rowid: UInt64, memo: inout CollectionMemo) throws(EngineError)
        -> (collection: String, key: String, entry: KeydirEntry?)? {
        try keydir.readerRow(ofRowid: rowid, memo: &memo)
    }

    package var rowCount: Int { keydir.count }

    package func rowCount(inCollection collection: String) throws(EngineError) -> Int {
        try keydir.readerRowCount(inCollection: collection)
    }

    package func collectionCount() throws(EngineError) -> Int { try keydir.readerCollectionCount() }

    package func collectionNames() throws(EngineError) -> [String] { try keydir.readerCollectionNames() }

    package func forEachKey(inCollection collection: String, from: String?, through: String?, reversed: Bool,
                            prefetching prefetch: ((KeydirEntry) -> Void)?, _ body: (String, KeydirEntry) -> Bool) throws(EngineError) {
        try keydir.readerForEachKey(inCollection: collection, from: from, through: through, reversed: reversed, prefetching: prefetch, body)
    }

    package func forEachKeyBytes(inCollection collection: String, from: String?, through: String?, reversed: Bool,
                                 _ body: (UnsafeRawBufferPointer, KeydirEntry) -> Bool) throws(EngineError) {
        try keydir.readerForEachKeyBytes(inCollection: collection, from: from, through: through, reversed: reversed, body)
    }

    package func readValue(at location: ValueLocation, owner: ValueOwner, _ body: (UnsafeRawBufferPointer?) -> Void) throws(EngineError) {
        try engineBoundary { () throws(StorageError) in try segments.readValue(at: location, owner: owner, body) }
    }

    package func readObject(at location: ValueLocation, ofRowid rowid: UInt64, _ body: (UnsafeRawBufferPointer) -> Void) -> Bool {
        segments.readObject(at: location, ofRowid: rowid, body)
    }

    package func holdsSegment(of location: ValueLocation) -> Bool { segments.holdsSegment(of: location) }

    package func prefetch(_ location: ValueLocation) { segments.prefetch(location) }

    package func withKeydir(_ body: (borrowing Keydir) -> Void) { body(keydir) }
}
