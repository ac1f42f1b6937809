import YapDBFullText

/// The `query` target: hostile full-text query text and tokenizer options.
///
/// Input: byte 0 chooses the tokenizer (bits 0–2: unicode61, remove_diacritics 0, porter,
/// trigram, trigram case_sensitive 1, ascii, unicode61 with tokenchars, unicode61 with
/// categories) and the number of columns (bits 3–4: 1–4); with bit 7 set the rest is a
/// `tokenize` option instead of a query. The rest, as UTF-8 (invalid bytes replaced), is parsed
/// as a query over columns named c0, c1, …; when it parses, it is matched against a row made of
/// the same text, and its hit counts, bm25, snippet and highlight are computed. Every step must
/// end in a value or a typed `FTSError` whose offset lies inside the text; the results must keep
/// their shapes (one hit list per phrase and column, a finite score, tokens in order inside the
/// text). A trap, a hang, a huge allocation or a broken shape is a finding.
enum QueryTarget {
    static let name = "query"

    static let tokenizers = [
        "unicode61", "unicode61 remove_diacritics 0", "porter", "trigram", "trigram case_sensitive 1", "ascii",
        "unicode61 tokenchars '#@-_'", "unicode61 categories 'L* N* Co So'",
    ]

    static func run(_ data: UnsafeRawBufferPointer) {
        var input = FuzzInput(data)
        let mode = input.byte()
        let text = String(decoding: input.take(input.remaining), as: UTF8.self)
        if mode & 0x80 != 0 {
            do throws(FTSError) {
                let config = try FTSTokenizerConfig(tokenizeOption: text)
                checkTokens(FTSTokenizer(config), text)
            } catch {
                checkError(error, in: text)
            }
            return
        }
        guard let config = try? FTSTokenizerConfig(tokenizeOption: tokenizers[Int(mode & 7)]) else {
            fatalError("FUZZ FINDING query: a built-in tokenizer option was refused")
        }
        let tokenizer = FTSTokenizer(config)
        let columns = (0...Int((mode >> 3) & 3)).map { "c\($0)" }
        checkTokens(tokenizer, text)
        let query: FTSQuery
        do throws(FTSError) {
            query = try FTSQuery.parse(text, columnNames: columns, tokenizer: tokenizer)
        } catch {
            checkError(error, in: text)
            return
        }
        check(query, columns: columns, tokenizer: tokenizer, text: text)
    }

    static func checkError(_ error: FTSError, in text: String) {
        guard (0...max(text.utf8.count, FTSQuery.maximumLength)).contains(error.offset), !error.message.isEmpty else {
            fatalError("FUZZ FINDING query: error \(error.kind) at offset \(error.offset) outside the text (\(text.utf8.count) bytes) or without a message")
        }
    }

    static func checkTokens(_ tokenizer: FTSTokenizer, _ text: String) {
        let tokens = tokenizer.tokens(in: text)
        var previous = -1
        for (index, token) in tokens.enumerated() {
            guard token.position == index, !token.term.isEmpty, token.utf8Range.lowerBound >= 0,
                  token.utf8Range.upperBound <= text.utf8.count, token.utf8Range.lowerBound >= previous || tokenizer.config.base == .trigram else {
                fatalError("FUZZ FINDING query: token \(index) \(token) out of order or outside the text")
            }
            previous = token.utf8Range.upperBound
        }
    }

    static func check(_ query: FTSQuery, columns: [String], tokenizer: FTSTokenizer, text: String) {
        guard query.phrases == FTSQuery.leafPhrases(of: query.root), query.phrases.count <= FTSQuery.maximumPhrases,
              query.phrases.allSatisfy({ !$0.terms.isEmpty }), query.phraseColumnFilters.count == query.phrases.count else {
            fatalError("FUZZ FINDING query: phrase list does not match the tree")
        }
        let texts: [String?] = columns.indices.map { $0 == 1 ? nil : text }
        let document = FTSDocument(texts: texts, tokenizer: tokenizer)
        let matched = FTSMatcher.matches(query, document)
        let hits = FTSMatcher.phraseHitCounts(query, document)
        guard hits.count == query.phrases.count, hits.allSatisfy({ $0.count == columns.count }) else {
            fatalError("FUZZ FINDING query: hit counts of the wrong shape")
        }
        if query.root == nil, matched { fatalError("FUZZ FINDING query: a query without terms matched") }
        let idfs = query.phrases.map { _ in FTSRanking.idf(documentCount: 10, documentsMatching: 1) }
        let score = FTSRanking.bm25(hitCounts: hits, idfs: idfs, weights: [2, 0.5], documentLength: document.tokenCount, averageLength: 7)
        guard score.isFinite, score >= 0 else { fatalError("FUZZ FINDING query: bm25 \(score)") }
        for tokens in [15, 1, 64] {
            _ = FTSSnippet.make(texts: texts, document: document, query: query, settings: FTSSnippetSettings(tokens: tokens))
        }
        let highlighted = FTSSnippet.highlight(text: text, column: 0, document: document, query: query, start: "[", end: "]")
        guard highlighted.utf8.count >= text.utf8.count else { fatalError("FUZZ FINDING query: highlight lost text") }
    }

    /// Seed inputs: a mode byte and a query (or option) in the grammar, valid and not.
    static func seeds() -> [[UInt8]] {
        let queries: [(UInt8, String)] = [
            (0, "\"Liza\"* \"1323\"*"), (0, "apple OR banana NOT cherry"), (8, "c0:(a OR b) c1:NEAR(x y z, 3)"),
            (24, "{c0 c2}:^first -c3:\"a b\"*"), (2, "running AND connected"), (3, "北京大学的学生"), (4, "HeLLo wOrld"),
            (0, "a NEAR/3 b NEAR/1 c"), (0, "((a))) \"unterminated"), (0, "NEAR(a b, 99999999)"), (6, "#tag @you me-too"),
            (7, "hi😀there ❤love"), (0, "Résumé naïve café"), (128, "porter unicode61 remove_diacritics 1 \"tokenchars=#\""),
            (128, "trigram case_sensitive 2"), (0, "a + b + c* OR ^d"), (8, "c1 : ( c0 : x )"),
        ]
        return queries.map { [$0.0] + Array($0.1.utf8) }
    }
}
