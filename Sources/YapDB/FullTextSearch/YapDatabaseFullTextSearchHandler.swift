import Foundation

/// A full-text handler block that reads the row's collection and key:
/// `(transaction, dictionary, collection, key)`. Set `dictionary[columnName] = text`.
public typealias YapDatabaseFullTextSearchWithKeyBlock =
    @Sendable (YapDatabaseReadTransaction, NSMutableDictionary, String, String) -> Void
/// A full-text handler block that also reads the row's object.
public typealias YapDatabaseFullTextSearchWithObjectBlock =
    @Sendable (YapDatabaseReadTransaction, NSMutableDictionary, String, String, Any) -> Void
/// A full-text handler block that also reads the row's metadata (nil when the row has none).
public typealias YapDatabaseFullTextSearchWithMetadataBlock =
    @Sendable (YapDatabaseReadTransaction, NSMutableDictionary, String, String, Any?) -> Void
/// A full-text handler block that reads the row's object and metadata.
public typealias YapDatabaseFullTextSearchWithRowBlock =
    @Sendable (YapDatabaseReadTransaction, NSMutableDictionary, String, String, Any, Any?) -> Void

/// How a full-text index reads a row: a block that fills a dictionary with the row's text per
/// column (`dict["content"] = "hello world"`). A row whose block leaves the dictionary empty
/// is not indexed (and an update that leaves it empty takes the row out of the index); a
/// column the block leaves out holds no text; a key that is not a column is ignored (logged);
/// a value that is not a `String` (or `NSString`) is ignored (logged).
///
/// The block runs for every inserted row and again for the changes its `blockInvokeOptions`
/// name — by default when what it reads is written or touched; the `withOptions(_:…)` forms
/// choose. It also runs for the rows a query shows snippets of (the text is not stored twice).
///
/// Threading: immutable; the block runs inside transactions, on the thread running them.
public final class YapDatabaseFullTextSearchHandler: Sendable {
    typealias Block = BlockForm<
        YapDatabaseFullTextSearchWithKeyBlock,
        YapDatabaseFullTextSearchWithObjectBlock,
        YapDatabaseFullTextSearchWithMetadataBlock,
        YapDatabaseFullTextSearchWithRowBlock
    >
    let form: Block

    /// What the block reads of a row.
    public let blockType: YapDatabaseBlockType

    /// Which changes of an existing row run the block again (its index entry is kept otherwise).
    public let blockInvokeOptions: YapDatabaseBlockInvoke

    init(_ form: Block, options: YapDatabaseBlockInvoke? = nil) {
        self.form = form
        blockType = form.type
        blockInvokeOptions = options ?? .defaults(for: form.type)
    }

    /// The block, as one of the four `YapDatabaseFullTextSearchWith…Block` types.
    public var block: Any {
        switch form {
        case .key(let b): b
        case .object(let b): b
        case .metadata(let b): b
        case .row(let b): b
        }
    }

    /// A handler reading (transaction, dictionary, collection, key); it runs on insert only.
    public static func withKeyBlock(_ block: @escaping YapDatabaseFullTextSearchWithKeyBlock) -> YapDatabaseFullTextSearchHandler {
        YapDatabaseFullTextSearchHandler(.key(block))
    }

    /// A handler reading (transaction, dictionary, collection, key, object); it runs again when
    /// the object is written or touched.
    public static func withObjectBlock(_ block: @escaping YapDatabaseFullTextSearchWithObjectBlock) -> YapDatabaseFullTextSearchHandler {
        YapDatabaseFullTextSearchHandler(.object(block))
    }

    /// A handler reading (transaction, dictionary, collection, key, metadata); it runs again
    /// when the metadata is written or touched.
    public static func withMetadataBlock(_ block: @escaping YapDatabaseFullTextSearchWithMetadataBlock) -> YapDatabaseFullTextSearchHandler {
        YapDatabaseFullTextSearchHandler(.metadata(block))
    }

    /// A handler reading (transaction, dictionary, collection, key, object, metadata); it runs
    /// again for any change or touch.
    public static func withRowBlock(_ block: @escaping YapDatabaseFullTextSearchWithRowBlock) -> YapDatabaseFullTextSearchHandler {
        YapDatabaseFullTextSearchHandler(.row(block))
    }

    /// A key handler run again for the changes `options` names (`[]`: on insert only).
    public static func withOptions(_ options: YapDatabaseBlockInvoke,
                                   keyBlock block: @escaping YapDatabaseFullTextSearchWithKeyBlock) -> YapDatabaseFullTextSearchHandler {
        YapDatabaseFullTextSearchHandler(.key(block), options: options)
    }

    /// An object handler run again for the changes `options` names.
    public static func withOptions(_ options: YapDatabaseBlockInvoke,
                                   objectBlock block: @escaping YapDatabaseFullTextSearchWithObjectBlock) -> YapDatabaseFullTextSearchHandler {
        YapDatabaseFullTextSearchHandler(.object(block), options: options)
    }

    /// A metadata handler run again for the changes `options` names.
    public static func withOptions(_ options: YapDatabaseBlockInvoke,
                                   metadataBlock block: @escaping YapDatabaseFullTextSearchWithMetadataBlock) -> YapDatabaseFullTextSearchHandler {
        YapDatabaseFullTextSearchHandler(.metadata(block), options: options)
    }

    /// A row handler run again for the changes `options` names.
    public static func withOptions(_ options: YapDatabaseBlockInvoke,
                                   rowBlock block: @escaping YapDatabaseFullTextSearchWithRowBlock) -> YapDatabaseFullTextSearchHandler {
        YapDatabaseFullTextSearchHandler(.row(block), options: options)
    }

    /// Runs the block on a row and returns its text per column (`columns` order; nil for a
    /// column without text), or nil when the block set nothing (the row is not indexed).
    func texts(_ transaction: YapDatabaseReadTransaction, collection: String, key: String,
               columns: [String], indexName: String) -> [String?]? {
        let dict = SecondaryIndexHandlerDictionary()
        func object() -> Any? {
            if let written = (transaction as? YapDatabaseReadWriteTransaction)?.objectBeingWritten,
               written.pair.key == key, written.pair.collection == collection {
                return written.object
            }
            return transaction.object(forKey: key, inCollection: collection)
        }
        switch form {
        case .key(let b): b(transaction, dict, collection, key)
        case .object(let b):
            guard let object = object() else { return nil }
            b(transaction, dict, collection, key, object)
        case .metadata(let b): b(transaction, dict, collection, key, transaction.metadata(forKey: key, inCollection: collection))
        case .row(let b):
            guard let object = object() else { return nil }
            b(transaction, dict, collection, key, object, transaction.metadata(forKey: key, inCollection: collection))
        }
        let count = dict.count
        guard count > 0 else { return nil }
        var texts = [String?](repeating: nil, count: columns.count)
        var found = 0
        for (i, column) in columns.enumerated() {
            guard let raw = dict.value(named: column, hint: i) else { continue }
            found += 1
            if let text = raw as? String {
                texts[i] = text
            } else if let text = raw as? NSString {
                texts[i] = text as String
            } else {
                YapDatabaseLogging.log(.warning, "full-text search \(indexName): the handler set \(column) to a \(type(of: raw)), not text; ignored")
            }
        }
        if found < count {
            YapDatabaseLogging.log(.warning, "full-text search \(indexName): the handler set keys that are not columns; ignored")
        }
        return texts
    }
}
