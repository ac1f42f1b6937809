/// Writes queries back as SQL text that parses to the same query (and that SQLite runs with the
/// same meaning, for the benchmark's and tests' SQL peers).
package enum SQLRenderer {
    /// A column name as a double-quoted identifier (`"age"`, `"say ""hi"""`).
    package static func identifier(_ name: String) -> String {
        "\"" + name.replacingAll("\"", with: "\"\"") + "\""
    }

    /// An operand: a quoted column, a literal, or `?`.
    package static func operand(_ operand: QueryOperand) -> String {
        switch operand {
        case let .column(name): return identifier(name)
        case let .literal(value): return value.sqlLiteral
        case .parameter: return "?"
        }
    }

    /// An expression, fully parenthesised below the top level.
    package static func expression(_ expression: QueryExpression) -> String {
        switch expression {
        case let .comparison(lhs, op, rhs): return "\(operand(lhs)) \(op.rawValue) \(operand(rhs))"
        case let .isNull(target, negated): return "\(operand(target)) IS \(negated ? "NOT " : "")NULL"
        case let .truth(target): return operand(target)
        case let .between(target, low, high, negated):
            return "\(operand(target)) \(negated ? "NOT " : "")BETWEEN \(operand(low)) AND \(operand(high))"
        case let .inList(target, items, negated):
            return "\(operand(target)) \(negated ? "NOT " : "")IN (\(items.map(operand).joined(separator: ", ")))"
        case let .like(target, pattern, escape, negated):
            let escapeText = escape.map { " ESCAPE \(operand($0))" } ?? ""
            return "\(operand(target)) \(negated ? "NOT " : "")LIKE \(operand(pattern))\(escapeText)"
        case let .and(lhs, rhs): return "(\(self.expression(lhs))) AND (\(self.expression(rhs)))"
        case let .or(lhs, rhs): return "(\(self.expression(lhs))) OR (\(self.expression(rhs)))"
        case let .not(inner): return "NOT (\(self.expression(inner)))"
        }
    }

    /// The clauses of a query (`WHERE … ORDER BY … LIMIT … OFFSET …`), empty for none.
    package static func clauses(
        where whereClause: QueryExpression?, orderBy: [OrderTerm], limit: String?, offset: String?
    ) -> String {
        var parts: [String] = []
        if let whereClause { parts.append("WHERE " + expression(whereClause)) }
        if !orderBy.isEmpty {
            parts.append("ORDER BY " + orderBy.map { identifier($0.column) + ($0.descending ? " DESC" : " ASC") }.joined(separator: ", "))
        }
        if let limit {
            parts.append("LIMIT " + limit)
            if let offset { parts.append("OFFSET " + offset) }
        } else if let offset {
            parts.append("LIMIT -1 OFFSET " + offset)
        }
        return parts.joined(separator: " ")
    }
}

extension ParsedQuery {
    /// The query as SQL text that parses back to an equal query.
    package var sql: String {
        SQLRenderer.clauses(
            where: whereClause, orderBy: orderBy,
            limit: limit.map(SQLRenderer.operand), offset: offset.map(SQLRenderer.operand)
        )
    }
}

extension BoundQuery {
    /// The query as SQL text with its values inline (no parameters).
    package var sql: String {
        SQLRenderer.clauses(where: whereClause, orderBy: orderBy, limit: limit.map(String.init), offset: offset == 0 ? nil : String(offset))
    }
}
