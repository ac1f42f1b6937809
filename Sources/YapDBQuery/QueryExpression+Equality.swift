// Equality and hashing of expressions, written out so that a chain of ANDs or ORs is walked as
// a list (``QueryExpression/chain``) instead of recursing once per link: the synthesized
// versions would recurse as deep as the longest chain the parser accepts.

extension QueryExpression {
    package static func == (lhs: QueryExpression, rhs: QueryExpression) -> Bool {
        switch (lhs.chain, rhs.chain) {
        case let (left?, right?):
            return left.connective == right.connective && left.operands == right.operands
        case (nil, nil):
            break
        default:
            return false
        }
        switch (lhs, rhs) {
        case let (.comparison(a, op, b), .comparison(c, op2, d)): return a == c && op == op2 && b == d
        case let (.isNull(a, n), .isNull(b, m)): return a == b && n == m
        case let (.isBoolean(a, v, n), .isBoolean(b, w, m)): return a == b && v == w && n == m
        case let (.between(a, l, h, n), .between(b, l2, h2, m)): return a == b && l == l2 && h == h2 && n == m
        case let (.inList(a, items, n), .inList(b, items2, m)): return a == b && items == items2 && n == m
        case let (.like(a, p, e, n), .like(b, p2, e2, m)): return a == b && p == p2 && e == e2 && n == m
        case let (.truth(a), .truth(b)): return a == b
        case let (.not(a), .not(b)): return a == b
        default: return false
        }
    }

    package func hash(into hasher: inout Hasher) {
        if let chain {
            hasher.combine(chain.connective)
            hasher.combine(chain.operands)
            return
        }
        switch self {
        case let .comparison(a, op, b): hasher.combine(0); hasher.combine(a); hasher.combine(op); hasher.combine(b)
        case let .isNull(a, n): hasher.combine(1); hasher.combine(a); hasher.combine(n)
        case let .isBoolean(a, v, n): hasher.combine(2); hasher.combine(a); hasher.combine(v); hasher.combine(n)
        case let .between(a, l, h, n): hasher.combine(3); hasher.combine(a); hasher.combine(l); hasher.combine(h); hasher.combine(n)
        case let .inList(a, items, n): hasher.combine(4); hasher.combine(a); hasher.combine(items); hasher.combine(n)
        case let .like(a, p, e, n): hasher.combine(5); hasher.combine(a); hasher.combine(p); hasher.combine(e); hasher.combine(n)
        case let .truth(a): hasher.combine(6); hasher.combine(a)
        case let .not(a): hasher.combine(7); hasher.combine(a)
        case .and, .or: break  // handled by the chain above
        }
    }
}
