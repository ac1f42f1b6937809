import XCTest
@testable import YapDBFullText

final class FTSQueryParserTests: XCTestCase {
    let tokenizer = FTSTokenizer(.default)

    func parse(_ text: String, columns: [String] = ["title", "body"]) throws -> FTSQuery {
        try FTSQuery.parse(text, columnNames: columns, tokenizer: tokenizer)
    }

    func testSignalQuotedPrefixQueries() throws {
        let query = try parse("\"Liza\"* \"1323\"*")
        XCTAssertEqual(query.root, .and([
            .phrase(FTSPhrase(terms: ["liza"], lastIsPrefix: true), columns: nil),
            .phrase(FTSPhrase(terms: ["1323"], lastIsPrefix: true), columns: nil),
        ]))
        XCTAssertEqual(query.phrases.count, 2)
    }
}
