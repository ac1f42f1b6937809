import Foundation

/// Every error YapDB reports. Each case says what happened and what the caller can do.
///
/// Bad bytes on disk never trap: they become ``notADatabase``, ``unsupportedVersion(found:supported:)``
/// or ``corrupted(offset:reason:)``. Misuse of the API (a write inside a read, a violated
/// `permittedTransactions`) is not an error value: it stops the program with a message, as
/// YapDatabase's exceptions do.
///
/// Threading: a plain value; safe to pass between threads.
public enum YapDatabaseError: Error, Sendable, Equatable, Hashable {
    /// The database file does not exist and `YapDatabaseOptions.createIfMissing` is false.
    /// Create it by opening with `createIfMissing = true`, or check the URL.
    case fileNotFound

    /// The file exists but is not a YapDB database (its header's magic is wrong or it is too
    /// short to hold a header). Nothing was changed; check the URL.
    case notADatabase

    /// The file has a format version (`found`) this build does not read: it reads exactly
    /// `supported`. Nothing was changed. A newer file: open it with a newer YapDB. An older
    /// file (format 1, before the index moved into pages): open it with the YapDB that wrote
    /// it and copy the rows into a new database.
    case unsupportedVersion(found: Int, supported: Int)

    /// Damaged bytes at byte `offset` of the log, followed by later valid commits, so the damage
    /// is not a torn tail that recovery may drop. `reason` names the check that failed.
    /// Nothing was changed (with `corruptAction == .fail`); restore from a backup, or open with
    /// `corruptAction = .rename` to keep the damaged files aside and start a new database.
    case corrupted(offset: Int64, reason: String)

    /// Another process holds the database's lock (on the `NAME-lock` file) in a way that
    /// excludes this open: it has the database open read-write, or this open is read-write
    /// and it has it open read-only. Retry after that process closes it, or set
    /// `YapDatabaseOptions.busyTimeout` to wait. Any number of read-only opens share the lock.
    case locked

    /// This process already has the database at this path open. Use the existing
    /// `YapDatabase` instance (share it) instead of opening the file twice.
    case alreadyOpen

    /// The file or its directory is on a read-only volume (`EROFS`), or the database was
    /// opened with `YapDatabaseOptions.readOnly` and this call writes. Nothing was changed;
    /// open it read-only to read it, or open a copy in a writable place to change it.
    case readOnly

    /// The operating system refused access to a file of the database or to its directory
    /// (`EACCES`, `EPERM`) during `operation` (e.g. `"open"`, `"pwrite"`): file permissions, a
    /// sandbox, or data protection on a locked device (files protected until first unlock, or
    /// complete protection, cannot be read or written while the device is locked). The failed
    /// call changed nothing; fix the permissions or retry once the device is unlocked. A
    /// commit that failed this way was not applied; if the database is now ``poisoned``,
    /// reopen it.
    case permissionDenied(operation: String)

    /// Files the database's main file says exist are gone (a partial restore, a copy of the
    /// main file alone, a sync tool that skipped files, a file deleted by another program):
    /// opening would give an older or empty database. `names` lists what is missing (file
    /// names, or a log segment shorter than promised). Nothing was changed or deleted, and
    /// `corruptAction` does not apply: restore the missing files (or the whole database) and
    /// open again.
    case missingFiles(names: [String])

    /// The disk is full (`ENOSPC`/`EDQUOT`). The failed commit was not applied; free space and,
    /// if the database is now ``poisoned``, reopen it.
    case diskFull

    /// A system call failed with `errno` during `operation` (e.g. `"pwrite"`, `"fdatasync"`).
    /// If it happened during a commit, the commit was not applied and the database is poisoned
    /// until reopened.
    case io(errno: Int32, operation: String)

    /// A serialized value is larger than `YapDatabaseOptions.maxValueSize`, or a collection and
    /// key together are longer than the index pages hold (943 bytes of UTF-8 with the default
    /// 4 KiB pages). Nothing was stored; store smaller values or raise the limit, or use shorter
    /// keys.
    case valueTooLarge

