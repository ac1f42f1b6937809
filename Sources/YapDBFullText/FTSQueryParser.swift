/// A recursive-descent parser for FTS5's query grammar (see `FTSQuery.parse`).
///
/// Precedence, tightest first: adjacent units (implicit AND), `NOT`, `AND`, `OR`, as in FTS5, whose
/// grammar joins adjacent phrases before any operator (`a NOT b c` is `a NOT (b c)`). FTS5 refuses
/// implicit AND next to a parenthesized group; this parser accepts it (`(a OR b) c`), as FTS4 does.
/// Phrases that tokenize to nothing (`""`, `_`) are dropped as FTS5 drops them: an AND ignores them,
/// `x NOT ""` is `x`, and a query of only such phrases matches nothing.
struct FTSQueryParser {
    private let lexemes: [FTSQueryLexeme]
    private let columnNames: [String]
    private let tokenizer: FTSTokenizer
    private var at = 0
    private var depth = 0
    private var phraseCount = 0

    init(text: String, columnNames: [String], tokenizer: FTSTokenizer) throws(FTSError) {
        let bytes = Array(text.utf8)
        guard bytes.count <= FTSQuery.maximumLength else {
            throw FTSError(.tooLong, offset: FTSQuery.maximumLength, "the query is longer than \(FTSQuery.maximumLength) bytes")
        }
        lexemes = try FTSQueryLexer.lex(bytes)
        self.columnNames = columnNames.map { $0.lowercasedASCII }
        self.tokenizer = tokenizer
    }

    mutating func parseQuery() throws(FTSError) -> FTSQuery {
        if case .end = lexemes[0].kind { return FTSQuery(root: nil, phrases: []) }
        let root = try parseOr(columns: nil)
        let next = lexemes[at]
        switch next.kind {
        case .end: break
        case .rightParen: throw FTSError(.unbalancedParenthesis, offset: next.offset, "a ) without its (")
        default: throw FTSError(.unexpectedToken, offset: next.offset, "syntax error near \(describe(next))")
        }
        return FTSQuery(root: root, phrases: FTSQuery.leafPhrases(of: root))
    }

    // MARK: Operators

    private mutating func parseOr(columns: [Int]?) throws(FTSError) -> FTSQueryNode? {
        var children = [try parseAnd(columns: columns)]
        while case .or = lexemes[at].kind {
            at += 1
            children.append(try parseAnd(columns: columns))
        }
        return Self.combine(children, or: true)
    }

    private mutating func parseAnd(columns: [Int]?) throws(FTSError) -> FTSQueryNode? {
        var children = [try parseNot(columns: columns)]
        while case .and = lexemes[at].kind {
            at += 1
            children.append(try parseNot(columns: columns))
        }
        return Self.combine(children, or: false)
    }

    private mutating func parseNot(columns: [Int]?) throws(FTSError) -> FTSQueryNode? {
        var left = try parseSequence(columns: columns)
        var chain = 0
        while case .not = lexemes[at].kind {
            // Each NOT nests the tree one level deeper (it is left-associative): bounded like parentheses.
            chain += 1
            guard depth + chain <= FTSQuery.maximumDepth else {
                throw FTSError(.tooDeep, offset: lexemes[at].offset, "more than \(FTSQuery.maximumDepth) NOTs nested")
            }
            at += 1
            let right = try parseSequence(columns: columns)
            if let kept = left, let right { left = .not(kept, excluding: right) }
        }
        return left
    }

    /// One or more adjacent units: their implicit AND.
    private mutating func parseSequence(columns: [Int]?) throws(FTSError) -> FTSQueryNode? {
        var children = [try parseUnit(columns: columns)]
        while startsUnit(lexemes[at]) {
            children.append(try parseUnit(columns: columns))
        }
        return Self.combine(children, or: false)
    }

    private func startsUnit(_ lexeme: FTSQueryLexeme) -> Bool {
        switch lexeme.kind {
        case .string, .leftParen, .leftBrace, .minus, .caret: return true
        default: return false
        }
    }

    /// AND or OR of the non-empty children (nil when all are empty), flattening nested ones.
    private static func combine(_ children: [FTSQueryNode?], or: Bool) -> FTSQueryNode? {
        var flat: [FTSQueryNode] = []
        for child in children {
            switch child {
            case nil: continue
            case .and(let inner)? where !or: flat.append(contentsOf: inner)
            case .or(let inner)? where or: flat.append(contentsOf: inner)
            case let node?: flat.append(node)
            }
        }
        if flat.count <= 1 { return flat.first }
        return or ? .or(flat) : .and(flat)
    }

    // MARK: Units

