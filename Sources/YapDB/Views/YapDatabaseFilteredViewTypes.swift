import Foundation

/// Which rows of its parent view a filtered view keeps: a block that returns true to keep the
/// row. Build one with `withKeyBlock`, `withObjectBlock`, `withMetadataBlock` or `withRowBlock`;
/// the block receives the transaction, the row's group in the parent view, its collection and
/// key, and what the form names (object, metadata, or both). Only what the form names is read,
/// so a key block never deserializes the row. The `withOptions(_:…)` forms say which later
/// changes of a row run the filter again (`YapDatabaseBlockInvoke`); it also runs again when
/// the row enters its parent view or changes group there (the group is one of its inputs).
///
/// Threading: immutable; the block runs inside read-write transactions, on their thread.
public final class YapDatabaseViewFiltering: Sendable {
    typealias Block = BlockForm<
        YapDatabaseViewFilteringWithKeyBlock,
        YapDatabaseViewFilteringWithObjectBlock,
        YapDatabaseViewFilteringWithMetadataBlock,
        YapDatabaseViewFilteringWithRowBlock
    >
    let block: Block

    /// What the block reads of a row.
    public let blockType: YapDatabaseBlockType

    /// Which changes of an existing row run the block again.
    public let blockInvokeOptions: YapDatabaseBlockInvoke

    /// A filter running `block`, again for the changes `options` names (nil: the defaults of
    /// the block's type).
    init(_ block: Block, options: YapDatabaseBlockInvoke? = nil) {
        self.block = block
        blockType = block.type
        blockInvokeOptions = options ?? .defaults(for: block.type)
    }

    /// Filters by (transaction, group, collection, key).
    /// - Parameter block: returns true to keep the row.
    public static func withKeyBlock(
        _ block: @escaping YapDatabaseViewFilteringWithKeyBlock
    ) -> YapDatabaseViewFiltering {
        YapDatabaseViewFiltering(.key(block))
    }

    /// Filters by (transaction, group, collection, key, object).
    /// - Parameter block: returns true to keep the row.
    public static func withObjectBlock(
        _ block: @escaping YapDatabaseViewFilteringWithObjectBlock
    ) -> YapDatabaseViewFiltering {
        YapDatabaseViewFiltering(.object(block))
    }

    /// Filters by (transaction, group, collection, key, metadata); the metadata is nil when the
    /// row has none.
    /// - Parameter block: returns true to keep the row.
    public static func withMetadataBlock(
        _ block: @escaping YapDatabaseViewFilteringWithMetadataBlock
    ) -> YapDatabaseViewFiltering {
        YapDatabaseViewFiltering(.metadata(block))
    }

    /// Filters by (transaction, group, collection, key, object, metadata).
    /// - Parameter block: returns true to keep the row.
    public static func withRowBlock(
        _ block: @escaping YapDatabaseViewFilteringWithRowBlock
    ) -> YapDatabaseViewFiltering {
        YapDatabaseViewFiltering(.row(block))
    }

    /// Whether the row `collection`/`key` in `group` passes, reading only what the block needs.
    /// A row whose object cannot be read does not pass an object or row block.
    func passes(_ transaction: YapDatabaseReadTransaction, group: String, collection: String, key: String) -> Bool {
        switch block {
        case .key(let f):
            return f(transaction, group, collection, key)
        case .object(let f):
            guard let object = transaction.object(forKey: key, inCollection: collection) else { return false }
            return f(transaction, group, collection, key, object)
        case .metadata(let f):
            return f(transaction, group, collection, key, transaction.metadata(forKey: key, inCollection: collection))
        case .row(let f):
            guard let object = transaction.object(forKey: key, inCollection: collection) else { return false }
            return f(transaction, group, collection, key, object, transaction.metadata(forKey: key, inCollection: collection))
        }
    }
}
