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
    /// commit order.
    var extensionRecords: [String: [[UInt8]]]?

    init(keydir: Keydir, usage: [UInt32: UInt64] = [:], nextRowid: UInt64 = 1) {
        self.keydir = keydir
        self.usage = usage
        self.nextRowid = nextRowid
    }

    mutating func apply(_ commit: ScannedCommit) throws(StorageError) {
        for operation in commit.operations {
            try apply(operation, segmentEnd: commit.end)
        }
    }

    mutating func apply(_ operation: ScannedOperation, segmentEnd: LogPosition) throws(StorageError) {
        // Every walk of the key directory reports a damaged page as `StorageError` (`tree`).
        func tree<T>(_ body: () throws(PageError) -> T) throws(StorageError) -> T { try mappingPageErrors(body) }
        if catchUp != nil {
            switch operation {
            case .value(_, _, let collection, let key, _, _), .remove(let collection, let key):
                catchUp!.changedKeys.insert(CollectionKeyPair(collection: collection, key: key))
            case .removeCollection: break
            case .removeAll: catchUp!.removedAll = true
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
                nextRowid = max(nextRowid, rowid &+ 1)
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
                catchUp?.removedRowids.insert(old.rowid)
            }
        case .removeCollection(let collection):
            for row in try tree({ () throws(PageError) in try keydir.removeCollection(collection) }) ?? [] {
                subtract(row.entry)
                catchUp?.removedRowids.insert(row.entry.rowid)
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
