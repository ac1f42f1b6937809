// PageError: the typed errors of the paged trees — a page that is damaged, a page the source
// could not read, an entry too large for the page size.

/// A page id: the number of a page in the index files. `PageID.none` (0) means "no page".
package typealias PageID = UInt64

extension PageID {
    /// No page: the root of an empty tree that was never written, and the page id reported for
    /// in-memory (not yet written) nodes in errors.
    package static let none: PageID = 0
}

/// Why a paged tree operation failed.
///
/// Threading: a value; safe to send anywhere.
package enum PageError: Error, Sendable, CustomStringConvertible {
    /// The bytes of `page` are not a valid page of the expected tree (checksum, kind, level,
    /// counts, offsets or order). `page` is `PageID.none` when the broken node is in memory
    /// (a bug found by `validate()`). The caller can report the damage (`verify`) or treat the
    /// index as lost and rebuild it; retrying gives the same answer.
    case corrupt(page: PageID, reason: PageCorruption)
    /// The page source could not produce `page` (an I/O error, a file not found); `underlying`
    /// is the source's own error. Retrying may succeed if the cause was transient.
    case unreadable(page: PageID, underlying: any Error & Sendable)
    /// A key and value of `size` bytes (key + value) do not fit the tree's page size, whose
    /// largest entry is `limit` bytes. Nothing was changed; the caller rejects the input.
    case entryTooLarge(size: Int, limit: Int)

    package var description: String {
        switch self {
        case .corrupt(let page, let reason):
            return page == .none ? "in-memory node: \(reason)" : "page \(page): \(reason)"
        case .unreadable(let page, let underlying): return "page \(page) unreadable: \(underlying)"
        case .entryTooLarge(let size, let limit): return "entry of \(size) bytes exceeds the page limit of \(limit)"
        }
    }
}

/// What is wrong with a corrupt page (`PageError.corrupt`). Decisions are taken on these cases,
/// never on the description text.
package enum PageCorruption: Sendable, Hashable, CustomStringConvertible {
    /// The source handed out `size` bytes instead of one page.
    case wrongSize(Int)
    /// The stored CRC32C does not match the page's bytes.
    case checksumMismatch
    /// The page is missing from the source (an id beyond the files, or never written).
    case missing
    /// The kind byte is not a page kind of this tree (`found`).
    case badKind(found: UInt8)
    /// The page's level is not one less than its parent's (this also catches cycles: a page
    /// that points at itself or an ancestor), or is beyond `PageLayout.maximumLevel`.
    case badLevel(expected: Int, found: Int)
    /// The entry count does not fit the page, or is below the minimum for its kind.
    case badCount(Int)
    /// The subtree count recorded for the page (by its parent or its own header) disagrees.
    case subtreeCountMismatch(expected: Int, found: Int)
    /// Entry or separator `slot` starts or ends outside the page's bytes.
    case slotOutOfRange(slot: Int)
    /// Child `slot` of a branch is `PageID.none`.
    case nullChild(slot: Int)
    /// Keys are not strictly increasing at `slot` (within a page, or against a separator).
    case keysOutOfOrder(slot: Int)
    /// A positional walk went past the entries the counts promised.
    case positionOutOfRange
    /// A node holds fewer bytes or entries than the fill bound allows (`validate()` only).
    case underfilled
    /// A node holds more bytes or entries than one page (`validate()` only).
    case overfilled
    /// Leaves are not all at the same depth, or a tree's height disagrees with its pages.
    case unevenDepth
    /// A collection tree's value is not a well-formed `KeydirEntry` encoding.
    case badEntry
    /// A branch's first-row-id column disagrees with the child's first row id (row trees).
    case firstRowMismatch(slot: Int)
    /// A root claims more entries than every page of its source could hold as leaves: child
    /// pages shared by several parents (a crafted DAG), which would make a walk run for as
    /// long as the claimed count.
    case countBeyondCapacity(claimed: Int, capacity: Int)
    /// A keyed page's shared key or value prefix does not fit the page, or a branch claims a
    /// value prefix.
    case badPrefix(key: Int, value: Int)

    package var description: String {
        switch self {
        case .wrongSize(let size): return "wrong size \(size)"
        case .checksumMismatch: return "checksum mismatch"
        case .missing: return "missing"
        case .badKind(let found): return "bad kind byte \(found)"
        case .badLevel(let expected, let found): return "level \(found), expected \(expected)"
        case .badCount(let count): return "bad entry count \(count)"
        case .subtreeCountMismatch(let expected, let found): return "subtree count \(found), expected \(expected)"
        case .slotOutOfRange(let slot): return "slot \(slot) out of range"
        case .nullChild(let slot): return "child \(slot) is page 0"
        case .keysOutOfOrder(let slot): return "keys out of order at slot \(slot)"
        case .positionOutOfRange: return "position out of range of the counts"
        case .underfilled: return "underfilled"
        case .overfilled: return "overfilled"
        case .unevenDepth: return "leaves at different depths"
        case .badEntry: return "malformed index entry"
        case .firstRowMismatch(let slot): return "first row id of child \(slot) disagrees"
        case .countBeyondCapacity(let claimed, let capacity):
            return "claims \(claimed) entries, more than the source's pages can hold (\(capacity))"
        case .badPrefix(let key, let value): return "shared prefixes of \(key) (keys) and \(value) (values) bytes do not fit"
        }
    }
}
