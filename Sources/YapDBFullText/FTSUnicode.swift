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
        let value = scalar.value
        if isDroppedDiacritic(value) { return }
        if value >= 0xC0, let base = diacriticBase(value, level: level) {
            term.append(Unicode.Scalar(base))
            return
        }
        term.append(scalar)
    }

    /// The ASCII letter under `value`'s diacritics at `level` (1 or 2), or nil to keep it.
    static func diacriticBase(_ value: UInt32, level: Int) -> UInt8? {
        let table = diacriticCharacters
        var low = 0, high = table.count
        while low < high {
            let middle = (low + high) / 2
            if table[middle] < value { low = middle + 1 } else { high = middle }
        }
        guard low < table.count, table[low] == value else { return nil }
        let base = level >= 2 ? diacriticBaseLevel2[low] : diacriticBaseLevel1[low]
        return base == 0 ? nil : base
    }

    /// The combining marks that appear in those characters' decompositions. Text in decomposed form
    /// ("e" + U+0301) keeps them inside the token (they are token characters, as in FTS5, whatever
    /// the categories), and diacritic removal drops them.
    static func isDroppedDiacritic(_ value: UInt32) -> Bool {
        guard value >= 0x300, value <= 0x331 else { return false }
        return droppedMarks & (UInt64(1) << UInt64(value - 0x300)) != 0
    }

    /// Bit n: U+0300 + n is one of the marks above.
    private static let droppedMarks: UInt64 = {
        var bits: UInt64 = 0
        for value in [0x300, 0x301, 0x302, 0x303, 0x304, 0x306, 0x307, 0x308, 0x309, 0x30A, 0x30B, 0x30C, 0x30F, 0x311,
                      0x31B, 0x323, 0x324, 0x325, 0x326, 0x327, 0x328, 0x32D, 0x32E, 0x330, 0x331] {
            bits |= UInt64(1) << UInt64(value - 0x300)
        }
        return bits
    }()
}
