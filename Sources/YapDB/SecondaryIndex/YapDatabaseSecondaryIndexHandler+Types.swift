import Foundation

// The block types of YapDatabaseSecondaryIndexHandler.h, under the names Swift gives them, so a
// handler's block can be declared ahead of the factory that takes it. Each name is exactly the
// parameter type of its factory (`withObjectBlock`, `withOptions(_:objectBlock:)`, …). The
// block fills the dictionary with the row's column values; it runs inside read-write
// transactions, on whichever thread runs them, hence `@Sendable`.

/// One of the handler block types below (YapDatabase declares the stored block as `id`).
public typealias YapDatabaseSecondaryIndexBlock = Any

/// A handler block over (transaction, dictionary, collection, key).
public typealias YapDatabaseSecondaryIndexWithKeyBlock =
    @Sendable (YapDatabaseReadTransaction, NSMutableDictionary, String, String) -> Void
/// A handler block over (transaction, dictionary, collection, key, object).
public typealias YapDatabaseSecondaryIndexWithObjectBlock =
    @Sendable (YapDatabaseReadTransaction, NSMutableDictionary, String, String, Any) -> Void
/// A handler block over (transaction, dictionary, collection, key, metadata); the metadata is
/// nil when the row has none.
public typealias YapDatabaseSecondaryIndexWithMetadataBlock =
    @Sendable (YapDatabaseReadTransaction, NSMutableDictionary, String, String, Any?) -> Void
/// A handler block over (transaction, dictionary, collection, key, object, metadata).
public typealias YapDatabaseSecondaryIndexWithRowBlock =
    @Sendable (YapDatabaseReadTransaction, NSMutableDictionary, String, String, Any, Any?) -> Void
