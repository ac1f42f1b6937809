import ArgumentParser
import YapDBFullText

/// `yapdb-measure tokenize`: the full-text tokenizers over synthetic text, for instruction counts
/// per token with callgrind (`--collect-atstart=no --toggle-collect='*tokenizeLoop*'`: the total
/// divided by the tokens printed is the cost of one token, the text's generation excluded).
struct MeasureTokenize: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "tokenize", abstract: "Tokenize synthetic text with one tokenizer (for instruction counts).")

    @Option(help: "The tokenize option, as an index takes it (unicode61, porter, trigram, ascii, …).") var tokenizer = "unicode61"
    @Option(help: "Bytes of text: paragraphs of 60 words drawn from English words, about one in five accented.") var bytes = 1_000_000

    func run() throws {
        let words = ("the search engine finds every message quickly while people type prefixes and phrases ranking "
            + "uses term frequency Résumé naïve café über").split(separator: " ").map(String.init)
        var rng = FastRandom(seed: 42)
        var paragraphs: [String] = []
        var total = 0
        while total < bytes {
            var paragraph = ""
            for _ in 0..<60 {
                paragraph += words[Int(rng.next() % UInt64(words.count))]
                paragraph += " "
            }
            total += paragraph.utf8.count
            paragraphs.append(paragraph)
        }
        let config: FTSTokenizerConfig
        do { config = try FTSTokenizerConfig(tokenizeOption: tokenizer) } catch { throw ValidationError(error.description) }
        let clock = ContinuousClock()
        var count = 0
        let elapsed = clock.measure { count = tokenizeLoop(FTSTokenizer(config), paragraphs) }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("\(tokenizer): \(total) bytes, \(count) tokens, \(Int(seconds / Double(max(count, 1)) * 1e9)) ns per token")
    }

    /// The measured loop: every paragraph tokenized once.
    @inline(never)
    func tokenizeLoop(_ tokenizer: FTSTokenizer, _ paragraphs: [String]) -> Int {
        var count = 0
        for paragraph in paragraphs { count += tokenizer.tokens(in: paragraph).count }
        return count
    }
}
