import Foundation

// The `withOptions(_:…Block:)` factories of the handler: the same blocks as the `with…Block`
// forms, with the changes of an existing row that run the block again
// (`YapDatabaseBlockInvoke`; the plain forms use the defaults of their block type). A row whose
// block does not run keeps its indexed values.

extension YapDatabaseSecondaryIndexHandler {
    /// A handler reading (transaction, dictionary, collection, key), run again for the changes
    /// `options` names (`[]`: on insert only, the default of key blocks).
    public static func withOptions(
        _ options: YapDatabaseBlockInvoke,
        keyBlock block: @escaping YapDatabaseSecondaryIndexWithKeyBlock
    ) -> YapDatabaseSecondaryIndexHandler {
        YapDatabaseSecondaryIndexHandler(.key(block), options: options)
    }

    /// A handler reading (transaction, dictionary, collection, key, object), run again for the
    /// changes `options` names.
    public static func withOptions(
        _ options: YapDatabaseBlockInvoke,
        objectBlock block: @escaping YapDatabaseSecondaryIndexWithObjectBlock
    ) -> YapDatabaseSecondaryIndexHandler {
        YapDatabaseSecondaryIndexHandler(.object(block), options: options)
    }

    /// A handler reading (transaction, dictionary, collection, key, metadata), run again for
    /// the changes `options` names.
    public static func withOptions(
        _ options: YapDatabaseBlockInvoke,
        metadataBlock block: @escaping YapDatabaseSecondaryIndexWithMetadataBlock
    ) -> YapDatabaseSecondaryIndexHandler {
        YapDatabaseSecondaryIndexHandler(.metadata(block), options: options)
    }

    /// A handler reading (transaction, dictionary, collection, key, object, metadata), run
    /// again for the changes `options` names.
    public static func withOptions(
        _ options: YapDatabaseBlockInvoke,
        rowBlock block: @escaping YapDatabaseSecondaryIndexWithRowBlock
    ) -> YapDatabaseSecondaryIndexHandler {
        YapDatabaseSecondaryIndexHandler(.row(block), options: options)
    }
}
