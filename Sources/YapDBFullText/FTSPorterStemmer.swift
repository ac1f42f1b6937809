/// The Porter stemming algorithm (M. F. Porter, "An algorithm for suffix stripping", Program 14(3),
/// 1980), with the two changes of Porter's own reference version that SQLite's `porter` tokenizer
/// also makes (step 2: "bli" → "ble" in place of "abli" → "able", and "logi" → "log").
///
/// Terms: a word is [C](VC)^m[V] over runs of consonants C and vowels V; `m` is the measure of
/// the stem left when a suffix is taken off. `y` is a vowel after a consonant, else a consonant.
enum FTSPorterStemmer {
    /// Longest token stemmed; longer ones are kept as they are (as SQLite does).
    static let maximumLength = 64

    /// The stem of a token. Tokens of one or two letters, longer than `maximumLength`, or holding
    /// anything but ASCII lowercase letters come back unchanged.
    static func stem(_ word: String) -> String {
        let bytes = Array(word.utf8)
        guard bytes.count > 2, bytes.count <= maximumLength, bytes.allSatisfy({ $0 >= 0x61 && $0 <= 0x7A }) else { return word }
        var stemmer = Stemmer(word: bytes)
        stemmer.run()
        return String(decoding: stemmer.word, as: UTF8.self)
    }

    private struct Stemmer {
        var word: [UInt8]

        // MARK: The word's shape

        func isConsonant(_ index: Int) -> Bool {
            switch word[index] {
            case UInt8(ascii: "a"), UInt8(ascii: "e"), UInt8(ascii: "i"), UInt8(ascii: "o"), UInt8(ascii: "u"): return false
            case UInt8(ascii: "y"): return index == 0 || !isConsonant(index - 1)
            default: return true
            }
        }

        /// m of the first `length` letters: the number of vowel-to-consonant transitions.
        func measure(_ length: Int) -> Int {
            var count = 0, index = 0
            while index < length, isConsonant(index) { index += 1 }
            while index < length {
                while index < length, !isConsonant(index) { index += 1 }
                guard index < length else { break }
                count += 1
                while index < length, isConsonant(index) { index += 1 }
            }
            return count
        }

        func hasVowel(_ length: Int) -> Bool {
            (0..<length).contains { !isConsonant($0) }
        }

        /// *d: the first `length` letters end with a double consonant.
        func endsWithDoubleConsonant(_ length: Int) -> Bool {
            length >= 2 && word[length - 1] == word[length - 2] && isConsonant(length - 1)
        }

        /// *o: the first `length` letters end consonant-vowel-consonant, the last not w, x or y.
        func endsCVC(_ length: Int) -> Bool {
            guard length >= 3, isConsonant(length - 3), !isConsonant(length - 2), isConsonant(length - 1) else { return false }
            let last = word[length - 1]
            return last != UInt8(ascii: "w") && last != UInt8(ascii: "x") && last != UInt8(ascii: "y")
        }

        func endsWith(_ suffix: StaticString) -> Bool {
            suffix.withUTF8Buffer { suffix in
                guard word.count >= suffix.count else { return false }
                let offset = word.count - suffix.count
                for index in 0..<suffix.count where word[offset + index] != suffix[index] { return false }
                return true
            }
        }

        func endsWith(_ suffix: [UInt8]) -> Bool {
            guard word.count >= suffix.count else { return false }
            let offset = word.count - suffix.count
            for index in suffix.indices where word[offset + index] != suffix[index] { return false }
            return true
        }

        mutating func replaceSuffix(_ length: Int, with replacement: [UInt8]) {
            word.removeLast(length)
            word.append(contentsOf: replacement)
        }


