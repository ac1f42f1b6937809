import Foundation
import YapDBEngine

/// The read-write transaction: reads see its own writes; everything commits together when the
/// block returns, or nothing does (`rollback()`, an error thrown by the block, or a failure
/// such as a value that cannot be serialized).
public final class YapDatabaseReadWriteTransaction: YapDatabaseReadTransaction {
    /// The engine's transaction: this transaction's reader (`reader`) and where its writes go.
    /// Extensions do not use it: they go through the door in
    /// YapDatabaseReadWriteTransaction+ExtensionUpdate.swift (`markChanged()`, …).
    let engineTransaction: WriteTransaction
    let extensions: [(name: String, ext: YapDatabaseExtension)]
    /// A failure the compatible (non-throwing) write methods could not report; the commit
    /// fails with it.
    var pendingFailure: YapDatabaseError?
    var completions: [(DispatchQueue?, @Sendable () -> Void)] = []
    /// Work to do once the commit is durable, on the committing thread, before completion
    /// blocks are queued (the relationship extension deletes files here). Dropped on rollback
    /// or a failed commit.
    var afterDurableCommit: [() -> Void] = []
    /// Keys whose cache entries this transaction changed (evicted again on rollback), at most
    /// `trackedKeyLimit` of them: past that, `cacheTouchedOverflowed` is set and a rollback
    /// empties both caches instead (the caches hold a few hundred keys; a bulk load must not
    /// hold a set of every key it wrote for them).
    var cacheTouched: Set<CollectionKeyPair> = []
    var cacheTouchedOverflowed = false
    /// The objects (metadata) written to collections whose policy is `.share` or `.copy`, for
    /// other connections' caches, at most `trackedKeyLimit` keys together: past that,
    /// `writtenOverflowed` is set, both are emptied, and other connections evict every key
    /// the commit changed instead of taking the writer's instances (they read them again).
    var writtenObjects: [CollectionKeyPair: Any] = [:]
    var writtenMetadata: [CollectionKeyPair: Any] = [:]
    var writtenOverflowed = false
    /// How many keys a transaction tracks one by one for the caches (`cacheTouched`,
    /// `writtenObjects` and `writtenMetadata`) before it falls back to the whole-cache rule.
    static let trackedKeyLimit = 16_384
    var touchedOnlyObjects: Set<CollectionKeyPair> = []
    var touchedOnlyMetadata: Set<CollectionKeyPair> = []
    /// Keys whose object (metadata) this transaction wrote, whatever the object policy: a later
    /// touch of such a key must not mark it "touched only", or other connections would keep
    /// the old value in their caches. (`writtenObjects` holds only non-containment policies.)
    /// The row and object `write` just stored, while the extensions hear of it: an extension
    /// that needs the object takes it from here instead of reading it back.
    var objectBeingWritten: (pair: CollectionKeyPair, object: Any)?
    /// Per-extension changes for the notification's `"extensions"`.
    var extensionChanges: [String: Any] = [:]
    /// The groups each view changed in (for `hasChanges(forGroup:in:)`), and the views whose
    /// changed groups are not known (rebuilt, or filtered views): those answer for any group.
    var viewGroupChanges: [String: Set<String>] = [:]
    var viewGroupsUnknown: Set<String> = []
    /// What the transaction did to each view beyond its rows (rebuilds, raw change counts).
    var viewCommitNotes: [String: ViewCommitNote] = [:]
    /// Where each view held the row being changed or touched before the change, by view name
    /// (set by the view as it hears of the change; read by the view and the filtered views of it).
    var viewRowsBefore: [String: ViewRowBefore] = [:]
    /// Row id → key of the rows the views compare (made when a view first needs it).
    lazy var viewRowKeys = ViewRowKeyCache()
    /// New rows each view will place in one pass, by view name (`deferViewInsert`).
    var viewPendingInserts: [String: ViewPendingInserts] = [:]
    /// The registrations of the collection written last (the registrations a transaction uses
    /// do not change during it). Unchecked for exclusive access: a transaction is used on one
    /// queue, and this is read per written row.
    @exclusivity(unchecked) private var lastRules: SerializationRegistry.WriteRules?

    /// The object passed to observers as the notification's `"custom"` value.
    public var yapDatabaseModifiedNotificationCustomObject: Any?

    init(connection: YapDatabaseConnection, engineTransaction: WriteTransaction) {
        self.engineTransaction = engineTransaction
        self.extensions = connection.database.extensionRegistry.all
        super.init(connection: connection, writing: engineTransaction)
    }

