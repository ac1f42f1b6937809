/// The root record: what one index checkpoint published (docs/format.md §10).
///
/// A value: the engine builds one after the checkpoint's pages are synced, the checkpoint file
/// publishes it as its index root record (docs/format.md §4), and the page store opens the
/// files it lists.
package struct IndexRoot: Equatable, Sendable {
    /// One named tree: its root page, the number of entries it holds and its height.
    package struct Tree: Equatable, Sendable {
        /// The tree's name or kind ("catalog", "rows", "view:NAME", …): 1 to
        /// `Format.rootTreeNameMaximum` bytes of UTF-8, unique in a root record.
        package var name: String
        /// The root page, or `IndexPageID.none` for an empty tree.
        package var root: IndexPageID
        package var count: UInt64
        package var height: UInt32

        package init(name: String, root: IndexPageID, count: UInt64, height: UInt32) {
            self.name = name
            self.root = root
            self.count = count
            self.height = height
        }
    }

    /// An index file in use: its length (what readers may rely on) and byte counters for
    /// index compaction.
    package struct File: Equatable, Sendable {
        package var number: UInt32
        /// Bytes of the file the record vouches for: a whole number of pages, header page
        /// included. The file may be longer (pages of an unpublished checkpoint), never shorter.
        package var length: Int64
        /// Bytes in pages some tree of this root reaches.
        package var liveBytes: UInt64
        /// Bytes in pages no tree reaches any more.
        package var deadBytes: UInt64

        package init(number: UInt32, length: Int64, liveBytes: UInt64 = 0, deadBytes: UInt64 = 0) {
            self.number = number
            self.length = length
            self.liveBytes = liveBytes
            self.deadBytes = deadBytes
        }

        /// The file's extent (number and length).
        package var extent: IndexFileExtent { IndexFileExtent(number: number, length: length) }
    }

    /// What an extension records about its trees in the index (docs/format.md §10, "Extension
    /// roots"): bytes only the extension reads (its roots, its version), by extension name.
    package struct Extension: Equatable, Sendable {
        /// The extension's state name: 1 to `Format.rootTreeNameMaximum` bytes of UTF-8,
        /// unique among the extensions of a root record.
        package var name: String
        /// At most `Format.rootExtensionMaximumBytes` bytes.
        package var bytes: [UInt8]

        package init(name: String, bytes: [UInt8]) {
            self.name = name
            self.bytes = bytes
        }
    }

    /// The database's UUID (the file header's).
    package var uuid: [UInt8]
    /// The page size of every index file.
    package var pageSize: Int
    /// The checkpoint sequence: 1 for the first index checkpoint, then + 1 each.
    package var sequence: UInt64
    /// The snapshot (commit number) the trees hold.
    package var snapshot: UInt64
    /// Log commits at or after this position are replayed on top of the trees at open.
    package var replay: LogPosition
    /// The row id the next inserted row gets.
    package var nextRowID: UInt64
    /// The named trees, in the writer's order.
    package var trees: [Tree]
    /// The index files in use, number strictly ascending.
    package var files: [File]
    /// Extensions whose trees live in the index files, in the writer's order (none: the
    /// record ends after the files, as records written before extensions had roots do).
    package var extensions: [Extension]

    package init(uuid: [UInt8], pageSize: Int, sequence: UInt64, snapshot: UInt64, replay: LogPosition,
                 nextRowID: UInt64, trees: [Tree], files: [File], extensions: [Extension] = []) {
        self.uuid = uuid
        self.pageSize = pageSize
        self.sequence = sequence
        self.snapshot = snapshot
        self.replay = replay
        self.nextRowID = nextRowID
        self.trees = trees
        self.files = files
        self.extensions = extensions
    }

    /// The tree named `name`, if any.
    package func tree(named name: String) -> Tree? { trees.first { $0.name == name } }
}
