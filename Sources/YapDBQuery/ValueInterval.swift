/// An interval of stored column values in SQLite's order (``SQLValue/compare(_:_:)``): the
/// order of a per-column index. NULL is the least value, so "every value but NULL" is the
/// interval above `.null`, exclusive.
///
/// Threading: a plain value; safe to pass between threads.
package struct ValueInterval: Sendable, Hashable, CustomStringConvertible {
    /// The lower end; nil for no lower end (NULL included).
    package var lower: SQLValue?
    /// Whether `lower` itself is in the interval.
    package var lowerInclusive: Bool
    /// The upper end; nil for no upper end.
    package var upper: SQLValue?
    /// Whether `upper` itself is in the interval.
    package var upperInclusive: Bool

    /// An interval from its ends.
    package init(lower: SQLValue?, lowerInclusive: Bool = true, upper: SQLValue?, upperInclusive: Bool = true) {
        self.lower = lower
        self.lowerInclusive = lowerInclusive
        self.upper = upper
        self.upperInclusive = upperInclusive
    }

    /// Every value, NULL included.
    package static let all = ValueInterval(lower: nil, upper: nil)
    /// Every value but NULL.
    package static let notNull = ValueInterval(lower: .null, lowerInclusive: false, upper: nil)

    /// The values equal to `value` in SQLite's order (`3` and `3.0` both).
    package static func point(_ value: SQLValue) -> ValueInterval {
        ValueInterval(lower: value, upper: value)
    }

    /// Whether `value` lies in the interval.
    package func contains(_ value: SQLValue) -> Bool {
        if let lower {
            let order = SQLValue.compare(value, lower)
            if order < 0 || (order == 0 && !lowerInclusive) { return false }
        }
        if let upper {
            let order = SQLValue.compare(value, upper)
            if order > 0 || (order == 0 && !upperInclusive) { return false }
        }
        return true
    }

    /// Whether no value lies in the interval.
    package var isEmpty: Bool {
        // Nothing lies below NULL, the least value.
        if lower == nil, upper == .null, !upperInclusive { return true }
        guard let lower, let upper else { return false }
        let order = SQLValue.compare(lower, upper)
        return order > 0 || (order == 0 && !(lowerInclusive && upperInclusive))
    }

    /// The interval as `[a, b)` text (`-∞`/`+∞` for missing ends).
    package var description: String {
        (lowerInclusive && lower != nil ? "[" : "(") + (lower.map(\.sqlLiteral) ?? "-∞") + ", "
            + (upper.map(\.sqlLiteral) ?? "+∞") + (upperInclusive && upper != nil ? "]" : ")")
    }
}

/// Operations on sorted, disjoint interval lists (a set of values).
extension [ValueInterval] {
    /// The list sorted by lower end with overlapping or touching intervals merged and empty ones dropped.
    package func normalized() -> [ValueInterval] {
        let sorted = filter { !$0.isEmpty }.sorted { Self.lowerPrecedes($0, $1) }
        var merged: [ValueInterval] = []
        for interval in sorted {
            guard var last = merged.last, Self.touches(last, interval) else {
                merged.append(interval)
                continue
            }
            if Self.upperExceeds(interval, last) {
                last.upper = interval.upper
                last.upperInclusive = interval.upperInclusive
            }
            merged[merged.count - 1] = last
        }
        return merged
    }

    /// The values in both sets.
    package func intersection(_ other: [ValueInterval]) -> [ValueInterval] {
        var result: [ValueInterval] = []
        for a in self {
            for b in other {
                var lower = a
                if Self.lowerPrecedes(a, b) { lower = b }
                var upper = a
                if Self.upperExceeds(a, b) { upper = b }
                result.append(ValueInterval(lower: lower.lower, lowerInclusive: lower.lowerInclusive,
                                            upper: upper.upper, upperInclusive: upper.upperInclusive))
            }
        }
        return result.normalized()
    }

    /// The values in either set.
    package func union(_ other: [ValueInterval]) -> [ValueInterval] {
        (self + other).normalized()
    }

    /// Whether `value` is in the set.
    package func contains(_ value: SQLValue) -> Bool {
        contains { $0.contains(value) }
    }

    /// Whether `a` starts before `b` (or at the same place, `a` including it and `b` not).
    static func lowerPrecedes(_ a: ValueInterval, _ b: ValueInterval) -> Bool {
        guard let bLower = b.lower else { return false }
        guard let aLower = a.lower else { return true }
        let order = SQLValue.compare(aLower, bLower)
        return order < 0 || (order == 0 && a.lowerInclusive && !b.lowerInclusive)
    }

    /// Whether `a` ends after `b` (or at the same place, `a` including it and `b` not).
    static func upperExceeds(_ a: ValueInterval, _ b: ValueInterval) -> Bool {
        guard let bUpper = b.upper else { return false }
        guard let aUpper = a.upper else { return true }
        let order = SQLValue.compare(aUpper, bUpper)
        return order > 0 || (order == 0 && a.upperInclusive && !b.upperInclusive)
    }

    /// Whether `next` (starting no earlier than `first`) overlaps or touches `first`.
    static func touches(_ first: ValueInterval, _ next: ValueInterval) -> Bool {
        guard let upper = first.upper, let lower = next.lower else { return true }
        let order = SQLValue.compare(lower, upper)
        return order < 0 || (order == 0 && (first.upperInclusive || next.lowerInclusive))
    }
}
