/// A `WHERE` expression prepared once for testing many rows: column names resolved to
/// positions, each literal converted once to the affinity of the column it is compared with,
/// `IN` lists sorted for binary search, `AND`/`OR` chains flattened. It answers exactly as
/// ``QueryEvaluator/evaluate(where:parameters:value:)`` does, faster; the residual filter a
/// planner runs on the rows its index ranges yield.
///
/// Rows are given as stored values (the column's affinity already applied, as an index holds
/// them), by position in the `columnOrder` the condition was prepared with.
///
/// Threading: a plain value; safe to pass between threads and to use from several at once.
package struct PreparedCondition: Sendable {
    indirect enum Node: Sendable {
        /// A truth value known without looking at the row.
        case constant(Bool?)
        /// `column op value`, `value` already converted for the column.
        case compare(column: Int, op: ComparisonOperator, value: SQLValue)
        /// `column IS [NOT] NULL`.
        case isNull(column: Int, negated: Bool)
        /// `column [NOT] IN (values)`: `values` converted, without NULLs, sorted in SQLite's order.
        case inList(column: Int, values: [SQLValue], hasNull: Bool, isEmpty: Bool, negated: Bool)
        /// `column [NOT] LIKE pattern` with a text pattern and no escape.
        case like(column: Int, pattern: String, negated: Bool)
        case and([Node])
        case or([Node])
        case not(Node)
        /// Anything else, evaluated by the general evaluator.
        case general(QueryExpression)
    }

    let root: Node
    let evaluator: QueryEvaluator
    let positions: [String: Int]

    /// Whether the row whose stored values `value(position)` gives matches (true, not NULL).
    package func matches(_ value: (Int) -> SQLValue) -> Bool {
        truth(root, value) == true
    }

    /// Whether the row with stored values `values` (in `columnOrder`) matches.
    package func matches(_ values: [SQLValue]) -> Bool {
        matches { $0 < values.count ? values[$0] : .null }
    }

    private func truth(_ node: Node, _ value: (Int) -> SQLValue) -> Bool? {
        switch node {
        case let .constant(result):
            return result
        case let .compare(column, op, literal):
            return QueryEvaluator.compareConverted(value(column), op, literal)
        case let .isNull(column, negated):
            return value(column).isNull != negated
        case let .inList(column, values, hasNull, isEmpty, negated):
            if isEmpty { return negated }
            let subject = value(column)
            let result: Bool?
            if subject.isNull {
                result = nil
            } else if Self.sortedContains(values, subject) {
                result = true
            } else {
                result = hasNull ? nil : false
            }
            return negated ? result.map(!) : result
        case let .like(column, pattern, negated):
            let subject = value(column)
            if case .blob = subject { return negated }
            guard let text = subject.textForPattern else { return nil }
            return LikePattern.matches(text, pattern: pattern) != negated
        case let .and(nodes):
            var result: Bool? = true
            for node in nodes {
                result = QueryEvaluator.and(result, truth(node, value))
                if result == false { return false }
            }
            return result
        case let .or(nodes):
            var result: Bool? = false
            for node in nodes {
                result = QueryEvaluator.or(result, truth(node, value))
                if result == true { return true }
            }
            return result
        case let .not(inner):
            return truth(inner, value).map(!)
        case let .general(expression):
            return evaluator.truth(of: expression) { name in
                // Stored values already carry the column's affinity; applying it again is a no-op.
                positions[name].map(value) ?? .null
            }
        }
    }

    /// Whether sorted `values` hold one equal to `value` in SQLite's order.
    static func sortedContains(_ values: [SQLValue], _ value: SQLValue) -> Bool {
        var low = 0
        var high = values.count
        while low < high {
            let middle = (low + high) / 2
            let order = SQLValue.compare(values[middle], value)
            if order == 0 { return true }
            if order < 0 { low = middle + 1 } else { high = middle }
        }
        return false
    }
}

