// SQLite's ordering of values (https://sqlite.org/datatype3.html §4.1) and the conversions
// applied to comparison operands (§4.2).

extension SQLValue {
    /// The rank of a storage class in SQLite's order: NULL, then numbers, then texts, then blobs.
    var storageRank: Int {
        switch self {
        case .null: return 0
        case .integer, .real: return 1
        case .text: return 2
        case .blob: return 3
        }
    }

    /// SQLite's total order of values with the BINARY collation: negative when `lhs` sorts
    /// first, zero when equal, positive when `rhs` sorts first. NULL < numbers (compared
    /// numerically, an integer against a real exactly) < texts (by UTF-8 bytes) < blobs (by
    /// bytes). This is the order of `ORDER BY` and of an index on a column; `NULL` compares
    /// equal to `NULL` here (the comparison operators' NULL rule is in the evaluator).
    package static func compare(_ lhs: SQLValue, _ rhs: SQLValue) -> Int {
        switch (lhs, rhs) {
        case (.null, .null): return 0
        case let (.integer(a), .integer(b)): return a < b ? -1 : (a == b ? 0 : 1)
        case let (.real(a), .real(b)): return a < b ? -1 : (a == b ? 0 : 1)
        case let (.integer(a), .real(b)): return compare(integer: a, real: b)
        case let (.real(a), .integer(b)): return -compare(integer: b, real: a)
        case let (.text(a), .text(b)): return compareBytes(a.utf8, b.utf8)
        case let (.blob(a), .blob(b)): return compareBytes(a, b)
        default: return lhs.storageRank < rhs.storageRank ? -1 : 1
        }
    }

    /// An integer against a real, exactly (no rounding of the integer to a double).
    static func compare(integer: Int64, real: Double) -> Int {
        // NaN (which SQLite stores as NULL, and ``real(checking:)`` never makes) sorts below
        // every number rather than trapping in the conversion below.
        if real.isNaN { return 1 }
        if real < -9.223372036854775808e18 { return 1 }
        if real >= 9.223372036854775808e18 { return -1 }
        let floor = real.rounded(.down)
        let floorInteger = Int64(floor)
        if integer < floorInteger { return -1 }
        if integer > floorInteger { return 1 }
        return real > floor ? -1 : 0
    }

    /// Lexicographic byte order (memcmp, then the shorter first).
    static func compareBytes<A: Sequence<UInt8>, B: Sequence<UInt8>>(_ lhs: A, _ rhs: B) -> Int {
        var left = lhs.makeIterator()
        var right = rhs.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case let (a?, b?): if a != b { return a < b ? -1 : 1 }
            }
        }
    }

    /// The two operands of a comparison after SQLite's conversions (§4.2), given each side's
    /// affinity (a column's type; nil for a literal or parameter, which have none): when one
    /// side has a numeric affinity (INTEGER, REAL, NUMERIC) and the other TEXT or none, numeric
    /// affinity is applied to the other; when one side has TEXT affinity and the other none,
    /// TEXT affinity is applied to the other.
    package static func comparisonOperands(
        _ lhs: SQLValue, affinity lhsAffinity: ColumnType?,
        _ rhs: SQLValue, affinity rhsAffinity: ColumnType?
    ) -> (SQLValue, SQLValue) {
        switch (lhsAffinity, rhsAffinity) {
        case (let left?, let right) where left != .text && (right == nil || right == .text):
            return (lhs, rhs.applyingComparisonAffinity(left))
        case (let left, let right?) where right != .text && (left == nil || left == .text):
            return (lhs.applyingComparisonAffinity(right), rhs)
        case (.text?, nil):
            return (lhs, rhs.applyingComparisonAffinity(.text))
        case (nil, .text?):
            return (lhs.applyingComparisonAffinity(.text), rhs)
        default:
            return (lhs, rhs)
        }
    }

    /// This operand with `type`'s affinity applied before a comparison (SQLite's comparison
    /// opcodes): for the numeric types a text that reads as a number becomes that number, an
    /// integer spelling staying an integer (`'9007199254740993'` stays exact, not rounded to a
    /// real as REAL storage would); other values are unchanged (numbers compare exactly
    /// whatever their class). For TEXT, numbers become text as on storage. A planner converts a
    /// literal compared with a column of `type` through this before searching that column's tree.
    package func applyingComparisonAffinity(_ type: ColumnType) -> SQLValue {
        switch (type, self) {
        case (.text, _): return applying(.text)
        case let (_, .text(text)): return SQLValue.number(fromText: text) ?? self
        default: return self
        }
    }
}
