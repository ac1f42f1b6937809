// The one home of the on-disk layout constants. docs/format.md describes every byte; each
// constant it names is defined here, and the reader and the writer both use these.

/// Layout constants of format version 1 (docs/format.md).
package enum Format {
    // MARK: File header (docs/format.md §2)

    /// The first eight bytes of every file: "YapDB\r\n\x1a".
    package static let magic: [UInt8] = [0x59, 0x61, 0x70, 0x44, 0x42, 0x0D, 0x0A, 0x1A]
    /// The format version this build writes and the newest it reads.
    package static let version: UInt32 = 4
    /// Size of the header at the start of every file.
    package static let headerSize = 64

    package static let headerVersionOffset = 8
    package static let headerKindOffset = 12
    package static let headerUUIDOffset = 16
    package static let headerFileNumberOffset = 32
    package static let headerBaseSnapshotOffset = 40
    package static let headerCreatedAtOffset = 48
    package static let headerChecksumOffset = 60

    /// Size of the main file: two header copies, each in its own 4 KiB page.
    package static let mainFileSize = 8192
    /// Offset of the main file's second header copy.
    package static let mainHeaderCopyOffset = 4096
    /// Offset, in each of the main file's two pages, of its high-water mark slot.
    package static let mainMarkOffset = 64
    /// Size of a high-water mark slot.
    package static let mainMarkSize = 64
    /// Offset, in a slot, of the bytes after its fields: zero in a plain database, the
    /// mark's HMAC-SHA256 tag (32 bytes) in an encrypted one (docs/format.md §2).
    package static let mainMarkTagOffset = 28
    /// Offset, in a slot, of the crc of the bytes before it.
    package static let mainMarkChecksumOffset = 60

    // MARK: File names (docs/format.md §1)

    package static let segmentInfix = "-seg-"
    package static let checkpointInfix = "-checkpoint-"
    package static let creatingSuffix = "-creating"
    /// The lock file's suffix: `NAME-lock`, empty, never deleted by the engine.
    package static let lockSuffix = "-lock"
    /// The shared-state file of multi-process support (§14).
    package static let sharedStateSuffix = "-shm"
    package static let temporarySuffix = ".tmp"
    package static let fileNumberDigits = 10

    // MARK: Records (docs/format.md §3)

    /// crc (4) + type (1) + flags (1) + payload length (4).
    package static let recordHeaderSize = 10
    package static let recordTypeOffset = 4
    package static let recordFlagsOffset = 5
    package static let recordLengthOffset = 6

    /// Value is an LZ4 block preceded by its raw length.
    package static let flagCompressed: UInt8 = 0x01
    /// Object record: metadata becomes nil. Metadata record: metadata is nil, no value.
    package static let flagNoMetadata: UInt8 = 0x02

    /// Payload size of a commit record.
    package static let commitPayloadSize = 32
    /// Payload size of a checkpoint info record.
    package static let checkpointInfoPayloadSize = 40
    /// Payload size of a checkpoint end record.
    package static let checkpointEndPayloadSize = 16

    // MARK: Limits (docs/format.md §6)

    /// Largest value (object or metadata), raw, in bytes.
    package static let maxValueSize = 1 << 30
    /// Longest collection name or key, in UTF-8 bytes.
    package static let maxKeyLength = 1 << 16
    /// Largest record payload: a maximal value plus room for its row id, names and lengths.
    package static let maxRecordPayload = (1 << 30) + (1 << 16) * 3
    /// Row ids are below this (2^63 − 1, `Int64.max`: a row id fits a signed 64-bit integer,
    /// as SQLite's do), and a checkpoint's next row id is at most this. A value record or a
    /// checkpoint beyond it is damage, refused when read, so no counter taken from disk can
    /// overflow later; a database that has used every row id refuses new rows (`tooLarge`).
    package static let rowidLimit = UInt64(Int64.max)
    /// Most live bytes a checkpoint may record for one segment: a segment's offsets are 32-bit,
    /// so its records never add up to more. A larger count is damage, refused when read.
    package static let maxSegmentUsage = UInt64(UInt32.max)
    /// Largest payload an extension puts in one extension data record (docs/format.md §3).
    package static let maxExtensionDataPayload = 1 << 30
    /// A log segment rolls to the next one when it passes this size.
    package static let defaultSegmentSize = 64 << 20
    /// Values shorter than this are never compressed (measured: LZ4 saves 2 % on 100-byte
    /// JSON values one by one, docs/format.md §8).
    package static let compressionMinimum = 128
    /// Bytes the checkpoint writer buffers before it writes them, and the reader's window.
    package static let checkpointBlockSize = 256 << 10

    // MARK: Index files and the root record (docs/format.md §9, §10)

    /// Infix of index file names: `NAME-index-NNNNNNNNNN`.
    package static let indexInfix = "-index-"
    /// The page size an index is created with.
    package static let indexDefaultPageSize = 4096
    /// Smallest page size (a power of two that holds the header page's 76 bytes); tests use
    /// it so trees split early.
    package static let indexMinimumPageSize = 128
    /// Largest page size.
    package static let indexMaximumPageSize = 1 << 16
    /// An index file rolls to the next one before it would pass this size.
    package static let indexDefaultFileSize: Int64 = 64 << 20
    /// Offset, in an index file's header page, of the u32 page size.
    package static let indexPageSizeOffset = 64
    /// Offset of the u32 that must be zero.
    package static let indexReservedOffset = 68
    /// Offset of the crc of bytes `indexPageSizeOffset ..< indexHeaderChecksumOffset`.
    package static let indexHeaderChecksumOffset = 72
    /// Bytes of the header page that carry data; the rest of the page is zero.
    package static let indexHeaderUsedSize = 76

    /// Offset, in the root file, of the u32 body length.
    package static let rootBodyLengthOffset = 64
    /// Offset of the root record's body.
    package static let rootBodyOffset = 68
    /// Size of the body's fixed fields, before the tree list.
    package static let rootFixedBodySize = 48
    /// Size of a tree entry without its name: u8 name length, u64 root, u64 count, u32 height.
    package static let rootTreeEntryFixedSize = 21
    /// Size of a file entry: u32 number, u64 length, u64 live bytes, u64 dead bytes.
    package static let rootFileEntrySize = 28
    /// Longest tree name, in UTF-8 bytes.
    package static let rootTreeNameMaximum = 255
    /// Most trees a root record names.
    package static let rootMaximumTrees = 4096
    /// Most index files a root record lists.
    package static let rootMaximumFiles = 1 << 16
    /// Most extension entries a root record carries (docs/format.md §10, "Extension roots").
    package static let rootMaximumExtensions = 4096
    /// Size of an extension entry without its name and bytes: u8 name length, u32 byte count.
    package static let rootExtensionEntryFixedSize = 5
    /// Most bytes one extension records.
    package static let rootExtensionMaximumBytes = 1 << 16
    /// Most bytes all extensions of a root record record together.
    package static let rootExtensionTotalBytes = 1 << 20
    /// Largest root file: header, length, fixed body, the most trees with the longest names,
    /// the most files, the extension section at its limits, crc (about 5 MiB). Checked before
    /// the file is read.
    package static let rootMaximumSize = rootBodyOffset + rootFixedBodySize
        + rootMaximumTrees * (rootTreeEntryFixedSize + rootTreeNameMaximum)
        + rootMaximumFiles * rootFileEntrySize
        + 4 + rootMaximumExtensions * (rootExtensionEntryFixedSize + rootTreeNameMaximum) + rootExtensionTotalBytes + 4

    // MARK: Encrypted databases (docs/format.md §12; sizes of sealed units in YapDBCrypto's CipherFormat)

    /// Set in the header's format version of every file of an encrypted database, so that a
    /// reader without encryption refuses it (`unsupportedVersion`) before reading anything.
    package static let encryptedVersionFlag: UInt32 = 0x0001_0000
    /// Size of the cipher header of an encrypted segment, checkpoint or index file.
    package static let cipherHeaderSize = 64
    /// Offset of the cipher header in segments and checkpoints (right after the file header;
    /// their first record then starts at `cipherHeaderOffset + cipherHeaderSize`).
    package static let cipherHeaderOffset = 64
    /// Offset of the cipher header in an index file's header page.
    package static let indexCipherHeaderOffset = 128
    /// Offset, in a cipher header, of the crc of the bytes before it.
    package static let cipherHeaderChecksumOffset = 60
    /// Smallest index page size of an encrypted database (a page holds its nonce and tag, and
    /// the header page the cipher header).
    package static let encryptedIndexMinimumPageSize = 256
    /// Offset, in each of the main file's two pages, of its key slot.
    package static let mainKeySlotOffset = 128
    /// Size of a key slot.
    package static let mainKeySlotSize = 128
    /// Offset, in a key slot, of the slot body (`KeySlot.encoded()`), after the u64 sequence.
    package static let mainKeySlotBodyOffset = 8
    /// Offset, in a key slot, of the crc of the bytes before it.
    package static let mainKeySlotChecksumOffset = 124
    /// Offset, in each of the main file's two pages, of the key-check block.
    package static let mainKeyCheckOffset = 256
    /// Bytes before a sealed record: its u32 sealed length.
    package static let sealedRecordLengthSize = 4

    // MARK: CRC masking (docs/format.md, introduction)

    package static let crcMaskDelta: UInt32 = 0xA282_EAD8
}

/// The kind byte of a file header (docs/format.md §2).
package enum FileKindByte: UInt8, Sendable {
    case main = 1
    case logSegment = 2
    case compactionSegment = 3
    case checkpoint = 4
    /// An index file of copy-on-write tree pages (docs/format.md §9).
    case index = 5
    /// The root record that publishes an index checkpoint (docs/format.md §10).
    case root = 6
}

/// The type byte of a record (docs/format.md §3, §4).
package enum RecordType: UInt8, Sendable {
    case object = 1
    case metadata = 2
    case remove = 3
    case removeCollection = 4
    case removeAll = 5
    case commit = 6
    /// Bytes an extension logs with a commit (docs/format.md §3, "Extension data records"):
    /// its name and a payload only that extension reads.
    case extensionData = 7
    case checkpointInfo = 16
    case checkpointEnd = 19
    case checkpointSegmentUsage = 20
    /// The index root (docs/format.md §4, §10): where the paged trees of this checkpoint are.
    case checkpointIndexRoot = 22
    /// An extension's state carried by the checkpoint while no extension claims it
    /// (docs/format.md §4): its extension data records and whether row changes were lost.
    case checkpointPendingExtension = 23
}
