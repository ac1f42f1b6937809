import YapDBStorage
import YapDBIndex

/// What a `setObject` does to the row's metadata.
package enum MetadataUpdate {
    /// Keep the row's metadata (`replaceObject`); a new row gets none.
    case keep
    /// The metadata becomes nil (`setObject(_:forKey:inCollection:)`).
    case clear
    /// Store these bytes as the metadata.
    case set(UnsafeRawBufferPointer)
}

/// The one read-write transaction of an engine, valid only inside `Engine.write`'s body.
///
/// Reads see the transaction's own writes. Each write appends its record to the log at once
/// (streamed, not yet committed) and updates the transaction's private copy of the key
/// directory; `Engine.write` commits or rolls back when the body returns.
///
/// Threading: only the thread running the body may use it.
package final class WriteTransaction {
    let state: WriterState
    // `@exclusivity(unchecked)` on the state every write touches: release builds otherwise pay a
    // dynamic exclusivity check (`swift_beginAccess`) per access. Safe because a transaction is
    // used by one thread (the body's) and no method holds two overlapping accesses to one of
    // these properties (compile-time checking still applies; `setObject`'s `upsert` closure
    // touches `usage` and `nextRowid`, never `keydir`).
    /// The key directory as this transaction sees it.
    @exclusivity(unchecked) package private(set) var keydir: Keydir
    /// The snapshot the transaction started from.
    package let baseSnapshot: UInt64
    /// The changes so far (keys only).
    @exclusivity(unchecked) package private(set) var changeset: Changeset
    /// Extension state; extensions replace their entries as they update.
    package var extensions: [String: any Sendable]
    /// Live value bytes per segment, as this transaction leaves them. Bytes added to one
    /// segment in a row (the active one, where every new record goes) are summed in
    /// `pendingAdds` and settled into the table when another segment is touched or the table
    /// is read, so a bulk load does no hashed update per row.
    package var usage: [UInt32: UInt64] {
        settleAdds()
        return settledUsage
    }
    @exclusivity(unchecked) private var settledUsage: [UInt32: UInt64]
    @exclusivity(unchecked) private var pendingSegment: UInt32 = 0
    @exclusivity(unchecked) private var pendingAdds: UInt64 = 0
    @exclusivity(unchecked) var nextRowid: UInt64
    var began = false
    var wroteRecords = false
    var touched = false
    var extensionsOnly = false
    package private(set) var isRolledBack = false
    /// The extension data records appended so far (name, payload), in order: handed to
    /// `UnclaimedExtensions` with the commit's changes.
    private(set) var extensionRecords: [(name: String, payload: [UInt8])] = []
    /// Why the engine refuses this transaction (`closed`, `poisoned`), if it does: every write
    /// throws it before touching the log.
    let refusal: StorageError?

    init(state: WriterState, refusal: StorageError? = nil) {
        self.state = state
        self.refusal = refusal
        keydir = state.keydir
        baseSnapshot = state.snapshotNumber
        changeset = Changeset(snapshot: state.snapshotNumber + 1)
        extensions = state.extensions
        settledUsage = state.usage
        nextRowid = state.nextRowid
    }

    /// Whether committing would change anything (touches count).
    package var hasChanges: Bool { wroteRecords || touched }

    /// The row's entry as it was when the transaction began (nil: it did not exist then).
    package func entryAtStart(collection: String, key: String) throws(StorageError) -> KeydirEntry? {
        try tree { () throws(PageError) in try state.keydir.entry(collection: collection, key: key) }
    }

    /// Makes the transaction commit even without records (an extension changed its state):
    /// the snapshot number moves on and the new extension state is published with it.
    package func markChanged() { touched = true }

    /// Publishes the transaction's extension state even if it commits nothing, without a
    /// commit (no log record, no sync, the snapshot number stays): for a state that describes
    /// the rows exactly as they are, such as an extension's written trees claimed with nothing
    /// to catch up. Rows written in the same transaction still commit as usual.
    package func publishExtensionsWithoutCommit() { extensionsOnly = true }

    /// Asks for the transaction to be rolled back when the body returns.
    package func rollback() { isRolledBack = true }

    /// Attaches a value the layer above wants passed along with this commit's changeset.
    package func attach(_ value: any Sendable) { changeset.attachment = value }

    /// Records an extension's changes for this commit.
    package func setExtensionChanges(_ value: any Sendable, forExtension name: String) {
        changeset.extensions[name] = value
    }

    // MARK: Reads

    package func entry(collection: String, key: String) throws(StorageError) -> KeydirEntry? {
        try tree { () throws(PageError) in try keydir.entry(collection: collection, key: key) }
    }

    package func object(collection: String, key: String) throws(StorageError) -> [UInt8]? {
        guard let entry = try entry(collection: collection, key: key) else { return nil }
        return try read(entry.object) ?? []
    }

    package func metadata(collection: String, key: String) throws(StorageError) -> [UInt8]? {
        guard let location = try entry(collection: collection, key: key)?.metadata else { return nil }
        return try read(location)
    }

    /// Runs a walk of the key directory, reporting a damaged or unreadable page as
    /// `StorageError` (the transaction then fails and is rolled back).
    func tree<T>(_ body: () throws(PageError) -> T) throws(StorageError) -> T { try mappingPageErrors(body) }

    /// The value at `location`: from the log writer's staging buffer if it is still there.
    package func read(_ location: ValueLocation) throws(StorageError) -> [UInt8]? {
        if let staged = state.log.stagedRecord(at: RecordLocation(location)) {
            return try SegmentReader.decodeValue(staged, offset: Int64(location.offset), path: state.log.file.path).1
        }
        return try state.segments.withValue(at: location) { $0.map { Array($0) } }
    }

    /// Calls `body` with the value at `location` (nil for a nil-metadata record), lent for the
    /// call: decoded from the log writer's staging buffer if the record is still there, else
    /// read in place as `SegmentTable.readValue(at:_:)` does.
    package func withValue(at location: ValueLocation, _ body: (UnsafeRawBufferPointer?) -> Void) throws(StorageError) {
        if let staged = state.log.stagedRecord(at: RecordLocation(location)) {
            let value = try SegmentReader.decodeValue(staged, offset: Int64(location.offset), path: state.log.file.path).1
            if let value { value.withUnsafeBytes { body($0) } } else { body(nil) }
            return
        }
        try state.segments.readValue(at: location) { bytes in body(bytes) }
    }

    // MARK: Writes

    /// Sets the object of (collection, key), inserting the row if needed, and its metadata
    /// as `metadata` says. Throws `tooLarge` for values over the limit (nothing written),
    /// `io` when the log cannot be written.
    package func setObject(_ object: UnsafeRawBufferPointer, metadata: MetadataUpdate, collection: String, key: String) throws(StorageError) {
        try checkSize(object.count)
        if case .set(let m) = metadata { try checkSize(m.count) }
        try checkName(collection); try checkName(key)
        try checkRowKey(collection: collection, key: key)
        try begin()
        // One walk of the key directory: the records are appended inside `upsert`, which stores
        // the new entry only when they were (a failed append leaves the row as it was).
        var outcome: Result<(inserted: Bool, metadataChanged: Bool), StorageError> = .success((false, false))
        _ = try tree { () throws(PageError) in try keydir.upsert(collection: collection, key: key) { old -> KeydirEntry? in
            do throws(StorageError) {
                let (entry, metadataChanged) = try appendSet(object, metadata: metadata, old: old, collection: collection, key: key)
                outcome = .success((old == nil, metadataChanged))
                return entry
            } catch {
                outcome = .failure(error)
                return nil
            }
        } }
        let (inserted, metadataChanged) = try outcome.get()
        changeset.recordSet(CollectionKeyPair(collection: collection, key: key), inserted: inserted,
                            objectChanged: true, metadataChanged: metadataChanged)
        wroteRecords = true
    }

    /// Appends the records of a `setObject` of a row whose entry was `old` and returns its new
    /// entry and whether its metadata changed. Updates the live-byte counts.
    private func appendSet(_ object: UnsafeRawBufferPointer, metadata: MetadataUpdate, old: KeydirEntry?,
                           collection: String, key: String) throws(StorageError) -> (KeydirEntry, Bool) {
        let rowid: UInt64
        if let old { rowid = old.rowid } else { rowid = nextRowid; nextRowid += 1 }
        var clears = false
        if case .clear = metadata { clears = true }
        let objectPlace = ValueLocation(try state.log.appendValue(.object, rowid: rowid, collection: collection, key: key, value: object,
                                                                  noMetadata: clears, compress: state.compression))
        var entry = KeydirEntry(rowid: rowid, object: objectPlace, metadata: nil)
        var metadataChanged = true
        switch metadata {
        case .keep:
            entry.metadata = old?.metadata
            metadataChanged = false
        case .clear:
            if let m = old?.metadata { subtract(m) }
        case .set(let bytes):
            let place = ValueLocation(try state.log.appendValue(.metadata, rowid: rowid, collection: collection, key: key, value: bytes,
                                                                noMetadata: false, compress: state.compression))
            if let m = old?.metadata { subtract(m) }
            entry.metadata = place
            add(place)
        }
        if let old { subtract(old.object) }
        add(objectPlace)
        return (entry, metadataChanged)
    }

    /// Sets (or, with nil, clears) the metadata of an existing row. Returns false, writing
    /// nothing, when the row does not exist.
    @discardableResult
    package func setMetadata(_ metadata: UnsafeRawBufferPointer?, collection: String, key: String) throws(StorageError) -> Bool {
        guard var entry = try entry(collection: collection, key: key) else { return false }
        if let metadata { try checkSize(metadata.count) }
        try begin()
        let place = ValueLocation(try state.log.appendValue(.metadata, rowid: entry.rowid, collection: collection, key: key, value: metadata,
                                                            noMetadata: metadata == nil, compress: state.compression))
        if let m = entry.metadata { subtract(m) }
        entry.metadata = metadata == nil ? nil : place
        if metadata != nil { add(place) }
        _ = try tree { () throws(PageError) in try keydir.set(entry, collection: collection, key: key) }
        changeset.recordSet(CollectionKeyPair(collection: collection, key: key), inserted: false, objectChanged: false, metadataChanged: true)
        wroteRecords = true
        return true
    }

    /// Removes a row. Returns its entry, or nil (writing nothing) when it did not exist.
    @discardableResult
    package func remove(collection: String, key: String) throws(StorageError) -> KeydirEntry? {
        guard try entry(collection: collection, key: key) != nil else { return nil }
        try begin()
        try state.log.appendRemove(collection: collection, key: key)
        // The row was just found: the trees skip their existence walks.
        guard let old = try tree({ () throws(PageError) in try keydir.remove(collection: collection, key: key, known: true) }) else {
            throw .corrupted(offset: 0, reason: "the index lost row \(collection)/\(key) during its removal")
        }
        subtract(old.object)
        if let m = old.metadata { subtract(m) }
        changeset.recordRemove(CollectionKeyPair(collection: collection, key: key))
        changeset.removedRowids.append(old.rowid)
        wroteRecords = true
        return old
    }

    /// Removes every row of a collection. Returns the removed rows, or nil (writing nothing)
    /// when the collection had none.
    @discardableResult
    package func removeCollection(_ collection: String) throws(StorageError) -> [(key: String, entry: KeydirEntry)]? {
        guard try tree({ () throws(PageError) in try keydir.count(inCollection: collection) }) > 0 else { return nil }
        try begin()
        try state.log.appendRemoveCollection(collection)
        let removed = try tree { () throws(PageError) in try keydir.removeCollection(collection) }!
        for (_, entry) in removed {
            subtract(entry.object)
            if let m = entry.metadata { subtract(m) }
            changeset.removedRowids.append(entry.rowid)
        }
        changeset.recordRemoveCollection(collection)
        wroteRecords = true
        return removed
    }

    /// Removes every row. Does nothing when the database is empty.
    package func removeAll() throws(StorageError) {
        guard keydir.count > 0 else { return }
        try begin()
        try state.log.appendRemoveAll()
        keydir.removeAll()
        settledUsage.removeAll()
        pendingAdds = 0
        changeset.recordRemoveAll()
        wroteRecords = true
    }

    /// Marks a row's object and/or metadata as changed without writing anything. Returns false
    /// when the row does not exist.
    @discardableResult
    package func touch(collection: String, key: String, object: Bool, metadata: Bool) throws(StorageError) -> Bool {
        guard try entry(collection: collection, key: key) != nil else { return false }
        changeset.recordSet(CollectionKeyPair(collection: collection, key: key), inserted: false, objectChanged: object, metadataChanged: metadata)
        touched = true
        return true
    }

    /// Appends an extension data record (docs/format.md §3) to this commit: `payload` under
    /// extension state `name`, replayed in commit order to the extension when it claims its
    /// roots after a reopen (`ExtensionCatchUp.records`). Bytes that only the log can give
    /// back (a relationship's manual edges) go here, so they are part of their commit: all
    /// there after a crash, or not at all. Throws `tooLarge` for an empty or over-long name or a
    /// payload over `Format.maxExtensionDataPayload` (nothing written), `io` when the log
    /// cannot be written, and the refusal of a closed or poisoned engine.
    package func appendExtensionData(name: String, payload: [UInt8]) throws(StorageError) {
        guard !name.isEmpty else { throw .tooLarge("an extension data record needs a name") }
        try checkName(name)
        if payload.count > Format.maxExtensionDataPayload {
            throw .tooLarge("extension data of \(payload.count) bytes (limit \(Format.maxExtensionDataPayload))")
        }
        try begin()
        try state.log.appendExtensionData(name: name, payload: payload)
        extensionRecords.append((name, payload))
        wroteRecords = true
    }

    // MARK: Internals

    func begin() throws(StorageError) {
        if let refusal { throw refusal }
        guard !began else { return }
        try state.log.begin()
        began = true
    }

    func checkSize(_ count: Int) throws(StorageError) {
        if count > state.maxValueSize { throw .tooLarge("value of \(count) bytes (limit \(state.maxValueSize))") }
    }

    /// Checks that (collection, key) fits the index pages (docs/format.md §6): like LMDB's key
    /// limit, a name pair longer than about a quarter page is refused.
    func checkRowKey(collection: String, key: String) throws(StorageError) {
        guard !keydir.fits(collection: collection, key: key) else { return }
        let length = RowKey.encodedLength(collection: collection, key: key)
        throw .tooLarge("collection and key of \(length) bytes together (limit \(Keydir.maximumRowKeyLength(keydir.format)))")
    }

    func checkName(_ name: String) throws(StorageError) {
        if name.utf8.count > Format.maxKeyLength { throw .tooLarge("name of \(name.utf8.count) bytes (limit \(Format.maxKeyLength))") }
    }

    func add(_ location: ValueLocation) {
        if location.segment != pendingSegment {
            settleAdds()
            pendingSegment = location.segment
        }
        pendingAdds &+= UInt64(location.length)
    }

    func subtract(_ location: ValueLocation) {
        if location.segment == pendingSegment { settleAdds() }
        let now = settledUsage[location.segment, default: 0]
        settledUsage[location.segment] = now >= UInt64(location.length) ? now - UInt64(location.length) : 0
    }

    /// Moves the bytes summed in `pendingAdds` into `settledUsage`.
    private func settleAdds() {
        guard pendingAdds > 0 else { return }
        settledUsage[pendingSegment, default: 0] += pendingAdds
        pendingAdds = 0
    }
}
