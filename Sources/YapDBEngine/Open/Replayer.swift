import YapDBStorage
import YapDBIndex

/// Applies scanned commits to a key directory: used at open (after loading a checkpoint) and by
/// `verify()` to rebuild the directory from disk and compare.
struct Replayer {
    var keydir: Keydir
    /// Live bytes per segment (records the keydir points to).
    var usage: [UInt32: UInt64]
    var nextRowid: UInt64
    /// When set, collects every key written or removed and every row id removed (for
    /// extension roots and records to catch up).
    var catchUp: ExtensionCatchUp?
    /// When set, collects the extension data records (docs/format.md §3) by extension name, in
    /// commit order, and `uncovered`.
    var extensionRecords: [String: [[UInt8]]]?
    /// Per extension name with a record among the commits applied: the rows changed by the
    /// commits after its last one ("uncovered": no record of that extension describes what
    /// they did to it). Collected with `extensionRecords`.
    var uncovered: [String: ExtensionCatchUp] = [:]
    /// The names with a record in the commit being applied.
    private var covering: Set<String> = []

    init(keydir: Keydir, usage: [UInt32: UInt64] = [:], nextRowid: UInt64 = 1) {
        self.keydir = keydir
        self.usage = usage
        self.nextRowid = nextRowid
    }

    mutating func apply(_ commit: ScannedCommit) throws(StorageError) {
        if extensionRecords != nil {
            covering.removeAll()
            for case .extensionData(let name, _) in commit.operations { covering.insert(name) }
        }
        for operation in commit.operations {
            try apply(operation, segmentEnd: commit.end)
        }
        // A record covers its commit and every commit before it (docs/format.md §3).
        for name in covering { uncovered[name] = ExtensionCatchUp() }
        covering.removeAll()
    }

    /// Notes a row change in `catchUp` and in the uncovered changes of every extension the
    /// commit being applied has no record of.
    private mutating func noteChange(_ note: (inout ExtensionCatchUp) -> Void) {
        if catchUp != nil { note(&catchUp!) }
        guard !uncovered.isEmpty else { return }
        // By index, changing the values in place (iterating `keys` would copy the table).
        var i = uncovered.startIndex
        while i != uncovered.endIndex {
            if !covering.contains(uncovered.keys[i]) { note(&uncovered.values[i]) }
            uncovered.formIndex(after: &i)
        }
    }

    mutating func apply(_ operation: ScannedOperation, segmentEnd: LogPosition) throws(StorageError) {
        // Every walk of the key directory reports a damaged page as `StorageError` (`tree`).
        func tree<T>(_ body: () throws(PageError) -> T) throws(StorageError) -> T { try mappingPageErrorsInternally(body) }
        if catchUp != nil || !uncovered.isEmpty {
            switch operation {
            case .value(_, _, let collection, let key, _, _), .remove(let collection, let key):
                let pair = CollectionKeyPair(collection: collection, key: key)
                noteChange { $0.changedKeys.insert(pair) }
            case .removeCollection: break
            case .removeAll: noteChange { $0.removedAll = true }
            case .extensionData: break
            }
        }
        switch operation {
        case .value(let type, let rowid, let collection, let key, let noMetadata, let location):
            // One walk of the key directory per record (`upsert` / `modifyEntry`).
            let place = ValueLocation(location)
            func wrongRowid(_ other: UInt64) -> StorageError {
                .corrupted(offset: Int64(location.offset), reason: "segment \(location.segment): record for \(collection)/\(key) has row id \(rowid), the row has \(other)")
            }
            if type == .object {
                if let owner = try tree({ () throws(PageError) in try keydir.key(forRowid: rowid) }), owner.collection != collection || owner.key != key {
                    if let old = try tree({ () throws(PageError) in try keydir.entry(collection: collection, key: key) }), old.rowid != rowid { throw wrongRowid(old.rowid) }
                    throw .corrupted(offset: Int64(location.offset), reason: "segment \(location.segment): row id \(rowid) reused by \(collection)/\(key)")
                }
                var conflict: UInt64?
                let previous = try tree { () throws(PageError) in
                    try keydir.upsert(collection: collection, key: key) { old -> KeydirEntry? in
                        if let old, old.rowid != rowid { conflict = old.rowid; return nil }
                        return KeydirEntry(rowid: rowid, object: place, metadata: noMetadata ? nil : old?.metadata)
                    }
                }
                if let conflict { throw wrongRowid(conflict) }
                if let old = previous {
                    subtract(old.object)
                    if noMetadata, let m = old.metadata { subtract(m) }
                }
                add(place)
                // The record decoder refused row ids at or over `Format.rowidLimit`.
                nextRowid = max(nextRowid, rowid + 1)
            } else {
                var outcome: Result<ValueLocation?, StorageError> = .success(nil)
                let found = try tree { () throws(PageError) in
                    try keydir.modifyEntry(collection: collection, key: key) { entry in
                        guard entry.rowid == rowid else { outcome = .failure(wrongRowid(entry.rowid)); return }
                        outcome = .success(entry.metadata)
                        entry.metadata = noMetadata ? nil : place
                    }
                }
                guard found else {
                    throw .corrupted(offset: Int64(location.offset), reason: "segment \(location.segment): metadata for missing row \(collection)/\(key)")
                }
                if let m = try outcome.get() { subtract(m) }
                if !noMetadata { add(place) }
            }
        case .remove(let collection, let key):
            if let old = try tree({ () throws(PageError) in try keydir.remove(collection: collection, key: key) }) {
                subtract(old)
                noteChange { $0.removedRowids.insert(old.rowid) }
            }
        case .removeCollection(let collection):
            for row in try tree({ () throws(PageError) in try keydir.removeCollection(collection) }) ?? [] {
                subtract(row.entry)
                noteChange { $0.removedRowids.insert(row.entry.rowid) }
            }
        case .removeAll:
            keydir.removeAll()
            usage.removeAll()
        case .extensionData(let name, let payload):
            // Not part of the key directory: kept for the extension, which reads the payload.
            extensionRecords?[name, default: []].append(payload)
        }
    }

    mutating func add(_ location: ValueLocation) {
        usage[location.segment, default: 0] += UInt64(location.length)
    }

    mutating func subtract(_ location: ValueLocation) {
        let now = usage[location.segment, default: 0]
        usage[location.segment] = now >= UInt64(location.length) ? now - UInt64(location.length) : 0
    }

    mutating func subtract(_ entry: KeydirEntry) {
        subtract(entry.object)
        if let m = entry.metadata { subtract(m) }
    }
}
