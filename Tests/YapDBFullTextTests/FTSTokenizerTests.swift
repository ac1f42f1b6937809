import XCTest
@testable import YapDBFullText

/// The tokenizers on a table of Unicode cases, their options, and their use in queries.
final class FTSTokenizerTests: XCTestCase {
    func terms(_ text: String, _ option: String? = nil) throws -> [String] {
        FTSTokenizer(try FTSTokenizerConfig(tokenizeOption: option)).tokens(in: text).map(\.term)
    }

    func testUnicodeCaseTable() throws {
        let table: [(String, [String])] = [
            ("Hello WORLD", ["hello", "world"]),                        // ASCII case
            ("ÀÉÎÕÜ àéîõü", ["aeiou", "aeiou"]),                        // diacritics removed, case folded
            ("Ǖ ǖ Ḉ", ["u", "u", "c"]),                                 // several diacritics (level 2)
            ("e\u{301}te\u{301}", ["ete"]),                             // decomposed input
            ("Øresund Łódź", ["øresund", "łodz"]),                     // letters that are not "letter + mark"
            ("ΣΊΣΥΦΟΣ", ["σίσυφοσ"]),                                  // Greek folds; its accents stay (FTS5)
            ("ПРИВЕТ мир", ["привет", "мир"]),                         // Cyrillic
            ("İstanbul", ["istanbul"]),                                 // dotted capital I
            ("日本語のテキスト 中文", ["日本語のテキスト", "中文"]),        // CJK runs are single tokens
            ("한국어", ["한국어"]),
            ("hi😀there 👍", ["hi", "there"]),                          // emoji separate (So is not a token category)
            ("don't e-mail a_b x.y", ["don", "t", "e", "mail", "a", "b", "x", "y"]),  // punctuation inside words
            ("3.14 1,000", ["3", "14", "1", "000"]),
            ("x\u{200B}y", ["x", "y"]),                                // zero-width space (Cf) separates
            ("①② Ⅻ", ["①②", "ⅻ"]),                                   // numbers of every kind
            ("\u{E000}a", ["\u{E000}a"]),                              // private use is a token character
            ("", []), ("  ..  ", []),
        ]
        for (text, expected) in table {
            XCTAssertEqual(try terms(text), expected, text)
        }
    }

    func testPositionsAndSourceRanges() throws {
        let text = "¡Résumé, naïve café!"
        let tokens = FTSTokenizer(.default).tokens(in: text)
        XCTAssertEqual(tokens.map(\.position), [0, 1, 2])
        let bytes = Array(text.utf8)
        XCTAssertEqual(tokens.map { String(decoding: bytes[$0.utf8Range], as: UTF8.self) }, ["Résumé", "naïve", "café"])
        let trigrams = FTSTokenizer(try FTSTokenizerConfig(tokenizeOption: "trigram")).tokens(in: "héllo")
        XCTAssertEqual(trigrams.map(\.position), [0, 1, 2])
        XCTAssertEqual(trigrams.map { String(decoding: Array("héllo".utf8)[$0.utf8Range], as: UTF8.self) }, ["hél", "éll", "llo"])
    }

    func testOptions() throws {
        XCTAssertEqual(try terms("Résumé", "unicode61 remove_diacritics 0"), ["résumé"])
        XCTAssertEqual(try terms("Résumé Ǖ", "unicode61 remove_diacritics 1"), ["resume", "ǖ"])
        XCTAssertEqual(try terms("Résumé", "\"unicode61\" \"remove_diacritics=0\""), ["résumé"])  // FTS4's key=value
        XCTAssertEqual(try terms("Résumé", "'unicode61 remove_diacritics 0'"), ["résumé"])        // quoted as a whole
        XCTAssertEqual(try terms("#tag C++", "unicode61 tokenchars '#+'"), ["#tag", "c++"])
        XCTAssertEqual(try terms("#tag C++", "unicode61 \"tokenchars=#+\""), ["#tag", "c++"])
        XCTAssertEqual(try terms("taxes", "unicode61 separators x"), ["ta", "es"])
        XCTAssertEqual(try terms("hi😀there abc123", "unicode61 categories 'L* N* Co So'"), ["hi😀there", "abc123"])
        XCTAssertEqual(try terms("abc123def", "unicode61 categories 'L*'"), ["abc", "def"])
        XCTAssertEqual(try terms("Résumé NAÏVE", "ascii"), ["résumé", "naÏve"])  // only ASCII folds
        XCTAssertEqual(try terms("Hello", "simple"), ["hello"])
        XCTAssertEqual(try terms("Running runners", "porter"), ["run", "runner"])
        XCTAssertEqual(try terms("Running Résumés", "porter unicode61 remove_diacritics 2"), ["run", "resum"])
        XCTAssertEqual(try terms("AbCd", "trigram"), ["abc", "bcd"])
        XCTAssertEqual(try terms("AbCd", "trigram case_sensitive 1"), ["AbC", "bCd"])
        XCTAssertEqual(try terms("Résumé", "trigram remove_diacritics 1"), ["res", "esu", "sum", "ume"])
        XCTAssertEqual(try terms("ab", "trigram"), [])
        XCTAssertEqual(try terms("Résumé", nil), ["resume"])
        XCTAssertEqual(try terms("Résumé", ""), ["resume"])
    }

