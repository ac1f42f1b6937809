/// Writes queries back as SQL text that parses to the same query (and that SQLite runs with the
/// same meaning, for the benchmark's and tests' SQL peers).
package enum SQLRenderer {
    /// A column name: bare when it is a plain word that is no SQL keyword (`age`), else in
    /// backticks (`` `order` ``, `` `first name` ``). Never double quotes, which SQLite reads as
    /// a string when no column has the name.
    package static func identifier(_ name: String) -> String {
        let isPlainWord = name.unicodeScalars.first.map { $0 == "_" || ($0.isASCII && $0.properties.isAlphabetic) } == true
            && name.unicodeScalars.allSatisfy { $0 == "_" || ($0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil)) }
        if isPlainWord && !sqliteKeywords.contains(name.uppercased()) { return name }
        return "`" + name.replacingAll("`", with: "``") + "`"
    }

    /// SQLite's keywords (https://sqlite.org/lang_keywords.html), none of which is written bare.
    static let sqliteKeywords: Set<String> = [
        "ABORT", "ACTION", "ADD", "AFTER", "ALL", "ALTER", "ALWAYS", "ANALYZE", "AND", "AS", "ASC",
        "ATTACH", "AUTOINCREMENT", "BEFORE", "BEGIN", "BETWEEN", "BY", "CASCADE", "CASE", "CAST",
        "CHECK", "COLLATE", "COLUMN", "COMMIT", "CONFLICT", "CONSTRAINT", "CREATE", "CROSS",
        "CURRENT", "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP", "DATABASE", "DEFAULT",
        "DEFERRABLE", "DEFERRED", "DELETE", "DESC", "DETACH", "DISTINCT", "DO", "DROP", "EACH",
        "ELSE", "END", "ESCAPE", "EXCEPT", "EXCLUDE", "EXCLUSIVE", "EXISTS", "EXPLAIN", "FAIL",
        "FALSE", "FILTER", "FIRST", "FOLLOWING", "FOR", "FOREIGN", "FROM", "FULL", "GENERATED",
        "GLOB", "GROUP", "GROUPS", "HAVING", "IF", "IGNORE", "IMMEDIATE", "IN", "INDEX", "INDEXED",
        "INITIALLY", "INNER", "INSERT", "INSTEAD", "INTERSECT", "INTO", "IS", "ISNULL", "JOIN",
        "KEY", "LAST", "LEFT", "LIKE", "LIMIT", "MATCH", "MATERIALIZED", "NATURAL", "NO", "NOT",
        "NOTHING", "NOTNULL", "NULL", "NULLS", "OF", "OFFSET", "ON", "OR", "ORDER", "OTHERS",
        "OUTER", "OVER", "PARTITION", "PLAN", "PRAGMA", "PRECEDING", "PRIMARY", "QUERY", "RAISE",
        "RANGE", "RECURSIVE", "REFERENCES", "REGEXP", "REINDEX", "RELEASE", "RENAME", "REPLACE",
        "RESTRICT", "RETURNING", "RIGHT", "ROLLBACK", "ROW", "ROWS", "SAVEPOINT", "SELECT", "SET",
        "TABLE", "TEMP", "TEMPORARY", "THEN", "TIES", "TO", "TRANSACTION", "TRIGGER", "TRUE",
        "UNBOUNDED", "UNION", "UNIQUE", "UPDATE", "USING", "VACUUM", "VALUES", "VIEW", "VIRTUAL",
        "WHEN", "WHERE", "WINDOW", "WITH", "WITHOUT",
    ]

    /// An operand: a quoted column, a literal, or `?`.
    package static func operand(_ operand: QueryOperand) -> String {
        switch operand {
        case let .column(name): return identifier(name)
        case let .literal(value): return value.sqlLiteral
        case .parameter: return "?"
        }
    }

    /// An expression, with parentheses only where the precedence (OR below AND below NOT below
    /// the predicates, AND and OR grouping to the left) needs them, so a long chain of ANDs or
    /// ORs reads back without nesting.
    package static func expression(_ expression: QueryExpression) -> String {
        switch expression {
        case .and, .or:
            // In an AND chain, an OR operand needs parentheses, and so does an AND (it can only
            // be a right-nested group); in an OR chain only an OR does.
            let (connective, operands) = expression.chain ?? (.and, [])
            return operands.map { operand in
                grouped(operand, if: isOr(operand) || (connective == .and && isAnd(operand)))
            }.joined(separator: connective == .and ? " AND " : " OR ")
        case let .comparison(lhs, op, rhs):
            // `x IS (NULL)`: bare, `IS NULL` would read back as the NULL test (same meaning,
            // another tree).
            let right = (op == .is || op == .isNot) && rhs == .literal(.null) ? "(NULL)" : operand(rhs)
            return "\(operand(lhs)) \(op.rawValue) \(right)"
        case let .isNull(target, negated): return "\(operand(target)) IS \(negated ? "NOT " : "")NULL"
        case let .truth(target): return operand(target)
        case let .isBoolean(target, value, negated):
            return "\(operand(target)) IS \(negated ? "NOT " : "")\(value ? "TRUE" : "FALSE")"
        case let .between(target, low, high, negated):
            return "\(operand(target)) \(negated ? "NOT " : "")BETWEEN \(operand(low)) AND \(operand(high))"
        case let .inList(target, items, negated):
            return "\(operand(target)) \(negated ? "NOT " : "")IN (\(items.map(operand).joined(separator: ", ")))"
        case let .like(target, pattern, escape, negated):
            let escapeText = escape.map { " ESCAPE \(operand($0))" } ?? ""
            return "\(operand(target)) \(negated ? "NOT " : "")LIKE \(operand(pattern))\(escapeText)"
        case let .not(inner):
            return "NOT \(grouped(inner, if: isOr(inner) || isAnd(inner)))"
        }
    }

    private static func grouped(_ inner: QueryExpression, if needed: Bool) -> String {
        needed ? "(\(expression(inner)))" : expression(inner)
    }

    private static func isAnd(_ expression: QueryExpression) -> Bool {
        if case .and = expression { return true }
        return false
    }

    private static func isOr(_ expression: QueryExpression) -> Bool {
        if case .or = expression { return true }
        return false
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
