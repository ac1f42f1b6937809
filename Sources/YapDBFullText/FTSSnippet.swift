/// Options of a snippet: the marks around matched phrases, the text standing for cut text, the
/// column, and the window's length in tokens.
package struct FTSSnippetSettings: Sendable, Hashable {
    package var start: String
    package var end: String
    package var ellipses: String
    /// The column to take the snippet from; nil: the column with the best window.
    package var column: Int?
    /// The window's length in tokens (FTS5 allows 1...64; values outside are brought into that range).
    package var tokens: Int

    package init(start: String = "<b>", end: String = "</b>", ellipses: String = "...", column: Int? = nil, tokens: Int = 15) {
        self.start = start
        self.end = end
        self.ellipses = ellipses
        self.column = column
        self.tokens = tokens
    }
}

/// Snippets and highlights of one row for one query, by the rules of SQLite FTS5's `snippet()` and
/// `highlight()` (so apps moving from FTS5 see the same text):
///
/// - Phrase instances (`FTSMatcher.phraseInstances`) that overlap are marked as one.
/// - A snippet is the best window of `tokens` tokens. Candidate windows: for each instance, one
///   centred on the instances it can hold; and, when the column is longer than the window, one
///   starting at the beginning of the sentence holding the instance (a token after `.` or `:` and
///   white space). A window scores 1000 for each phrase it holds and 1 for each further instance;
///   a sentence-start window adds 100 (120 at the column's start). The first best score wins.
/// - Cut text at either end becomes the ellipses; text before the first token is kept only when the
///   window starts at the column's first token, text after the last only when it reaches the column's end.
package enum FTSSnippet {
    package static let maximumTokens = 64

    /// The snippet of the row whose column texts are `texts` (tokenized as `document`).
    /// A column out of range, or a nil text, gives "".
    package static func make(texts: [String?], document: FTSDocument, query: FTSQuery, settings: FTSSnippetSettings) -> String {
        let windowLength = min(max(settings.tokens, 1), maximumTokens)
        let instances = FTSMatcher.phraseInstances(query, document)
        let phraseLengths = query.phrases.map(\.terms.count)
        var bestColumn = settings.column ?? 0
        var bestStart = 0
        var bestScore = 0
        for column in document.columns.indices where settings.column == nil || settings.column == column {
            guard column < texts.count, let text = texts[column] else { continue }
            let tokens = document.columns[column]
            let columnInstances = FTSInstances(instances: instances, phraseLengths: phraseLengths, column: column)
            let sentenceStarts = Self.sentenceStarts(text: text, tokens: tokens)
            var previousStart = -1
            for instance in columnInstances.list {
                // Instances of other phrases at the same token give the same windows: score
                // each start once (a query of many phrases on one word has an instance per phrase).
                guard instance.start != previousStart else { continue }
                previousStart = instance.start
                let (score, adjusted) = columnInstances.score(windowStart: instance.start, length: windowLength, columnSize: tokens.count)
                if score > bestScore {
                    bestScore = score; bestColumn = column; bestStart = adjusted
                }
                guard !sentenceStarts.isEmpty, tokens.count > windowLength else { continue }
                // The last sentence start at or before the instance (the first one if none is).
                var index = 0
                while index + 1 < sentenceStarts.count, sentenceStarts[index + 1] <= instance.start { index += 1 }
                let sentence = sentenceStarts[index]
                if sentence < instance.start {
                    let (base, _) = columnInstances.score(windowStart: sentence, length: windowLength, columnSize: tokens.count)
                    let score = base + (sentence == 0 ? 120 : 100)
                    if score > bestScore {
                        bestScore = score; bestColumn = column; bestStart = sentence
                    }
                }
            }
        }
        guard bestColumn >= 0, bestColumn < texts.count, bestColumn < document.columns.count, let text = texts[bestColumn] else { return "" }
        let tokens = document.columns[bestColumn]
        let spans = FTSInstances(instances: instances, phraseLengths: phraseLengths, column: bestColumn).coalesced()
        return mark(text: text, tokens: tokens, spans: spans, range: bestStart...(bestStart + windowLength - 1),
                    start: settings.start, end: settings.end, ellipses: settings.ellipses)
    }

    /// The whole text of `column` with every phrase instance (overlapping ones joined) wrapped in
    /// `start` … `end`. A column out of range gives the text unchanged.
    package static func highlight(text: String, column: Int, document: FTSDocument, query: FTSQuery, start: String, end: String) -> String {
        guard column >= 0, column < document.columns.count else { return text }
        let instances = FTSMatcher.phraseInstances(query, document)
        let spans = FTSInstances(instances: instances, phraseLengths: query.phrases.map(\.terms.count), column: column).coalesced()
        return mark(text: text, tokens: document.columns[column], spans: spans, range: nil, start: start, end: end, ellipses: "")
    }

    /// Token positions that start a sentence: the first token, and each token whose text is
    /// preceded by white space (space, tab, CR, LF) before which stands a `.` or `:`.
    static func sentenceStarts(text: String, tokens: [FTSToken]) -> [Int] {
        guard !tokens.isEmpty else { return [] }
        var result = [0]
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        bytes.append(contentsOf: text.utf8)
        for (position, token) in tokens.enumerated().dropFirst() {
            var index = token.utf8Range.lowerBound - 1
            while index >= 0, index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index -= 1 }
            if index != token.utf8Range.lowerBound - 1, index >= 0, index < bytes.count, bytes[index] == 0x2E || bytes[index] == 0x3A {
                result.append(position)
            }
        }
        return result
    }

    /// Copies `text` with each span's tokens wrapped in the marks; with a range, only the range's
    /// tokens, cut ends shown as the ellipses.
    static func mark(text: String, tokens: [FTSToken], spans: [ClosedRange<Int>], range: ClosedRange<Int>?,
                     start: String, end: String, ellipses: String) -> String {
        let bytes = Array(text.utf8)
        var output: [UInt8] = []
        var copied = 0
        var open = false
        var spanIndex = 0
        func copy(to offset: Int) {
            let target = min(offset, bytes.count)
            if target > copied { output.append(contentsOf: bytes[copied..<target]) }
            copied = max(copied, target)
        }
        if let range {
            if range.lowerBound > 0 { output.append(contentsOf: ellipses.utf8) }
            // Instances that begin before the window are not marked.
            while spanIndex < spans.count, spans[spanIndex].lowerBound < range.lowerBound { spanIndex += 1 }
        }
        for (position, token) in tokens.enumerated() {
            if let range {
                guard range.contains(position) else { continue }
                if range.lowerBound > 0, position == range.lowerBound { copied = token.utf8Range.lowerBound }
            }
            let span: ClosedRange<Int>? = spanIndex < spans.count ? spans[spanIndex] : nil
            if open, span.map({ position <= $0.lowerBound }) ?? true, token.utf8Range.lowerBound > copied {
                output.append(contentsOf: end.utf8)
                open = false
            }
            if let span, position == span.lowerBound, !open {
                copy(to: token.utf8Range.lowerBound)
                output.append(contentsOf: start.utf8)
                open = true
            }
            if let span, position == span.upperBound {
                if !open { output.append(contentsOf: start.utf8); open = true }
                copy(to: token.utf8Range.upperBound)
                spanIndex += 1
            }
            if let range, position == range.upperBound {
                copy(to: token.utf8Range.upperBound)
            }
        }
        if open { output.append(contentsOf: end.utf8) }
        if let range, range.upperBound < tokens.count - 1 {
            output.append(contentsOf: ellipses.utf8)
        } else {
            copy(to: bytes.count)
        }
        return String(decoding: output, as: UTF8.self)
    }
}

