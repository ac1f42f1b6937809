import YapDBStorage
import YapDBIndex

// The names the engine hands to the layer above, so that layer's core (the database, its
// connections and transactions) imports the engine alone: these types appear in the engine's
// own surface (`RowReader`, `WriteTransaction`, `Engine`, `Changeset`), and the layer above
// reads and passes them on without reaching into the modules that define them. Each is the
// lower module's type itself, not a copy.

/// A row's place in the key directory: its row id and its values' locations (`RowReader.entry`).
package typealias KeydirEntry = YapDBIndex.KeydirEntry
/// Where a value lies in the log (segment, offset, length).
package typealias ValueLocation = YapDBIndex.ValueLocation
/// A (collection, key) pair, as changesets and write transactions name rows.
package typealias CollectionKeyPair = YapDBIndex.CollectionKeyPair
/// The collection decoded last by a walk by row id (`RowReader.row(ofRowid:memo:)`).
package typealias CollectionMemo = YapDBIndex.CollectionMemo
/// The key directory, lent to extensions that walk its trees (`RowReader.withKeydir`).
package typealias Keydir = YapDBIndex.Keydir
/// A connection's object or metadata cache (an LRU by count), kept in step by changesets.
package typealias ObjectCache = YapDBIndex.ObjectCache
/// Which row (and which of its values) a read expects to find at a location.
package typealias ValueOwner = YapDBStorage.ValueOwner
/// The file-system seam the engine reads and writes through (the harness passes its own).
package typealias FileSystem = YapDBStorage.FileSystem
/// The operating system's file system, the engine's default.
package typealias PosixFileSystem = YapDBStorage.PosixFileSystem
/// A bounds-checked cursor over bytes (varints, lengths, strings), for extensions that decode
/// their own root bytes and log records: hostile bytes throw `ByteReader.Overrun`, never trap.
/// (Its companion, the little-endian and varint appends on `[UInt8]`, comes with it.)
package typealias ByteReader = YapDBStorage.ByteReader
