/// What a full-text index's tokenizer does: chosen once per index (from YapDatabase's `tokenize`
/// option) and used at index time and at query time alike.
///
/// The default is FTS5's `unicode61 remove_diacritics 2`: Unicode letters, numbers and private-use
/// characters make tokens, case is folded, and diacritics are removed ("resume" finds "Résumé").
package struct FTSTokenizerConfig: Sendable, Hashable {
    package enum Base: String, Sendable, Hashable {
        /// Unicode-aware: token characters by general category, Unicode case folding, diacritics.
        case unicode61
        /// ASCII letters and digits make tokens with every non-ASCII character; ASCII case folded only.
        case ascii
        /// Every run of three characters is a token (substring search; text without spaces).
        case trigram
    }

    package var base: Base = .unicode61
    /// `porter`: the Porter stemmer applied to every token the base tokenizer makes.
    package var porter = false
    /// 0: keep diacritics; 1: remove them from characters that carry one; 2 (default): from any character.
    package var removeDiacritics = 2
    /// trigram only: keep case (`case_sensitive 1`). The other tokenizers always fold case.
    package var caseSensitive = false
    /// unicode61/ascii: characters forced to be token characters (`tokenchars`).
    package var tokenChars: Set<UInt32> = []
    /// unicode61/ascii: characters forced to be separators (`separators`).
    package var separators: Set<UInt32> = []
    /// unicode61: the general categories whose characters are token characters (`categories`).
    package var categories: Set<FTSCategory> = FTSCategory.defaultTokenCategories

    /// FTS5's `unicode61 remove_diacritics 2`.
    package static let `default` = FTSTokenizerConfig()

    package init() {}

    /// Parses FTS5's `tokenize` option value (also with FTS4's `key=value` arguments), for example
    /// `unicode61 remove_diacritics 1`, `porter unicode61`, `trigram case_sensitive 0`, `ascii`,
    /// `unicode61 "tokenchars=!#"`, `unicode61 separators '.'`, `unicode61 categories 'L* N* Co Mn'`.
    /// nil or an empty text gives the default.
    /// - Throws: `FTSError` (`.badOption`, or `.unterminatedString`) for an unknown tokenizer or argument.
    package init(tokenizeOption: String?) throws(FTSError) {
        self.init()
        guard let option = tokenizeOption else { return }
        var words = try FTSTokenizerConfig.splitOption(option)
        // A value quoted as a whole ('porter unicode61') holds the real word list.
        if words.count == 1, words[0].quoted {
            words = try FTSTokenizerConfig.splitOption(words[0].text).map { ($0.text, $0.offset + words[0].offset + 1, $0.quoted) }
        }
        guard !words.isEmpty else { return }
        var index = 0
        if words[index].text.lowercased() == "porter" {
            porter = true
            index += 1
            if index == words.count { return }
        }
        let name = words[index]
        switch name.text.lowercased() {
        case "unicode61": base = .unicode61
        case "ascii", "simple": base = .ascii
        case "trigram": base = .trigram; removeDiacritics = 0
        default: throw FTSError(.badOption, offset: name.offset, "unknown tokenizer \"\(name.text)\"")
        }
        index += 1
        // Arguments: `key value` pairs (FTS5), or `key=value` words (FTS4).
        while index < words.count {
            let word = words[index]
            var key = word.text, value: String, valueOffset: Int
            if let equals = key.firstIndex(of: "=") {
                value = String(key[key.index(after: equals)...])
                key = String(key[..<equals])
                valueOffset = word.offset
                index += 1
            } else {
                guard index + 1 < words.count else {
                    throw FTSError(.badOption, offset: word.offset, "tokenizer argument \"\(key)\" has no value")
                }
                value = words[index + 1].text
                valueOffset = words[index + 1].offset
                index += 2
            }
            try apply(key: key.lowercased(), value: value, keyOffset: word.offset, valueOffset: valueOffset)
        }
    }

    private mutating func apply(key: String, value: String, keyOffset: Int, valueOffset: Int) throws(FTSError) {
        func flag(_ allowed: ClosedRange<Int>) throws(FTSError) -> Int {
            guard let number = Int(value), allowed.contains(number) else {
                throw FTSError(.badOption, offset: valueOffset, "\(key) takes \(allowed.lowerBound)...\(allowed.upperBound), not \"\(value)\"")
            }
            return number
        }
        switch (base, key) {
        case (.unicode61, "remove_diacritics"), (.trigram, "remove_diacritics"):
            removeDiacritics = try flag(base == .trigram ? 0...1 : 0...2)
        case (.trigram, "case_sensitive"):
            caseSensitive = try flag(0...1) == 1
        case (.unicode61, "tokenchars"), (.ascii, "tokenchars"):
            for scalar in value.unicodeScalars { tokenChars.insert(scalar.value); separators.remove(scalar.value) }
        case (.unicode61, "separators"), (.ascii, "separators"):
            for scalar in value.unicodeScalars { separators.insert(scalar.value); tokenChars.remove(scalar.value) }
        case (.unicode61, "categories"):
            var chosen: Set<FTSCategory> = []
            for name in value.split(separator: " ") {
                guard let matched = FTSCategory.matching(String(name)) else {
                    throw FTSError(.badOption, offset: valueOffset, "unknown category \"\(name)\"")
                }
                chosen.formUnion(matched)
            }
            categories = chosen
        default:
            throw FTSError(.badOption, offset: keyOffset, "the \(base.rawValue) tokenizer has no argument \"\(key)\"")
        }
    }

    /// The option's words: barewords, or text in '…', "…" or `…` (a doubled quote stands for itself).
    private static func splitOption(_ text: String) throws(FTSError) -> [(text: String, offset: Int, quoted: Bool)] {
        let bytes = Array(text.utf8)
        var words: [(text: String, offset: Int, quoted: Bool)] = []
        var at = 0
        while at < bytes.count {
            let byte = bytes[at]
            if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x2C { at += 1; continue }
            let start = at
            if byte == 0x27 || byte == 0x22 || byte == 0x60 || byte == 0x5B {
                let close: UInt8 = byte == 0x5B ? 0x5D : byte
                var word: [UInt8] = []
                at += 1
                while true {
                    guard at < bytes.count else { throw FTSError(.unterminatedString, offset: start, "unterminated quoted word in the tokenize option") }
                    if bytes[at] == close {
                        if close != 0x5D, at + 1 < bytes.count, bytes[at + 1] == close { word.append(close); at += 2; continue }
                        at += 1
                        break
                    }
                    word.append(bytes[at]); at += 1
                }
                words.append((String(decoding: word, as: UTF8.self), start, true))
            } else {
                while at < bytes.count, ![0x20, 0x09, 0x0A, 0x0D, 0x2C].contains(bytes[at]) { at += 1 }
                words.append((String(decoding: bytes[start..<at], as: UTF8.self), start, false))
            }
        }
        return words
    }

    /// A stable text for this configuration, stored with an index: a different signature means the
    /// index was built with other rules and must be rebuilt. Its first word is the tokenizer rules'
    /// version, raised whenever a change in this module would tokenize some text differently.
    package var signature: String {
        var parts = ["fts1", porter ? "porter" : nil, base.rawValue].compactMap { $0 }
        switch base {
        case .unicode61:
            parts.append("remove_diacritics=\(removeDiacritics)")
            parts.append("categories=" + categories.map(\.rawValue).sorted().joined(separator: ","))
        case .ascii: break
        case .trigram:
            parts.append("remove_diacritics=\(removeDiacritics)")
            parts.append("case_sensitive=\(caseSensitive ? 1 : 0)")
        }
        if !tokenChars.isEmpty { parts.append("tokenchars=" + tokenChars.sorted().map { String($0, radix: 16) }.joined(separator: ",")) }
        if !separators.isEmpty { parts.append("separators=" + separators.sorted().map { String($0, radix: 16) }.joined(separator: ",")) }
        return parts.joined(separator: " ")
    }
}