    private mutating func parseUnit(columns inherited: [Int]?) throws(FTSError) -> FTSQueryNode? {
        var columns = inherited
        let first = lexemes[at]
        var hasColumnFilter = false
        switch first.kind {
        case .minus, .leftBrace:
            hasColumnFilter = true
        case .string where lexemes[at + 1].kind == .colon:
            hasColumnFilter = true
        default: break
        }
        if hasColumnFilter {
            columns = try parseColumnFilter(inherited: inherited)
        }
        let lexeme = lexemes[at]
        switch lexeme.kind {
        case .leftParen:
            depth += 1
            guard depth <= FTSQuery.maximumDepth else {
                throw FTSError(.tooDeep, offset: lexeme.offset, "parentheses nested deeper than \(FTSQuery.maximumDepth)")
            }
            at += 1
            let inner = try parseOr(columns: columns)
            let close = lexemes[at]
            switch close.kind {
            case .rightParen: at += 1
            case .end: throw FTSError(.unbalancedParenthesis, offset: lexeme.offset, "the ( here is never closed")
            default: throw FTSError(.unexpectedToken, offset: close.offset, "syntax error near \(describe(close))")
            }
            depth -= 1
            return inner
        case .string(let word, quoted: false) where lexemes[at + 1].kind == .leftParen:
            guard word == "NEAR" else {
                throw FTSError(.unexpectedToken, offset: lexeme.offset, "syntax error near \"\(word)\": only NEAR may be followed by (")
            }
            return try parseNearGroup(columns: columns)
        case .string, .caret:
            return try parsePhraseChain(columns: columns)
        default:
            throw missingOperand(lexeme)
        }
    }

    private func missingOperand(_ lexeme: FTSQueryLexeme) -> FTSError {
        switch lexeme.kind {
        case .end: return FTSError(.emptyExpression, offset: lexeme.offset, "the query ends where a term was expected")
        case .rightParen where depth > 0: return FTSError(.emptyExpression, offset: lexeme.offset, "nothing to search before this )")
        case .rightParen: return FTSError(.unbalancedParenthesis, offset: lexeme.offset, "a ) without its (")
        case .rightBrace: return FTSError(.unbalancedParenthesis, offset: lexeme.offset, "a } without its {")
        default: return FTSError(.unexpectedToken, offset: lexeme.offset, "syntax error near \(describe(lexeme)): a term was expected")
        }
    }

    /// `col:`, `{c1 c2}:`, `-col:` or `-{c1 c2}:`, intersected with the filter already in force.
    private mutating func parseColumnFilter(inherited: [Int]?) throws(FTSError) -> [Int]? {
        var exclude = false
        if case .minus = lexemes[at].kind { exclude = true; at += 1 }
        var named: Set<Int> = []
        let lexeme = lexemes[at]
        switch lexeme.kind {
        case .leftBrace:
            at += 1
            while case .string(let name, _) = lexemes[at].kind {
                named.insert(try column(name, offset: lexemes[at].offset))
                at += 1
            }
            switch lexemes[at].kind {
            case .rightBrace where !named.isEmpty: at += 1
            case .end: throw FTSError(.unbalancedParenthesis, offset: lexeme.offset, "the { here is never closed")
            default: throw FTSError(.unexpectedToken, offset: lexemes[at].offset, "syntax error near \(describe(lexemes[at])): a column name was expected")
            }
        case .string(let name, _):
            named.insert(try column(name, offset: lexeme.offset))
            at += 1
        default:
            throw FTSError(.unexpectedToken, offset: lexeme.offset, "syntax error near \(describe(lexeme)): a column name was expected after -")
        }
        guard case .colon = lexemes[at].kind else {
            throw FTSError(.unexpectedToken, offset: lexemes[at].offset, "syntax error near \(describe(lexemes[at])): : was expected after the column names")
        }
        at += 1
        var chosen = exclude ? Set(columnNames.indices).subtracting(named) : named
        if let inherited { chosen.formIntersection(inherited) }
        if chosen.count == columnNames.count { return nil }
        return chosen.sorted()
    }

    private func column(_ name: String, offset: Int) throws(FTSError) -> Int {
        let lowered = name.lowercasedASCII
        guard let index = columnNames.firstIndex(of: lowered) else {
            throw FTSError(.unknownColumn, offset: offset, "no such column: \(name)")
        }
        return index
    }

