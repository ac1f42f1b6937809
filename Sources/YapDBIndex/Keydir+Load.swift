// Keydir+Load: building a directory in bulk, a collection at a time (checkpoint load).

extension Keydir {
    /// Builds a key directory from rows that arrive grouped by collection (a checkpoint's
    /// order): each collection's map is filled on its own, uniquely owned, and joins the
    /// directory once when the next collection starts or at `finish()`. Per row that is one
    /// walk of the collection's trie and one of the row-id map (`set` would also walk the
    /// trie of collections and look the row up first).
    ///
    /// Threading: one thread; a value being built.
    package struct Loader {
        private var keydir = Keydir()
        private var collection: String?
        private var rows = PersistentHashMap<String, KeydirEntry>()

        /// Starts with an empty directory.
        package init() {}

        /// Why a row could not be added.
        package enum Conflict: Error, Equatable {
            /// The collection already has this key.
            case duplicateKey
            /// The row id already belongs to (collection, key).
            case duplicateRowid(collection: String, key: String)
        }

        /// Makes `name` the collection that `add` fills. A collection given twice is merged
        /// with what it already has.
        package mutating func beginCollection(_ name: String) {
            closeCollection()
            collection = name
            rows = keydir.byCollection.removeValue(forKey: name) ?? PersistentHashMap()
        }

        /// Adds a row to the current collection.
        /// - Throws: `Conflict` when the key or the row id is already in the directory; the
        ///   loader is then in an unspecified state (discard it).
        /// - Precondition: `beginCollection` was called.
        package mutating func add(key: String, entry: KeydirEntry) throws(Conflict) {
            guard let collection else { preconditionFailure("Keydir.Loader.add before beginCollection") }
            if rows.updateValue(entry, forKey: key) != nil { throw .duplicateKey }
            if let other = keydir.byRowid.updateValue(CollectionKeyPair(collection: collection, key: key), forKey: entry.rowid) {
                throw .duplicateRowid(collection: other.collection, key: other.key)
            }
            keydir.rowCount &+= 1
        }

        /// The directory with every row added.
        package mutating func finish() -> Keydir {
            closeCollection()
            return keydir
        }

        private mutating func closeCollection() {
            guard let collection else { return }
            if !rows.isEmpty { keydir.byCollection.updateValue(rows, forKey: collection) }
            rows = PersistentHashMap()
            self.collection = nil
        }
    }
}
