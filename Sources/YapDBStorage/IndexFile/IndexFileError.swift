/// What the index files and the root record report (docs/format.md §9, §10).
///
/// Every check that fails on bytes from disk has its own `IndexDamage` reason, so callers
/// (recovery, `verify`, tests) decide on the reason, never on a message's wording.
/// `storageError` maps it onto the engine's `StorageError`.
package enum IndexFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file is not a YapDB file (wrong magic, too short to hold a header).
    case notADatabase(path: String)
    /// The file was written by a newer format version.
    case unsupportedVersion(found: Int, supported: Int)
    /// Bytes that claim to be ours fail a check; `offset` is in the file at `path`.
    case corrupted(path: String, offset: Int64, reason: IndexDamage)
    /// A page id that no file in use can serve (see `IndexDamage` for why).
    case badPageID(IndexPageID, reason: IndexDamage)
    /// An I/O call failed.
    case io(IOFailure)
    /// An earlier write or sync of this writer failed: its files may hold bytes that never
    /// reach the disk, so it refuses further work. Start a new writer after reading the
    /// newest root record again.
    case failed

    /// The same failure as the engine's `StorageError`.
    package var storageError: StorageError {
        switch self {
        case .notADatabase(let path): .notADatabase(path: path)
        case .unsupportedVersion(let found, let supported): .unsupportedVersion(found: found, supported: supported)
        case .corrupted(let path, _, .fileMissing):
            // Not damage: a file the root record names is gone (a partial restore or copy).
            .missingFiles([Paths.fileName(of: path)])
        case .corrupted(let path, _, .fileTooShort(_, let expected, let found)):
            .missingFiles(["\(Paths.fileName(of: path)) (\(found) bytes of the \(expected) promised)"])
        case .corrupted(let path, let offset, let reason):
            .corrupted(offset: offset, reason: "\(Paths.fileName(of: path)): \(reason)")
        case .badPageID(let id, let reason): .corrupted(offset: 0, reason: "page \(id): \(reason)")
        case .io(let failure): .io(failure)
        case .failed: .poisoned
        }
    }

    package var description: String {
        switch self {
        case .failed: "an earlier index write or sync failed"
        default: storageError.description
        }
    }
}

/// Why index bytes or a page id were refused. Typed so decisions never parse a message.
package enum IndexDamage: Equatable, Sendable, CustomStringConvertible {
    /// The 64-byte file header's checksum does not match.
    case headerChecksum
    /// The header's kind byte is unknown or not the kind the file name promises.
    case wrongKind(UInt8)
    /// The header's database UUID is not this database's.
    case wrongDatabase
    /// The header's file number is not the one in the file name.
    case wrongFileNumber(UInt32)
    /// A page size that is not a power of two in `Format.indexMinimumPageSize ...
    /// Format.indexMaximumPageSize`, or that differs from the expected one.
    case badPageSize(UInt32)
    /// A checksum over the bytes after the file header does not match.
    case checksumMismatch
    /// The bytes end before the structure they declare does.
    case truncated
    /// Bytes follow the end of the structure.
    case trailingBytes
    /// A declared size or count is over its `Format` limit.
    case overLimit
    /// A field holds a value its rules forbid (named for the report).
    case invalidField(String)
    /// Two trees of a root record have the same name.
    case duplicateTreeName(String)
    /// The root record's files are not in strictly ascending order.
    case filesOutOfOrder
    /// A tree root names a page outside the files the root record lists.
    case rootOutsideFiles(IndexPageID)
    /// An index file a root record lists does not exist.
    case fileMissing(UInt32)
    /// An index file is shorter than the length the root record vouches for.
    case fileTooShort(number: UInt32, expected: Int64, found: Int64)
    /// A page id whose file or page number is 0.
    case invalidPageID
    /// A page id in a file the reader does not know.
    case unknownFile(UInt32)
    /// A page id past the end its file's known length.
    case pastEnd(fileLength: Int64)

    package var description: String {
        switch self {
        case .headerChecksum: "header checksum mismatch"
        case .wrongKind(let kind): "wrong file kind \(kind)"
        case .wrongDatabase: "belongs to another database (UUID differs)"
        case .wrongFileNumber(let number): "header names file \(number)"
        case .badPageSize(let size): "bad page size \(size)"
        case .checksumMismatch: "checksum mismatch"
        case .truncated: "truncated"
        case .trailingBytes: "bytes after the end"
        case .overLimit: "size or count over the limit"
        case .invalidField(let field): "invalid \(field)"
        case .duplicateTreeName(let name): "tree \"\(name)\" named twice"
        case .filesOutOfOrder: "index files out of order"
        case .rootOutsideFiles(let id): "tree root \(id) outside the listed files"
        case .fileMissing(let number): "index file \(number) missing"
        case .fileTooShort(let number, let expected, let found):
            "index file \(number) holds \(found) bytes, the root record vouches for \(expected)"
        case .invalidPageID: "page id names file or page 0"
        case .unknownFile(let number): "unknown index file \(number)"
        case .pastEnd(let length): "past the file's end (\(length) bytes)"
        }
    }
}