    /// `NEAR(p1 p2 … [, n])`.
    private mutating func parseNearGroup(columns: [Int]?) throws(FTSError) -> FTSQueryNode? {
        let nearOffset = lexemes[at].offset
        at += 2  // NEAR (
        var group: [FTSPhrase] = []
        var sawPhrase = false
        var distance = 10
        loop: while true {
            let lexeme = lexemes[at]
            switch lexeme.kind {
            case .string:
                sawPhrase = true
                if let phrase = try parsePhrase() { group.append(phrase) }
            case .caret:
                throw FTSError(.badNear, offset: lexeme.offset, "^ is not allowed inside NEAR(…)")
            case .comma where sawPhrase:
                at += 1
                let number = lexemes[at]
                guard case .string(let digits, _) = number.kind, !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                    throw FTSError(.badNear, offset: number.offset, "NEAR's distance must be a whole number")
                }
                guard digits.utf8.count <= 7, let value = Int(digits), value <= FTSQuery.maximumNearDistance else {
                    throw FTSError(.badNear, offset: number.offset, "the NEAR distance is larger than \(FTSQuery.maximumNearDistance)")
                }
                distance = value
                at += 1
                guard case .rightParen = lexemes[at].kind else {
                    throw FTSError(.badNear, offset: lexemes[at].offset, "NEAR(…) must close after its distance")
                }
                at += 1
                break loop
            case .rightParen where sawPhrase:
                at += 1
                break loop
            case .end:
                throw FTSError(.unbalancedParenthesis, offset: nearOffset, "the NEAR( here is never closed")
            default:
                throw FTSError(.badNear, offset: lexeme.offset, "syntax error near \(describe(lexeme)) in NEAR(…): phrases were expected")
            }
        }
        if group.isEmpty { return nil }
        return .near(group, distance: distance, columns: columns)
    }

    /// `[^]phrase`, or FTS4's `phrase NEAR/n phrase …` (each pair becomes a NEAR group of two).
    private mutating func parsePhraseChain(columns: [Int]?) throws(FTSError) -> FTSQueryNode? {
        var mustStart = false
        if case .caret = lexemes[at].kind { mustStart = true; at += 1 }
        let first = try parsePhrase()
        guard case .nearSlash = lexemes[at].kind else {
            guard var phrase = first else { return nil }
            phrase.mustStartColumn = mustStart
            return .phrase(phrase, columns: columns)
        }
        if mustStart {
            throw FTSError(.badNear, offset: lexemes[at].offset, "^ is not allowed in a NEAR/n chain")
        }
        var chain: [FTSPhrase?] = [first]
        var distances: [Int] = []
        while case .nearSlash(let distance) = lexemes[at].kind {
            at += 1
            guard case .string = lexemes[at].kind else {
                throw FTSError(.badNear, offset: lexemes[at].offset, "a phrase must follow NEAR/\(distance)")
            }
            distances.append(distance)
            chain.append(try parsePhrase())
        }
        var groups: [FTSQueryNode] = []
        for (index, distance) in distances.enumerated() {
            let pair = [chain[index], chain[index + 1]].compactMap { $0 }
            if pair.count == 2 {
                groups.append(.near(pair, distance: distance, columns: columns))
            } else if let only = pair.first {
                groups.append(.phrase(only, columns: columns))
            }
        }
        return Self.combine(groups, or: false)
    }

    /// `string[*] (+ string[*])…`; nil when its strings tokenize to nothing.
    private mutating func parsePhrase() throws(FTSError) -> FTSPhrase? {
        var terms: [String] = []
        var prefix = false
        while true {
            let lexeme = lexemes[at]
            guard case .string(let text, _) = lexeme.kind else {
                throw missingOperand(lexeme)
            }
            if prefix {
                throw FTSError(.unexpectedToken, offset: lexeme.offset, "a prefix * may only end a phrase")
            }
            at += 1
            terms.append(contentsOf: tokenizer.tokens(in: text).map(\.term))
            if case .star = lexemes[at].kind { prefix = true; at += 1 }
            guard case .plus = lexemes[at].kind else { break }
            at += 1
        }
        if terms.isEmpty { return nil }
        phraseCount += 1
        guard phraseCount <= FTSQuery.maximumPhrases else {
            throw FTSError(.tooLong, offset: lexemes[at - 1].offset, "the query has more than \(FTSQuery.maximumPhrases) phrases")
        }
        return FTSPhrase(terms: terms, lastIsPrefix: prefix)
    }

    private func describe(_ lexeme: FTSQueryLexeme) -> String {
        switch lexeme.kind {
        case .string(let text, _): return "\"\(text)\""
        case .and: return "AND"
        case .or: return "OR"
        case .not: return "NOT"
        case .nearSlash(let distance): return "NEAR/\(distance)"
        case .leftParen: return "("
        case .rightParen: return ")"
        case .leftBrace: return "{"
        case .rightBrace: return "}"
        case .colon: return ":"
        case .comma: return ","
        case .plus: return "+"
        case .star: return "*"
        case .minus: return "-"
        case .caret: return "^"
        case .end: return "the end of the query"
        }
    }
}

extension String {
    /// ASCII letters lowercased, everything else kept (how column names compare).
    var lowercasedASCII: String {
        String(decoding: utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
    }
}