    /// Replaces an extension's state for this transaction (it commits with the rows).
    func setExtensionState(_ value: (any Sendable)?, forKey key: String) {
        engineTransaction.extensions[key] = value
    }

    /// Whether `rollback()` was called.
    var isRolledBack: Bool { engineTransaction.isRolledBack }

    // MARK: Writing

    /// Sets the row's object; its metadata becomes nil. A nil object removes the row.
    public func setObject(_ object: Any?, forKey key: String, inCollection collection: String?) {
        guard let object else { return removeObject(forKey: key, inCollection: collection) }
        write(object, metadata: .clear, key: key, collection: collection ?? "")
    }

    /// Sets the row's object and metadata. A nil object removes the row.
    public func setObject(_ object: Any?, forKey key: String, inCollection collection: String?, withMetadata metadata: Any?) {
        guard let object else { return removeObject(forKey: key, inCollection: collection) }
        write(object, metadata: metadata.map { .set($0) } ?? .clear, key: key, collection: collection ?? "")
    }

    /// Replaces the object of an existing row, keeping its metadata; does nothing when the row
    /// does not exist (nil removes the row). YapDatabase's spelling of `replaceObject(_:forKey:inCollection:)`.
    public func replace(_ object: Any?, forKey key: String, inCollection collection: String?) {
        replaceObject(object, forKey: key, inCollection: collection)
    }

    /// Replaces the object of an existing row, keeping its metadata; does nothing when the row
    /// does not exist.
    public func replaceObject(_ object: Any?, forKey key: String, inCollection collection: String?) {
        let name = collection ?? ""
        guard entry(collection: name, key: key) != nil else { return }
        guard let object else { return removeObject(forKey: key, inCollection: collection) }
        write(object, metadata: .keep, key: key, collection: name)
    }

    /// Replaces the metadata of an existing row (nil clears it); does nothing when the row does
    /// not exist.
    public func replaceMetadata(_ metadata: Any?, forKey key: String, inCollection collection: String?) {
        checkValid()
        let name = collection ?? ""
        guard entry(collection: name, key: key) != nil else { return }
        noteMutation()
        let hook = rowHookCall(collection: name, key: key, replacingMetadata: metadata)
        runModifyHooks(will: true, hook)
        let change = RowChange.modified(object: false, metadata: true)
        for (extName, ext) in extensions {
            ext.willChangeRow(name: extName, collection: name, key: key, change: change, transaction: self)
        }
        let pair = CollectionKeyPair(collection: name, key: key)
        if let metadata {
            let rules = rules(forCollection: name)
            let sanitized = rules.preSanitize(.metadata, metadata, forKey: key)
            guard let data = serialize(.metadata, sanitized, key: key, rules: rules) else { return }
            guard engine({ () throws(EngineError) in
                try data.withBytes { (raw: UnsafeRawBufferPointer) throws(EngineError) in
                    _ = try engineTransaction.setMetadata(raw, collection: name, key: key)
                }
            }) else { return }
            cacheMetadata(sanitized, pair, rules: rules)
            rules.postSanitize(.metadata, sanitized, forKey: key)
        } else {
            guard engine({ () throws(EngineError) in _ = try engineTransaction.setMetadata(nil, collection: name, key: key) }) else { return }
            cacheMetadata(nil, pair, rules: rules(forCollection: name))
        }
        if !touchedOnlyMetadata.isEmpty { touchedOnlyMetadata.remove(pair) }
        for (extName, ext) in extensions {
            ext.didChangeRow(name: extName, collection: name, key: key, change: change, transaction: self)
        }
        runModifyHooks(will: false, hook)
    }

    /// Marks the row's object as changed (observers and other connections see a change);
    /// nothing is written.
    public func touchObject(forKey key: String, inCollection collection: String?) {
        touch(key, collection, object: true, metadata: false)
    }

    /// Marks the row's metadata as changed; nothing is written.
    public func touchMetadata(forKey key: String, inCollection collection: String?) {
        touch(key, collection, object: false, metadata: true)
    }

    /// Marks the row's object and metadata as changed; nothing is written.
    public func touchRow(forKey key: String, inCollection collection: String?) {
        touch(key, collection, object: true, metadata: true)
    }

