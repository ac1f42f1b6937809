import Foundation

/// The type of a secondary index column, as SQLite's column affinity: a value the handler puts
/// into the column is converted the way SQLite converts a value stored into a column of that
/// type (text that looks like a number becomes a number in `.integer`, `.real` and `.numeric`
/// columns; a number becomes text in a `.text` column; `.blob` keeps every value as it is).
public enum YapDatabaseSecondaryIndexType: Int, Sendable, CaseIterable {
    /// INTEGER affinity: reals without a fractional part become integers.
    case integer
    /// REAL affinity: integers become reals.
    case real
    /// NUMERIC affinity: like `.integer` for whole numbers, otherwise real.
    case numeric
    /// TEXT affinity: numbers become text.
    case text
    /// BLOB (no) affinity: values are kept as they are.
    case blob
}

/// YapDatabase's name of a column type (`"integer"`, `"real"`, `"numeric"`, `"text"`, `"blob"`).
public func NSStringFromYapDatabaseSecondaryIndexType(_ type: YapDatabaseSecondaryIndexType) -> String {
    switch type {
    case .integer: "integer"
    case .real: "real"
    case .numeric: "numeric"
    case .text: "text"
    case .blob: "blob"
    }
}

/// One column of a secondary index: its name and type.
public final class YapDatabaseSecondaryIndexColumn: Sendable, CustomStringConvertible {
    /// The column's name, as queries spell it.
    public let name: String
    /// The column's type (affinity).
    public let type: YapDatabaseSecondaryIndexType

    init(name: String, type: YapDatabaseSecondaryIndexType) {
        self.name = name
        self.type = type
    }

    /// `name type`, as a column definition reads.
    public var description: String { "\(name) \(NSStringFromYapDatabaseSecondaryIndexType(type))" }
}

/// The columns of a secondary index, in order. Build it before creating the index; the index
/// keeps a copy.
///
/// Threading: not thread-safe while it is being built; the index copies it at creation.
public final class YapDatabaseSecondaryIndexSetup: Sequence {
    private(set) var columns: [YapDatabaseSecondaryIndexColumn] = []

    /// An empty setup.
    public init() {}

    /// An empty setup with room for `capacity` columns.
    public init(capacity: UInt) { columns.reserveCapacity(Int(capacity)) }

    /// Adds a column named `name` of type `type`.
    ///
    /// A name that is empty, reserved (`rowid`, `oid`, `_rowid_`), or already used is a
    /// programming error: it stops the program with a message naming it, as YapDatabase's
    /// exception does.
    public func addColumn(_ name: String, with type: YapDatabaseSecondaryIndexType) {
        precondition(!name.isEmpty, "YapDatabaseSecondaryIndexSetup: a column needs a name")
        precondition(!Self.reservedNames.contains(name.lowercased()),
                     "YapDatabaseSecondaryIndexSetup: the column name \(name) is reserved")
        precondition(!columns.contains { $0.name.lowercased() == name.lowercased() },
                     "YapDatabaseSecondaryIndexSetup: the column \(name) is already defined")
        columns.append(YapDatabaseSecondaryIndexColumn(name: name, type: type))
    }

    /// The number of columns.
    public func count() -> UInt { UInt(columns.count) }

    /// The column at `index`, or nil past the end.
    public func column(at index: UInt) -> YapDatabaseSecondaryIndexColumn? {
        index < UInt(columns.count) ? columns[Int(index)] : nil
    }

    /// The column names, in order.
    public func columnNames() -> [String] { columns.map(\.name) }

    /// Iterates the columns in order.
    public func makeIterator() -> IndexingIterator<[YapDatabaseSecondaryIndexColumn]> { columns.makeIterator() }

    /// Names SQLite gives every table; a column cannot take them.
    static let reservedNames: Set<String> = ["rowid", "oid", "_rowid_"]
}

/// Options of a secondary index.
public final class YapDatabaseSecondaryIndexOptions {
    /// The collections the index looks at (nil: all). Rows of other collections are never
    /// passed to the handler and never appear in query results.
    public var allowedCollections: YapWhitelistBlacklist?

    /// The defaults: every collection.
    public init() {}
}

