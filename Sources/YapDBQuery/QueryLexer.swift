/// One token of a query text.
struct QueryToken: Sendable, Equatable {
    /// What the token is.
    enum Kind: Sendable, Equatable {
        /// A bare word (a keyword or a column name), as written.
        case word(String)
        /// A quoted identifier; `doubleQuoted` for `"…"` (which SQLite reads as a string
        /// literal when no column has that name).
        case quotedIdentifier(String, doubleQuoted: Bool)
        /// A `'…'` string literal, with `''` unescaped.
        case string(String)
        /// A numeric literal, as written (digits, `.`, exponent).
        case number(String)
        /// An `X'…'` blob literal's bytes.
        case blob([UInt8])
        /// `?`.
        case parameter
        /// Punctuation or an operator: `=`, `==`, `!=`, `<>`, `<`, `<=`, `>`, `>=`, `(`, `)`,
        /// `,`, `;`, `+`, `-`, `*`, `/`, `||`, `.`.
        case symbol(String)
        /// The end of the text.
        case end
    }

    var kind: Kind
    /// Offset of the token's first character, in Unicode scalars from the start.
    var offset: Int

    /// The token as the error messages quote it.
    var spelling: String {
        switch kind {
        case let .word(word): return word
        case let .quotedIdentifier(name, doubleQuoted): return doubleQuoted ? "\"\(name)\"" : "[\(name)]"
        case let .string(text): return SQLValue.text(text).sqlLiteral
        case let .number(text): return text
        case let .blob(bytes): return SQLValue.blob(bytes).sqlLiteral
        case .parameter: return "?"
        case let .symbol(symbol): return symbol
        case .end: return "end of query"
        }
    }

    /// Whether this is the bare keyword `keyword` (compared ignoring ASCII case).
    func isKeyword(_ keyword: String) -> Bool {
        if case let .word(word) = kind { return word.uppercased() == keyword }
        return false
    }

    /// Whether this is the symbol `symbol`.
    func isSymbol(_ symbol: String) -> Bool {
        kind == .symbol(symbol)
    }
}

/// Splits a query text into tokens (SQLite's lexical rules for the subset we accept).
struct QueryLexer {
    private let scalars: [Unicode.Scalar]
    private var position = 0

    init(_ text: String) {
        scalars = Array(text.unicodeScalars)
    }