    /// Removes the row.
    public func removeObject(forKey key: String, inCollection collection: String?) {
        checkValid()
        let name = collection ?? ""
        // Hooks and extensions hear of a removal before it happens, so only then must the row's
        // existence be known first; otherwise the engine's own lookup decides (one walk fewer).
        let announces = !extensions.isEmpty
        if announces {
            guard entry(collection: name, key: key) != nil else { return }
            noteMutation()
            if hasHooks { runRemoveHooks(will: true, collection: name, keys: [key]) }
            for (extName, ext) in extensions { ext.willRemoveRow(name: extName, collection: name, key: key, transaction: self) }
        }
        var removed = false
        guard engine({ () throws(EngineError) in removed = try engineTransaction.remove(collection: name, key: key) != nil }),
              removed else { return }
        if !announces { noteMutation() }
        forgetRemovedRow(CollectionKeyPair(collection: name, key: key))
        if announces, hasHooks { runRemoveHooks(will: false, collection: name, keys: [key]) }
    }

    /// Removes the rows with the given keys.
    public func removeObjects(forKeys keys: [String], inCollection collection: String?) {
        for key in keys { removeObject(forKey: key, inCollection: collection) }
    }

    /// Removes every row of `collection`.
    public func removeAllObjects(inCollection collection: String?) {
        checkValid()
        let name = collection ?? ""
        guard rowCount(inCollection: name) > 0 else { return }
        noteMutation()
        let hookKeys = keysForRemoveHooks(inCollection: name)
        runRemoveHooks(will: true, collection: name, keys: hookKeys)
        for (extName, ext) in extensions { ext.willRemoveCollection(name: extName, collection: name, transaction: self) }
        guard engine({ () throws(EngineError) in _ = try engineTransaction.removeCollection(name) }) else { return }
        connection.objectCache.removeCollection(name)
        connection.metadataCache.removeCollection(name)
        writtenObjects = writtenObjects.filter { $0.key.collection != name }
        writtenMetadata = writtenMetadata.filter { $0.key.collection != name }
        touchedOnlyObjects = touchedOnlyObjects.filter { $0.collection != name }
        touchedOnlyMetadata = touchedOnlyMetadata.filter { $0.collection != name }
        runRemoveHooks(will: false, collection: name, keys: hookKeys)
    }

    /// Removes every row of every collection.
    public func removeAllObjectsInAllCollections() {
        checkValid()
        guard reader.rowCount > 0 else { return }
        noteMutation()
        runRemoveAllHooks(will: true)
        for (extName, ext) in extensions { ext.willRemoveAll(name: extName, transaction: self) }
        guard engine({ () throws(EngineError) in try engineTransaction.removeAll() }) else { return }
        connection.objectCache.removeAll()
        connection.metadataCache.removeAll()
        writtenObjects.removeAll()
        writtenMetadata.removeAll()
        touchedOnlyObjects.removeAll()
        touchedOnlyMetadata.removeAll()
        runRemoveAllHooks(will: false)
    }

    /// Rolls the transaction back when its block returns: nothing is committed, no snapshot
    /// bump, no notification, and the connection's caches keep nothing from it.
    public func rollback() {
        checkValid()
        engineTransaction.rollback()
    }

    /// Runs `completionBlock` on `queue` (nil: the default completion queue) after the
    /// transaction commits. Not run when it rolls back.
    public func addCompletionQueue(_ queue: DispatchQueue?, completionBlock: @escaping @Sendable () -> Void) {
        checkValid()
        completions.append((queue, completionBlock))
    }

    // MARK: Internals

    enum MetadataChange {
        case keep
        case clear
        case set(Any)
    }

