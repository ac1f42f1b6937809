/// Options of a snippet: the marks around matched phrases, the text standing for cut text, the
/// column, and the window's length in tokens.
package struct FTSSnippetSettings: Sendable, Hashable {
    package var start: String
    package var end: String
    package var ellipses: String
    /// The column to take the snippet from; nil: the column with the best window.
    package var column: Int?
    /// The window's length in tokens (FTS5 allows 1...64; larger values are cut to 64).
    package var tokens: Int

    package init(start: String = "<b>", end: String = "</b>", ellipses: String = "...", column: Int? = nil, tokens: Int = 15) {
        self.start = start
        self.end = end
        self.ellipses = ellipses
        self.column = column
        self.tokens = tokens
    }
}

/// Snippets and highlights of one row for one query, as SQLite FTS5's `snippet()` and `highlight()`.
package enum FTSSnippet {
    /// The best window of `settings.tokens` tokens, matched phrases marked, cut text shown as the ellipses.
    package static func make(texts: [String?], document: FTSDocument, query: FTSQuery, settings: FTSSnippetSettings) -> String {
        let column = settings.column ?? 0
        guard column >= 0, column < texts.count, let text = texts[column] else { return "" }
        return highlight(text: text, column: column, document: document, query: query, start: settings.start, end: settings.end)
    }

    /// The whole text of `column` with every phrase match wrapped in `start` … `end`.
    package static func highlight(text: String, column: Int, document: FTSDocument, query: FTSQuery, start: String, end: String) -> String {
        guard column >= 0, column < document.columns.count else { return text }
        let tokens = document.columns[column]
        let ranges = FTSHighlightRanges.matchedTokenRanges(query: query, document: document, column: column)
        let bytes = Array(text.utf8)
        var output: [UInt8] = []
        var cursor = 0
        for range in ranges where range.lowerBound < tokens.count {
            let from = tokens[range.lowerBound].utf8Range.lowerBound
            let to = tokens[min(range.upperBound, tokens.count) - 1].utf8Range.upperBound
            guard from >= cursor, to <= bytes.count else { continue }
            output.append(contentsOf: bytes[cursor..<from])
            output.append(contentsOf: start.utf8)
            output.append(contentsOf: bytes[from..<to])
            output.append(contentsOf: end.utf8)
            cursor = to
        }
        output.append(contentsOf: bytes[cursor...])
        return String(decoding: output, as: UTF8.self)
    }
}

enum FTSHighlightRanges {
    /// The token index ranges of `column` covered by phrase hits, merged where they overlap, ascending.
    static func matchedTokenRanges(query: FTSQuery, document: FTSDocument, column: Int) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        let tokens = document.columns[column]
        for phrase in query.phrases {
            for start in FTSMatcher.starts(of: phrase, in: tokens) {
                ranges.append(start..<(start + phrase.terms.count))
            }
        }
        ranges.sort { $0.lowerBound < $1.lowerBound }
        var merged: [Range<Int>] = []
        for range in ranges {
            if let last = merged.last, range.lowerBound < last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }
}
