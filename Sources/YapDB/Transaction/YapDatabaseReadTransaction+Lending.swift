import YapDBEngine

// Swift-native additions: reads that lend a row's stored bytes instead of copying them.
//
// The lifetime rule, for every method here: the buffers handed to the closure are lent. They
// are valid only until the closure returns and may lie in a read-only memory map of the
// database's files, so the closure must not keep, return or write through them; copy what it
// needs (`Data(bytes)`, `Array(bytes)`, `String(decoding: bytes, as: UTF8.self)`). In
// exchange a read makes no copy and allocates nothing: the bytes are checked (framing and
// checksum, as every read is) and handed over where they lie.

extension YapDatabaseReadTransaction {
    /// Calls `body` with the row's object as stored (the bytes its serializer made), lent for
    /// the call, and returns what `body` returns; returns nil, without calling `body`, when the
    /// row does not exist. The lending form of `serializedObject(forKey:inCollection:)`, which
    /// copies the bytes into a new `Data`.
    ///
    /// The bytes are valid only during `body` (see the lifetime rule above). Reads see this
    /// transaction's snapshot (in a read-write transaction, its own writes too).
    /// - Throws: `YapDatabaseError.corrupted` when the row's index page or stored record is
    ///   damaged (the copying form logs that and answers nil); `.io` when it cannot be read.
    public func withSerializedObject<R>(forKey key: String, inCollection collection: String?,
                                        _ body: (UnsafeRawBufferPointer) -> R) throws(YapDatabaseError) -> R? {
        checkValid()
        guard let entry = try lendingEntry(collection: collection ?? "", key: key) else { return nil }
        var result: R?
        try lendValue(at: entry.object, owner: .object(entry.rowid)) { bytes in result = body(bytes ?? UnsafeRawBufferPointer(start: nil, count: 0)) }
        return result
    }

    /// Calls `body` with the row's metadata as stored, lent for the call (see
    /// `withSerializedObject(forKey:inCollection:_:)`), and returns what `body` returns; nil,
    /// without calling `body`, when the row does not exist or has no metadata.
    /// - Throws: as `withSerializedObject(forKey:inCollection:_:)`.
    public func withSerializedMetadata<R>(forKey key: String, inCollection collection: String?,
                                          _ body: (UnsafeRawBufferPointer) -> R) throws(YapDatabaseError) -> R? {
        checkValid()
        guard let entry = try lendingEntry(collection: collection ?? "", key: key), let location = entry.metadata else { return nil }
        var result: R?
        try lendValue(at: location, owner: .metadata(entry.rowid)) { bytes in if let bytes { result = body(bytes) } }
        return result
    }

    /// Calls `block` with the key (its UTF-8 bytes) and the stored object of each row of
    /// `collection`, both lent for the call, in key order — ascending, or descending with
    /// `reversed` — from the first key ≥ `from` to the last ≤ `through` (nil: unbounded),
    /// until it sets `stop`. Keys order by their UTF-8 bytes, as in
    /// `iterateKeys(inCollection:from:through:reversed:using:)`.
    ///
    /// No string, `Data` or object is made per row, and the next rows' records are loaded
    /// into the CPU caches while `block` works on the current one. The bytes are valid only
    /// during the call (see the lifetime rule above). Writing to the database inside `block`
    /// is allowed only if `block` then sets `stop`, as for every iteration.
    /// - Throws: `YapDatabaseError.corrupted` when an index page or a record is damaged (the
    ///   rows before it were handed to `block`); `.io` when one cannot be read.
    public func iterateKeysAndSerializedObjects(inCollection collection: String?, from: String? = nil, through: String? = nil,
                                                reversed: Bool = false,
                                                using block: (_ key: UnsafeRawBufferPointer, _ object: UnsafeRawBufferPointer,
                                                              _ stop: inout Bool) -> Void) throws(YapDatabaseError) {
        checkValid()
        let name = collection ?? ""
        var failure: YapDatabaseError?, pageFailure: YapDatabaseError?
        let reader = self.reader
        iterate { stop in
            // (No nested function over these locals: its captures would cost a dynamic
            // exclusivity check per access.)
            var ahead = ReadAhead()
            do throws(EngineError) {
                try reader.forEachKeyBytes(inCollection: name, from: from, through: through, reversed: reversed) { key, entry in
                    reader.prefetch(entry.object)
                    guard ahead.isFull else {
                        ahead.hold(key, entry.object, entry.rowid)
                        return true
                    }
                    ahead.withOldest { keyBytes, location, rowid in
                        do throws(YapDatabaseError) {
                            try lendValue(at: location, owner: .object(rowid)) { bytes in block(keyBytes, bytes ?? UnsafeRawBufferPointer(start: nil, count: 0), &stop) }
                        } catch {
                            failure = error
                        }
                    }
                    ahead.replaceOldest(key, entry.object, entry.rowid)
                    return failure == nil && afterStep(stop)
                }
            } catch {
                pageFailure = YapDatabaseError(error)
            }
            // The rows read before the end of the walk (or the damaged page) go out in order.
            while failure == nil, !stop, !ahead.isEmpty {
                ahead.withOldest { keyBytes, location, rowid in
                    do throws(YapDatabaseError) {
                        try lendValue(at: location, owner: .object(rowid)) { bytes in block(keyBytes, bytes ?? UnsafeRawBufferPointer(start: nil, count: 0), &stop) }
                    } catch {
                        failure = error
                    }
                }
                ahead.dropOldest()
                if failure != nil || !afterStep(stop) { break }
            }
        }
        if let error = failure ?? pageFailure { throw error }
    }

