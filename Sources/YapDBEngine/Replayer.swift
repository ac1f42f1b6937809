import YapDBStorage
import YapDBIndex

/// Applies scanned commits to a key directory: used at open (after loading a checkpoint) and by
/// `verify()` to rebuild the directory from disk and compare.
struct Replayer {
    var keydir: Keydir
    /// Live bytes per segment (records the keydir points to).
    var usage: [UInt32: UInt64]
    var nextRowid: UInt64
    /// When set, collects every key written or removed (for extension images to catch up).
    var changedKeys: Set<CollectionKeyPair>?

    init(keydir: Keydir = Keydir(), usage: [UInt32: UInt64] = [:], nextRowid: UInt64 = 1) {
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
        if changedKeys != nil {
            switch operation {
            case .value(_, _, let collection, let key, _, _), .remove(let collection, let key):
                changedKeys!.insert(CollectionKeyPair(collection: collection, key: key))
            case .removeCollection, .removeAll: break
            }
        }
        switch operation {
        case .value(let type, let rowid, let collection, let key, let noMetadata, let location):
            let old = keydir.entry(collection: collection, key: key)
            let place = ValueLocation(location)
            if let old, old.rowid != rowid {
                throw .corrupted(offset: Int64(location.offset), reason: "segment \(location.segment): record for \(collection)/\(key) has row id \(rowid), the row has \(old.rowid)")
            }
            if type == .object {
                if keydir.key(forRowid: rowid) != nil && old == nil {
                    throw .corrupted(offset: Int64(location.offset), reason: "segment \(location.segment): row id \(rowid) reused by \(collection)/\(key)")
                }
                var entry = KeydirEntry(rowid: rowid, object: place, metadata: noMetadata ? nil : old?.metadata)
                if let old {
                    subtract(old.object)
                    if noMetadata, let m = old.metadata { subtract(m) }
                    entry.rowid = old.rowid
                }
                add(place)
                keydir.set(entry, collection: collection, key: key)
                nextRowid = max(nextRowid, rowid &+ 1)
            } else {
                guard var entry = old else {
                    throw .corrupted(offset: Int64(location.offset), reason: "segment \(location.segment): metadata for missing row \(collection)/\(key)")
                }
                if let m = entry.metadata { subtract(m) }
                entry.metadata = noMetadata ? nil : place
                if !noMetadata { add(place) }
                keydir.set(entry, collection: collection, key: key)
            }
        case .remove(let collection, let key):
            if let old = keydir.remove(collection: collection, key: key) { subtract(old) }
        case .removeCollection(let collection):
            keydir.removeCollection(collection)?.forEach { _, entry in
                subtract(entry)
                return true
            }
        case .removeAll:
            keydir.removeAll()
            usage.removeAll()
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
