/// Splits text into normalized tokens, by the rules of one `FTSTokenizerConfig`.
///
/// The same tokenizer runs over column text when a row is indexed and over each string of a query,
/// so a query term and the text it should find are normalized alike. Pure and thread-safe.
package struct FTSTokenizer: Sendable {
    package let config: FTSTokenizerConfig

    /// Whether each ASCII character is a token character (computed once: the common case).
    private let asciiTokenCharacters: [Bool]
    /// `config.categories` as a mask of `FTSCategory.bit`s.
    private let categoryMask: UInt32

    package init(_ config: FTSTokenizerConfig) {
        self.config = config
        categoryMask = FTSCategory.mask(config.categories)
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
        result.reserveCapacity(text.utf8.count / 6 + 1)
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
        if !config.separators.isEmpty, config.separators.contains(value) { return false }
        if !config.tokenChars.isEmpty, config.tokenChars.contains(value) { return true }
        if FTSUnicode.isDroppedDiacritic(value) { return true }
        return FTSUnicode.categoryBit(scalar) & categoryMask != 0
    }

    /// unicode61 and ascii: runs of token characters, folded. ASCII bytes take a table lookup;
    /// other characters are decoded from the UTF-8 and classified one by one. A token that folding
    /// leaves unchanged (the common case) becomes its term straight from the source bytes; the
    /// folded copy is started only at the first character that changes.
    private func wordTokens(in text: String, into result: inout [FTSToken]) {
        var text = text
        text.withUTF8 { bytes in
            var term: [UInt8] = []
            term.reserveCapacity(32)
            var start = -1
            var plain = true
            var index = 0
            let foldUnicode = config.base == .unicode61
            func finish(at end: Int) {
                guard start >= 0 else { return }
                if plain {
                    let source = UnsafeBufferPointer(rebasing: bytes[start..<end])
                    result.append(FTSToken(term: String(decoding: source, as: UTF8.self), position: result.count, utf8Range: start..<end))
                } else if !term.isEmpty {
                    result.append(FTSToken(term: String(decoding: term, as: UTF8.self), position: result.count, utf8Range: start..<end))
                }
                start = -1
            }
            /// Switches the current token to a folded copy: its bytes so far, unchanged.
            func beginCopy(upTo end: Int) {
                plain = false
                term.removeAll(keepingCapacity: true)
                term.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<end]))
            }
            while index < bytes.count {
                let byte = bytes[index]
                if byte < 0x80 {
                    if asciiTokenCharacters[Int(byte)] {
                        if start < 0 { start = index; plain = true }
                        let lower = byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte
                        if plain, lower != byte { beginCopy(upTo: index) }
                        if !plain { term.append(lower) }
                    } else {
                        finish(at: index)
                    }
                    index += 1
                    continue
                }
                let (scalar, width) = Self.decode(bytes, at: index)
                if isTokenCharacter(scalar) {
                    if start < 0 { start = index; plain = true }
                    let folded = foldUnicode ? FTSUnicode.folded(scalar, foldCase: true, removeDiacritics: config.removeDiacritics) : scalar
                    if plain, folded != scalar { beginCopy(upTo: index) }
                    if !plain, let folded, let encoded = UTF8.encode(folded) { term.append(contentsOf: encoded) }
                } else {
                    finish(at: index)
                }
                index += width
            }
            finish(at: bytes.count)
        }
    }

    /// The character starting at `index` of valid UTF-8 (a String's) and its length in bytes.
    @inline(__always)
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> (Unicode.Scalar, Int) {
        let lead = UInt32(bytes[index])
        let width = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1
        guard index + width <= bytes.count else { return (Unicode.Scalar(UInt8(0x3F)), 1) }
        var value: UInt32
        switch width {
        case 2: value = lead & 0x1F
        case 3: value = lead & 0x0F
        case 4: value = lead & 0x07
        default: return (Unicode.Scalar(UInt8(lead & 0x7F)), 1)
        }
        for offset in 1..<width { value = value << 6 | (UInt32(bytes[index + offset]) & 0x3F) }
        return (Unicode.Scalar(value) ?? Unicode.Scalar(UInt8(0x3F)), width)
    }

    /// Every run of three characters (after folding) is a token, positions one apart; a text of fewer
    /// than three characters gives no token (as FTS5's trigram tokenizer).
    private func trigramTokens(in text: String, into result: inout [FTSToken]) {
        var text = text
        text.withUTF8 { bytes in
            // Each character's folded UTF-8 (1-4 bytes, packed into a UInt32) and its source offset.
            var folded: [(encoded: UInt32, length: Int, start: Int)] = []
            folded.reserveCapacity(bytes.count)
            var index = 0
            while index < bytes.count {
                let (scalar, width) = Self.decode(bytes, at: index)
                let character = FTSUnicode.folded(scalar, foldCase: !config.caseSensitive, removeDiacritics: config.removeDiacritics) ?? scalar
                var encoded: UInt32 = 0, length = 0
                if let utf8 = UTF8.encode(character) {
                    for byte in utf8 { encoded |= UInt32(byte) << (8 * UInt32(length)); length += 1 }
                }
                folded.append((encoded, length, index))
                index += width
            }
            guard folded.count >= 3 else { return }
            result.reserveCapacity(folded.count - 2)
            var term: [UInt8] = []
            term.reserveCapacity(12)
            for first in 0...(folded.count - 3) {
                term.removeAll(keepingCapacity: true)
                for index in first..<(first + 3) {
                    var encoded = folded[index].encoded
                    for _ in 0..<folded[index].length {
                        term.append(UInt8(truncatingIfNeeded: encoded))
                        encoded >>= 8
                    }
                }
                let end = first + 3 < folded.count ? folded[first + 3].start : bytes.count
                result.append(FTSToken(term: String(decoding: term, as: UTF8.self), position: first, utf8Range: folded[first].start..<end))
            }
        }
    }
}