    // MARK: Internals

    /// The entry of (`collection`, `key`) in this transaction's view, a damaged page thrown.
    final func lendingEntry(collection: String, key: String) throws(YapDatabaseError) -> KeydirEntry? {
        do throws(EngineError) { return try reader.entry(collection: collection, key: key) } catch { throw YapDatabaseError(error) }
    }

    /// Calls `body` with the value at `location` (nil for a nil-metadata record), lent by the
    /// reader (`RowReader.readValue`). A record there that is not `owner`'s is `.corrupted`.
    final func lendValue(at location: ValueLocation, owner: ValueOwner, _ body: (UnsafeRawBufferPointer?) -> Void) throws(YapDatabaseError) {
        do throws(EngineError) { try reader.readValue(at: location, owner: owner, body) } catch { throw YapDatabaseError(error) }
    }
}

/// The rows a lending iteration has read from the index but not yet handed out: their records
/// were prefetched when read, so by the time a row is handed out its value is (likely) in the
/// CPU caches. Keys are copied into slots reused for the whole walk (no allocation once each
/// slot has grown to the key length).
private struct ReadAhead {
    /// How many rows are read ahead of the one handed out (a power of two).
    static let depth = 8

    private var keys = [[UInt8]](repeating: [], count: depth)
    private var locations = [ValueLocation](repeating: ValueLocation(segment: 0, offset: 0, length: 0), count: depth)
    private var rowids = [UInt64](repeating: 0, count: depth)
    private var first = 0
    private var count = 0

    var isFull: Bool { count == Self.depth }
    var isEmpty: Bool { count == 0 }

    /// Calls `body` with the key, object location and row id of the row held longest.
    func withOldest(_ body: (UnsafeRawBufferPointer, ValueLocation, UInt64) -> Void) {
        let location = locations[first], rowid = rowids[first]
        keys[first].withUnsafeBytes { body($0, location, rowid) }
    }

    /// Holds one more row (not full).
    mutating func hold(_ key: UnsafeRawBufferPointer, _ location: ValueLocation, _ rowid: UInt64) {
        store(key, location, rowid, at: (first &+ count) & (Self.depth &- 1))
        count &+= 1
    }

    /// Drops the row held longest and holds `key` in its place, as the newest (full).
    mutating func replaceOldest(_ key: UnsafeRawBufferPointer, _ location: ValueLocation, _ rowid: UInt64) {
        store(key, location, rowid, at: first)
        first = (first &+ 1) & (Self.depth &- 1)
    }

    /// Drops the row held longest.
    mutating func dropOldest() {
        first = (first &+ 1) & (Self.depth &- 1)
        count &-= 1
    }

    private mutating func store(_ key: UnsafeRawBufferPointer, _ location: ValueLocation, _ rowid: UInt64, at slot: Int) {
        keys[slot].removeAll(keepingCapacity: true)
        keys[slot].append(contentsOf: key)
        locations[slot] = location
        rowids[slot] = rowid
    }
}
