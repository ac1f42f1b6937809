import Foundation
import YapDBEngine
import YapDBQuery

/// Where a query's candidate rows come from: key ranges of one column's tree, the
/// intersection or union of such sources, every indexed row, or none. (Not `indirect`: the
/// arrays already hold the nested plans, and a range plan is then made without a box.)
enum SecondaryIndexPlan: Sendable {
    /// No row can match (a comparison with NULL, an empty IN list).
    case nothing
    /// Every indexed row.
    case everything
    /// The indexed rows among these ids (ascending, distinct): `rowid = …` or `rowid IN (…)`.
    case rowids([UInt64])
    /// The rows whose value in `column` falls in one of `ranges` (sorted, disjoint).
    case ranges(column: Int, [ColumnRange])
    /// The rows every source yields.
    case intersection([SecondaryIndexPlan])
    /// The rows any source yields.
    case union([SecondaryIndexPlan])
}

/// A key range of a column tree, with the condition it came from (for `explain`).
struct ColumnRange: Sendable {
    var lower: KeyBound?
    var upper: KeyBound?
    var condition: RangeCondition
}

/// The condition a range came from, kept as parts and spelled only when `explain` asks, so
/// planning a query builds no text (and boxes nothing but the pairs of `both`).
enum RangeCondition: Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    case text(String)
    case comparison(column: String, op: ComparisonOperator, value: SQLValue)
    indirect case both(RangeCondition, RangeCondition)

    init(stringLiteral value: String) { self = .text(value) }

    var description: String {
        switch self {
        case let .text(text): text
        case let .comparison(column, op, value): "\(column) \(op.rawValue) \(value.sqlLiteral)"
        case let .both(a, b): "\(a) AND \(b)"
        }
    }
}

/// memcmp of two byte strings: negative, zero or positive.
func compareBytes(_ a: [UInt8], _ b: [UInt8]) -> Int {
    for (x, y) in zip(a, b) where x != y { return x < y ? -1 : 1 }
    return a.count - b.count
}

/// Whether two byte strings are the same bytes (one `memcmp`, not a generic sequence walk).
@inline(__always)
func sameBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    guard a.count == b.count else { return false }
    guard a.count > 0, let x = a.baseAddress, let y = b.baseAddress else { return true }
    return memcmp(x, y, a.count) == 0
}

/// A plan and whether its rows are exactly the rows matching the condition it came from (when
/// not, each candidate is checked against the whole `WHERE` clause).
struct PlannedCondition: Sendable {
    var plan: SecondaryIndexPlan
    var exact: Bool

    static let unplanned = PlannedCondition(plan: .everything, exact: false)
    static let none = PlannedCondition(plan: .nothing, exact: true)
}

/// Turns a bound `WHERE` expression (no parameters left) into a `PlannedCondition`: comparisons,
/// `IS [NOT] NULL`, `BETWEEN`, `IN` and `LIKE` prefixes of an indexed column become key ranges of
/// its tree; `AND` intersects and `OR` unites; `NOT` is pushed into the comparisons it covers;
/// anything else (column against column, `NOT IN`, a bare truth value) scans every row and is
/// checked row by row.
struct SecondaryIndexPlanner {
    let columns: [YapDatabaseSecondaryIndexColumn]
    let limit: Int
    let columnIndex: (String) -> Int?
    /// Whether a name is the `rowid` pseudo-column.
    let isRowid: (String) -> Bool

