import XCTest
@testable import YapDBFullText

/// Every element of the query grammar, and every error shape with its offset.
final class FTSQueryParserTests: XCTestCase {
    let tokenizer = FTSTokenizer(.default)

    func parse(_ text: String, columns: [String] = ["title", "body", "tags"]) throws -> FTSQuery {
        try FTSQuery.parse(text, columnNames: columns, tokenizer: tokenizer)
    }

    func term(_ word: String, prefix: Bool = false, columns: [Int]? = nil) -> FTSQueryNode {
        .phrase(FTSPhrase(terms: [word], lastIsPrefix: prefix), columns: columns)
    }

    func assertError(_ text: String, _ kind: FTSError.Kind, at offset: Int, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try parse(text), file: file, line: line) { error in
            guard let error = error as? FTSError else { return XCTFail("not an FTSError: \(error)", file: file, line: line) }
            XCTAssertEqual(error.kind, kind, "\(text): \(error.message)", file: file, line: line)
            XCTAssertEqual(error.offset, offset, "\(text): \(error.message)", file: file, line: line)
        }
    }

    // MARK: Grammar elements

    func testSignalQuotedPrefixQueries() throws {
        let query = try parse("\"Liza\"* \"1323\"*")
        XCTAssertEqual(query.root, .and([term("liza", prefix: true), term("1323", prefix: true)]))
        XCTAssertEqual(query.phrases.count, 2)
    }

    func testTermsAreTokenizedAndImplicitAndJoinsThem() throws {
        XCTAssertEqual(try parse("Résumé").root, term("resume"))
        XCTAssertEqual(try parse("apple Banana").root, .and([term("apple"), term("banana")]))
        // A quoted string holding several tokens is a phrase (FTS5's rule).
        XCTAssertEqual(try parse("\"don't stop\"").root, .phrase(FTSPhrase(terms: ["don", "t", "stop"]), columns: nil))
        // "" inside quotes is a quote character, which the tokenizer drops.
        XCTAssertEqual(try parse("\"say \"\"hi\"\"\"").root, .phrase(FTSPhrase(terms: ["say", "hi"]), columns: nil))
        // Non-ASCII characters are bareword characters.
        XCTAssertEqual(try parse("日本語").root, term("日本語"))
    }

    func testOperatorsAndPrecedence() throws {
        XCTAssertEqual(try parse("a OR b").root, .or([term("a"), term("b")]))
        XCTAssertEqual(try parse("a AND b").root, .and([term("a"), term("b")]))
        XCTAssertEqual(try parse("a NOT b").root, .not(term("a"), excluding: term("b")))
        // NOT binds tighter than AND, AND tighter than OR.
        XCTAssertEqual(try parse("a OR b AND c").root, .or([term("a"), .and([term("b"), term("c")])]))
        XCTAssertEqual(try parse("a AND b NOT c").root, .and([term("a"), .not(term("b"), excluding: term("c"))]))
        // Adjacent terms join before NOT (FTS5): a NOT (b c).
        XCTAssertEqual(try parse("a NOT b c").root, .not(term("a"), excluding: .and([term("b"), term("c")])))
        // NOT is left-associative.
        XCTAssertEqual(try parse("a NOT b NOT c").root, .not(.not(term("a"), excluding: term("b")), excluding: term("c")))
        XCTAssertEqual(try parse("(a OR b) AND c").root, .and([.or([term("a"), term("b")]), term("c")]))
        // Implicit AND next to parentheses (FTS4 allows it; FTS5 3.40 does not).
        XCTAssertEqual(try parse("(a OR b) c").root, .and([.or([term("a"), term("b")]), term("c")]))
        // Keywords are case-sensitive: lowercase or/and/not are terms.
        XCTAssertEqual(try parse("a or b").root, .and([term("a"), term("or"), term("b")]))
        XCTAssertEqual(try parse("not").root, term("not"))
        // A bare NEAR (no parenthesis, no /n) is a term, as in FTS5.
        XCTAssertEqual(try parse("a NEAR b").root, .and([term("a"), term("near"), term("b")]))
    }

    func testPhrasesAndPrefixes() throws {
        XCTAssertEqual(try parse("\"a b\"").root, .phrase(FTSPhrase(terms: ["a", "b"]), columns: nil))
        XCTAssertEqual(try parse("a + b + c").root, .phrase(FTSPhrase(terms: ["a", "b", "c"]), columns: nil))
        XCTAssertEqual(try parse("\"a b\"*").root, .phrase(FTSPhrase(terms: ["a", "b"], lastIsPrefix: true), columns: nil))
        XCTAssertEqual(try parse("a + b*").root, .phrase(FTSPhrase(terms: ["a", "b"], lastIsPrefix: true), columns: nil))
        XCTAssertEqual(try parse("pre*").root, term("pre", prefix: true))
        XCTAssertEqual(try parse("pre *").root, term("pre", prefix: true))
        XCTAssertEqual(try parse("^first").root, .phrase(FTSPhrase(terms: ["first"], mustStartColumn: true), columns: nil))
        XCTAssertEqual(try parse("^\"a b\"").root, .phrase(FTSPhrase(terms: ["a", "b"], mustStartColumn: true), columns: nil))
    }

    func testNearGroups() throws {
        let a = FTSPhrase(terms: ["a"]), b = FTSPhrase(terms: ["b"]), c = FTSPhrase(terms: ["c", "d"])
        XCTAssertEqual(try parse("NEAR(a b)").root, .near([a, b], distance: 10, columns: nil))
        XCTAssertEqual(try parse("NEAR(a b \"c d\", 3)").root, .near([a, b, c], distance: 3, columns: nil))
        XCTAssertEqual(try parse("NEAR (a b, 0)").root, .near([a, b], distance: 0, columns: nil))
        XCTAssertEqual(try parse("NEAR(a, 1)").root, .near([a], distance: 1, columns: nil))
        // FTS4's NEAR/n, chained pairwise.
        XCTAssertEqual(try parse("a NEAR/3 b").root, .near([a, b], distance: 3, columns: nil))
        XCTAssertEqual(try parse("a NEAR/3 b NEAR/1 \"c d\"").root,
                       .and([.near([a, b], distance: 3, columns: nil), .near([b, c], distance: 1, columns: nil)]))
        XCTAssertEqual(try parse("a NEAR/3 b NEAR/1 \"c d\"").phrases, [a, b, b, c])
    }

    func testColumnFilters() throws {
        XCTAssertEqual(try parse("title:a").root, term("a", columns: [0]))
        XCTAssertEqual(try parse("TITLE : a").root, term("a", columns: [0]))
        XCTAssertEqual(try parse("{body tags}:a").root, term("a", columns: [1, 2]))
        XCTAssertEqual(try parse("-title:a").root, term("a", columns: [1, 2]))
        XCTAssertEqual(try parse("-{title tags}:a").root, term("a", columns: [1]))
        XCTAssertEqual(try parse("{title body tags}:a").root, term("a"))  // every column: no filter
        XCTAssertEqual(try parse("\"title\":a").root, term("a", columns: [0]))
        // A filter on a group reaches every phrase inside, intersected with inner filters.
        XCTAssertEqual(try parse("title:(a OR b)").root, .or([term("a", columns: [0]), term("b", columns: [0])]))
        XCTAssertEqual(try parse("{title body}:(a body:b tags:c)").root,
                       .and([term("a", columns: [0, 1]), term("b", columns: [1]), term("c", columns: [])]))
        XCTAssertEqual(try parse("body:NEAR(a b)").root, .near([FTSPhrase(terms: ["a"]), FTSPhrase(terms: ["b"])], distance: 10, columns: [1]))
        XCTAssertEqual(try parse("title:^a").root, .phrase(FTSPhrase(terms: ["a"], mustStartColumn: true), columns: [0]))
        // The filter covers the next unit only.
        XCTAssertEqual(try parse("title:a OR b").root, .or([term("a", columns: [0]), term("b")]))
    }

    func testEmptyPhrasesAreDroppedAsFTS5DropsThem() throws {
        XCTAssertNil(try parse("").root)
        XCTAssertNil(try parse("   ").root)
        XCTAssertNil(try parse("\"\"").root)
        XCTAssertNil(try parse("_").root)
        XCTAssertEqual(try parse("a \"\"").root, term("a"))
        XCTAssertEqual(try parse("a OR \"...\"").root, term("a"))
        XCTAssertEqual(try parse("a NOT \"\"").root, term("a"))
        XCTAssertNil(try parse("\"\" NOT a").root)
        XCTAssertNil(try parse("NEAR(\"\" _)").root)
        XCTAssertEqual(try parse("a \"\"").phrases, [FTSPhrase(terms: ["a"])])
        XCTAssertFalse(FTSMatcher.matches(try parse("\"\""), FTSDocument(texts: ["anything"], tokenizer: tokenizer)))
    }

    func testLimitsAreEnforced() throws {
        let deep = String(repeating: "(", count: FTSQuery.maximumDepth + 1) + "a" + String(repeating: ")", count: FTSQuery.maximumDepth + 1)
        assertError(deep, .tooDeep, at: FTSQuery.maximumDepth)
        let fine = String(repeating: "(", count: FTSQuery.maximumDepth) + "a" + String(repeating: ")", count: FTSQuery.maximumDepth)
        XCTAssertEqual(try parse(fine).root, term("a"))
        assertError(String(repeating: "a ", count: FTSQuery.maximumLength), .tooLong, at: FTSQuery.maximumLength)
        assertError(String(repeating: "a ", count: FTSQuery.maximumPhrases + 1), .tooLong, at: 2 * FTSQuery.maximumPhrases)
        let nots = "a" + String(repeating: " NOT b", count: FTSQuery.maximumDepth + 1)
        assertError(nots, .tooDeep, at: 2 + 6 * FTSQuery.maximumDepth)
        XCTAssertNotNil(try parse("a" + String(repeating: " NOT b", count: FTSQuery.maximumDepth)).root)
        // OR and AND chains are flat: long ones are fine.
        XCTAssertEqual(try parse(Array(repeating: "a", count: 500).joined(separator: " OR ")).phrases.count, 500)
        assertError("NEAR(a b, 99999999)", .badNear, at: 10)
        assertError("a NEAR/99999999 b", .badNear, at: 7)
    }

    // MARK: Errors

    func testErrorShapes() {
        assertError("a \"b", .unterminatedString, at: 2)
        assertError("a'b", .unexpectedToken, at: 1)
        assertError("a AND", .emptyExpression, at: 5)
        assertError("a NOT", .emptyExpression, at: 5)
        assertError("a OR", .emptyExpression, at: 4)
        assertError("AND a", .unexpectedToken, at: 0)
        assertError("a OR OR b", .unexpectedToken, at: 5)
        assertError("()", .emptyExpression, at: 1)
        assertError("(a b", .unbalancedParenthesis, at: 0)
        assertError("a b)", .unbalancedParenthesis, at: 3)
        assertError(")", .unbalancedParenthesis, at: 0)
        assertError("{title body", .unbalancedParenthesis, at: 0)
        assertError("{title a}:b", .unknownColumn, at: 7)
        assertError("{}:a", .unexpectedToken, at: 1)
        assertError("{title}a", .unexpectedToken, at: 7)
        assertError("nope:a", .unknownColumn, at: 0)
        assertError("{title nope}:a", .unknownColumn, at: 7)
        assertError("-a", .unknownColumn, at: 1)
        assertError("-title a", .unexpectedToken, at: 7)
        assertError("- :a", .unexpectedToken, at: 2)
        assertError("title:title:a", .unexpectedToken, at: 11)
        assertError("a+", .emptyExpression, at: 2)
        assertError("+a", .unexpectedToken, at: 0)
        assertError("*", .unexpectedToken, at: 0)
        assertError("a* + b", .unexpectedToken, at: 5)
        assertError("^", .emptyExpression, at: 1)
        assertError("foo(a)", .unexpectedToken, at: 0)
        assertError("near(a b)", .unexpectedToken, at: 0)
        assertError("NEAR()", .badNear, at: 5)
        assertError("NEAR(a b,)", .badNear, at: 9)
        assertError("NEAR(a b, x)", .badNear, at: 10)
        assertError("NEAR(a b, 0x1)", .badNear, at: 10)
        assertError("NEAR(a b, 2 c)", .badNear, at: 12)
        assertError("NEAR(^a b)", .badNear, at: 5)
        assertError("NEAR(a b", .unbalancedParenthesis, at: 0)
        assertError("NEAR(a OR b)", .badNear, at: 7)
        assertError("a NEAR/ b", .badNear, at: 7)
        assertError("a NEAR/2x b", .badNear, at: 7)
        assertError("a NEAR/2", .badNear, at: 8)
        assertError("^a NEAR/2 b", .badNear, at: 3)
        assertError("a, b", .unexpectedToken, at: 1)
    }

    func testErrorsCarryAMessageAndNeverTrapOnHostileText() {
        let hostile = ["\u{0}", "\"", "((((", "))))", "{{{", "NEAR(", "NEAR(a,", "a:", ":", "-", "^^a", "a**", "\"\"*", "\u{FFFF}",
                       String(repeating: "NOT ", count: 100), String(repeating: "a OR ", count: 50) + "b", "a\u{1A}b", "NEAR/1"]
        for text in hostile {
            do throws(FTSError) {
                _ = try FTSQuery.parse(text, columnNames: ["title"], tokenizer: tokenizer)
            } catch {
                XCTAssertFalse(error.message.isEmpty, text)
                XCTAssertTrue((0...text.utf8.count).contains(error.offset), text)
            }
        }
    }
}
