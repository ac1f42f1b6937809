import Foundation

/// How a view puts rows into groups: a block returning the row's group, or nil to leave the
/// row out of the view. Build one with `withKeyBlock`, `withObjectBlock`, `withMetadataBlock`
/// or `withRowBlock` (the block then receives what it names), or with the `withOptions(_:…)`
/// forms to say which later changes of a row run the block again (`YapDatabaseBlockInvoke`).
///
/// Threading: immutable; the block runs inside read-write transactions, on their thread.
public final class YapDatabaseViewGrouping: Sendable {
    typealias Block = BlockForm<
        YapDatabaseViewGroupingWithKeyBlock,
        YapDatabaseViewGroupingWithObjectBlock,
        YapDatabaseViewGroupingWithMetadataBlock,
        YapDatabaseViewGroupingWithRowBlock
    >
    let block: Block

    /// What the block reads of a row.
    public let blockType: YapDatabaseBlockType

    /// Which changes of an existing row run the block again.
    public let blockInvokeOptions: YapDatabaseBlockInvoke

    /// A grouping running `block`, again for the changes `options` names (nil: the defaults of
    /// the block's type).
    init(_ block: Block, options: YapDatabaseBlockInvoke? = nil) {
        self.block = block
        blockType = block.type
        blockInvokeOptions = options ?? .defaults(for: block.type)
    }

    /// Groups by (transaction, collection, key).
    public static func withKeyBlock(_ block: @escaping YapDatabaseViewGroupingWithKeyBlock) -> YapDatabaseViewGrouping {
        YapDatabaseViewGrouping(.key(block))
    }

    /// Groups by (transaction, collection, key, object).
    public static func withObjectBlock(_ block: @escaping YapDatabaseViewGroupingWithObjectBlock) -> YapDatabaseViewGrouping {
        YapDatabaseViewGrouping(.object(block))
    }

    /// Groups by (transaction, collection, key, metadata).
    public static func withMetadataBlock(_ block: @escaping YapDatabaseViewGroupingWithMetadataBlock) -> YapDatabaseViewGrouping {
        YapDatabaseViewGrouping(.metadata(block))
    }

    /// Groups by (transaction, collection, key, object, metadata).
    public static func withRowBlock(_ block: @escaping YapDatabaseViewGroupingWithRowBlock) -> YapDatabaseViewGrouping {
        YapDatabaseViewGrouping(.row(block))
    }

    var needsObject: Bool { blockType.contains(.objectFlag) }

    var needsMetadata: Bool { blockType.contains(.metadataFlag) }

    func group(_ tx: YapDatabaseReadTransaction, _ row: ViewRow) -> String? {
        switch block {
        case .key(let b): b(tx, row.collection, row.key)
        case .object(let b): row.object.flatMap { b(tx, row.collection, row.key, $0) }
        case .metadata(let b): b(tx, row.collection, row.key, row.metadata)
        case .row(let b): row.object.flatMap { b(tx, row.collection, row.key, $0, row.metadata) }
        }
    }
}

/// How a view orders the rows of a group: a block comparing two rows (`.orderedAscending`
/// puts the first before the second). Build one with the `with…Block` factories, or with the
/// `withOptions(_:…)` forms to say which later changes of a row re-sort it
/// (`YapDatabaseBlockInvoke`).
///
/// Threading: immutable; the block runs inside transactions, on their thread.
public final class YapDatabaseViewSorting: Sendable {
    typealias Block = BlockForm<
        YapDatabaseViewSortingWithKeyBlock,
        YapDatabaseViewSortingWithObjectBlock,
        YapDatabaseViewSortingWithMetadataBlock,
        YapDatabaseViewSortingWithRowBlock
    >
    let block: Block

    /// What the block reads of each row.
    public let blockType: YapDatabaseBlockType

    /// Which changes of an existing row re-sort it.
    public let blockInvokeOptions: YapDatabaseBlockInvoke

    /// A sorting running `block`, again for the changes `options` names (nil: the defaults of
    /// the block's type).
    init(_ block: Block, options: YapDatabaseBlockInvoke? = nil) {
        self.block = block
        blockType = block.type
        blockInvokeOptions = options ?? .defaults(for: block.type)
    }

    /// Sorts by (transaction, group, collection1, key1, collection2, key2).
    public static func withKeyBlock(_ block: @escaping YapDatabaseViewSortingWithKeyBlock) -> YapDatabaseViewSorting {
        YapDatabaseViewSorting(.key(block))
    }

    /// Sorts by (transaction, group, collection1, key1, object1, collection2, key2, object2).
    public static func withObjectBlock(_ block: @escaping YapDatabaseViewSortingWithObjectBlock) -> YapDatabaseViewSorting {
        YapDatabaseViewSorting(.object(block))
    }

    /// Sorts by (transaction, group, collection1, key1, metadata1, collection2, key2, metadata2).
    public static func withMetadataBlock(_ block: @escaping YapDatabaseViewSortingWithMetadataBlock) -> YapDatabaseViewSorting {
        YapDatabaseViewSorting(.metadata(block))
    }

    /// Sorts by whole rows (collection, key, object, metadata) of both.
    public static func withRowBlock(_ block: @escaping YapDatabaseViewSortingWithRowBlock) -> YapDatabaseViewSorting {
        YapDatabaseViewSorting(.row(block))
    }

    var needsObject: Bool { blockType.contains(.objectFlag) }

    var needsMetadata: Bool { blockType.contains(.metadataFlag) }

