/// Splits text into normalized tokens, by the rules of one `FTSTokenizerConfig`.
///
/// The same tokenizer runs over column text when a row is indexed and over each string of a query,
/// so a query term and the text it should find are normalized alike. Pure and thread-safe.
package struct FTSTokenizer: Sendable {
    package let config: FTSTokenizerConfig

    /// Whether each ASCII character is a token character (computed once: the common case).
    private let asciiTokenCharacters: [Bool]

    package init(_ config: FTSTokenizerConfig) {
        self.config = config
        asciiTokenCharacters = (0..<128).map { value in
            let scalar = Unicode.Scalar(UInt8(value))
            if config.separators.contains(UInt32(value)) { return false }
            if config.tokenChars.contains(UInt32(value)) { return true }
            if config.base == .unicode61 {
                return config.categories.contains(FTSCategory(scalar.properties.generalCategory))
            }
            // ascii: letters and digits.
            return (value >= 0x30 && value <= 0x39) || (value >= 0x41 && value <= 0x5A) || (value >= 0x61 && value <= 0x7A)
        }
    }

    /// The tokens of `text` in order, positions from 0, each with its source UTF-8 range.
    package func tokens(in text: String) -> [FTSToken] {
        var result: [FTSToken] = []
        switch config.base {
        case .unicode61, .ascii: wordTokens(in: text, into: &result)
        case .trigram: trigramTokens(in: text, into: &result)
        }
        if config.porter {
            for index in result.indices { result[index].term = FTSPorterStemmer.stem(result[index].term) }
        }
        return result
    }

    /// Whether a (case folded) character is part of a token for the unicode61 or ascii rules.
    func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value < 0x80 { return asciiTokenCharacters[Int(value)] }
        // Every non-ASCII character makes tokens for ascii, which takes only ASCII options (as FTS5's does).
        if config.base == .ascii { return true }
        if config.separators.contains(value) { return false }
        if config.tokenChars.contains(value) { return true }
        if FTSUnicode.isDroppedDiacritic(value) { return true }
        return config.categories.contains(FTSCategory(scalar.properties.generalCategory))
    }

    private func wordTokens(in text: String, into result: inout [FTSToken]) {
        var term = String.UnicodeScalarView()
        var start = -1
        var offset = 0
        let foldUnicode = config.base == .unicode61
        func finish(at end: Int) {
            if start >= 0 {
                if !term.isEmpty {
                    result.append(FTSToken(term: String(term), position: result.count, utf8Range: start..<end))
                }
                term = String.UnicodeScalarView()
                start = -1
            }
        }
        for scalar in text.unicodeScalars {
            let width = UTF8.width(scalar)
            if isTokenCharacter(scalar) {
                if start < 0 { start = offset }
                if foldUnicode {
                    FTSUnicode.fold(scalar, removeDiacritics: config.removeDiacritics, into: &term)
                } else if scalar.value >= 0x41 && scalar.value <= 0x5A {
                    term.append(Unicode.Scalar(scalar.value + 0x20)!)
                } else {
                    term.append(scalar)
                }
            } else {
                finish(at: offset)
            }
            offset += width
        }
        finish(at: offset)
    }

    /// Every run of three characters (after folding) is a token, positions one apart; a text of fewer
    /// than three characters gives no token (as FTS5's trigram tokenizer).
    private func trigramTokens(in text: String, into result: inout [FTSToken]) {
        var folded: [(scalars: String.UnicodeScalarView, start: Int, end: Int)] = []
        var offset = 0
        for scalar in text.unicodeScalars {
            let width = UTF8.width(scalar)
            var piece = String.UnicodeScalarView()
            if config.caseSensitive {
                if config.removeDiacritics != 0 { FTSUnicode.removeDiacritic(scalar, level: config.removeDiacritics, into: &piece) } else { piece.append(scalar) }
            } else {
                FTSUnicode.fold(scalar, removeDiacritics: config.removeDiacritics, into: &piece)
            }
            if piece.isEmpty { piece.append(scalar) }
            folded.append((piece, offset, offset + width))
            offset += width
        }
        guard folded.count >= 3 else { return }
        for index in 0...(folded.count - 3) {
            var term = String.UnicodeScalarView()
            term.append(contentsOf: folded[index].scalars)
            term.append(contentsOf: folded[index + 1].scalars)
            term.append(contentsOf: folded[index + 2].scalars)
            result.append(FTSToken(term: String(term), position: index, utf8Range: folded[index].start..<folded[index + 2].end))
        }
    }
}
