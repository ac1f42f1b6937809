import Foundation

/// What kind of change a section or row change is.
public enum YapDatabaseViewChangeType: Int, Sendable {
    /// A row or section that appeared.
    case insert = 1
    /// A row or section that disappeared.
    case delete = 2
    /// A row that changed place (within its section or to another).
    case move = 3
    /// A row that changed in place (or was touched).
    case update = 4
}

/// A section that appeared or disappeared.
public final class YapDatabaseViewSectionChange: CustomStringConvertible {
    /// `.insert` or `.delete`.
    public let type: YapDatabaseViewChangeType
    /// The section index: before the change for a delete, after it for an insert.
    public let index: UInt
    /// The group shown in the section.
    public let group: String

    init(type: YapDatabaseViewChangeType, index: Int, group: String) {
        self.type = type
        self.index = UInt(index)
        self.group = group
    }

    /// "section insert 1 (group)".
    public var description: String { "section \(type) \(index) (\(group))" }
}

/// What changed of a row behind a row change (YapDatabase's `YapDatabaseViewChangesBitMask`,
/// with its raw values): its object, its metadata (`setObject` without metadata counts, as it
/// sets the metadata to nil), or both (a touched row).
public struct YapDatabaseViewChangesBitMask: OptionSet, Sendable, Hashable {
    /// The bit pattern.
    public let rawValue: UInt

    /// The mask with these bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// The object changed.
    public static let changedObject = YapDatabaseViewChangesBitMask(rawValue: 1 << 0)
    /// The metadata changed.
    public static let changedMetadata = YapDatabaseViewChangesBitMask(rawValue: 1 << 1)
    /// A neighbouring row the cell's drawing depends on changed (mappings'
    /// `setCellDrawingDependencyForNeighboringCell(withOffset:forGroup:)`).
    public static let changedDependency = YapDatabaseViewChangesBitMask(rawValue: 1 << 2)
    /// Snippets changed (full-text search; YapDB never sets it).
    public static let changedSnippets = YapDatabaseViewChangesBitMask(rawValue: 1 << 3)
}

/// A row that was inserted, deleted, moved or updated.
///
/// The original values say where the row was at the mappings' previous update, the final
/// values where it is now; both are given as (section, row) in `indexPath`/`newIndexPath` too,
/// except that an update's `newIndexPath` is nil (as `NSFetchedResultsController` does; its
/// `finalSection`/`finalIndex` are set).
/// A value that does not apply (the original place of an inserted row, the final place of a
/// deleted one) is `UInt(NSNotFound)` for indexes and sections and "" for groups.
public final class YapDatabaseViewRowChange: CustomStringConvertible {
    /// `.insert`, `.delete`, `.move` or `.update`.
    public let type: YapDatabaseViewChangeType
    /// What changed of the row in the database (empty for a row that only moved because others
    /// did).
    public let changes: YapDatabaseViewChangesBitMask
    /// The row's (collection, key).
    public let collectionKey: YapCollectionKey
    /// Where the row was (delete, move, update), as (section, row) before the change.
    public let indexPath: IndexPath?
    /// Where the row is (insert, move), as (section, row) after the change; nil for a delete
    /// and for an update.
    public let newIndexPath: IndexPath?
    /// Where the row is after the change (insert, move, update).
    let finalPlace: IndexPath?
    /// The row's group before the change ("" for an insert).
    public let originalGroup: String
    /// The row's group after the change ("" for a delete).
    public let finalGroup: String

    init(changes: YapDatabaseViewChangesBitMask, type: YapDatabaseViewChangeType, collectionKey: YapCollectionKey,
         from: (group: String, section: Int, row: Int)?, to: (group: String, section: Int, row: Int)?) {
        self.type = type
        self.changes = changes
        self.collectionKey = collectionKey
        self.indexPath = from.map { IndexPath(indexes: [$0.section, $0.row]) }
        self.finalPlace = to.map { IndexPath(indexes: [$0.section, $0.row]) }
        self.newIndexPath = type == .update ? nil : finalPlace
        self.originalGroup = from?.group ?? ""
        self.finalGroup = to?.group ?? ""
    }

    /// The section the row was in, or `UInt(NSNotFound)` for an insert.
    public var originalSection: UInt { indexPath.map { UInt($0[0]) } ?? UInt(NSNotFound) }
    /// The row's row in its original section, or `UInt(NSNotFound)` for an insert.
    public var originalIndex: UInt { indexPath.map { UInt($0[1]) } ?? UInt(NSNotFound) }
    /// The section the row is in, or `UInt(NSNotFound)` for a delete.
    public var finalSection: UInt { finalPlace.map { UInt($0[0]) } ?? UInt(NSNotFound) }
    /// The row's row in its final section, or `UInt(NSNotFound)` for a delete.
    public var finalIndex: UInt { finalPlace.map { UInt($0[1]) } ?? UInt(NSNotFound) }

    /// "row move collection/key [0, 1] → [0, 3]".
    public var description: String {
        "row \(type) \(collectionKey) \(indexPath.map { "\($0)" } ?? "-") → \(finalPlace.map { "\($0)" } ?? "-")"
    }
}
