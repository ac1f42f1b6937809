/// Case folding and diacritic removal for the unicode61 and trigram rules.
enum FTSUnicode {
    /// Appends the case-folded form of `scalar` (diacritics removed at `removeDiacritics` 1 or 2).
    static func fold(_ scalar: Unicode.Scalar, removeDiacritics: Int, into term: inout String.UnicodeScalarView) {
        let value = scalar.value
        if value < 0x80 {
            term.append(value >= 0x41 && value <= 0x5A ? Unicode.Scalar(value + 0x20)! : scalar)
            return
        }
        var lower = scalar
        if value == 0x130 {
            lower = "i"  // İ: its full lowercase adds a combining dot; FTS5 folds it to a plain i
        } else if scalar.properties.changesWhenLowercased {
            let mapping = scalar.properties.lowercaseMapping.unicodeScalars
            if mapping.count == 1, let first = mapping.first { lower = first }
        }
        if removeDiacritics != 0 {
            removeDiacritic(lower, level: removeDiacritics, into: &term)
        } else {
            term.append(lower)
        }
    }

    /// Appends `scalar` without its diacritic (nothing for a combining diacritic alone).
    static func removeDiacritic(_ scalar: Unicode.Scalar, level: Int, into term: inout String.UnicodeScalarView) {
        if isDroppedDiacritic(scalar.value) { return }
        term.append(scalar)
    }

    /// A combining diacritical mark that diacritic removal drops.
    static func isDroppedDiacritic(_ value: UInt32) -> Bool {
        value >= 0x300 && value <= 0x331
    }
}
