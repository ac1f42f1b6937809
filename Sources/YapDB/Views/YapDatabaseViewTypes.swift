import Foundation

// The block types of YapDatabaseViewTypes.h, under the names Swift gives them, so a view's
// blocks can be declared ahead of the factory that takes them:
//
//     let grouping: YapDatabaseViewGroupingWithObjectBlock = { _, _, _, object in … }
//     let view = YapDatabaseAutoView(grouping: .withObjectBlock(grouping), sorting: …)
//
// Each name is exactly the parameter type of its factory (`withKeyBlock`, `withOptions(_:keyBlock:)`,
// …). The blocks are `@Sendable`: they run inside transactions, on whichever thread runs them.

/// One of the grouping block types below (YapDatabase declares the stored block as `id`).
public typealias YapDatabaseViewGroupingBlock = Any

/// Grouping by (transaction, collection, key): the row's group, or nil to leave it out.
public typealias YapDatabaseViewGroupingWithKeyBlock =
    @Sendable (YapDatabaseReadTransaction, String, String) -> String?
/// Grouping by (transaction, collection, key, object).
public typealias YapDatabaseViewGroupingWithObjectBlock =
    @Sendable (YapDatabaseReadTransaction, String, String, Any) -> String?
/// Grouping by (transaction, collection, key, metadata); the metadata is nil when the row has none.
public typealias YapDatabaseViewGroupingWithMetadataBlock =
    @Sendable (YapDatabaseReadTransaction, String, String, Any?) -> String?
/// Grouping by (transaction, collection, key, object, metadata).
public typealias YapDatabaseViewGroupingWithRowBlock =
    @Sendable (YapDatabaseReadTransaction, String, String, Any, Any?) -> String?

/// One of the sorting block types below.
public typealias YapDatabaseViewSortingBlock = Any

/// Sorting by (transaction, group, collection1, key1, collection2, key2).
public typealias YapDatabaseViewSortingWithKeyBlock =
    @Sendable (YapDatabaseReadTransaction, String, String, String, String, String) -> ComparisonResult
/// Sorting by (transaction, group, collection1, key1, object1, collection2, key2, object2).
public typealias YapDatabaseViewSortingWithObjectBlock =
    @Sendable (YapDatabaseReadTransaction, String, String, String, Any, String, String, Any) -> ComparisonResult
/// Sorting by (transaction, group, collection1, key1, metadata1, collection2, key2, metadata2).
public typealias YapDatabaseViewSortingWithMetadataBlock =
    @Sendable (YapDatabaseReadTransaction, String, String, String, Any?, String, String, Any?) -> ComparisonResult
/// Sorting by (transaction, group, collection1, key1, object1, metadata1, collection2, key2,
/// object2, metadata2).
public typealias YapDatabaseViewSortingWithRowBlock =
    @Sendable (YapDatabaseReadTransaction, String, String, String, Any, Any?, String, String, Any, Any?) -> ComparisonResult

/// One of the find block types below.
public typealias YapDatabaseViewFindBlock = Any

/// A find block over (collection, key): `.orderedAscending` when the row sorts before the
/// range searched for, `.orderedSame` inside it, `.orderedDescending` after it.
public typealias YapDatabaseViewFindWithKeyBlock = @Sendable (String, String) -> ComparisonResult
/// A find block over (collection, key, object).
public typealias YapDatabaseViewFindWithObjectBlock = @Sendable (String, String, Any) -> ComparisonResult
/// A find block over (collection, key, metadata).
public typealias YapDatabaseViewFindWithMetadataBlock = @Sendable (String, String, Any?) -> ComparisonResult
/// A find block over (collection, key, object, metadata).
public typealias YapDatabaseViewFindWithRowBlock = @Sendable (String, String, Any, Any?) -> ComparisonResult

// The block types of YapDatabaseFilteredViewTypes.h.

/// One of the filtering block types below.
public typealias YapDatabaseViewFilteringBlock = Any

/// Filtering by (transaction, group, collection, key): true keeps the row.
public typealias YapDatabaseViewFilteringWithKeyBlock =
    @Sendable (YapDatabaseReadTransaction, String, String, String) -> Bool
/// Filtering by (transaction, group, collection, key, object).
public typealias YapDatabaseViewFilteringWithObjectBlock =
    @Sendable (YapDatabaseReadTransaction, String, String, String, Any) -> Bool
/// Filtering by (transaction, group, collection, key, metadata).
public typealias YapDatabaseViewFilteringWithMetadataBlock =
    @Sendable (YapDatabaseReadTransaction, String, String, String, Any?) -> Bool
/// Filtering by (transaction, group, collection, key, object, metadata).
public typealias YapDatabaseViewFilteringWithRowBlock =
    @Sendable (YapDatabaseReadTransaction, String, String, String, Any, Any?) -> Bool

// YapWhitelistBlacklist.h.

/// A filter of `YapWhitelistBlacklist(filterBlock:)`: true allows the item (a collection name,
/// for the extensions that take one).
public typealias YapWhitelistBlacklistFilterBlock = @Sendable (Any) -> Bool