    func plan(_ expression: QueryExpression, negated: Bool = false) -> PlannedCondition {
        switch expression {
        case let .and(lhs, rhs):
            return negated ? unite(plan(lhs, negated: true), plan(rhs, negated: true))
                : intersect(plan(lhs), plan(rhs))
        case let .or(lhs, rhs):
            return negated ? intersect(plan(lhs, negated: true), plan(rhs, negated: true))
                : unite(plan(lhs), plan(rhs))
        case let .not(inner):
            return plan(inner, negated: !negated)
        case let .comparison(lhs, op, rhs):
            if !negated, op == .equal || op == .is, let value = rowidComparison(lhs, rhs) {
                return rowids([value])
            }
            guard let (column, value, op) = columnComparison(lhs, op, rhs) else { return .unplanned }
            return comparison(column, negated ? op.negated : op, value)
        case let .isNull(operand, isNegated):
            guard case let .column(name) = operand, let column = columnIndex(name) else { return .unplanned }
            return comparison(column, isNegated != negated ? .isNot : .is, .null)
        case let .between(operand, low, high, isNegated):
            guard !isNegated, !negated, case let .column(name) = operand, let column = columnIndex(name),
                  case let .literal(lowValue) = low, case let .literal(highValue) = high else { return .unplanned }
            return intersect(comparison(column, .greaterOrEqual, affinity(lowValue, column)),
                             comparison(column, .lessOrEqual, affinity(highValue, column)))
        case let .inList(operand, list, isNegated):
            if !isNegated, !negated, case let .column(name) = operand, isRowid(name) {
                var values: [SQLValue] = []
                for item in list {
                    guard case let .literal(value) = item else { return .unplanned }
                    values.append(value)
                }
                return rowids(values)
            }
            guard !isNegated, !negated, case let .column(name) = operand, let column = columnIndex(name) else { return .unplanned }
            return inList(column, list)
        case let .like(operand, pattern, escape, isNegated):
            guard !isNegated, !negated, escape == nil, case let .column(name) = operand, let column = columnIndex(name),
                  case let .literal(.text(text)) = pattern else { return .unplanned }
            return like(column, text)
        case .truth, .isBoolean:
            return .unplanned
        }
    }

    // MARK: Leaves

    /// The value compared with `rowid` in `rowid = value` (either order), or nil.
    func rowidComparison(_ lhs: QueryOperand, _ rhs: QueryOperand) -> SQLValue? {
        switch (lhs, rhs) {
        case let (.column(name), .literal(value)) where isRowid(name): value
        case let (.literal(value), .column(name)) where isRowid(name): value
        default: nil
        }
    }

    /// The rows whose id equals one of `values` (after the INTEGER comparison affinity; a value
    /// that is no whole number matches no row id).
    func rowids(_ values: [SQLValue]) -> PlannedCondition {
        var ids = Set<UInt64>()
        for value in values {
            switch value.applyingComparisonAffinity(.integer) {
            case let .integer(id): ids.insert(UInt64(bitPattern: id))
            case let .real(real) where real.rounded() == real && abs(real) < 0x1p63: ids.insert(UInt64(bitPattern: Int64(real)))
            default: continue
            }
        }
        return ids.isEmpty ? .none : PlannedCondition(plan: .rowids(ids.sorted()), exact: true)
    }

    /// `column op value` from either operand order, with the literal converted by the column's
    /// comparison affinity; nil when it is not a column compared with a literal.
    func columnComparison(_ lhs: QueryOperand, _ op: ComparisonOperator, _ rhs: QueryOperand)
        -> (column: Int, value: SQLValue, op: ComparisonOperator)? {
        switch (lhs, rhs) {
        case let (.column(name), .literal(value)):
            guard let column = columnIndex(name) else { return nil }
            return (column, affinity(value, column), op)
        case let (.literal(value), .column(name)):
            guard let column = columnIndex(name) else { return nil }
            return (column, affinity(value, column), op.swapped)
        default:
            return nil
        }
    }

    /// `value` as it compares with a value of `column` (SQLite's comparison affinity).
    func affinity(_ value: SQLValue, _ column: Int) -> SQLValue {
        guard let type = SecondaryIndexRow.columnType(columns[column].type) else { return value }
        return value.applyingComparisonAffinity(type)
    }

    /// The key bound of NULL's entries (every key of a NULL value starts with it).
    static let nullPrefix: [UInt8] = [OrderedKeyEncoding.Tag.null]
    /// A lower bound that skips NULLs.
    static let aboveNull = KeyBound(OrderedKeyEncoding.afterPrefix(nullPrefix), inclusive: false)

