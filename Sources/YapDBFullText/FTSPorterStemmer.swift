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

        func endsWith(_ suffix: String) -> Bool {
            let suffix = suffix.utf8
            return word.count >= suffix.count && word[(word.count - suffix.count)...].elementsEqual(suffix)
        }

        mutating func replaceSuffix(_ length: Int, with replacement: String) {
            word.removeLast(length)
            word.append(contentsOf: replacement.utf8)
        }

        /// The first rule (longest suffixes first) whose suffix ends the word decides: its
        /// replacement is made when the stem left has m > `minimumMeasure`; either way no other rule is tried.
        mutating func applyFirst(_ rules: [(String, String)], minimumMeasure: Int, extra: ((Stemmer, Int) -> Bool)? = nil) {
            for (suffix, replacement) in rules where endsWith(suffix) {
                let stemLength = word.count - suffix.utf8.count
                if measure(stemLength) > minimumMeasure, extra?(self, stemLength) ?? true {
                    replaceSuffix(suffix.utf8.count, with: replacement)
                }
                return
            }
        }

        // MARK: Steps

        mutating func run() {
            step1a(); step1b(); step1c(); step2(); step3(); step4(); step5()
        }

        mutating func step1a() {
            if endsWith("sses") { replaceSuffix(2, with: "") }
            else if endsWith("ies") { replaceSuffix(2, with: "") }
            else if endsWith("ss") { return }
            else if endsWith("s") { replaceSuffix(1, with: "") }
        }

        mutating func step1b() {
            if endsWith("eed") {
                if measure(word.count - 3) > 0 { replaceSuffix(1, with: "") }
                return
            }
            var removed = false
            if endsWith("ed"), hasVowel(word.count - 2) { replaceSuffix(2, with: ""); removed = true }
            else if endsWith("ing"), hasVowel(word.count - 3) { replaceSuffix(3, with: ""); removed = true }
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

        static let step2Rules: [(String, String)] = [
            ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"),
            ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"),
            ("ization", "ize"), ("ation", "ate"), ("ator", "ate"), ("alism", "al"), ("iveness", "ive"),
            ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"),
            ("logi", "log"),
        ].sorted { $0.0.utf8.count > $1.0.utf8.count }

        static let step3Rules: [(String, String)] = [
            ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""), ("ness", ""),
        ].sorted { $0.0.utf8.count > $1.0.utf8.count }

        static let step4Suffixes: [String] = [
            "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou",
            "ism", "ate", "iti", "ous", "ive", "ize",
        ].sorted { $0.utf8.count > $1.utf8.count }

        mutating func step2() { applyFirst(Self.step2Rules, minimumMeasure: 0) }
        mutating func step3() { applyFirst(Self.step3Rules, minimumMeasure: 0) }

        mutating func step4() {
            applyFirst(Self.step4Suffixes.map { ($0, "") }, minimumMeasure: 1) { stemmer, stemLength in
                // "ion" goes only after s or t.
                guard stemmer.word.count - stemLength == 3, stemmer.endsWith("ion"), stemLength > 0 else { return true }
                let before = stemmer.word[stemLength - 1]
                return before == UInt8(ascii: "s") || before == UInt8(ascii: "t")
            }
        }

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