        /// The first rule (longest suffixes first) whose suffix ends the word decides: its
        /// replacement is made when the stem left has m > `minimumMeasure` (and, for step 4's
        /// "ion", the stem ends in s or t); either way no other rule is tried.
        mutating func applyFirst(_ rules: RuleTable, minimumMeasure: Int) {
            guard let last = word.last, last >= UInt8(ascii: "a"), last <= UInt8(ascii: "z") else { return }
            for rule in rules.byLastLetter[Int(last - UInt8(ascii: "a"))] where endsWith(rule.suffix) {
                let stemLength = word.count - rule.suffix.count
                guard measure(stemLength) > minimumMeasure else { return }
                if rule.needsSOrT {
                    guard stemLength > 0, word[stemLength - 1] == UInt8(ascii: "s") || word[stemLength - 1] == UInt8(ascii: "t") else { return }
                }
                replaceSuffix(rule.suffix.count, with: rule.replacement)
                return
            }
        }

        // MARK: Steps

        mutating func run() {
            step1a(); step1b(); step1c()
            applyFirst(Self.step2Rules, minimumMeasure: 0)
            applyFirst(Self.step3Rules, minimumMeasure: 0)
            applyFirst(Self.step4Rules, minimumMeasure: 1)
            step5()
        }

        mutating func step1a() {
            if endsWith("sses") { word.removeLast(2) }
            else if endsWith("ies") { word.removeLast(2) }
            else if endsWith("ss") { return }
            else if endsWith("s") { word.removeLast(1) }
        }

        mutating func step1b() {
            if endsWith("eed") {
                if measure(word.count - 3) > 0 { word.removeLast(1) }
                return
            }
            var removed = false
            if endsWith("ed"), hasVowel(word.count - 2) { word.removeLast(2); removed = true }
            else if endsWith("ing"), hasVowel(word.count - 3) { word.removeLast(3); removed = true }
            guard removed else { return }
            if endsWith("at") || endsWith("bl") || endsWith("iz") {
                word.append(UInt8(ascii: "e"))
            } else if endsWithDoubleConsonant(word.count), let last = word.last,
                      last != UInt8(ascii: "l"), last != UInt8(ascii: "s"), last != UInt8(ascii: "z") {
                word.removeLast()
            } else if measure(word.count) == 1, endsCVC(word.count) {
                word.append(UInt8(ascii: "e"))
            }
        }

        mutating func step1c() {
            if endsWith("y"), hasVowel(word.count - 1) {
                word[word.count - 1] = UInt8(ascii: "i")
            }
        }

        struct Rule {
            var suffix: [UInt8]
            var replacement: [UInt8]
            var needsSOrT = false

        }

        /// A step's rules grouped by their suffix's last letter (the only ones that can match a
        /// word ending in it), longest suffixes first within a group.
        struct RuleTable {
            var byLastLetter: [[Rule]] = Array(repeating: [], count: 26)

            init(_ pairs: [(String, String)]) {
                let rules = pairs.map { Rule(suffix: Array($0.0.utf8), replacement: Array($0.1.utf8), needsSOrT: $0.0 == "ion") }
                    .sorted { $0.suffix.count > $1.suffix.count }
                for rule in rules {
                    guard let last = rule.suffix.last else { continue }
                    byLastLetter[Int(last - UInt8(ascii: "a"))].append(rule)
                }
            }
        }

        static let step2Rules = RuleTable([
            ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"),
            ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"),
            ("ization", "ize"), ("ation", "ate"), ("ator", "ate"), ("alism", "al"), ("iveness", "ive"),
            ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"),
            ("logi", "log"),
        ])

        static let step3Rules = RuleTable([
            ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""), ("ness", ""),
        ])

        /// Step 4 removes these when m > 1; "ion" only after s or t.
        static let step4Rules = RuleTable([
            "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou",
            "ism", "ate", "iti", "ous", "ive", "ize",
        ].map { ($0, "") })

        mutating func step5() {
            if endsWith("e") {
                let stemLength = word.count - 1
                let m = measure(stemLength)
                if m > 1 || (m == 1 && !endsCVC(stemLength)) { word.removeLast() }
            }
            if endsWith("ll"), measure(word.count) > 1 { word.removeLast() }
        }
    }
}
