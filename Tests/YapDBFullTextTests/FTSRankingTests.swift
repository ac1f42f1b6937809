import XCTest
@testable import YapDBFullText

/// bm25 against a direct computation of its formula, and snippet edge cases.
final class FTSRankingTests: XCTestCase {
    func testIDFMatchesTheFormulaAndIsFloored() {
        XCTAssertEqual(FTSRanking.idf(documentCount: 100, documentsMatching: 3), log(97.5 / 3.5), accuracy: 1e-12)
        XCTAssertEqual(FTSRanking.idf(documentCount: 100, documentsMatching: 50), 1e-6)
        XCTAssertEqual(FTSRanking.idf(documentCount: 100, documentsMatching: 90), 1e-6)
        XCTAssertEqual(FTSRanking.idf(documentCount: 1, documentsMatching: 0), log(3.0), accuracy: 1e-12)
    }

    func testBM25MatchesADirectComputation() {
        let hits = [[2, 0, 1], [0, 3, 0]]
        let idfs = [1.7, 0.4]
        let weights = [2.0, 0.5]  // the third column's weight is missing: 1
        let length = 40, average = 25.0
        var expected = 0.0
        for (phrase, counts) in hits.enumerated() {
            let f = 2.0 * Double(counts[0]) + 0.5 * Double(counts[1]) + 1.0 * Double(counts[2])
            expected += idfs[phrase] * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * Double(length) / average))
        }
        XCTAssertEqual(FTSRanking.bm25(hitCounts: hits, idfs: idfs, weights: weights, documentLength: length, averageLength: average), expected, accuracy: 1e-12)
        XCTAssertEqual(FTSRanking.bm25(hitCounts: [[0, 0]], idfs: [5], weights: [], documentLength: 3, averageLength: 3), 0)
        // More hits and a shorter row rank higher.
        let one = FTSRanking.bm25(hitCounts: [[1]], idfs: [1], weights: [], documentLength: 10, averageLength: 10)
        XCTAssertGreaterThan(FTSRanking.bm25(hitCounts: [[2]], idfs: [1], weights: [], documentLength: 10, averageLength: 10), one)
        XCTAssertGreaterThan(FTSRanking.bm25(hitCounts: [[1]], idfs: [1], weights: [], documentLength: 5, averageLength: 10), one)
    }

    func testSnippetEdgeCases() throws {
        let tokenizer = FTSTokenizer(.default)
        let texts: [String?] = ["Short title", nil, "one two three four five six seven eight nine ten. Eleven twelve apple thirteen"]
        let document = FTSDocument(texts: texts, tokenizer: tokenizer)
        let query = try FTSQuery.parse("apple", columnNames: ["a", "b", "c"], tokenizer: tokenizer)
        XCTAssertEqual(FTSSnippet.make(texts: texts, document: document, query: query, settings: FTSSnippetSettings(tokens: 4)),
                       "...Eleven twelve <b>apple</b> thirteen")
        // The sentence start wins over a centred window when it holds the match.
        XCTAssertEqual(FTSSnippet.make(texts: texts, document: document, query: query, settings: FTSSnippetSettings(tokens: 5)),
                       "...Eleven twelve <b>apple</b> thirteen")
        XCTAssertEqual(FTSSnippet.make(texts: texts, document: document, query: query, settings: FTSSnippetSettings(column: 0)), "Short title")
        XCTAssertEqual(FTSSnippet.make(texts: texts, document: document, query: query, settings: FTSSnippetSettings(column: 1)), "")
        XCTAssertEqual(FTSSnippet.make(texts: texts, document: document, query: query, settings: FTSSnippetSettings(column: 9)), "")
        XCTAssertEqual(FTSSnippet.make(texts: texts, document: document, query: query, settings: FTSSnippetSettings(column: 0, tokens: 0)), "Short...")
        XCTAssertEqual(FTSSnippet.highlight(text: texts[2]!, column: 2, document: document, query: query, start: "[", end: "]"),
                       "one two three four five six seven eight nine ten. Eleven twelve [apple] thirteen")
        XCTAssertEqual(FTSSnippet.highlight(text: "x", column: 7, document: document, query: query, start: "[", end: "]"), "x")
        // Overlapping phrase instances are marked once.
        let overlapping = try FTSQuery.parse("\"b c\" OR \"c d\" OR a", columnNames: ["x"], tokenizer: tokenizer)
        let row = FTSDocument(texts: ["a b c d e"], tokenizer: tokenizer)
        XCTAssertEqual(FTSSnippet.highlight(text: "a b c d e", column: 0, document: row, query: overlapping, start: "[", end: "]"), "[a] [b c d] e")
    }
}