/// One column's phrase instances in FTS5's order (by start, then phrase number).
struct FTSInstances {
    struct Instance { var phrase: Int; var start: Int; var length: Int }
    var list: [Instance] = []
    let phraseCount: Int

    init(instances: [[[Int]]], phraseLengths: [Int], column: Int) {
        phraseCount = instances.count
        for (phrase, columns) in instances.enumerated() where column < columns.count {
            for start in columns[column] { list.append(Instance(phrase: phrase, start: start, length: phraseLengths[phrase])) }
        }
        list.sort { ($0.start, $0.phrase) < ($1.start, $1.phrase) }
    }

    /// A window's score (1000 per phrase present, 1 per further instance) and its start moved to
    /// centre the instances it holds, kept inside the column.
    func score(windowStart: Int, length: Int, columnSize: Int) -> (score: Int, adjustedStart: Int) {
        var seen = Array(repeating: false, count: phraseCount)
        var score = 0
        var first = -1, last = 0
        // The list is sorted by start: the window's instances are one run of it.
        var low = 0, high = list.count
        while low < high {
            let middle = (low + high) / 2
            if list[middle].start < windowStart { low = middle + 1 } else { high = middle }
        }
        for instance in list[low...] {
            guard instance.start < windowStart + length else { break }
            score += seen[instance.phrase] ? 1 : 1000
            seen[instance.phrase] = true
            if first < 0 { first = instance.start }
            last = instance.start + instance.length
        }
        var adjusted = first - (length - (last - first)) / 2
        if adjusted + length > columnSize { adjusted = columnSize - length }
        if adjusted < 0 { adjusted = 0 }
        return (score, adjusted)
    }

    /// Token spans (first...last) of the instances, overlapping ones joined.
    func coalesced() -> [ClosedRange<Int>] {
        var spans: [ClosedRange<Int>] = []
        for instance in list {
            let last = instance.start + instance.length - 1
            if let current = spans.last, instance.start <= current.upperBound {
                spans[spans.count - 1] = current.lowerBound...max(current.upperBound, last)
            } else {
                spans.append(instance.start...last)
            }
        }
        return spans
    }
}
