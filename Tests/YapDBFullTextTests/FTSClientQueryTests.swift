import XCTest
@testable import YapDBFullText

/// Queries as real YapDatabase apps build them (research §4), against the matcher.
final class FTSClientQueryTests: XCTestCase {
    let tokenizer = FTSTokenizer(.default)

    /// Signal's index normalization: ASCII other than letters, digits and white space removed.
    func signalIndexText(_ text: String) -> String {
        String(text.unicodeScalars.filter { $0.value >= 0x80 || $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == " " }.map(Character.init))
    }

    /// Signal's query builder: normalized words, each as `"word"*`, digits gathered into one term.
    func signalQuery(_ text: String) -> String {
        let normalized = signalIndexText(text)
        var terms = Set(normalized.split(separator: " ").map(String.init).filter { !$0.allSatisfy(\.isNumber) })
        let digits = String(normalized.filter(\.isNumber))
        if !digits.isEmpty { terms.insert(digits) }
        return terms.sorted().map { "\"\($0)\"*" }.joined(separator: " ")
    }

    func count(_ query: String, in texts: [String], columns: [String] = ["content"]) throws -> Int {
        let parsed = try FTSQuery.parse(query, columnNames: columns, tokenizer: tokenizer)
        return texts.filter { FTSMatcher.matches(parsed, FTSDocument(texts: [signalIndexText($0)], tokenizer: tokenizer)) }.count
    }

    func testSignalConversationSearcherExpectations() throws {
        let messages = ["Hello Alice", "Goodbye Alice", "Hello Book Club", "Goodbye Book Club",
                        "My phone number is: 321-321-4321", "My fax is: 222-333-4444"]
        XCTAssertEqual(signalQuery("Liza +1-323"), "\"1323\"* \"Liza\"*")
        let expectations: [(String, Int)] = [("Hel", 2), ("Hel Ali", 1), ("Ali Hel", 1), ("CLU", 2), ("hello !@##!@#!$^@!@#! alice", 1),
                                             ("3213 phone", 1), ("PHO 3213", 1), ("fax 2223", 1), ("Book", 2), ("Club", 2), ("Book Club", 2)]
        for (input, expected) in expectations {
            XCTAssertEqual(try count(signalQuery(input), in: messages), expected, input)
        }
        // Diacritics fold both ways; an emoji alone is no term, so it matches nothing (as FTS5).
        XCTAssertEqual(try count(signalQuery("renaldo"), in: ["Reñaldo"]), 1)
        XCTAssertEqual(try count(signalQuery("REÑALDO"), in: ["renaldo"]), 1)
        XCTAssertNil(try FTSQuery.parse(signalQuery("😏"), columnNames: ["content"], tokenizer: tokenizer).root)
    }

    func testChatSecureAndStage1stQueries() throws {
        // ChatSecure: the typed text plus "*", over username and display name.
        let buddy = FTSDocument(texts: ["alice@example.org", "Alice Liddell"], tokenizer: tokenizer)
        for typed in ["ali", "Lid", "example"] {
            XCTAssertTrue(FTSMatcher.matches(try FTSQuery.parse(typed + "*", columnNames: ["username", "displayName"], tokenizer: tokenizer), buddy), typed)
        }
        // Stage1st: a facet column and a title filter, the title indexed with its suffixes.
        let title = "北京大学的学生"
        let suffixes = (0..<title.count).map { String(title.dropFirst($0)) }.joined(separator: " ")
        let topic = FTSDocument(texts: [suffixes, "FY"], tokenizer: tokenizer)
        for query in ["favorite:FY title:大学*", "favorite:F* title:学生*"] {
            XCTAssertTrue(FTSMatcher.matches(try FTSQuery.parse(query, columnNames: ["title", "favorite"], tokenizer: tokenizer), topic), query)
        }
        XCTAssertFalse(FTSMatcher.matches(try FTSQuery.parse("favorite:FN title:大学*", columnNames: ["title", "favorite"], tokenizer: tokenizer), topic))
    }
}
