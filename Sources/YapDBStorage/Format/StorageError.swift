/// What the storage layer reports. The public `YapDatabaseError` maps these one to one.
package enum StorageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file is not a YapDB file (wrong magic, or too short to hold a header).
    case notADatabase(path: String)
    /// The file was written by a newer format version.
    case unsupportedVersion(found: Int, supported: Int)
    /// Bytes that claim to be ours fail a check. `offset` is in the file named by `reason`.
    case corrupted(offset: Int64, reason: String)
    /// An I/O call failed.
    case io(IOFailure)
    /// A value, key or commit is larger than the format allows.
    case tooLarge(String)
    /// The main file does not exist and creating it was not allowed.
    case fileNotFound(path: String)
    /// Another process (or another open in this one) holds the database's lock.
    case locked(path: String)
    /// This process already has the database open.
    case alreadyOpen(path: String)
    /// A previous commit failed to write or sync; the database refuses writes until reopened.
    case poisoned
    /// The database was closed.
    case closed
    /// The database was opened read-only: writes, checkpoints and compactions are refused.
    case readOnly
    /// Files the main file's high-water mark promises are missing (docs/format.md §2): the
    /// names, or a description such as a log segment shorter than promised. Not corruption:
    /// `corruptAction` never handles it, and open deletes nothing.
    case missingFiles([String])
    /// The database is encrypted and no key was given (docs/format.md §12). Not damage:
    /// `corruptAction` never handles it, and nothing is changed.
    case keyUnavailable
    /// The key given does not open the database's key slot or key check (docs/format.md §12).
    /// Not damage: `corruptAction` never handles it, and nothing is changed.
    case wrongKey

    package var description: String {
        switch self {
        case .notADatabase(let path): return "not a YapDB database: \(path)"
        case .unsupportedVersion(let found, let supported):
            return found < supported ? "older format version \(found) (this build reads version \(supported) only)"
                : "unsupported format version \(found) (this build reads version \(supported))"
        case .corrupted(let offset, let reason): return "corrupted at offset \(offset): \(reason)"
        case .io(let failure): return failure.description
        case .tooLarge(let what): return "too large: \(what)"
        case .fileNotFound(let path): return "no database at \(path)"
        case .locked(let path): return "the database is locked by another process: \(path)"
        case .alreadyOpen(let path): return "the database is already open in this process: \(path)"
        case .poisoned: return "a previous commit failed; reopen the database to continue"
        case .closed: return "the database is closed"
        case .readOnly: return "the database was opened read-only"
        case .missingFiles(let names): return "files of the database are missing: \(names.joined(separator: ", "))"
        case .keyUnavailable: return "the database is encrypted and no key was given"
        case .wrongKey: return "the key does not open the database"
        }
    }
}