/// How a secondary index reads a row: a block that fills a dictionary with the row's column
/// values (column name → `NSNumber`, `Int`, `Double`, `Bool`, `String`, `Data`, `Date` or
/// `NSNull`). A row whose block leaves the dictionary empty is not in the index; a column the
/// block leaves out is NULL. Build one with `withKeyBlock`, `withObjectBlock`,
/// `withMetadataBlock` or `withRowBlock`: the block receives what it names, and the index reads
/// no more than that. It runs for every inserted row, and again for the changes its
/// `blockInvokeOptions` name — by default when what it reads is written or touched (a
/// metadata-only change does not rerun an object block); the `withOptions(_:…)` forms choose.
///
/// Threading: the block runs inside read-write transactions, on the thread running them.
public final class YapDatabaseSecondaryIndexHandler: Sendable {
    typealias Block = BlockForm<
        YapDatabaseSecondaryIndexWithKeyBlock,
        YapDatabaseSecondaryIndexWithObjectBlock,
        YapDatabaseSecondaryIndexWithMetadataBlock,
        YapDatabaseSecondaryIndexWithRowBlock
    >
    let block: Block

    /// What the block reads of a row.
    public let blockType: YapDatabaseBlockType

    /// Which changes of an existing row run the block again (its values are kept otherwise).
    public let blockInvokeOptions: YapDatabaseBlockInvoke

    /// A handler running `block`, again for the changes `options` names (nil: the defaults of
    /// the block's type).
    init(_ block: Block, options: YapDatabaseBlockInvoke? = nil) {
        self.block = block
        blockType = block.type
        blockInvokeOptions = options ?? .defaults(for: block.type)
    }

    /// A handler reading (transaction, dictionary, collection, key).
    public static func withKeyBlock(
        _ block: @escaping YapDatabaseSecondaryIndexWithKeyBlock
    ) -> YapDatabaseSecondaryIndexHandler {
        YapDatabaseSecondaryIndexHandler(.key(block))
    }

    /// A handler reading (transaction, dictionary, collection, key, object).
    public static func withObjectBlock(
        _ block: @escaping YapDatabaseSecondaryIndexWithObjectBlock
    ) -> YapDatabaseSecondaryIndexHandler {
        YapDatabaseSecondaryIndexHandler(.object(block))
    }

    /// A handler reading (transaction, dictionary, collection, key, metadata).
    public static func withMetadataBlock(
        _ block: @escaping YapDatabaseSecondaryIndexWithMetadataBlock
    ) -> YapDatabaseSecondaryIndexHandler {
        YapDatabaseSecondaryIndexHandler(.metadata(block))
    }

    /// A handler reading (transaction, dictionary, collection, key, object, metadata).
    public static func withRowBlock(
        _ block: @escaping YapDatabaseSecondaryIndexWithRowBlock
    ) -> YapDatabaseSecondaryIndexHandler {
        YapDatabaseSecondaryIndexHandler(.row(block))
    }

    var needsObject: Bool { blockType.contains(.objectFlag) }

    var needsMetadata: Bool { blockType.contains(.metadataFlag) }

    /// Runs the block on a row and returns the dictionary it filled (empty: not indexed).
    func values(_ transaction: YapDatabaseReadTransaction, collection: String, key: String) -> SecondaryIndexHandlerDictionary {
        let dict = SecondaryIndexHandlerDictionary()
        // The object a write is storing right now is in hand: no need to read it back.
        func object() -> Any? {
            if let written = (transaction as? YapDatabaseReadWriteTransaction)?.objectBeingWritten,
               written.pair.key == key, written.pair.collection == collection {
                return written.object
            }
            return transaction.object(forKey: key, inCollection: collection)
        }
        switch block {
        case .key(let b): b(transaction, dict, collection, key)
        case .object(let b):
            if let object = object() { b(transaction, dict, collection, key, object) }
        case .metadata(let b): b(transaction, dict, collection, key, transaction.metadata(forKey: key, inCollection: collection))
        case .row(let b):
            if let object = object() {
                b(transaction, dict, collection, key, object, transaction.metadata(forKey: key, inCollection: collection))
            }
        }
        return dict
    }
}