    /// The ranges of `column op value`.
    func comparison(_ column: Int, _ op: ComparisonOperator, _ value: SQLValue) -> PlannedCondition {
        let prefix = SecondaryIndexRow.orderedKey(value, limit: limit)
        let cut = prefix.withUnsafeBytes { OrderedKeyEncoding.isTruncated($0) }
        let name = columns[column].name
        // Made when a case needs them (each bound past the prefix is a new array).
        var atOrAbove: KeyBound { KeyBound(prefix) }
        var atOrBelow: KeyBound { KeyBound(OrderedKeyEncoding.afterPrefix(prefix)) }
        // A truncated value's prefix is shared with other values: widen to include them all.
        var above: KeyBound { cut ? atOrAbove : KeyBound(OrderedKeyEncoding.afterPrefix(prefix), inclusive: false) }
        var below: KeyBound { cut ? atOrBelow : KeyBound(prefix, inclusive: false) }
        let text = RangeCondition.comparison(column: name, op: op, value: value)
        func ranges(_ list: [ColumnRange]) -> PlannedCondition {
            PlannedCondition(plan: .ranges(column: column, list), exact: !cut)
        }
        if value.isNull {
            switch op {
            case .is: return ranges([ColumnRange(lower: atOrAbove, upper: atOrBelow, condition: .text("\(name) IS NULL"))])
            case .isNot: return ranges([ColumnRange(lower: Self.aboveNull, upper: nil, condition: .text("\(name) IS NOT NULL"))])
            default: return .none  // any comparison with NULL is NULL
            }
        }
        switch op {
        case .equal, .is:
            return ranges([ColumnRange(lower: atOrAbove, upper: atOrBelow, condition: text)])
        case .notEqual where cut:
            return ranges([ColumnRange(lower: Self.aboveNull, upper: nil, condition: text)])
        case .notEqual:
            return ranges([ColumnRange(lower: Self.aboveNull, upper: below, condition: text),
                           ColumnRange(lower: above, upper: nil, condition: text)])
        case .isNot where cut:
            return .unplanned
        case .isNot:
            return ranges([ColumnRange(lower: nil, upper: below, condition: text),
                           ColumnRange(lower: above, upper: nil, condition: text)])
        case .less: return ranges([ColumnRange(lower: Self.aboveNull, upper: below, condition: text)])
        case .lessOrEqual: return ranges([ColumnRange(lower: Self.aboveNull, upper: atOrBelow, condition: text)])
        case .greater: return ranges([ColumnRange(lower: above, upper: nil, condition: text)])
        case .greaterOrEqual: return ranges([ColumnRange(lower: atOrAbove, upper: nil, condition: text)])
        }
    }

    /// `column IN (list)`: one equality range per distinct value, in key order.
    func inList(_ column: Int, _ list: [QueryOperand]) -> PlannedCondition {
        var keys: [[UInt8]: SQLValue] = [:]
        for item in list {
            guard case let .literal(raw) = item else { return .unplanned }
            let value = affinity(raw, column)
            if !value.isNull { keys[SecondaryIndexRow.orderedKey(value, limit: limit)] = value }
        }
        guard !keys.isEmpty else { return .none }
        var exact = true
        let name = columns[column].name
        // Encodings are prefix-free and distinct values that share a cut prefix share a key
        // here, so the ranges are disjoint.
        let ranges = keys.sorted { compareBytes($0.key, $1.key) < 0 }.map { prefix, value in
            if prefix.withUnsafeBytes({ OrderedKeyEncoding.isTruncated($0) }) { exact = false }
            return ColumnRange(lower: KeyBound(prefix), upper: KeyBound(OrderedKeyEncoding.afterPrefix(prefix)),
                               condition: .comparison(column: name, op: .equal, value: value))
        }
        return PlannedCondition(plan: .ranges(column: column, ranges), exact: exact)
    }

    /// Case variants of a `LIKE` prefix worth one range each; more letters than this give one
    /// range from the prefix in upper case to the prefix in lower case.
    static let maximumLikeVariants = 16