    func compare(_ tx: YapDatabaseReadTransaction, _ group: String, _ a: ViewRow, _ b: ViewRow) -> ComparisonResult {
        switch block {
        case .key(let f): f(tx, group, a.collection, a.key, b.collection, b.key)
        case .object(let f): f(tx, group, a.collection, a.key, a.object ?? NSNull(), b.collection, b.key, b.object ?? NSNull())
        case .metadata(let f): f(tx, group, a.collection, a.key, a.metadata, b.collection, b.key, b.metadata)
        case .row(let f): f(tx, group, a.collection, a.key, a.object ?? NSNull(), a.metadata, b.collection, b.key, b.object ?? NSNull(), b.metadata)
        }
    }
}

/// What `findRange(inGroup:using:)` searches for: a block saying whether a row is before
/// (`.orderedAscending`), inside (`.orderedSame`) or after (`.orderedDescending`) the range.
/// The rows that compare `.orderedSame` must be contiguous in the group's sort order.
public final class YapDatabaseViewFind: Sendable {
    typealias Block = BlockForm<
        YapDatabaseViewFindWithKeyBlock,
        YapDatabaseViewFindWithObjectBlock,
        YapDatabaseViewFindWithMetadataBlock,
        YapDatabaseViewFindWithRowBlock
    >
    let block: Block

    /// What the find block reads of each row.
    public var findBlockType: YapDatabaseBlockType { block.type }

    init(_ block: Block) { self.block = block }

    /// Searches by (collection, key).
    public static func withKeyBlock(_ block: @escaping YapDatabaseViewFindWithKeyBlock) -> YapDatabaseViewFind { .init(.key(block)) }
    /// Searches by (collection, key, object).
    public static func withObjectBlock(_ block: @escaping YapDatabaseViewFindWithObjectBlock) -> YapDatabaseViewFind { .init(.object(block)) }
    /// Searches by (collection, key, metadata).
    public static func withMetadataBlock(_ block: @escaping YapDatabaseViewFindWithMetadataBlock) -> YapDatabaseViewFind { .init(.metadata(block)) }
    /// Searches by (collection, key, object, metadata).
    public static func withRowBlock(_ block: @escaping YapDatabaseViewFindWithRowBlock) -> YapDatabaseViewFind { .init(.row(block)) }

    func compare(_ row: ViewRow) -> ComparisonResult {
        switch block {
        case .key(let f): f(row.collection, row.key)
        case .object(let f): f(row.collection, row.key, row.object ?? NSNull())
        case .metadata(let f): f(row.collection, row.key, row.metadata)
        case .row(let f): f(row.collection, row.key, row.object ?? NSNull(), row.metadata)
        }
    }
}

/// Which collections an extension looks at: everything in a whitelist, or everything but a
/// blacklist.
public final class YapWhitelistBlacklist: Sendable {
    let whitelist: Set<String>?
    let blacklist: Set<String>?
    let filter: YapWhitelistBlacklistFilterBlock?

    /// Allows only `whitelist`.
    public init(whitelist: Set<String>) {
        self.whitelist = whitelist
        self.blacklist = nil
        self.filter = nil
    }

    /// Allows everything but `blacklist`.
    public init(blacklist: Set<String>) {
        self.whitelist = nil
        self.blacklist = blacklist
        self.filter = nil
    }

    /// Allows what `block` accepts (it receives the item, a collection name for views); nil
    /// allows everything. The block may run on any thread.
    public init(filterBlock block: YapWhitelistBlacklistFilterBlock?) {
        self.whitelist = nil
        self.blacklist = nil
        self.filter = block ?? { _ in true }
    }

    /// Whether `item` is allowed.
    public func isAllowed(_ item: String) -> Bool {
        if let filter { return filter(item) }
        if let whitelist { return whitelist.contains(item) }
        return !(blacklist?.contains(item) ?? false)
    }
}

/// Options of a view (YapDatabase's `YapDatabaseViewOptions`, an `NSObject` that copies).
/// `YapDatabaseSearchResultsViewOptions` subclasses it, as in YapDatabase.
///
/// Threading: a plain mutable object; a view copies what it needs when it is made.
public class YapDatabaseViewOptions: NSObject, NSCopying {
    /// Whether checkpoints store the view (true), so that registering it again after a reopen
    /// with the same `versionTag` reuses the stored view (a new tag rebuilds it). A view with
    /// `false` lives in memory only and is built anew at every registration.
    public var isPersistent = true
    /// The collections the view looks at (nil: all).
    public var allowedCollections: YapWhitelistBlacklist?
    /// Register without populating the view from existing rows.
    public var skipInitialViewPopulation = false

    /// The defaults: persistent, all collections, populated at registration.
    public required override init() { super.init() }

    /// A copy of the options (of the same class).
    public func copy(with zone: NSZone? = nil) -> Any {
        let copy = type(of: self).init()
        copy.isPersistent = isPersistent
        copy.allowedCollections = allowedCollections
        copy.skipInitialViewPopulation = skipInitialViewPopulation
        return copy
    }
}

/// A row as the view's blocks see it: loaded lazily by the view.
struct ViewRow {
    var collection: String
    var key: String
    var object: Any?
    var metadata: Any?
}

/// Converts the blocks' `ComparisonResult` to the tree's.
extension ComparisonResult {
    var flipped: ComparisonResult {
        switch self {
        case .orderedAscending: .orderedDescending
        case .orderedDescending: .orderedAscending
        case .orderedSame: .orderedSame
        }
    }
}