    /// A serializer failed to encode the object (or metadata) for `key` in `collection`;
    /// `underlying` describes the cause. Nothing was stored (never empty data); register a
    /// serializer or Codable type for the collection, or fix the value.
    case serialization(collection: String, key: String, underlying: String)

    /// The database (or connection) was closed. Open the database again to continue.
    case closed

    /// A previous commit failed (its bytes may be partly on disk), so the database refuses
    /// further writes. Reads still work; reopen the database to recover and continue writing.
    case poisoned

    /// A `YapDatabaseQuery` cannot be used: its text is malformed, names a column the index
    /// does not have, or its parameters do not fit (a wrong count, an unsupported type, an
    /// array outside an `IN` list). Also a malformed full-text query (the native forms of
    /// `YapDatabaseFullTextSearchTransaction`). `offset` is the character offset in the query
    /// text where the problem is (the text's length when it has no single place); `reason`
    /// names it. Nothing was read; fix the query.
    case invalidQuery(offset: Int, reason: String)

    /// The database is encrypted and no key was given, or the key source gave none: a
    /// ``YapDatabaseOptions/cipherKeyBlock`` (or key spec block) returned empty data, as a
    /// keychain does while the device is locked before its first unlock, or the key set is
    /// empty. Nothing was read past the headers and nothing was changed, whatever
    /// `corruptAction` says; open again once the key is available.
    case keyUnavailable

    /// The key given does not open the database: another key, a passphrase for a database
    /// created with a raw key (or the other way round), or a key for a database that is not
    /// encrypted. Nothing was changed, whatever `corruptAction` says (a wrong key is never
    /// taken for damage); open with the right key.
    case wrongKey
}

extension YapDatabaseError: CustomStringConvertible, LocalizedError {
    /// A one-sentence explanation naming what happened and, where it helps, what to do.
    public var description: String {
        switch self {
        case .fileNotFound:
            return "YapDB: the database file does not exist (createIfMissing is false)"
        case .notADatabase:
            return "YapDB: the file is not a YapDB database"
        case let .unsupportedVersion(found, supported):
            if found < supported {
                return "YapDB: the file has format version \(found), written by an older YapDB; this build reads version \(supported) only (copy the rows out with the YapDB that wrote it)"
            }
            return "YapDB: the file has format version \(found), written by a newer YapDB; this build reads version \(supported)"
        case let .corrupted(offset, reason):
            return "YapDB: the database is corrupted at byte offset \(offset): \(reason)"
        case .locked:
            return "YapDB: another process holds the database lock"
        case .alreadyOpen:
            return "YapDB: the database is already open in this process; share the existing YapDatabase instance"
        case .readOnly:
            return "YapDB: the database cannot be written (a read-only volume, or opened with options.readOnly)"
        case let .permissionDenied(operation):
            return "YapDB: permission denied during \(operation) (file permissions, a sandbox, or data protection while the device is locked)"
        case let .missingFiles(names):
            return "YapDB: files of the database are missing, so it would open older or empty (nothing was changed): \(names.joined(separator: ", "))"
        case .diskFull:
            return "YapDB: the disk is full; the write was not applied"
        case let .io(errno, operation):
            return "YapDB: \(operation) failed with errno \(errno) (\(String(cString: strerror(errno))))"
        case .valueTooLarge:
            return "YapDB: the value is larger than options.maxValueSize, or the collection and key together are longer than an index page holds; nothing was stored"
        case let .serialization(collection, key, underlying):
            return "YapDB: cannot serialize the value for key \"\(key)\" in collection \"\(collection)\": \(underlying)"
        case .closed:
            return "YapDB: the database is closed"
        case .poisoned:
            return "YapDB: a previous commit failed; the database refuses writes until it is reopened"
        case let .invalidQuery(offset, reason):
            return "YapDB: invalid query at character \(offset): \(reason)"
        case .keyUnavailable:
            return "YapDB: the database is encrypted and no key is available (nothing was changed)"
        case .wrongKey:
            return "YapDB: the key does not open this database (nothing was changed)"
        }
    }

    /// The same text as ``description``.
    public var errorDescription: String? { description }
}
