/// What a `WHERE` expression requires of one column's stored values: a set of intervals in the
/// column's index order. A planner scans those ranges of the column's tree.
package struct ColumnConstraint: Sendable, Hashable {
    /// Sorted, disjoint intervals; a row can match only when its value lies in one of them.
    package var intervals: [ValueInterval]
    /// Whether the intervals are also enough: every row whose value lies in them matches the
    /// whole expression, so no residual filter is needed.
    package var isExact: Bool
}

extension QueryExpression {
    /// What this expression (parameters bound, as in a ``BoundQuery``) requires of `column`,
    /// whose type is `type`; nil when it constrains the column in no way an index can use (an
    /// `OR` with a side about another column, `LIKE`, a bare truth test, a column compared with
    /// another column).
    ///
    /// Exactness: a comparison, `IS [NOT] NULL`, `[NOT] BETWEEN` and `[NOT] IN` of the column
    /// with literals are exact; `AND` is exact when both sides are exact about this column;
    /// `OR` when both are; `NOT` when its operand is. A side about another column makes an
    /// `AND` inexact (the intervals still hold: the row must also pass the residual filter).
    package func constraint(on column: String, type: ColumnType) -> ColumnConstraint? {
        if let chain {
            var result: ColumnConstraint?
            for (position, operand) in chain.operands.enumerated() {
                let next = operand.constraint(on: column, type: type)
                if position == 0 {
                    result = next
                    continue
                }
                if chain.connective == .or {
                    guard let left = result, let right = next else { return nil }
                    result = ColumnConstraint(intervals: left.intervals.union(right.intervals), isExact: left.isExact && right.isExact)
                } else {
                    result = Self.intersect(result, next)
                }
            }
            return result
        }
        switch self {
        case let .not(inner):
            // Only a simple predicate negates exactly (three-valued NOT of an exact set: the
            // rows where it is false, which are the non-NULL values outside it, or for the
            // NULL tests the complement).
            guard let negated = inner.negatedPredicate, let constraint = negated.constraint(on: column, type: type) else { return nil }
            return constraint
        default:
            guard let intervals = predicateIntervals(on: column, type: type) else { return nil }
            return ColumnConstraint(intervals: intervals.normalized(), isExact: true)
        }
    }

    /// The constraint of `lhs AND rhs` from each side's.
    static func intersect(_ lhs: ColumnConstraint?, _ rhs: ColumnConstraint?) -> ColumnConstraint? {
        switch (lhs, rhs) {
        case let (left?, right?):
            return ColumnConstraint(intervals: left.intervals.intersection(right.intervals), isExact: left.isExact && right.isExact)
        case let (left?, nil): return ColumnConstraint(intervals: left.intervals, isExact: false)
        case let (nil, right?): return ColumnConstraint(intervals: right.intervals, isExact: false)
        case (nil, nil): return nil
        }
    }

    /// The predicate meaning `NOT self` under three-valued logic, for simple predicates.
    var negatedPredicate: QueryExpression? {
        switch self {
        case let .comparison(lhs, op, rhs):
            return .comparison(lhs, op.negated, rhs)
        case let .isNull(operand, negated): return .isNull(operand, negated: !negated)
        case let .between(operand, low, high, negated): return .between(operand, low: low, high: high, negated: !negated)
        case let .inList(operand, items, negated): return .inList(operand, items, negated: !negated)
        case let .not(inner): return inner
        default: return nil
        }
    }

    /// The values of `column` that make a simple predicate true, or nil when it is not a
    /// predicate on `column` against literals.
    private func predicateIntervals(on column: String, type: ColumnType) -> [ValueInterval]? {
        func literal(_ operand: QueryOperand) -> SQLValue? {
            if case let .literal(value) = operand { return value.applyingComparisonAffinity(type) }
            return nil
        }
        switch self {
        case let .comparison(lhs, op, rhs):
            if lhs == .column(column), let value = literal(rhs) { return Self.intervals(op, value) }
            if rhs == .column(column), let value = literal(lhs) { return Self.intervals(op.swapped, value) }
            return nil
        case let .isNull(operand, negated):
            guard operand == .column(column) else { return nil }
            return negated ? [.notNull] : [.point(.null)]
        case let .between(operand, low, high, negated):
            guard operand == .column(column), let low = literal(low), let high = literal(high) else { return nil }
            if negated { return Self.intervals(.less, low) + Self.intervals(.greater, high) }
            return Self.intervals(.greaterOrEqual, low).intersection(Self.intervals(.lessOrEqual, high))
        case let .inList(operand, items, negated):
            guard operand == .column(column) else { return nil }
            var values: [SQLValue] = []
            for item in items {
                guard let value = literal(item) else { return nil }
                values.append(value)
            }
            if !negated { return values.filter { !$0.isNull }.map(ValueInterval.point) }
            // NOT IN () is true for every value, NULL included; with a NULL element it is never
            // true; otherwise it holds for every non-NULL value but the elements.
            if values.isEmpty { return [.all] }
            if values.contains(where: \.isNull) { return [] }
            return values.reduce([ValueInterval.notNull]) { remaining, value in remaining.intersection(Self.intervals(.notEqual, value)) }
        default:
            return nil
        }
    }

    /// The values `v` for which `v op value` is true.
    static func intervals(_ op: ComparisonOperator, _ value: SQLValue) -> [ValueInterval] {
        switch op {
        case .is: return [.point(value)]
        case .isNot:
            return [ValueInterval(lower: nil, upper: value, upperInclusive: false),
                    ValueInterval(lower: value, lowerInclusive: false, upper: nil)].normalized()
        default: break
        }
        if value.isNull { return [] }
        switch op {
        case .equal: return [.point(value)]
        case .notEqual:
            return [ValueInterval(lower: .null, lowerInclusive: false, upper: value, upperInclusive: false),
                    ValueInterval(lower: value, lowerInclusive: false, upper: nil)]
        case .less: return [ValueInterval(lower: .null, lowerInclusive: false, upper: value, upperInclusive: false)]
        case .lessOrEqual: return [ValueInterval(lower: .null, lowerInclusive: false, upper: value)]
        case .greater: return [ValueInterval(lower: value, lowerInclusive: false, upper: nil)]
        case .greaterOrEqual: return [ValueInterval(lower: value, upper: nil)]
        case .is, .isNot: return []
        }
    }
}

extension ComparisonOperator {
    /// The operator of `NOT (a op b)` under three-valued logic (`NOT (a < b)` is `a >= b`,
    /// NULL staying NULL; `IS` and `IS NOT` swap).
    package var negated: ComparisonOperator {
        switch self {
        case .equal: .notEqual
        case .notEqual: .equal
        case .less: .greaterOrEqual
        case .lessOrEqual: .greater
        case .greater: .lessOrEqual
        case .greaterOrEqual: .less
        case .is: .isNot
        case .isNot: .is
        }
    }
}
