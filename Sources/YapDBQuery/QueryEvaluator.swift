/// Evaluates queries over rows by brute force, with SQLite's semantics: column affinity on the
/// row's values, comparison affinity (§4.2 of SQLite's datatype page), NULL's three-valued
/// logic, ordering, `LIMIT`/`OFFSET`. The reference the index is tested against, and the
/// residual filter a planner applies after its index ranges.
///
/// Threading: a plain value; safe to pass between threads.
package struct QueryEvaluator: Sendable {
    /// The index's columns and their types; a name not here has no affinity.
    package var columns: [String: ColumnType]

    /// An evaluator for an index with `columns`.
    package init(columns: [String: ColumnType]) {
        self.columns = columns
    }

    /// Whether a row matches `whereClause` (true only when the expression is true, not NULL).
    ///
    /// - Parameters:
    ///   - whereClause: The expression; nil matches every row.
    ///   - row: The row's column values (a missing column is NULL); column affinity is applied
    ///     to them here, so raw handler values are fine.
    ///   - parameters: Values for any `?` still in the expression (a missing one reads NULL).
    package func evaluate(where whereClause: QueryExpression?, row: [String: SQLValue], parameters: [QueryParameter] = []) -> Bool {
        evaluate(where: whereClause, parameters: parameters) { row[$0] ?? .null }
    }

    /// Whether a row matches `whereClause`, reading its values through `value(columnName)`.
    package func evaluate(
        where whereClause: QueryExpression?, parameters: [QueryParameter] = [], value: (String) -> SQLValue
    ) -> Bool {
        guard let whereClause else { return true }
        return truth(of: whereClause, parameters: parameters, value: value) == true
    }

    /// The three-valued truth of `expression`: true, false, or nil for NULL.
    package func truth(
        of expression: QueryExpression, parameters: [QueryParameter] = [], value: (String) -> SQLValue
    ) -> Bool? {
        if case .and = expression { return chainTruth(expression, isAnd: true, parameters: parameters, value: value) }
        if case .or = expression { return chainTruth(expression, isAnd: false, parameters: parameters, value: value) }
        func operand(_ operand: QueryOperand) -> (SQLValue, ColumnType?) {
            switch operand {
            case let .column(name):
                let type = columns[name]
                let raw = value(name)
                return (type.map { raw.applying($0) } ?? raw, type)
            case let .literal(literal): return (literal, nil)
            case let .parameter(number):
                guard number < parameters.count, case let .value(bound) = parameters[number] else { return (.null, nil) }
                return (bound, nil)
            }
        }
        switch expression {
        case let .comparison(lhs, op, rhs):
            return Self.compare(operand(lhs), op, operand(rhs))
        case let .isNull(target, negated):
            return operand(target).0.isNull != negated
        case let .truth(target):
            return Self.truth(of: operand(target).0)
        case let .isBoolean(target, expected, negated):
            return (Self.truth(of: operand(target).0) == expected) != negated
        case let .between(target, low, high, negated):
            let subject = operand(target)
            let result = Self.and(
                Self.compare(subject, .greaterOrEqual, operand(low)),
                Self.compare(subject, .lessOrEqual, operand(high))
            )
            return negated ? result.map(!) : result
        case let .inList(target, items, negated):
            let subject = operand(target)
            var values: [(SQLValue, ColumnType?)] = []
            for item in items {
                if case let .parameter(number) = item, number < parameters.count, case let .list(list) = parameters[number] {
                    values += list.isEmpty ? [(.null, nil)] : list.map { ($0, nil) }
                } else {
                    // The list's elements have no affinity of their own (SQLite §4.2).
                    values.append((operand(item).0, nil))
                }
            }
            var result: Bool? = false
            for element in values {
                result = Self.or(result, Self.compare(subject, .equal, element))
                if result == true { break }
            }
            return negated ? result.map(!) : result
        case let .like(target, pattern, escape, negated):
            let escapeValue = escape.map { operand($0).0 }
            let targetValue = operand(target).0
            let patternValue = operand(pattern).0
            // A blob on either side never matches, even against NULL (SQLite built with
            // SQLITE_LIKE_DOESNT_MATCH_BLOBS, the recommended option, as Debian and others ship it).
            if case .blob = targetValue { return negated }
            if case .blob = patternValue { return negated }
            guard let text = targetValue.textForPattern, let patternText = patternValue.textForPattern,
                  patternText.utf8.count <= LikePattern.maximumPatternBytes else { return nil }
            var escapeCharacter: Unicode.Scalar?
            if let escapeValue {
                guard let escapeText = escapeValue.textForPattern else { return nil }
                // SQLite requires exactly one character; anything else matches nothing here.
                guard escapeText.unicodeScalars.count == 1 else { return nil }
                escapeCharacter = escapeText.unicodeScalars.first
            }
            let matched = LikePattern.matches(text, pattern: patternText, escape: escapeCharacter)
            return matched != negated
        case .and, .or:
            return nil  // answered by chainTruth above
        case let .not(inner):
            return truth(of: inner, parameters: parameters, value: value).map(!)
        }
    }

    /// The truth of an AND (or OR) chain, walked down its left spine without recursion or
    /// allocation, right operands first (the result does not depend on the order): false decides
    /// an AND and true an OR whatever else holds (NULL does not).
    private func chainTruth(
        _ expression: QueryExpression, isAnd: Bool, parameters: [QueryParameter], value: (String) -> SQLValue
    ) -> Bool? {
        var result: Bool? = isAnd
        var node = expression
        while true {
            let operand: QueryExpression
            var rest: QueryExpression?
            switch (isAnd, node) {
            case let (true, .and(lhs, rhs)), let (false, .or(lhs, rhs)):
                operand = rhs
                rest = lhs
            default:
                operand = node
            }
            let next = truth(of: operand, parameters: parameters, value: value)
            result = isAnd ? Self.and(result, next) : Self.or(result, next)
            if result == !isAnd { return result }
            guard let rest else { return result }
            node = rest
        }
    }

    /// A comparison of two operands (value and affinity) with SQLite's conversions and NULL rule.
    static func compare(_ lhs: (SQLValue, ColumnType?), _ op: ComparisonOperator, _ rhs: (SQLValue, ColumnType?)) -> Bool? {
        let (left, right) = SQLValue.comparisonOperands(lhs.0, affinity: lhs.1, rhs.0, affinity: rhs.1)
        return compareConverted(left, op, right)
    }

    /// A value's truth: non-zero numeric value (a text by its numeric prefix), NULL for NULL.
    static func truth(of value: SQLValue) -> Bool? {
        switch value.numericValue {
        case let .integer(integer)?: return integer != 0
        case let .real(real)?: return real != 0
        default: return nil
        }
    }

    /// Three-valued AND: false wins over NULL.
    static func and(_ lhs: Bool?, _ rhs: Bool?) -> Bool? {
        if lhs == false || rhs == false { return false }
        if lhs == nil || rhs == nil { return nil }
        return true
    }

    /// Three-valued OR: true wins over NULL.
    static func or(_ lhs: Bool?, _ rhs: Bool?) -> Bool? {
        if lhs == true || rhs == true { return true }
        if lhs == nil || rhs == nil { return nil }
        return false
    }
}