    func write(_ object: Any, metadata: MetadataChange, key: String, collection: String) {
        checkValid()
        noteMutation()
        let rules = rules(forCollection: collection)
        let sanitizedObject = rules.preSanitize(.object, object, forKey: key)
        guard let objectData = serialize(.object, sanitizedObject, key: key, rules: rules) else { return }
        var sanitizedMetadata: Any?
        var metadataData: Data?
        if case .set(let value) = metadata {
            sanitizedMetadata = rules.preSanitize(.metadata, value, forKey: key)
            guard let data = serialize(.metadata, sanitizedMetadata!, key: key, rules: rules) else { return }
            metadataData = data
        }
        let hook = rowHookCall(collection: collection, key: key, object: sanitizedObject, metadata: metadata, newMetadata: sanitizedMetadata)
        runModifyHooks(will: true, hook)
        // An existing row changes its object, and its metadata unless kept; a new row is an insert.
        let change: RowChange = extensions.isEmpty || entry(collection: collection, key: key) == nil
            ? .insert : .modified(object: true, metadata: { if case .keep = metadata { false } else { true } }())
        if !change.isInsert {
            for (extName, ext) in extensions {
                ext.willChangeRow(name: extName, collection: collection, key: key, change: change, transaction: self)
            }
        }
        let ok = engine { () throws(EngineError) in
            try objectData.withBytes { (o: UnsafeRawBufferPointer) throws(EngineError) in
                switch metadata {
                case .keep: try engineTransaction.setObject(o, metadata: .keep, collection: collection, key: key)
                case .clear: try engineTransaction.setObject(o, metadata: .clear, collection: collection, key: key)
                case .set:
                    try metadataData!.withBytes { (m: UnsafeRawBufferPointer) throws(EngineError) in
                        try engineTransaction.setObject(o, metadata: .set(m), collection: collection, key: key)
                    }
                }
            }
        }
        guard ok else { return }
        let pair = CollectionKeyPair(collection: collection, key: key)
        cacheObject(sanitizedObject, pair, rules: rules)
        // (`Set.remove` hashes even on an empty set: the guards keep a bulk load from hashing.)
        if !touchedOnlyObjects.isEmpty { touchedOnlyObjects.remove(pair) }
        switch metadata {
        case .keep: break
        case .clear:
            cacheMetadata(nil, pair, rules: rules)
            if !touchedOnlyMetadata.isEmpty { touchedOnlyMetadata.remove(pair) }
        case .set:
            cacheMetadata(sanitizedMetadata, pair, rules: rules)
            if !touchedOnlyMetadata.isEmpty { touchedOnlyMetadata.remove(pair) }
        }
        rules.postSanitize(.object, sanitizedObject, forKey: key)
        if let sanitizedMetadata { rules.postSanitize(.metadata, sanitizedMetadata, forKey: key) }
        objectBeingWritten = (pair, sanitizedObject)
        for (extName, ext) in extensions {
            ext.didChangeRow(name: extName, collection: collection, key: key, change: change, transaction: self)
        }
        objectBeingWritten = nil
        runModifyHooks(will: false, hook)
    }

    func touch(_ key: String, _ collection: String?, object: Bool, metadata: Bool) {
        checkValid()
        let name = collection ?? ""
        let pair = CollectionKeyPair(collection: name, key: key)
        guard let now = entry(collection: name, key: key),
              (try? engineTransaction.touch(collection: name, key: key, object: object, metadata: metadata)) == true else { return }
        // A value written earlier in this transaction (its record moved, or the row is new) is
        // a real change, not just a touch.
        let start = try? engineTransaction.entryAtStart(collection: name, key: key)
        if object, let start, start.rowid == now.rowid, start.object == now.object { touchedOnlyObjects.insert(pair) }
        if metadata, let start, start.rowid == now.rowid, start.metadata == now.metadata { touchedOnlyMetadata.insert(pair) }
        let change = RowChange.touched(object: object, metadata: metadata)
        for (extName, ext) in extensions {
            ext.didTouchRow(name: extName, collection: name, key: key, change: change, transaction: self)
        }
        runModifyHooks(will: false, rowHookCall(collection: name, key: key, touchingObject: object, metadata: metadata))
    }

    func noteMutation() {
        if iterationDepth > 0 { mutatedDuringIteration = true }
    }

    /// The registrations for writes to `collection` in this transaction (kept for the
    /// collection written last).
    func rules(forCollection collection: String) -> SerializationRegistry.WriteRules {
        if let last = lastRules, last.collection == collection { return last }
        let made = connection.serialization.writeRules(forCollection: collection)
        lastRules = made
        return made
    }

    /// Serializes, or records the failure (the commit will fail with it) and returns nil.
    func serialize(_ part: SerializationRegistry.Part, _ value: Any, key: String, rules: SerializationRegistry.WriteRules) -> Data? {
        do throws(YapDatabaseError) {
            let data = try connection.serialization.serialize(with: rules.entry(part).serializer, value, forKey: key, inCollection: rules.collection)
            if data.count > connection.database.engine.options.maxValueSize { throw .valueTooLarge }
            return data
        } catch {
            fail(error)
            return nil
        }
    }

    /// Runs an engine write; on failure records it (the commit fails with it).
    func engine(_ body: () throws(EngineError) -> Void) -> Bool {
        do throws(EngineError) {
            try body()
            return true
        } catch {
            fail(YapDatabaseError(error))
            return false
        }
    }

    func fail(_ error: YapDatabaseError) {
        if pendingFailure == nil {
            YapDatabaseLogging.log(.error, "the transaction will not commit: \(error)")
            pendingFailure = error
        }
    }