    /// All the tokens of the text, ending with `.end`.
    static func tokens(of text: String) throws(QueryError) -> [QueryToken] {
        var lexer = QueryLexer(text)
        var tokens: [QueryToken] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private func peek(_ ahead: Int = 0) -> Unicode.Scalar? {
        position + ahead < scalars.count ? scalars[position + ahead] : nil
    }

    private static func isIdentifierStart(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z") || scalar.value >= 0x80
    }

    private static func isIdentifierPart(_ scalar: Unicode.Scalar) -> Bool {
        isIdentifierStart(scalar) || isDigit(scalar) || scalar == "$"
    }

    private static func isDigit(_ scalar: Unicode.Scalar) -> Bool { scalar >= "0" && scalar <= "9" }

    private func error(_ reason: QueryError.Reason, at offset: Int) -> QueryError {
        QueryError(offset: offset, reason: reason)
    }

    private mutating func next() throws(QueryError) -> QueryToken {
        try skipSpaceAndComments()
        let start = position
        guard let scalar = peek() else { return QueryToken(kind: .end, offset: start) }
        if (scalar == "x" || scalar == "X"), peek(1) == "'" {
            position += 1
            let hex = try quoted(until: "'", start: start, unterminated: .unterminatedString)
            return QueryToken(kind: .blob(try Self.bytes(fromHex: hex, at: start)), offset: start)
        }
        if Self.isIdentifierStart(scalar) {
            while let next = peek(), Self.isIdentifierPart(next) { position += 1 }
            return QueryToken(kind: .word(String(String.UnicodeScalarView(scalars[start..<position]))), offset: start)
        }
        if Self.isDigit(scalar) || (scalar == "." && peek(1).map(Self.isDigit) == true) {
            return QueryToken(kind: .number(try number(start: start)), offset: start)
        }
        switch scalar {
        case "'":
            return QueryToken(kind: .string(try quoted(until: "'", start: start, unterminated: .unterminatedString)), offset: start)
        case "\"":
            let name = try quoted(until: "\"", start: start, unterminated: .unterminatedIdentifier)
            return QueryToken(kind: .quotedIdentifier(name, doubleQuoted: true), offset: start)
        case "`":
            let name = try quoted(until: "`", start: start, unterminated: .unterminatedIdentifier)
            return QueryToken(kind: .quotedIdentifier(name, doubleQuoted: false), offset: start)
        case "[":
            position += 1
            while let next = peek(), next != "]" { position += 1 }
            guard peek() == "]" else { throw error(.unterminatedIdentifier, at: start) }
            position += 1
            let name = String(String.UnicodeScalarView(scalars[(start + 1)..<(position - 1)]))
            return QueryToken(kind: .quotedIdentifier(name, doubleQuoted: false), offset: start)
        case "?":
            position += 1
            if let next = peek(), Self.isDigit(next) {
                throw error(.unsupported("a numbered parameter (?NNN)"), at: start)
            }
            return QueryToken(kind: .parameter, offset: start)
        case ":", "@", "$":
            throw error(.unsupported("a named parameter (\(scalar)name)"), at: start)
        default:
            break
        }
        let two = peek(1).map { String(scalar) + String($0) } ?? ""
        if ["==", "!=", "<>", "<=", ">=", "||"].contains(two) {
            position += 2
            return QueryToken(kind: .symbol(two), offset: start)
        }
        if "=<>(),;+-*/.".unicodeScalars.contains(scalar) {
            position += 1
            return QueryToken(kind: .symbol(String(scalar)), offset: start)
        }
        throw error(.unexpectedCharacter(Character(scalar)), at: start)
    }

    /// Skips whitespace, `-- line` comments and `/* block */` comments.
    private mutating func skipSpaceAndComments() throws(QueryError) {
        while let scalar = peek() {
            if scalar.properties.isWhitespace {
                position += 1
            } else if scalar == "-", peek(1) == "-" {
                while let next = peek(), next != "\n" { position += 1 }
            } else if scalar == "/", peek(1) == "*" {
                position += 2
                while peek() != nil, !(peek() == "*" && peek(1) == "/") { position += 1 }
                position = min(position + 2, scalars.count)
            } else {
                return
            }
        }
    }

    /// The text between the delimiter at `position` and its closing twin, a doubled delimiter
    /// standing for one.
    private mutating func quoted(
        until delimiter: Unicode.Scalar, start: Int, unterminated: QueryError.Reason
    ) throws(QueryError) -> String {
        position += 1
        var text = String.UnicodeScalarView()
        while true {
            guard let scalar = peek() else { throw error(unterminated, at: start) }
            position += 1
            if scalar == delimiter {
                if peek() == delimiter {
                    position += 1
                    text.append(delimiter)
                } else {
                    return String(text)
                }
            } else {
                text.append(scalar)
            }
        }
    }

    /// A numeric literal: digits, an optional fraction, an optional exponent; a hexadecimal
    /// integer `0x…`. Letters straight after it are an error (`12abc`).
    private mutating func number(start: Int) throws(QueryError) -> String {
        if peek() == "0", peek(1) == "x" || peek(1) == "X" {
            position += 2
            while let next = peek(), next.properties.isASCIIHexDigit { position += 1 }
            let text = String(String.UnicodeScalarView(scalars[start..<position]))
            if position == start + 2 || peek().map(Self.isIdentifierPart) == true {
                throw error(.malformedNumber(text), at: start)
            }
            return text
        }
        while let next = peek(), Self.isDigit(next) { position += 1 }
        if peek() == "." {
            position += 1
            while let next = peek(), Self.isDigit(next) { position += 1 }
        }
        if peek() == "e" || peek() == "E" {
            position += 1
            if peek() == "+" || peek() == "-" { position += 1 }
            let digitsStart = position
            while let next = peek(), Self.isDigit(next) { position += 1 }
            if position == digitsStart {
                throw error(.malformedNumber(String(String.UnicodeScalarView(scalars[start..<position]))), at: start)
            }
        }
        if let next = peek(), Self.isIdentifierPart(next) || next == "." {
            while let more = peek(), Self.isIdentifierPart(more) || more == "." { position += 1 }
            throw error(.malformedNumber(String(String.UnicodeScalarView(scalars[start..<position]))), at: start)
        }
        return String(String.UnicodeScalarView(scalars[start..<position]))
    }

    /// The bytes of a blob literal's hexadecimal digits.
    private static func bytes(fromHex hex: String, at offset: Int) throws(QueryError) -> [UInt8] {
        let digits = Array(hex.unicodeScalars)
        guard digits.count % 2 == 0, digits.allSatisfy({ $0.properties.isASCIIHexDigit }) else {
            throw QueryError(offset: offset, reason: .malformedNumber("X'\(hex)'"))
        }
        var bytes: [UInt8] = []
        var index = 0
        while index < digits.count {
            guard let byte = UInt8(String(digits[index]) + String(digits[index + 1]), radix: 16) else {
                throw QueryError(offset: offset, reason: .malformedNumber("X'\(hex)'"))
            }
            bytes.append(byte)
            index += 2
        }
        return bytes
    }
}
