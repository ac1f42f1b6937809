/// Case folding and diacritic removal for the unicode61 and trigram rules.
enum FTSUnicode {
    /// Characters below this have their category and folded forms in `smallTable` (Latin, Greek,
    /// Cyrillic: most European text never asks the Unicode properties).
    static let smallTableLimit: UInt32 = 0x530

    /// Per character below `smallTableLimit`: its category bit, and its case-folded form with
    /// diacritics kept, removed at level 1 and at level 2 (0: dropped).
    static let smallTable: [(categoryBit: UInt32, folded: (UInt32, UInt32, UInt32))] = (0..<smallTableLimit).map { value in
        guard let scalar = Unicode.Scalar(value) else { return (0, (0, 0, 0)) }
        let bit = FTSCategory(scalar.properties.generalCategory).bit
        func fold(_ level: Int) -> UInt32 { slowFolded(scalar, foldCase: true, removeDiacritics: level)?.value ?? 0 }
        return (bit, (fold(0), fold(1), fold(2)))
    }

    /// The category bit of `scalar` (see `FTSCategory.mask`).
    @inline(__always)
    static func categoryBit(_ scalar: Unicode.Scalar) -> UInt32 {
        scalar.value < smallTableLimit ? smallTable[Int(scalar.value)].categoryBit : FTSCategory(scalar.properties.generalCategory).bit
    }

    /// `scalar` case folded (when `foldCase`) and without its diacritics (at `removeDiacritics` 1
    /// or 2); nil for a combining diacritic that removal drops. One character in, at most one out.
    @inline(__always)
    static func folded(_ scalar: Unicode.Scalar, foldCase: Bool, removeDiacritics: Int) -> Unicode.Scalar? {
        if foldCase, scalar.value >= 0x80, scalar.value < smallTableLimit {
            let folded = smallTable[Int(scalar.value)].folded
            let value = removeDiacritics == 0 ? folded.0 : removeDiacritics == 1 ? folded.1 : folded.2
            return value == 0 ? nil : Unicode.Scalar(value)
        }
        return slowFolded(scalar, foldCase: foldCase, removeDiacritics: removeDiacritics)
    }

    /// `folded` from the Unicode properties and the diacritic table.
    static func slowFolded(_ scalar: Unicode.Scalar, foldCase: Bool, removeDiacritics: Int) -> Unicode.Scalar? {
        let value = scalar.value
        if value < 0x80 {
            return foldCase && value >= 0x41 && value <= 0x5A ? Unicode.Scalar(UInt8(value + 0x20)) : scalar
        }
        var result = scalar
        if foldCase {
            if value == 0x130 {
                result = "i"  // İ: its full lowercase adds a combining dot; FTS5 folds it to a plain i
            } else if scalar.properties.changesWhenLowercased {
                let mapping = scalar.properties.lowercaseMapping.unicodeScalars
                if mapping.count == 1, let first = mapping.first { result = first }
            }
        }
        guard removeDiacritics != 0 else { return result }
        if isDroppedDiacritic(result.value) { return nil }
        if result.value >= 0xC0, let base = diacriticBase(result.value, level: removeDiacritics) {
            return Unicode.Scalar(base)
        }
        return result
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
