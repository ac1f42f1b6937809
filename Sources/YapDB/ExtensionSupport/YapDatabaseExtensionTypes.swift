/// What an extension's block reads of a row: the key only (`[]`, spelled `withKey` in
/// YapDatabase's Objective-C), the object, the metadata, or both (the whole row). The grouping,
/// sorting, filtering and secondary index handlers report theirs as `blockType`.
///
/// Test a block type with the flags: `blockType.contains(.objectFlag)` is true for object and
/// row blocks, `blockType.contains(.metadataFlag)` for metadata and row blocks.
public struct YapDatabaseBlockType: OptionSet, Hashable, Sendable {
    /// The bits.
    public let rawValue: UInt

    /// A block type from its bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// The block reads the row's object.
    public static let objectFlag = YapDatabaseBlockType(rawValue: 1 << 0)
    /// The block reads the row's metadata.
    public static let metadataFlag = YapDatabaseBlockType(rawValue: 1 << 1)

    /// A key block (collection and key only): the empty set. Unavailable, as Swift makes every
    /// zero-valued option: write `[]`.
    @available(*, unavailable, message: "use [] to construct an empty option set")
    public static var withKey: YapDatabaseBlockType { [] }
    /// An object block.
    public static let withObject: YapDatabaseBlockType = [.objectFlag]
    /// A metadata block.
    public static let withMetadata: YapDatabaseBlockType = [.metadataFlag]
    /// A row block (object and metadata).
    public static let withRow: YapDatabaseBlockType = [.objectFlag, .metadataFlag]
}

/// When an extension runs its block again for a row that already exists. Every block runs when
/// a row is inserted (and when the extension is built from the existing rows); after that, only
/// for the changes its options name:
///
/// - `ifObjectModified`: `setObject` (with or without metadata) and `replaceObject`.
/// - `ifMetadataModified`: `setObject` (which always sets or clears the metadata) and
///   `replaceMetadata`.
/// - `ifObjectTouched`: `touchObject` and `touchRow`.
/// - `ifMetadataTouched`: `touchMetadata` and `touchRow`.
///
/// A block that is not run keeps its last answer: a view leaves the row in its group and place
/// (observers still see the row as updated), a filtered view keeps or leaves out the row as
/// before, a secondary index keeps the row's values. The empty set (`[]`, YapDatabase's
/// `onInsertOnly`) runs the block on insert only — for a block whose answer never changes.
///
/// Each block type has a default (`defaultForBlockTypeWith…`), used by the `with…Block`
/// factories: a block runs again when what it reads changes or is touched.
public struct YapDatabaseBlockInvoke: OptionSet, Hashable, Sendable {
    /// The bits.
    public let rawValue: UInt

    /// Options from their bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// Run on insert only: the empty set. Unavailable, as Swift makes every zero-valued option:
    /// write `[]`.
    @available(*, unavailable, message: "use [] to construct an empty option set")
    public static var onInsertOnly: YapDatabaseBlockInvoke { [] }
    /// Run again when the row's object is written (`setObject`, `replaceObject`).
    public static let ifObjectModified = YapDatabaseBlockInvoke(rawValue: 1 << 0)
    /// Run again when the row's metadata is written (`setObject`, `replaceMetadata`).
    public static let ifMetadataModified = YapDatabaseBlockInvoke(rawValue: 1 << 1)
    /// Run again when the row's object is touched (`touchObject`, `touchRow`).
    public static let ifObjectTouched = YapDatabaseBlockInvoke(rawValue: 1 << 2)
    /// Run again when the row's metadata is touched (`touchMetadata`, `touchRow`).
    public static let ifMetadataTouched = YapDatabaseBlockInvoke(rawValue: 1 << 3)
    /// Run again for every change and touch.
    public static let any: YapDatabaseBlockInvoke = [.ifObjectModified, .ifMetadataModified, .ifObjectTouched, .ifMetadataTouched]

    /// The default of key blocks (`[]`: insert only). Unavailable, as Swift makes every
    /// zero-valued option: write `[]`.
    @available(*, unavailable, message: "use [] to construct an empty option set")
    public static var defaultForBlockTypeWithKey: YapDatabaseBlockInvoke { [] }
    /// The default of object blocks: the object written or touched.
    public static let defaultForBlockTypeWithObject: YapDatabaseBlockInvoke = [.ifObjectModified, .ifObjectTouched]
    /// The default of metadata blocks: the metadata written or touched.
    public static let defaultForBlockTypeWithMetadata: YapDatabaseBlockInvoke = [.ifMetadataModified, .ifMetadataTouched]
    /// The default of row blocks: any change or touch.
    public static let defaultForBlockTypeWithRow: YapDatabaseBlockInvoke = .any

    /// The default options of a block of type `type`.
    static func defaults(for type: YapDatabaseBlockType) -> YapDatabaseBlockInvoke {
        var options: YapDatabaseBlockInvoke = []
        if type.contains(.objectFlag) { options.formUnion(.defaultForBlockTypeWithObject) }
        if type.contains(.metadataFlag) { options.formUnion(.defaultForBlockTypeWithMetadata) }
        return options
    }

    /// Whether a block with these options runs for `change`.
    func runs(for change: RowChange) -> Bool {
        change.isInsert || !isDisjoint(with: change.invoke)
    }
}

/// What a write did to one row, as the extensions' block options see it: told to every
/// extension with the row's change or touch.
struct RowChange {
    /// The row is new (every block runs).
    var isInsert: Bool
    /// The option bits the change matches (empty for an insert).
    var invoke: YapDatabaseBlockInvoke

    /// A new row.
    static let insert = RowChange(isInsert: true, invoke: [])

    /// A change of an existing row's object, metadata, or both.
    static func modified(object: Bool, metadata: Bool) -> RowChange {
        var invoke: YapDatabaseBlockInvoke = []
        if object { invoke.insert(.ifObjectModified) }
        if metadata { invoke.insert(.ifMetadataModified) }
        return RowChange(isInsert: false, invoke: invoke)
    }

    /// A touch of a row's object, metadata, or both.
    static func touched(object: Bool, metadata: Bool) -> RowChange {
        var invoke: YapDatabaseBlockInvoke = []
        if object { invoke.insert(.ifObjectTouched) }
        if metadata { invoke.insert(.ifMetadataTouched) }
        return RowChange(isInsert: false, invoke: invoke)
    }
}

/// One of the four forms of an extension's block, by what the block reads of a row: the key
/// only, the object, the metadata, or both. Each block-holding type names its four closure
/// types.
enum BlockForm<Key, Object, Metadata, Row> {
    case key(Key)
    case object(Object)
    case metadata(Metadata)
    case row(Row)

    /// What the block reads.
    var type: YapDatabaseBlockType {
        switch self {
        case .key: []
        case .object: .withObject
        case .metadata: .withMetadata
        case .row: .withRow
        }
    }
}

extension BlockForm: Sendable where Key: Sendable, Object: Sendable, Metadata: Sendable, Row: Sendable {}
