import YapDBStorage
import YapDBIndex

/// What the engine throws: the one error type of every `package` entry the layer above calls
/// (`Engine.open`, `write`, `checkpoint`, `compact`, `verify`, `stats`, `close`, the reads of
/// `RowReader` and the writes of `WriteTransaction`). The lower layers' errors (the storage
/// layer's `StorageError` and `IndexFileError`, the index's `PageError`) are wrapped into it where
/// they cross into the engine's surface, so a caller decides on these cases and nothing else.
///
/// The cases fall into four groups, each telling the caller what it can do:
/// - **Damage** (`corrupted`, `missingFiles`, `notADatabase`, `unsupportedVersion`): bytes on
///   disk fail a check, or files are missing. Retrying gives the same answer; `verify()` says
///   more, and restoring the files is the remedy.
/// - **I/O** (`io`): a system call failed, with its `errno`, the operation and the path. A full
///   disk (`ENOSPC`) leaves the engine usable; a failed write or sync of a commit also poisons it.
/// - **Refusals** (`closed`, `poisoned`, `readOnly`, `locked`, `alreadyOpen`, `fileNotFound`):
///   the engine would not do the work in its present state; nothing was written.
/// - **Limits** (`tooLarge`): a value, name or entry over what the format allows; nothing was
///   written.
///
/// Threading: a value; safe to send anywhere.
package enum EngineError: Error, Equatable, Sendable, CustomStringConvertible {
    // MARK: Damage

    /// Bytes that claim to be the database's fail a check. `offset` is the position in the file
    /// the reason names first (a page id for an index page: "index page N: …").
    case corrupted(offset: Int64, reason: String)
    /// Files the database promises are missing (docs/format.md §2): their names, or a
    /// description such as a file shorter than promised. Not damage to bytes: open deletes nothing.
    case missingFiles([String])
    /// The file at `path` is not a YapDB file (wrong magic, or too short for a header).
    case notADatabase(path: String)
    /// The files were written by another format version (`found`) than this build reads.
    case unsupportedVersion(found: Int, supported: Int)

    // MARK: I/O

    /// The system call `operation` on `path` failed with `errno` ("short read" when a file
    /// ended before the bytes a read needed).
    case io(errno: Int32, operation: String, path: String)

    // MARK: Refusals

    /// The engine was closed.
    case closed
    /// An earlier commit failed to write or sync: writes are refused until the database is reopened.
    case poisoned
    /// The engine was opened read-only: writes, checkpoints and compactions are refused.
    case readOnly
    /// Another process (or another open in this one) holds the database's lock.
    case locked(path: String)
    /// This process already has the database open.
    case alreadyOpen(path: String)
    /// The main file does not exist and creating it was not allowed.
    case fileNotFound(path: String)
    /// The database is encrypted and no key was given (never damage: no file is changed).
    case keyUnavailable
    /// The key given does not open the database (never damage: no file is changed).
    case wrongKey

    // MARK: Limits

    /// A value, name, row key, entry or payload over the format's limit (what, and the limit).
    case tooLarge(String)

    package var description: String { StorageError(self).description }
}

// MARK: Wrapping the lower layers' errors

extension EngineError {
    /// A storage-layer failure as the engine reports it (case for case).
    package init(_ error: StorageError) {
        switch error {
        case .notADatabase(let path): self = .notADatabase(path: path)
        case .unsupportedVersion(let found, let supported): self = .unsupportedVersion(found: found, supported: supported)
        case .corrupted(let offset, let reason): self = .corrupted(offset: offset, reason: reason)
        case .io(let failure): self = .io(errno: failure.errno, operation: failure.operation, path: failure.path)
        case .tooLarge(let what): self = .tooLarge(what)
        case .fileNotFound(let path): self = .fileNotFound(path: path)
        case .locked(let path): self = .locked(path: path)
        case .alreadyOpen(let path): self = .alreadyOpen(path: path)
        case .poisoned: self = .poisoned
        case .closed: self = .closed
        case .readOnly: self = .readOnly
        case .missingFiles(let names): self = .missingFiles(names)
        case .keyUnavailable: self = .keyUnavailable
        case .wrongKey: self = .wrongKey
        }
    }

    /// An index-file failure as the engine reports it (a file the root names that is gone is
    /// `missingFiles`, damage is `corrupted` with the file's name, a failed writer is `poisoned`).
    package init(_ error: IndexFileError) { self.init(error.storageError) }

    /// A page error of the key directory or an extension's tree as the engine reports it:
    /// damage is `corrupted` (offset: the page id, the reason naming it), an unreadable page is
    /// the failure behind it, and an entry too large for a page is `tooLarge`.
    package init(_ error: PageError) {
        switch error {
        case .corrupt(let page, let reason):
            self = .corrupted(offset: Int64(bitPattern: page), reason: "index page \(IndexPageID(rawValue: page)): \(reason)")
        case .unreadable(let page, let underlying):
            if let engine = underlying as? EngineError {
                self = engine   // a spill's write failed (`WriteTransaction.applyBuffer`)
            } else if let storage = underlying as? StorageError {
                self.init(storage)
            } else if let index = underlying as? IndexFileError {
                self.init(index)
            } else {
                self = .corrupted(offset: Int64(bitPattern: page), reason: "index page unreadable: \(underlying)")
            }
        case .entryTooLarge(let size, let limit):
            self = .tooLarge("index entry of \(size) bytes (limit \(limit))")
        }
    }
}

extension StorageError {
    /// The engine's error as the storage layer's, case for case: for the engine's internals
    /// (checkpoint, compaction), which run on storage errors and call code that throws the
    /// engine's (an extension writing its pages).
    init(_ error: EngineError) {
        switch error {
        case .notADatabase(let path): self = .notADatabase(path: path)
        case .unsupportedVersion(let found, let supported): self = .unsupportedVersion(found: found, supported: supported)
        case .corrupted(let offset, let reason): self = .corrupted(offset: offset, reason: reason)
        case .io(let errno, let operation, let path):
            self = .io(operation == IOFailure.shortRead(path: path).operation ? .shortRead(path: path)
                       : IOFailure(errno: errno, operation: operation, path: path))
        case .tooLarge(let what): self = .tooLarge(what)
        case .fileNotFound(let path): self = .fileNotFound(path: path)
        case .locked(let path): self = .locked(path: path)
        case .alreadyOpen(let path): self = .alreadyOpen(path: path)
        case .poisoned: self = .poisoned
        case .closed: self = .closed
        case .readOnly: self = .readOnly
        case .missingFiles(let names): self = .missingFiles(names)
        case .keyUnavailable: self = .keyUnavailable
        case .wrongKey: self = .wrongKey
        }
    }
}

/// Runs `body`, which works on the storage layer, reporting its failure as `EngineError`: the
/// wrapper at the engine's `package` entries.
@inline(__always)
func engineBoundary<T>(_ body: () throws(StorageError) -> T) throws(EngineError) -> T {
    do { return try body() } catch { throw EngineError(error) }
}

/// Runs `body`, a walk of a paged tree, reporting a page error as `EngineError`.
@inline(__always)
package func mappingPageErrors<T>(_ body: () throws(PageError) -> T) throws(EngineError) -> T {
    do { return try body() } catch { throw EngineError(error) }
}
