// Keydir+Load: building a directory in bulk, a collection at a time (checkpoint load).

extension Keydir {
    /// Builds a key directory from rows that arrive grouped by collection (a checkpoint's
    /// order). Each collection's rows are gathered and its trie built bottom-up in one pass
    /// when the next collection starts (`PersistentHashMap.init(distinct:)`); the row-id map is
    /// built the same way by `finish()`. Per row that is a sort entry and a node slot, instead
    /// of a walk from the root of each map with uniqueness checks and node regrowth.
    ///
    /// Memory: the gathered rows of all collections (for the row-id map) and of the current
    /// collection, until `finish()`.
    ///
    /// Threading: one thread; a value being built.
    package struct Loader {
        private var keydir = Keydir()
        private var collection: String?
        private var rows: [(key: String, value: KeydirEntry)] = []
        private var rowids: [(key: UInt64, value: CollectionKeyPair)] = []

        /// Starts with an empty directory.
        package init() {}

        /// Why the rows could not be loaded.
        package enum Conflict: Error, Equatable {
            /// `collection` has `key` twice.
            case duplicateKey(collection: String, key: String)
            /// `rowid` belongs to two rows.
            case duplicateRowid(UInt64, first: CollectionKeyPair, second: CollectionKeyPair)
        }

        /// Makes `name` the collection that `add` fills, building the previous one.
        /// - Throws: `Conflict.duplicateKey` when the previous collection repeated a key.
        package mutating func beginCollection(_ name: String) throws(Conflict) {
            try closeCollection()
            collection = name
        }

        /// Adds a row to the current collection (checked when the collection is built).
        /// - Precondition: `beginCollection` was called.
        package mutating func add(key: String, entry: KeydirEntry) {
            guard let collection else { preconditionFailure("Keydir.Loader.add before beginCollection") }
            rows.append((key, entry))
            rowids.append((entry.rowid, CollectionKeyPair(collection: collection, key: key)))
        }

        /// The directory with every row added.
        /// - Throws: `Conflict` when a key repeats in a collection or a row id repeats.
        package mutating func finish() throws(Conflict) -> Keydir {
            try closeCollection()
            do {
                keydir.byRowid = try PersistentHashMap(distinct: rowids)
            } catch {
                throw .duplicateRowid(error.key, first: error.first, second: error.second)
            }
            rowids = []
            return keydir
        }

        private mutating func closeCollection() throws(Conflict) {
            guard let collection else { return }
            defer { rows.removeAll(keepingCapacity: true); self.collection = nil }
            guard !rows.isEmpty else { return }
            if var existing = keydir.byCollection[collection] {
                // The collection came twice: add to what it has.
                for (key, entry) in rows where existing.updateValue(entry, forKey: key) != nil {
                    throw .duplicateKey(collection: collection, key: key)
                }
                keydir.byCollection.updateValue(existing, forKey: collection)
            } else {
                do {
                    keydir.byCollection.updateValue(try PersistentHashMap(distinct: rows), forKey: collection)
                } catch {
                    throw .duplicateKey(collection: collection, key: error.key)
                }
            }
            keydir.rowCount &+= rows.count
        }
    }
}
