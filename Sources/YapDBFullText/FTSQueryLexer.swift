/// A token of query text (FTS5's lexical rules, plus FTS4's `NEAR/n`).
struct FTSQueryLexeme: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        /// A bareword (letters, digits, `_`, any non-ASCII character) or a "quoted string" (`""` stands for `"`).
        case string(String, quoted: Bool)
        case and, or, not
        /// FTS4's `NEAR/n` (a bare `NEAR` is an ordinary word, as in FTS5, unless `(` follows it).
        case nearSlash(Int)
        case leftParen, rightParen, leftBrace, rightBrace, colon, comma, plus, star, minus, caret
        case end
    }

    var kind: Kind
    /// UTF-8 offset of the token's first byte.
    var offset: Int
}

enum FTSQueryLexer {
    /// The bytes of barewords: ASCII letters, digits, `_`, 0x1A, and every byte of a non-ASCII character.
    @inline(__always)
    static func isBarewordByte(_ byte: UInt8) -> Bool {
        byte >= 0x80 || (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F || byte == 0x1A
    }

    static func lex(_ bytes: [UInt8]) throws(FTSError) -> [FTSQueryLexeme] {
        var result: [FTSQueryLexeme] = []
        var at = 0
        while at < bytes.count {
            let byte = bytes[at]
            let start = at
            let punctuation: FTSQueryLexeme.Kind?
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D: at += 1; continue
            case 0x28: punctuation = .leftParen
            case 0x29: punctuation = .rightParen
            case 0x7B: punctuation = .leftBrace
            case 0x7D: punctuation = .rightBrace
            case 0x3A: punctuation = .colon
            case 0x2C: punctuation = .comma
            case 0x2B: punctuation = .plus
            case 0x2A: punctuation = .star
            case 0x2D: punctuation = .minus
            case 0x5E: punctuation = .caret
            default: punctuation = nil
            }
            if let punctuation {
                result.append(FTSQueryLexeme(kind: punctuation, offset: start))
                at += 1
                continue
            }
            if byte == 0x22 {
                var content: [UInt8] = []
                at += 1
                while true {
                    guard at < bytes.count else { throw FTSError(.unterminatedString, offset: start, "the string starting here has no closing \"") }
                    if bytes[at] == 0x22 {
                        if at + 1 < bytes.count, bytes[at + 1] == 0x22 { content.append(0x22); at += 2; continue }
                        at += 1
                        break
                    }
                    content.append(bytes[at])
                    at += 1
                }
                result.append(FTSQueryLexeme(kind: .string(String(decoding: content, as: UTF8.self), quoted: true), offset: start))
                continue
            }
            guard isBarewordByte(byte) else {
                throw FTSError(.unexpectedToken, offset: start, "syntax error near \"\(String(decoding: [byte], as: UTF8.self))\": only letters, digits, _ and non-ASCII characters may appear outside quotes")
            }
            while at < bytes.count, isBarewordByte(bytes[at]) { at += 1 }
            let word = String(decoding: bytes[start..<at], as: UTF8.self)
            switch word {
            case "AND": result.append(FTSQueryLexeme(kind: .and, offset: start))
            case "OR": result.append(FTSQueryLexeme(kind: .or, offset: start))
            case "NOT": result.append(FTSQueryLexeme(kind: .not, offset: start))
            case "NEAR" where at < bytes.count && bytes[at] == 0x2F:
                // FTS4's NEAR/n: the distance follows the slash directly.
                var digitsEnd = at + 1
                var distance = 0
                while digitsEnd < bytes.count, bytes[digitsEnd] >= 0x30, bytes[digitsEnd] <= 0x39 {
                    distance = distance * 10 + Int(bytes[digitsEnd] - 0x30)
                    guard distance <= FTSQuery.maximumNearDistance else {
                        throw FTSError(.badNear, offset: at + 1, "the NEAR distance is larger than \(FTSQuery.maximumNearDistance)")
                    }
                    digitsEnd += 1
                }
                guard digitsEnd > at + 1, digitsEnd == bytes.count || !isBarewordByte(bytes[digitsEnd]) else {
                    throw FTSError(.badNear, offset: at + 1, "NEAR/ must be followed by a whole number")
                }
                result.append(FTSQueryLexeme(kind: .nearSlash(distance), offset: start))
                at = digitsEnd
            default:
                result.append(FTSQueryLexeme(kind: .string(word, quoted: false), offset: start))
            }
        }
        result.append(FTSQueryLexeme(kind: .end, offset: bytes.count))
        return result
    }
}
