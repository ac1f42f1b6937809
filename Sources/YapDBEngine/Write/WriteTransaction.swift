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
/// (streamed, not yet committed) and records the row's new entry in the transaction's write
/// buffer (`KeydirBuffer`), which is applied to its private copy of the key directory in key
/// order: at commit, when the buffer grows past `EngineOptions.writeBufferLimit` (a spill), or
/// before a read that needs the trees in order (the `keydir` property: counts, ordered walks,
/// lookups by row id). Point reads (`entry`, `object`, `metadata`) look in the buffer first and
/// apply nothing. `Engine.write` commits or rolls back when the body returns.
///
/// Threading: only the thread running the body may use it.
package final class WriteTransaction {
    let state: WriterState
    // `@exclusivity(unchecked)` on the state every write touches: release builds otherwise pay a
    // dynamic exclusivity check (`swift_beginAccess`) per access. Safe because a transaction is
    // used by one thread (the body's) and no method holds two overlapping accesses to one of
    // these properties (compile-time checking still applies; the row-key closures of the
    // writes read `buffer` and `trees`, then change `usage`, `nextRowid` and `buffer` in turn,
    // never while another access to the same property is open).
    /// The key directory as this transaction sees it: reading it first applies the write
    /// buffer (a failure to do so, a damaged page, fails the transaction: see `applyBuffer`).
    package var keydir: Keydir {
        _read {
            if !buffer.isEmpty { try? applyBuffer() }
            yield trees
        }
    }
    /// The key directory without the rows still in `buffer`.
    @exclusivity(unchecked) var trees: Keydir
    /// The rows written since the buffer was last applied to `trees`.
    @exclusivity(unchecked) var buffer = KeydirBuffer()
    /// The trees' answer for the row looked up last (`TreeLookupMemo`); forgotten wherever
    /// `trees` changes (a spill changes only where their pages are, not what they hold).
    @exclusivity(unchecked) private var treeMemo = TreeLookupMemo()
    /// Why applying the buffer failed, if it did: the transaction can then only roll back (every
    /// later write and the commit throw it).
    var applyFailure: EngineError?
    /// The snapshot the transaction started from.
    package let baseSnapshot: UInt64
    /// The changes so far (keys only).
    @exclusivity(unchecked) package private(set) var changeset: Changeset
    /// Extension state; extensions replace their entries as they update. Each replacement
    /// counts as work toward the dirty-page budget and may spill (`WriteTransaction+Spill.swift`;
    /// a failed spill fails the transaction).
    package var extensions: [String: any Sendable] {
        didSet { if !isSpilling { noteDirtyWork(1) } }
    }
    /// The dirty pages of `trees` and the paged states in `extensions`, as last counted.
    var dirtyPages: DirtyPageGauge
    /// Where the transaction spills its dirty pages (nil: it never does).
    let spillTarget: SpillTarget?
    /// Whether a spill is replacing the states in `extensions` (which is not new work).
    var isSpilling = false
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
    let refusal: EngineError?

    init(state: WriterState, refusal: EngineError? = nil, spillTarget: SpillTarget? = nil) {
        self.state = state
        self.refusal = refusal
        self.spillTarget = spillTarget
        dirtyPages = state.dirtyPages
        trees = state.keydir
        baseSnapshot = state.snapshotNumber
        changeset = Changeset(snapshot: state.snapshotNumber + 1)
        extensions = state.extensions
        settledUsage = state.usage
        nextRowid = state.nextRowid
    }

    /// Whether committing would change anything (touches count).
    package var hasChanges: Bool { wroteRecords || touched }

    /// The row's entry as it was when the transaction began (nil: it did not exist then).
    package func entryAtStart(collection: String, key: String) throws(EngineError) -> KeydirEntry? {
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
    package func attach(_ value: any CommitPayload) { changeset.attachment = value }

    /// Records an extension's changes for this commit.
    package func setExtensionChanges(_ value: any Sendable, forExtension name: String) {
        changeset.extensions[name] = value
    }

    // MARK: Reads (the rest of `RowReader`: WriteTransaction+RowReader.swift)

    /// The row's entry as this transaction leaves it so far: from the write buffer, else the
    /// trees (nothing is applied).
    package func entry(collection: String, key: String) throws(EngineError) -> KeydirEntry? {
        try RowKey.withEncoded(collection: collection, key: key) { rowKey in
            Result { () throws(EngineError) in try lookup(rowKey, hash: KeydirBuffer.hash(rowKey)).entry }
        }.get()
    }

    /// The row's entry under its encoded row key (`RowKey.encode`), as `entry(collection:key:)`.
    package func entry(rowKey: UnsafeRawBufferPointer) throws(EngineError) -> KeydirEntry? {
        try lookup(rowKey, hash: KeydirBuffer.hash(rowKey)).entry
    }

    /// The buffer slot of the row key `rowKey` (hash `hash`) if it is buffered, and the row's
    /// entry (nil: absent or removed).
    private func lookup(_ rowKey: UnsafeRawBufferPointer, hash: UInt64) throws(EngineError) -> (slot: Int?, entry: KeydirEntry?) {
        if let slot = buffer.slot(for: rowKey, hash: hash) { return (slot, buffer.entry(at: slot)) }
        guard trees.count > 0 else { return (nil, nil) }
        if let remembered = treeMemo.answer(for: rowKey) { return (nil, remembered) }
        let entry = try tree { () throws(PageError) in try trees.entry(rowKey: rowKey) }
        treeMemo.remember(rowKey, entry)
        return (nil, entry)
    }

    /// Records the row key `rowKey` (hash `hash`, buffered in `slot` or not yet) as holding
    /// `entry` (nil: removed), its entry having been `old`.
    private func record(_ rowKey: UnsafeRawBufferPointer, hash: UInt64, slot: Int?, entry: KeydirEntry?, old: KeydirEntry?) {
        if let slot {
            buffer.set(entry, at: slot)
        } else {
            buffer.insert(rowKey, hash: hash, entry: entry, base: old?.rowid)
        }
    }

    /// Applies the write buffer to the trees (in key order, once per row) and empties it.
    /// - Throws: `EngineError` when a page of the trees cannot be read or is damaged; the
    ///   transaction then fails for good (its later writes and its commit throw the error).
    package func applyBuffer() throws(EngineError) {
        try applyBuffer(spilling: true)
    }

    /// `applyBuffer()`; with `spilling` false (at commit) no spill follows: the pages are in
    /// memory already, and the checkpoint the dirty-page budget triggers after the commit
    /// writes them with its root (a spill would only write them first).
    func applyBuffer(spilling: Bool) throws(EngineError) {
        if let applyFailure { throw applyFailure }
        guard !buffer.isEmpty else { return }
        do throws(EngineError) {
            treeMemo.forget()
            if let target = rebuildSpillTarget() {
                try logging { () throws(StorageError) in try applyRebuildingWithSpill(to: target) }
            } else {
                try tree { () throws(PageError) in try trees.apply(buffer) }
            }
        } catch {
            applyFailure = error
            throw error
        }
        let applied = buffer.count
        buffer.removeAll()
        // A large apply frees the nodes it replaced, among live ones: give those pages back.
        if applied >= Self.rowsSpilledBeforeCommit { returnFreeMemoryToSystem() }
        if spilling { try checkDirtyPages(work: applied) } else { dirtyPages.note(work: applied) }
    }

    /// Rows in the write buffer, not yet applied to the trees (tests see spills with it).
    package var bufferedRowCount: Int { buffer.count }

    /// Bytes the write buffer's arrays hold (`KeydirBuffer.allocatedBytes`): at most
    /// `writeBufferLimit` once it has grown past a row or two (tests check the bound with it).
    package var bufferAllocatedBytes: Int { buffer.allocatedBytes }

    /// Applies the buffer when its rows take more than `writeBufferLimit` bytes, or when the
    /// next row would make one of its arrays double past that limit (a spill: the
    /// transaction's reads see the same rows either way). The second rule bounds the memory
    /// the buffer holds, not just what its rows use: an array that fills doubles, and keeps
    /// its capacity for the rows after a spill.
    private func spillIfFull() throws(EngineError) {
        let limit = state.writeBufferLimit
        if buffer.byteSize > limit {
            try applyBuffer()
            return
        }
        let next = buffer.allocatedBytes(afterInsertingKeyOf: Self.rowKeyRoom)
        if next > limit && next > buffer.allocatedBytes { try applyBuffer() }
    }

    /// The room `spillIfFull` keeps for the next row's key (a row key of a few names).
    private static let rowKeyRoom = 128

    /// Applies the write buffer and lets its memory go, when a commit of at least
    /// `rowsSpilledBeforeCommit` buffered rows is about to build what it publishes (the layer
    /// above's changeset): that memory is then free for it. A smaller buffer is left for the
    /// commit to apply. Throws as `applyBuffer()` does (the transaction then fails).
    package func releaseBufferBeforeCommit() throws(EngineError) {
        guard buffer.count >= Self.rowsSpilledBeforeCommit else { return }
        try applyBuffer()
        buffer = KeydirBuffer()
        returnFreeMemoryToSystem()
    }

    /// See `releaseBufferBeforeCommit`.
    static let rowsSpilledBeforeCommit = 4_096

    /// Runs a walk of the key directory, reporting a damaged or unreadable page as
    /// `EngineError` (the transaction then fails and is rolled back).
    func tree<T>(_ body: () throws(PageError) -> T) throws(EngineError) -> T { try mappingPageErrors(body) }

    /// Runs `body`, a call into the log writer, reporting its failure as `EngineError`.
    @inline(__always)
    func logging<T>(_ body: () throws(StorageError) -> T) throws(EngineError) -> T { try engineBoundary(body) }

    // MARK: Writes

    /// Sets the object of (collection, key), inserting the row if needed, and its metadata
    /// as `metadata` says. Throws `tooLarge` for values over the limit (nothing written),
    /// `io` when the log cannot be written.
    package func setObject(_ object: UnsafeRawBufferPointer, metadata: MetadataUpdate, collection: String, key: String) throws(EngineError) {
        try checkSize(object.count)
        if case .set(let m) = metadata { try checkSize(m.count) }
        try checkName(collection); try checkName(key)
        try checkRowKey(collection: collection, key: key)
        try begin()
        // One lookup (the buffer, then the trees unless they are empty); the new entry is
        // buffered only once the records were appended (a failed append leaves the row as it was).
        let (inserted, metadataChanged) = try RowKey.withEncoded(collection: collection, key: key) { rowKey in
            Result { () throws(EngineError) -> (Bool, Bool) in
                let hash = KeydirBuffer.hash(rowKey)
                let (slot, old) = try lookup(rowKey, hash: hash)
                let (entry, metadataChanged) = try appendSet(object, metadata: metadata, old: old, collection: collection, key: key)
                record(rowKey, hash: hash, slot: slot, entry: entry, old: old)
                return (old == nil, metadataChanged)
            }
        }.get()
        changeset.recordSet(CollectionKeyPair(collection: collection, key: key), inserted: inserted,
                            objectChanged: true, metadataChanged: metadataChanged)
        wroteRecords = true
        try spillIfFull()
    }

    /// Appends the records of a `setObject` of a row whose entry was `old` and returns its new
    /// entry and whether its metadata changed. Updates the live-byte counts.
    private func appendSet(_ object: UnsafeRawBufferPointer, metadata: MetadataUpdate, old: KeydirEntry?,
                           collection: String, key: String) throws(EngineError) -> (KeydirEntry, Bool) {
        let rowid: UInt64
        if let old { rowid = old.rowid } else { rowid = try takeRowid() }
        var clears = false
        if case .clear = metadata { clears = true }
        let objectPlace = ValueLocation(try logging { () throws(StorageError) in
            try state.log.appendValue(.object, rowid: rowid, collection: collection, key: key, value: object,
                                      noMetadata: clears, compress: state.compression)
        })
        var entry = KeydirEntry(rowid: rowid, object: objectPlace, metadata: nil)
        var metadataChanged = true
        switch metadata {
        case .keep:
            entry.metadata = old?.metadata
            metadataChanged = false
        case .clear:
            if let m = old?.metadata { subtract(m) }
        case .set(let bytes):
            let place = ValueLocation(try logging { () throws(StorageError) in
                try state.log.appendValue(.metadata, rowid: rowid, collection: collection, key: key, value: bytes,
                                          noMetadata: false, compress: state.compression)
            })
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
    package func setMetadata(_ metadata: UnsafeRawBufferPointer?, collection: String, key: String) throws(EngineError) -> Bool {
        let found = try RowKey.withEncoded(collection: collection, key: key) { rowKey in
            Result { () throws(EngineError) -> Bool in
                let hash = KeydirBuffer.hash(rowKey)
                let (slot, old) = try lookup(rowKey, hash: hash)
                guard let old else { return false }
                if let metadata { try checkSize(metadata.count) }
                try begin()
                let place = ValueLocation(try logging { () throws(StorageError) in
                    try state.log.appendValue(.metadata, rowid: old.rowid, collection: collection, key: key,
                                              value: metadata, noMetadata: metadata == nil, compress: state.compression)
                })
                var entry = old
                if let m = entry.metadata { subtract(m) }
                entry.metadata = metadata == nil ? nil : place
                if metadata != nil { add(place) }
                record(rowKey, hash: hash, slot: slot, entry: entry, old: old)
                return true
            }
        }.get()
        guard found else { return false }
        changeset.recordSet(CollectionKeyPair(collection: collection, key: key), inserted: false, objectChanged: false, metadataChanged: true)
        wroteRecords = true
        try spillIfFull()
        return true
    }

    /// Removes a row. Returns its entry, or nil (writing nothing) when it did not exist.
    @discardableResult
    package func remove(collection: String, key: String) throws(EngineError) -> KeydirEntry? {
        let removed = try RowKey.withEncoded(collection: collection, key: key) { rowKey in
            Result { () throws(EngineError) -> KeydirEntry? in
                let hash = KeydirBuffer.hash(rowKey)
                let (slot, old) = try lookup(rowKey, hash: hash)
                guard let old else { return nil }
                try begin()
                try logging { () throws(StorageError) in try state.log.appendRemove(collection: collection, key: key) }
                record(rowKey, hash: hash, slot: slot, entry: nil, old: old)
                return old
            }
        }.get()
        guard let old = removed else { return nil }
        subtract(old.object)
        if let m = old.metadata { subtract(m) }
        changeset.recordRemove(CollectionKeyPair(collection: collection, key: key))
        changeset.removedRowids.append(old.rowid)
        wroteRecords = true
        try spillIfFull()
        return old
    }

    /// Removes every row of a collection. Returns the removed rows, or nil (writing nothing)
    /// when the collection had none.
    @discardableResult
    package func removeCollection(_ collection: String) throws(EngineError) -> [(key: String, entry: KeydirEntry)]? {
        try applyBuffer()
        guard try tree({ () throws(PageError) in try trees.count(inCollection: collection) }) > 0 else { return nil }
        try begin()
        try logging { () throws(StorageError) in try state.log.appendRemoveCollection(collection) }
        treeMemo.forget()
        let removed = try tree { () throws(PageError) in try trees.removeCollection(collection) }!
        for (_, entry) in removed {
            subtract(entry.object)
            if let m = entry.metadata { subtract(m) }
            changeset.removedRowids.append(entry.rowid)
        }
        changeset.recordRemoveCollection(collection)
        wroteRecords = true
        try checkDirtyPages(work: removed.count)
        return removed
    }

    /// Removes every row. Does nothing when the database is empty.
    package func removeAll() throws(EngineError) {
        try applyBuffer()
        guard trees.count > 0 else { return }
        try begin()
        try logging { () throws(StorageError) in try state.log.appendRemoveAll() }
        treeMemo.forget()
        trees.removeAll()
        settledUsage.removeAll()
        pendingAdds = 0
        changeset.recordRemoveAll()
        wroteRecords = true
    }

    /// Marks a row's object and/or metadata as changed without writing anything. Returns false
    /// when the row does not exist.
    @discardableResult
    package func touch(collection: String, key: String, object: Bool, metadata: Bool) throws(EngineError) -> Bool {
        guard try entry(collection: collection, key: key) != nil else { return false }
        changeset.recordSet(CollectionKeyPair(collection: collection, key: key), inserted: false, objectChanged: object, metadataChanged: metadata)
        touched = true
        return true
    }

    /// The largest payload `appendExtensionData` takes (`Format.maxExtensionDataPayload`).
    package static let extensionDataLimit = Format.maxExtensionDataPayload

    /// Appends an extension data record (docs/format.md §3) to this commit: `payload` under
    /// extension state `name`, replayed in commit order to the extension when it claims its
    /// roots after a reopen (`ExtensionCatchUp.records`). Bytes that only the log can give
    /// back (a relationship's manual edges) go here, so they are part of their commit: all
    /// there after a crash, or not at all. Throws `tooLarge` for an empty or over-long name or a
    /// payload over `Format.maxExtensionDataPayload` (nothing written), `io` when the log
    /// cannot be written, and the refusal of a closed or poisoned engine.
    package func appendExtensionData(name: String, payload: [UInt8]) throws(EngineError) {
        guard !name.isEmpty else { throw .tooLarge("an extension data record needs a name") }
        try checkName(name)
        if payload.count > Format.maxExtensionDataPayload {
            throw .tooLarge("extension data of \(payload.count) bytes (limit \(Format.maxExtensionDataPayload))")
        }
        try begin()
        try logging { () throws(StorageError) in try state.log.appendExtensionData(name: name, payload: payload) }
        extensionRecords.append((name, payload))
        wroteRecords = true
    }

    // MARK: Internals

    func begin() throws(EngineError) {
        if let refusal { throw refusal }
        if let applyFailure { throw applyFailure }
        guard !began else { return }
        try logging { () throws(StorageError) in try state.log.begin() }
        began = true
    }

    func checkSize(_ count: Int) throws(EngineError) {
        if count > state.maxValueSize { throw .tooLarge("value of \(count) bytes (limit \(state.maxValueSize))") }
    }

    /// Checks that (collection, key) fits the index pages (docs/format.md §6): like LMDB's key
    /// limit, a name pair longer than about a quarter page is refused.
    func checkRowKey(collection: String, key: String) throws(EngineError) {
        guard !trees.fits(collection: collection, key: key) else { return }
        let length = RowKey.encodedLength(collection: collection, key: key)
        throw .tooLarge("collection and key of \(length) bytes together (limit \(Keydir.maximumRowKeyLength(trees.format)))")
    }

    func checkName(_ name: String) throws(EngineError) {
        if name.utf8.count > Format.maxKeyLength { throw .tooLarge("name of \(name.utf8.count) bytes (limit \(Format.maxKeyLength))") }
    }

    /// The next unused row id. Open refused a next row id over `Format.rowidLimit`, so the
    /// count cannot overflow; a database that has used every row id refuses the row.
    private func takeRowid() throws(EngineError) -> UInt64 {
        guard nextRowid < Format.rowidLimit else { throw .tooLarge("row ids: every one up to \(Format.rowidLimit) is used") }
        defer { nextRowid += 1 }
        return nextRowid
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