    /// Builds what the commit carries to observers and other connections.
    func prepareCommit() {
        // A large transaction's write buffer joins the trees first and its memory goes, so the
        // key sets built next do not sit on top of it. A failure is kept by the engine
        // transaction, whose commit then throws it.
        try? engineTransaction.releaseBufferBeforeCommit()
        let engineChanges = engineTransaction.changeset
        let (objectChanges, metadataChanges, insertedKeys, removedKeys) = Self.publicKeySets(engineChanges)
        let changeset = YapDatabaseChangeset(
            snapshot: engineTransaction.baseSnapshot + 1,
            objectChanges: objectChanges, metadataChanges: metadataChanges,
            insertedKeys: insertedKeys, removedKeys: removedKeys,
            removedCollections: engineChanges.removedCollections, allKeysRemoved: engineChanges.allKeysRemoved)
        var notification = changeset.notification(object: connection.database, connection: connection,
                                                  custom: yapDatabaseModifiedNotificationCustomObject,
                                                  extensions: extensionChanges.isEmpty ? nil : extensionChanges)
        let knownGroups = viewGroupChanges.filter { !viewGroupsUnknown.contains($0.key) }
        if !knownGroups.isEmpty { notification.userInfo?[ViewGroupChanges.userInfoKey] = knownGroups }
        if !viewCommitNotes.isEmpty { notification.userInfo?[ViewCommitNote.userInfoKey] = viewCommitNotes }
        var sharedObjects: [YapCollectionKey: Any] = [:]
        for (pair, object) in writtenObjects { sharedObjects[YapCollectionKey(collection: pair.collection, key: pair.key)] = object }
        var sharedMetadata: [YapCollectionKey: Any] = [:]
        for (pair, metadata) in writtenMetadata { sharedMetadata[YapCollectionKey(collection: pair.collection, key: pair.key)] = metadata }
        engineTransaction.attach(CommitRecord(changeset: changeset, notification: notification, sharedObjects: sharedObjects,
                                              sharedMetadata: sharedMetadata, touchedObjects: touchedOnlyObjects,
                                              touchedMetadata: touchedOnlyMetadata))
    }

    /// The public changeset's four key sets from the engine's changes. When every change has
    /// the same flags (a commit of only inserts, say), the keys are hashed into one set, which
    /// the sets with those flags share (copy-on-write): a bulk load hashes each key once and
    /// holds one table instead of three.
    static func publicKeySets(_ changes: Changeset)
        -> (object: Set<YapCollectionKey>, metadata: Set<YapCollectionKey>, inserted: Set<YapCollectionKey>, removed: Set<YapCollectionKey>) {
        let count = changes.changeCount
        guard count > 0 else { return ([], [], [], []) }
        // Are all the flags alike? (A key visited twice with different flags makes them
        // differ, and takes the general path.) No hashing: the engine's changes answer per run.
        if let flags = changes.uniformFlags {
            var all = Set<YapCollectionKey>(minimumCapacity: count)
            changes.forEachChange { pair, _ in all.insert(YapCollectionKey(collection: pair.collection, key: pair.key)) }
            return (flags.contains(.object) ? all : [], flags.contains(.metadata) ? all : [],
                    flags.contains(.inserted) ? all : [], flags.contains(.removed) ? all : [])
        }
        var objectChanges = Set<YapCollectionKey>(minimumCapacity: count), metadataChanges = Set<YapCollectionKey>(minimumCapacity: count)
        var insertedKeys = Set<YapCollectionKey>(), removedKeys = Set<YapCollectionKey>()
        changes.forEachChange { pair, flags in
            let key = YapCollectionKey(collection: pair.collection, key: pair.key)
            if flags.contains(.object) { objectChanges.insert(key) }
            if flags.contains(.metadata) { metadataChanges.insert(key) }
            if flags.contains(.inserted) {
                if insertedKeys.isEmpty { insertedKeys.reserveCapacity(count) }
                insertedKeys.insert(key)
            }
            if flags.contains(.removed) { removedKeys.insert(key) }
        }
        return (objectChanges, metadataChanges, insertedKeys, removedKeys)
    }

    /// Lets every extension finish its pending work before the commit (`willCommit`).
    func runWillCommitHooks() {
        placeAllPendingViewRows()
        for (extName, ext) in extensions { ext.willCommit(name: extName, transaction: self) }
        // Rows a hook inserted.
        placeAllPendingViewRows()
    }

    /// Runs `afterDurableCommit` (the commit is durable).
    func runAfterDurableCommit() {
        for action in afterDurableCommit { action() }
        afterDurableCommit.removeAll()
    }

    func runCompletionBlocks() {
        for (queue, block) in completions {
            (queue ?? connection.database.defaultCompletionQueueForUser).async(execute: block)
        }
    }
}