    func testBadOptionsThrowWithTheirOffset() {
        let cases: [(String, FTSError.Kind, Int)] = [
            ("icu zh_CN", .badOption, 0),
            ("unicode61 remove_diacritics 3", .badOption, 28),
            ("unicode61 remove_diacritics", .badOption, 10),
            ("unicode61 case_sensitive 1", .badOption, 10),
            ("trigram remove_diacritics 2", .badOption, 26),
            ("ascii categories 'L*'", .badOption, 6),
            ("unicode61 categories 'Xx'", .badOption, 21),
            ("unicode61 tokenchars 'abc", .unterminatedString, 21),
            ("porter icu", .badOption, 7),
        ]
        for (option, kind, offset) in cases {
            XCTAssertThrowsError(try FTSTokenizerConfig(tokenizeOption: option), option) { error in
                XCTAssertEqual((error as? FTSError)?.kind, kind, option)
                XCTAssertEqual((error as? FTSError)?.offset, offset, option)
            }
        }
    }

    func testSignatureNamesEveryRuleThatChangesTokens() throws {
        let signatures = try ["unicode61", "unicode61 remove_diacritics 1", "unicode61 remove_diacritics 0", "porter",
                              "ascii", "trigram", "trigram case_sensitive 1", "unicode61 tokenchars '#'",
                              "unicode61 separators x", "unicode61 categories 'L*'"].map { try FTSTokenizerConfig(tokenizeOption: $0).signature }
        XCTAssertEqual(Set(signatures).count, signatures.count, "\(signatures)")
        XCTAssertEqual(FTSTokenizerConfig.default.signature, try FTSTokenizerConfig(tokenizeOption: "unicode61 remove_diacritics 2").signature)
        XCTAssertEqual(FTSTokenizerConfig.default.signature, "fts1 unicode61 remove_diacritics=2 categories=Co,Ll,Lm,Lo,Lt,Lu,Nd,Nl,No")
    }

    func testQueriesTokenizeLikeTheText() throws {
        let tokenizer = FTSTokenizer(.default)
        let document = FTSDocument(texts: ["Ein Résumé über Straße", nil], tokenizer: tokenizer)
        for (text, expected) in [("resume", true), ("RÉSUMÉ", true), ("uber", true), ("strasse", false), ("straße", true), ("res*", true), ("\"résumé über\"", true)] {
            let query = try FTSQuery.parse(text, columnNames: ["a", "b"], tokenizer: tokenizer)
            XCTAssertEqual(FTSMatcher.matches(query, document), expected, text)
        }
        XCTAssertEqual(document.columns[1], [])
    }

    func testTrigramSearchesSubstringsAndCJK() throws {
        let tokenizer = FTSTokenizer(try FTSTokenizerConfig(tokenizeOption: "trigram"))
        let document = FTSDocument(texts: ["北京大学的学生 say Hello"], tokenizer: tokenizer)
        func matches(_ text: String) throws -> Bool {
            FTSMatcher.matches(try FTSQuery.parse(text, columnNames: ["a"], tokenizer: tokenizer), document)
        }
        XCTAssertEqual(try FTSQuery.parse("hello", columnNames: ["a"], tokenizer: tokenizer).phrases, [FTSPhrase(terms: ["hel", "ell", "llo"])])
        XCTAssertTrue(try matches("大学的"))
        XCTAssertTrue(try matches("京大学的学"))
        XCTAssertTrue(try matches("ELL"))
        XCTAssertTrue(try matches("\"y hel\""))
        XCTAssertTrue(try matches("hel*"))
        XCTAssertFalse(try matches("大学生"))
        // Shorter than three characters: no trigram, so nothing (as FTS5).
        XCTAssertFalse(try matches("北京"))
        XCTAssertNil(try FTSQuery.parse("he", columnNames: ["a"], tokenizer: tokenizer).root)
    }

    func testPorterStemsQueriesAndText() throws {
        let tokenizer = FTSTokenizer(try FTSTokenizerConfig(tokenizeOption: "porter"))
        let document = FTSDocument(texts: ["The runners were running connections"], tokenizer: tokenizer)
        for text in ["run", "runs", "connected", "\"runner were\"", "connect*"] {
            XCTAssertTrue(FTSMatcher.matches(try FTSQuery.parse(text, columnNames: ["a"], tokenizer: tokenizer), document), text)
        }
        XCTAssertEqual(FTSPorterStemmer.stem("Résumés"), "Résumés")       // not ASCII lowercase: kept
        XCTAssertEqual(FTSPorterStemmer.stem(String(repeating: "a", count: 70) + "ing"), String(repeating: "a", count: 70) + "ing")
    }
}
