import Foundation

// The `withOptions(_:…Block:)` factories: the same blocks as the `with…Block` forms, with the
// changes of an existing row that run the block again (`YapDatabaseBlockInvoke`; the plain
// forms use the defaults of their block type).

extension YapDatabaseViewGrouping {
    /// Groups by (transaction, collection, key); the block runs again for the changes
    /// `options` names (`[]`: on insert only, the default of key blocks).
    public static func withOptions(
        _ options: YapDatabaseBlockInvoke,
        keyBlock block: @escaping YapDatabaseViewGroupingWithKeyBlock
    ) -> YapDatabaseViewGrouping {
        YapDatabaseViewGrouping(.key(block), options: options)
    }

    /// Groups by (transaction, collection, key, object); the block runs again for the changes
    /// `options` names.
    public static func withOptions(
        _ options: YapDatabaseBlockInvoke,
        objectBlock block: @escaping YapDatabaseViewGroupingWithObjectBlock
    ) -> YapDatabaseViewGrouping {
        YapDatabaseViewGrouping(.object(block), options: options)
    }

    /// Groups by (transaction, collection, key, metadata); the block runs again for the changes
    /// `options` names.
    public static func withOptions(
        _ options: YapDatabaseBlockInvoke,
        metadataBlock block: @escaping YapDatabaseViewGroupingWithMetadataBlock
    ) -> YapDatabaseViewGrouping {
        YapDatabaseViewGrouping(.metadata(block), options: options)
    }

    /// Groups by (transaction, collection, key, object, metadata); the block runs again for the
    /// changes `options` names.
    public static func withOptions(
        _ options: YapDatabaseBlockInvoke,
        rowBlock block: @escaping YapDatabaseViewGroupingWithRowBlock
    ) -> YapDatabaseViewGrouping {
        YapDatabaseViewGrouping(.row(block), options: options)
    }
}

extension YapDatabaseViewSorting {
    /// Sorts by (transaction, group, collection1, key1, collection2, key2); a changed row is
    /// re-sorted for the changes `options` names (`[]`: never, the default of key blocks).
    public static func withOptions(
        _ options: YapDatabaseBlockInvoke,
        keyBlock block: @escaping YapDatabaseViewSortingWithKeyBlock
    ) -> YapDatabaseViewSorting {
        YapDatabaseViewSorting(.key(block), options: options)
    }

    /// Sorts by (transaction, group, collection1, key1, object1, collection2, key2, object2); a
    /// changed row is re-sorted for the changes `options` names.
    public static func withOptions(
        _ options: YapDatabaseBlockInvoke,
        objectBlock block: @escaping YapDatabaseViewSortingWithObjectBlock
    ) -> YapDatabaseViewSorting {
        YapDatabaseViewSorting(.object(block), options: options)
    }

    /// Sorts by (transaction, group, collection1, key1, metadata1, collection2, key2,
    /// metadata2); a changed row is re-sorted for the changes `options` names.
    public static func withOptions(
        _ options: YapDatabaseBlockInvoke,
        metadataBlock block: @escaping YapDatabaseViewSortingWithMetadataBlock
    ) -> YapDatabaseViewSorting {
        YapDatabaseViewSorting(.metadata(block), options: options)
    }

    /// Sorts by whole rows (collection, key, object, metadata) of both; a changed row is
    /// re-sorted for the changes `options` names.
    public static func withOptions(
        _ options: YapDatabaseBlockInvoke,
        rowBlock block: @escaping YapDatabaseViewSortingWithRowBlock
    ) -> YapDatabaseViewSorting {
        YapDatabaseViewSorting(.row(block), options: options)
    }
}

extension YapDatabaseViewFiltering {
    /// Filters by (transaction, group, collection, key); the filter runs again for the changes
    /// `options` names (`[]`: on insert only, the default of key blocks), and when the row
    /// enters its parent view or changes group there.
    /// - Parameters:
    ///   - options: which changes of a row run the filter again (`YapDatabaseBlockInvoke`).
    ///   - block: returns true to keep the row.
    public static func withOptions(
        _ options: YapDatabaseBlockInvoke,
        keyBlock block: @escaping YapDatabaseViewFilteringWithKeyBlock
    ) -> YapDatabaseViewFiltering {
        YapDatabaseViewFiltering(.key(block), options: options)
    }

    /// Filters by (transaction, group, collection, key, object); the filter runs again for the
    /// changes `options` names, and when the row enters its parent view or changes group there.
    /// - Parameters:
    ///   - options: which changes of a row run the filter again (`YapDatabaseBlockInvoke`).
    ///   - block: returns true to keep the row.
    public static func withOptions(
        _ options: YapDatabaseBlockInvoke,
        objectBlock block: @escaping YapDatabaseViewFilteringWithObjectBlock
    ) -> YapDatabaseViewFiltering {
        YapDatabaseViewFiltering(.object(block), options: options)
    }

    /// Filters by (transaction, group, collection, key, metadata); the filter runs again for
    /// the changes `options` names, and when the row enters its parent view or changes group
    /// there.
    /// - Parameters:
    ///   - options: which changes of a row run the filter again (`YapDatabaseBlockInvoke`).
    ///   - block: returns true to keep the row.
    public static func withOptions(
        _ options: YapDatabaseBlockInvoke,
        metadataBlock block: @escaping YapDatabaseViewFilteringWithMetadataBlock
    ) -> YapDatabaseViewFiltering {
        YapDatabaseViewFiltering(.metadata(block), options: options)
    }

    /// Filters by (transaction, group, collection, key, object, metadata); the filter runs
    /// again for the changes `options` names, and when the row enters its parent view or
    /// changes group there.
    /// - Parameters:
    ///   - options: which changes of a row run the filter again (`YapDatabaseBlockInvoke`).
    ///   - block: returns true to keep the row.
    public static func withOptions(
        _ options: YapDatabaseBlockInvoke,
        rowBlock block: @escaping YapDatabaseViewFilteringWithRowBlock
    ) -> YapDatabaseViewFiltering {
        YapDatabaseViewFiltering(.row(block), options: options)
    }
}