    /// `column LIKE pattern`: the texts starting with the pattern's literal prefix in any ASCII
    /// case (one range per case variant when there are few, else one range from the prefix in
    /// upper case to it in lower case); in a column that is not TEXT every non-NULL value
    /// (numbers match LIKE through their text). Always checked row by row.
    func like(_ column: Int, _ pattern: String) -> PlannedCondition {
        let name = columns[column].name
        guard columns[column].type == .text else {
            return PlannedCondition(plan: .ranges(column: column, [ColumnRange(lower: Self.aboveNull, upper: nil,
                                                                                 condition: .text("\(name) IS NOT NULL (LIKE)"))]), exact: false)
        }
        let prefix = Array(pattern.utf8.prefix { $0 != UInt8(ascii: "%") && $0 != UInt8(ascii: "_") }.prefix(limit))
        let condition = RangeCondition.text("\(name) LIKE '\(String(decoding: prefix, as: UTF8.self))%' (prefix)")
        // The encoding of `bytes` without its terminator: a prefix of every longer text's.
        func bound(_ bytes: [UInt8]) -> [UInt8] {
            var key: [UInt8] = []
            OrderedKeyEncoding.appendText(bytes, limit: limit, to: &key)
            return Array(key.dropLast(2))
        }
        func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }
        let letters = prefix.filter(isLetter).count
        var variants: [[UInt8]]
        if 1 << min(letters, 62) <= Self.maximumLikeVariants {
            variants = [[]]
            for byte in prefix {
                variants = isLetter(byte) ? variants.flatMap { [$0 + [byte & ~0x20], $0 + [byte | 0x20]] } : variants.map { $0 + [byte] }
            }
        } else {
            variants = []
        }
        let ranges: [ColumnRange]
        if variants.isEmpty {
            let upper = prefix.map { isLetter($0) ? $0 & ~0x20 : $0 }, lower = prefix.map { isLetter($0) ? $0 | 0x20 : $0 }
            ranges = [ColumnRange(lower: KeyBound(bound(upper)), upper: KeyBound(bound(lower) + [0xFF, 0xFF]), condition: condition)]
        } else {
            ranges = variants.map { bound($0) }.sorted { compareBytes($0, $1) < 0 }
                .map { ColumnRange(lower: KeyBound($0), upper: KeyBound($0 + [0xFF, 0xFF]), condition: condition) }
        }
        return PlannedCondition(plan: .ranges(column: column, ranges), exact: false)
    }

    // MARK: Combining

    func intersect(_ a: PlannedCondition, _ b: PlannedCondition) -> PlannedCondition {
        let exact = a.exact && b.exact
        switch (a.plan, b.plan) {
        case (.nothing, _), (_, .nothing): return PlannedCondition(plan: .nothing, exact: true)
        case (.everything, _): return PlannedCondition(plan: b.plan, exact: exact)
        case (_, .everything): return PlannedCondition(plan: a.plan, exact: exact)
        case let (.ranges(c1, r1), .ranges(c2, r2)) where c1 == c2 && r1.count == 1 && r2.count == 1:
            return PlannedCondition(plan: .ranges(column: c1, [Self.overlap(r1[0], r2[0])]), exact: exact)
        case let (.intersection(x), .intersection(y)): return PlannedCondition(plan: .intersection(x + y), exact: exact)
        case let (.intersection(x), other), let (other, .intersection(x)):
            return PlannedCondition(plan: .intersection(x + [other]), exact: exact)
        default: return PlannedCondition(plan: .intersection([a.plan, b.plan]), exact: exact)
        }
    }

    func unite(_ a: PlannedCondition, _ b: PlannedCondition) -> PlannedCondition {
        let exact = a.exact && b.exact
        switch (a.plan, b.plan) {
        case (.nothing, _): return b
        case (_, .nothing): return a
        case (.everything, _), (_, .everything): return PlannedCondition(plan: .everything, exact: false)
        case let (.union(x), .union(y)): return PlannedCondition(plan: .union(x + y), exact: exact)
        case let (.union(x), other), let (other, .union(x)): return PlannedCondition(plan: .union(x + [other]), exact: exact)
        default: return PlannedCondition(plan: .union([a.plan, b.plan]), exact: exact)
        }
    }

    /// The range both `a` and `b` cover (possibly empty).
    static func overlap(_ a: ColumnRange, _ b: ColumnRange) -> ColumnRange {
        func tighter(_ x: KeyBound?, _ y: KeyBound?, lower: Bool) -> KeyBound? {
            guard let x else { return y }
            guard let y else { return x }
            let order = compareBytes(x.key, y.key)
            if order == 0 { return KeyBound(x.key, inclusive: x.inclusive && y.inclusive) }
            return (order > 0) == lower ? x : y
        }
        return ColumnRange(lower: tighter(a.lower, b.lower, lower: true), upper: tighter(a.upper, b.upper, lower: false),
                           condition: .both(a.condition, b.condition))
    }
}
