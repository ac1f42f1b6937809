import Foundation

/// Which end of a group a mappings range is measured from (YapDatabase's `YapDatabaseViewPin`).
public enum YapDatabaseViewPin: Int, Sendable {
    /// The range's offset counts from the group's first row (index 0).
    case beginning = 0
    /// The range's offset counts from the group's last row.
    case end = 1
}

/// On which side a flexible range grows when rows are inserted exactly at its edges
/// (YapDatabase's `YapDatabaseViewGrowOptions`). Rows inserted strictly inside the range always
/// join it. The default is `.pinSide`: a chat screen pinned to the end grows as new messages
/// arrive at the end, but not when older ones are loaded at its top.
public struct YapDatabaseViewGrowOptions: OptionSet, Sendable, Hashable {
    /// The bit pattern.
    public let rawValue: UInt

    /// The options with these bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// A row inserted at the pinned edge joins the range.
    public static let pinSide = YapDatabaseViewGrowOptions(rawValue: 1 << 0)
    /// A row inserted at the edge away from the pin joins the range.
    public static let nonPinSide = YapDatabaseViewGrowOptions(rawValue: 1 << 1)
    /// Rows inserted at either edge join the range.
    public static let onBothSides: YapDatabaseViewGrowOptions = [.pinSide, .nonPinSide]
    /// Only rows inserted strictly inside the range join it (Swift imports this zero value as
    /// unavailable: write `[]`).
    @available(*, unavailable, message: "use [] to construct an empty option set")
    public static var inRangeOnly: YapDatabaseViewGrowOptions { [] }
}

/// A window onto a group of mappings (`setRangeOptions(_:forGroup:)`): a table shows only
/// `length` rows, `offset` rows from the pinned end of the group (YapDatabase's
/// `YapDatabaseViewRangeOptions`).
///
/// - A **fixed** range keeps its offset and length: rows inserted before it push the rows at
///   its far edge out, rows deleted pull new rows in. Its length shrinks only when the group
///   has too few rows, and grows back (up to `maxLength`, the length it was made with).
/// - A **flexible** range keeps its rows: it grows as rows are inserted inside it (and at its
///   edges, as `growOptions` say) and shrinks as they are deleted; its offset follows the rows
///   inserted or deleted between it and the pinned end. `maxLength` caps it (rows past the cap
///   leave at the side away from the pin), `minLength` keeps it from shrinking below a size
///   while the group has the rows.
///
/// A changed length or offset is kept by the mappings after each update; read it back with
/// `rangeOptions(forGroup:)`. Counts are `UInt`, as Swift imports `NSUInteger`.
///
/// Threading: configure on the thread that uses the mappings.
public final class YapDatabaseViewRangeOptions: CustomStringConvertible {
    /// The number of rows shown (as of the mappings' last update, when read back from them).
    public private(set) var length: UInt
    /// How far the range is from its pinned end.
    public private(set) var offset: UInt
    /// Which end `offset` counts from.
    public private(set) var pin: YapDatabaseViewPin
    /// Whether the range keeps its offset and length.
    public let isFixedRange: Bool
    /// Whether the range keeps its rows (grows and shrinks with them).
    public var isFlexibleRange: Bool { !isFixedRange }

    /// The most rows the range shows (never below `minLength`). A fixed range's is its length.
    public var maxLength: UInt {
        get { storedMaxLength }
        set { storedMaxLength = max(newValue, storedMinLength) }
    }

    /// The fewest rows a flexible range shrinks to while the group has them (never above
    /// `maxLength`).
    public var minLength: UInt {
        get { storedMinLength }
        set { storedMinLength = min(newValue, storedMaxLength) }
    }

    /// Where a flexible range grows (see `YapDatabaseViewGrowOptions`); `.pinSide` by default.
    public var growOptions: YapDatabaseViewGrowOptions {
        get { storedGrowOptions }
        set { storedGrowOptions = newValue.isSubset(of: .onBothSides) ? newValue : .pinSide }
    }