extension QueryEvaluator {
    /// `expression` (bound: no parameters left) prepared for rows given by position in
    /// `columnOrder`; nil matches every row. A column not in `columnOrder` reads NULL.
    package func prepare(_ expression: QueryExpression?, columnOrder: [String]) -> PreparedCondition {
        var positions: [String: Int] = [:]
        for (position, name) in columnOrder.enumerated() where positions[name] == nil { positions[name] = position }
        let root = expression.map { node(for: $0, positions: positions) } ?? .constant(true)
        return PreparedCondition(root: root, evaluator: self, positions: positions)
    }

    private func node(for expression: QueryExpression, positions: [String: Int]) -> PreparedCondition.Node {
        if let chain = expression.chain {
            let nodes = chain.operands.map { node(for: $0, positions: positions) }
            return chain.connective == .and ? .and(nodes) : .or(nodes)
        }
        func column(_ operand: QueryOperand) -> (position: Int, type: ColumnType)? {
            guard case let .column(name) = operand, let position = positions[name], let type = columns[name] else { return nil }
            return (position, type)
        }
        func literal(_ operand: QueryOperand) -> SQLValue? {
            if case let .literal(value) = operand { return value }
            return nil
        }
        switch expression {
        case let .comparison(lhs, op, rhs):
            if let (position, type) = column(lhs), let value = literal(rhs) {
                return .compare(column: position, op: op, value: value.applyingComparisonAffinity(type))
            }
            if let (position, type) = column(rhs), let value = literal(lhs) {
                return .compare(column: position, op: op.swapped, value: value.applyingComparisonAffinity(type))
            }
        case let .isNull(operand, negated):
            if let (position, _) = column(operand) { return .isNull(column: position, negated: negated) }
        case let .between(operand, low, high, negated):
            if let (position, type) = column(operand), let low = literal(low), let high = literal(high) {
                let both = PreparedCondition.Node.and([
                    .compare(column: position, op: .greaterOrEqual, value: low.applyingComparisonAffinity(type)),
                    .compare(column: position, op: .lessOrEqual, value: high.applyingComparisonAffinity(type)),
                ])
                return negated ? .not(both) : both
            }
        case let .inList(operand, items, negated):
            if let (position, type) = column(operand) {
                let values = items.compactMap(literal)
                if values.count == items.count {
                    let converted = values.map { $0.applyingComparisonAffinity(type) }
                    let present = converted.filter { !$0.isNull }.sorted { SQLValue.compare($0, $1) < 0 }
                    return .inList(column: position, values: present, hasNull: present.count < converted.count,
                                   isEmpty: items.isEmpty, negated: negated)
                }
            }
        case let .like(operand, pattern, nil, negated):
            if let (position, _) = column(operand), case let .text(text)? = literal(pattern) {
                return .like(column: position, pattern: text, negated: negated)
            }
        case let .not(inner):
            return .not(node(for: inner, positions: positions))
        default:
            break
        }
        return .general(expression)
    }

    /// A comparison of two values already converted for it (SQLite §4.2), with the NULL rule:
    /// `IS`/`IS NOT` are never NULL, the others are NULL when either side is.
    static func compareConverted(_ stored: SQLValue, _ op: ComparisonOperator, _ literal: SQLValue) -> Bool? {
        switch op {
        case .is: return SQLValue.compare(stored, literal) == 0 && stored.isNull == literal.isNull
        case .isNot: return !(SQLValue.compare(stored, literal) == 0 && stored.isNull == literal.isNull)
        default: break
        }
        if stored.isNull || literal.isNull { return nil }
        let order = SQLValue.compare(stored, literal)
        switch op {
        case .equal: return order == 0
        case .notEqual: return order != 0
        case .less: return order < 0
        case .lessOrEqual: return order <= 0
        case .greater: return order > 0
        case .greaterOrEqual: return order >= 0
        case .is, .isNot: return nil
        }
    }
}
