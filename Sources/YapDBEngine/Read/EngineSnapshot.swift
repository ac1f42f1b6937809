import YapDBStorage
import YapDBIndex

/// An immutable view of the database at one commit: the snapshot number, the key directory
/// and the segment files it reaches. Readers take one and never lock again; they read it
/// through `RowReader` (EngineSnapshot+RowReader.swift).
///
/// Threading: immutable; use from any thread.
package final class EngineSnapshot: Sendable {
    /// The number of the last commit included (0 for a new database).
    package let number: UInt64
    /// Bumped by every publish, commits and compactions alike (compaction moves values
    /// without changing `number`).
    package let generation: UInt64
    package let keydir: Keydir
    package let segments: SegmentTable
    /// Extension state (view trees) by extension name, versioned with the keydir.
    package let extensions: [String: any Sendable]

    package init(number: UInt64, generation: UInt64, keydir: Keydir, segments: SegmentTable, extensions: [String: any Sendable] = [:]) {
        self.number = number
        self.generation = generation
        self.keydir = keydir
        self.segments = segments
        self.extensions = extensions
    }
}