    private var storedMaxLength: UInt
    private var storedMinLength: UInt = 0
    private var storedGrowOptions: YapDatabaseViewGrowOptions = .pinSide

    private init(length: UInt, offset: UInt, pin: YapDatabaseViewPin, fixed: Bool) {
        self.length = length
        self.offset = offset
        self.pin = pin
        self.isFixedRange = fixed
        self.storedMaxLength = fixed ? length : .max
    }

    /// A fixed range of `length` rows, `offset` rows from `beginningOrEnd`; nil when `length`
    /// is 0.
    public static func fixedRange(withLength length: UInt, offset: UInt, from beginningOrEnd: YapDatabaseViewPin) -> YapDatabaseViewRangeOptions? {
        length == 0 ? nil : YapDatabaseViewRangeOptions(length: length, offset: offset, pin: beginningOrEnd, fixed: true)
    }

    /// A flexible range of `length` rows to start with, `offset` rows from `beginningOrEnd`;
    /// nil when `length` is 0.
    public static func flexibleRange(withLength length: UInt, offset: UInt, from beginningOrEnd: YapDatabaseViewPin) -> YapDatabaseViewRangeOptions? {
        length == 0 ? nil : YapDatabaseViewRangeOptions(length: length, offset: offset, pin: beginningOrEnd, fixed: false)
    }

    /// An independent copy (`NSCopying`'s `copy()`).
    public func copy() -> Any { copy(withNewLength: length, newOffset: offset) }

    /// A copy with another length (a chat screen loading more history: a longer range).
    public func copy(withNewLength newLength: UInt) -> Any { copy(withNewLength: newLength, newOffset: offset) }

    /// A copy with another offset.
    public func copy(withNewOffset newOffset: UInt) -> Any { copy(withNewLength: length, newOffset: newOffset) }

    /// A copy with another length and offset.
    public func copy(withNewLength newLength: UInt, newOffset: UInt) -> Any { with(length: newLength, offset: newOffset) }

    /// A typed copy with another length and offset.
    func with(length newLength: UInt, offset newOffset: UInt) -> YapDatabaseViewRangeOptions {
        let copy = YapDatabaseViewRangeOptions(length: newLength, offset: newOffset, pin: pin, fixed: isFixedRange)
        copy.storedMaxLength = storedMaxLength
        copy.storedMinLength = storedMinLength
        copy.storedGrowOptions = storedGrowOptions
        return copy
    }

    /// A copy pinned to the other end (a reversed group's range, in the view's order).
    func reversed() -> YapDatabaseViewRangeOptions {
        let copy = with(length: length, offset: offset)
        copy.pin = pin == .beginning ? .end : .beginning
        return copy
    }

    /// "fixed range 20 rows, 0 from end".
    public var description: String {
        "\(isFixedRange ? "fixed" : "flexible") range \(length) rows, \(offset) from \(pin == .beginning ? "beginning" : "end")"
    }
}

/// Where a group's range lies in the group (`YapDatabaseViewMappings.rangePosition(forGroup:)`),
/// as a table shows it (reversed groups count from their ends): rows before it, rows after it,
/// and its length. A range past the group's end has length 0.
public struct YapDatabaseViewRangePosition: Sendable, Hashable {
    /// Rows of the group before the range.
    public var offsetFromBeginning: UInt
    /// Rows of the group after the range.
    public var offsetFromEnd: UInt
    /// Rows in the range.
    public var length: UInt

    /// A position of all zeros.
    public init() { self.init(offsetFromBeginning: 0, offsetFromEnd: 0, length: 0) }

    /// A position with these values.
    public init(offsetFromBeginning: UInt, offsetFromEnd: UInt, length: UInt) {
        self.offsetFromBeginning = offsetFromBeginning
        self.offsetFromEnd = offsetFromEnd
        self.length = length
    }
}
