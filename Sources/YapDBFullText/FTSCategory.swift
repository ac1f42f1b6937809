/// A Unicode general category, spelled as FTS5's `categories` option spells it (`Lu`, `Nd`, `Co`…).
package enum FTSCategory: String, Sendable, Hashable, CaseIterable {
    case Lu, Ll, Lt, Lm, Lo, Mn, Mc, Me, Nd, Nl, No, Pc, Pd, Ps, Pe, Pi, Pf, Po, Sm, Sc, Sk, So, Zs, Zl, Zp, Cc, Cf, Cs, Co, Cn

    /// This category's bit in a category mask (bit n: the n-th of `allCases`).
    var bit: UInt32 { UInt32(1) << UInt32(FTSCategory.allCases.firstIndex(of: self) ?? 0) }

    /// The mask of a set of categories.
    static func mask(_ categories: Set<FTSCategory>) -> UInt32 {
        categories.reduce(0) { $0 | $1.bit }
    }

    /// unicode61's token characters when no `categories` option is given: letters, numbers, private use.
    package static let defaultTokenCategories: Set<FTSCategory> = Set(allCases.filter { $0.rawValue.hasPrefix("L") || $0.rawValue.hasPrefix("N") || $0 == .Co })

    /// `L*` names every letter category; `Lu` one. nil for a name that is neither.
    static func matching(_ name: String) -> Set<FTSCategory>? {
        if name.count == 2, name.hasSuffix("*") {
            let matched = allCases.filter { $0.rawValue.hasPrefix(name.prefix(1)) }
            return matched.isEmpty ? nil : Set(matched)
        }
        return FTSCategory(rawValue: name).map { [$0] }
    }

    init(_ category: Unicode.GeneralCategory) {
        switch category {
        case .uppercaseLetter: self = .Lu
        case .lowercaseLetter: self = .Ll
        case .titlecaseLetter: self = .Lt
        case .modifierLetter: self = .Lm
        case .otherLetter: self = .Lo
        case .nonspacingMark: self = .Mn
        case .spacingMark: self = .Mc
        case .enclosingMark: self = .Me
        case .decimalNumber: self = .Nd
        case .letterNumber: self = .Nl
        case .otherNumber: self = .No
        case .connectorPunctuation: self = .Pc
        case .dashPunctuation: self = .Pd
        case .openPunctuation: self = .Ps
        case .closePunctuation: self = .Pe
        case .initialPunctuation: self = .Pi
        case .finalPunctuation: self = .Pf
        case .otherPunctuation: self = .Po
        case .mathSymbol: self = .Sm
        case .currencySymbol: self = .Sc
        case .modifierSymbol: self = .Sk
        case .otherSymbol: self = .So
        case .spaceSeparator: self = .Zs
        case .lineSeparator: self = .Zl
        case .paragraphSeparator: self = .Zp
        case .control: self = .Cc
        case .format: self = .Cf
        case .surrogate: self = .Cs
        case .privateUse: self = .Co
        case .unassigned: self = .Cn
        @unknown default: self = .Cn
        }
    }
}
