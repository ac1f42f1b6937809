import Foundation

/// W14's documents: real text first (the paragraphs of the system's English manual pages, then
/// the Chinese fortunes of `fortunes-zh`), then synthetic documents to reach the count: 8 to 23
/// words drawn from a Zipf(1) distribution over the words of /usr/share/dict/words (`wamerican`),
/// in a seeded shuffled rank order. The same count gives the same documents in every process.
struct FullTextCorpus: Sendable {
    let documents: [String]
    let manualParagraphs: Int
    let fortunes: Int
    var synthetic: Int { documents.count - manualParagraphs - fortunes }

    /// What the report says about the corpus.
    var description: String {
        "\(documents.count.formatted()) documents: \(manualParagraphs.formatted()) paragraphs of the system's manual pages "
            + "(`manpages`, `manpages-dev` and every installed package's pages, roff stripped, deduplicated), "
            + "\(fortunes.formatted()) Chinese fortunes (`fortunes-zh`), \(synthetic.formatted()) synthetic documents "
            + "(8–23 words, Zipf(1) over the words of `wamerican`'s /usr/share/dict/words)"
    }

    static let packages = ["man-db", "manpages", "manpages-dev", "fortunes-zh", "wamerican"]
    static let wordList = "/usr/share/dict/words"
    static let fortunesFile = "/usr/share/games/fortunes/chinese.u8"

    /// Installs the corpus's Debian packages when missing: `apt-get` when root, otherwise prints
    /// the command and throws (as the Makefile does for the build's packages).
    static func ensurePackages() throws {
        let missing = packages.filter { !isInstalled($0) }
        guard !missing.isEmpty else { return }
        let command = "apt-get install -y \(missing.joined(separator: " "))"
        guard getuid() == 0 else {
            log("W14's corpus needs Debian packages. Run: sudo \(command)")
            throw BenchError("W14: missing packages \(missing.joined(separator: ", "))")
        }
        log("  installing \(missing.joined(separator: " "))…")
        let status = shell("(apt-get update -qq && DEBIAN_FRONTEND=noninteractive \(command) -qq) >/dev/null 2>&1").status
        guard status == 0 else { throw BenchError("W14: `\(command)` failed (\(status))") }
    }

    static func isInstalled(_ package: String) -> Bool {
        shell("dpkg-query -W -f='${Status}' \(package) 2>/dev/null").output.contains("install ok installed")
    }

    /// The corpus of `count` documents.
    static func make(count: Int) throws -> FullTextCorpus {
        try ensurePackages()
        var documents: [String] = []
        documents.reserveCapacity(count)
        // Real text up to 40% of the documents (manual pages) and 5% (fortunes); Zipf for the rest.
        documents += manualParagraphs(files: count * 2 / 5 / 8 + 100).prefix(count * 2 / 5)
        let manualCount = documents.count
        documents += chineseFortunes().prefix(count / 20)
        let fortuneCount = documents.count - manualCount
        if documents.count < count {
            documents += try syntheticDocuments(count - documents.count)
        }
        return FullTextCorpus(documents: documents, manualParagraphs: manualCount, fortunes: fortuneCount)
    }

    /// Writes the documents to `url`, one a line, after a line with the two real counts.
    func save(to url: URL) throws {
        try ("\(manualParagraphs) \(fortunes)\n" + documents.joined(separator: "\n") + "\n").write(to: url, atomically: true, encoding: .utf8)
    }

    /// The first `count` documents of a corpus saved by `save(to:)` (a child reads the parent's).
    static func load(from url: URL, count: Int) throws -> FullTextCorpus {
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let header = lines.first?.split(separator: " ").compactMap { Int($0) } ?? []
        guard header.count == 2, lines.count > count else { throw BenchError("W14: \(url.path) is not a saved corpus of \(count) documents") }
        let documents = lines[1...count].map(String.init)
        return FullTextCorpus(documents: documents, manualParagraphs: min(header[0], count),
                              fortunes: max(0, min(header[0] + header[1], count) - header[0]))
    }

    /// Every paragraph of at least six words of the first `files` English manual pages (sections
    /// 1–9, in path order), deduplicated.
    static func manualParagraphs(files: Int) -> [String] {
        let text = shell("find /usr/share/man/man[1-9]* -name '*.gz' | sort | head -n \(files) | xargs zcat 2>/dev/null").output
        var paragraphs: [String] = []
        var seen = Set<String>()
        var current: [Substring] = []
        func flush() {
            defer { current.removeAll(keepingCapacity: true) }
            let paragraph = current.joined(separator: " ").split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            guard paragraph.split(separator: " ").count >= 6, !seen.contains(paragraph) else { return }
            seen.insert(paragraph)
            paragraphs.append(paragraph)
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.isEmpty { flush(); continue }
            guard let first = line.first else { continue }
            if first == "." || first == "'" {
                let parts = line.dropFirst().split(separator: " ", maxSplits: 1)
                let macro = parts.first ?? ""
                switch macro {
                case "PP", "P", "LP", "IP", "TP", "SH", "SS", "sp", "TH", "HP", "RS", "RE", "nf", "fi", "TS", "TE", "EX", "EE":
                    flush()
                case "B", "I", "BR", "RB", "IR", "RI", "BI", "IB", "SM", "SB":
                    if parts.count == 2 { current.append(Substring(stripRoff(parts[1]).replacingOccurrences(of: "\"", with: ""))) }
                default:
                    break
                }
                continue
            }
            current.append(Substring(stripRoff(line)))
        }
        flush()
        return paragraphs
    }

    /// A roff text line without its escapes (fonts, sizes, special characters, strings).
    static func stripRoff(_ line: Substring) -> String {
        guard line.contains("\\") else { return String(line) }
        var out = ""
        var chars = line.makeIterator()
        func skipName() {
            // \x, \(xx or \[name]
            guard let c = chars.next() else { return }
            if c == "(" { _ = chars.next(); _ = chars.next() } else if c == "[" { while let d = chars.next(), d != "]" {} }
        }
        while let c = chars.next() {
            guard c == "\\" else { out.append(c); continue }
            guard let e = chars.next() else { break }
            switch e {
            case "f", "*", "n", "F", "g", "k", "m", "V", "Y": skipName()
            case "(": _ = chars.next(); _ = chars.next(); out.append(" ")
            case "[": while let d = chars.next(), d != "]" {}; out.append(" ")
            case "s":
                // \s+N, \s-N, \sN
                var next = chars.next()
                if next == "+" || next == "-" { next = chars.next() }
                _ = next
            case "-": out.append("-")
            case "e", "\\": out.append("\\")
            case " ", "~", "0": out.append(" ")
            case "\"": return out  // a comment to the end of the line
            default: break  // \& \| \^ \% \c …: nothing
            }
        }
        return out
    }

    /// The fortunes of `fortunes-zh` (UTF-8), whitespace removed.
    static func chineseFortunes() -> [String] {
        guard let text = try? String(contentsOfFile: fortunesFile, encoding: .utf8) else { return [] }
        return text.components(separatedBy: "\n%\n").map { $0.filter { !$0.isWhitespace } }.filter { $0.count >= 6 }
    }

    /// `count` synthetic documents, Zipf(1) over the dictionary's lowercase words, seeded.
    static func syntheticDocuments(_ count: Int) throws -> [String] {
        let text = try String(contentsOfFile: wordList, encoding: .utf8)
        var words = text.split(separator: "\n").filter { word in
            word.count >= 2 && word.utf8.allSatisfy { $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z") }
        }.map(String.init)
        var rng = SplitMix64(seed: 0x5EED_0141)
        words.shuffle(using: &rng)
        var cumulative: [Double] = []
        cumulative.reserveCapacity(words.count)
        var total = 0.0
        for i in 0..<words.count { total += 1 / Double(i + 1); cumulative.append(total) }
        func word() -> String {
            let target = Double(rng.next() >> 11) / Double(1 << 53) * total
            var lo = 0, hi = cumulative.count - 1
            while lo < hi { let mid = (lo + hi) / 2; if cumulative[mid] < target { lo = mid + 1 } else { hi = mid } }
            return words[lo]
        }
        return (0..<count).map { _ in
            let length = 8 + Int(rng.next() % 16)
            return (0..<length).map { _ in word() }.joined(separator: " ")
        }
    }

    /// Runs `sh -c command`; its standard output and exit status.
    static func shell(_ command: String) -> (output: String, status: Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let pipe = Pipe()
        process.standardOutput = pipe
        do { try process.run() } catch { return ("", -1) }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (String(decoding: data, as: UTF8.self), process.terminationStatus)
    }
}

/// W14's queries, chosen from the corpus by document frequency under a simple ASCII
/// tokenization (lowercase letters and digits), the same texts for every engine (the FTS5
/// grammar, which YapDB's parser shares).
struct FullTextQueries: Sendable {
    let rare: String
    let frequent: String
    let and: String
    let phrase: String
    let prefix: String

    init(_ corpus: FullTextCorpus) {
        var frequency: [Substring: Int] = [:]
        var pairs: [String: Int] = [:]
        for (index, document) in corpus.documents.enumerated() {
            let words = Self.words(document)
            for word in Set(words) { frequency[word, default: 0] += 1 }
            if index < min(corpus.manualParagraphs, 20_000), words.count > 1 {
                for i in 1..<words.count where words[i - 1].count > 1 && words[i].count > 1 {
                    pairs["\(words[i - 1]) \(words[i])", default: 0] += 1
                }
            }
        }
        let ranked = frequency.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        let alphabetic = ranked.filter { $0.key.allSatisfy(\.isLetter) }
        frequent = String(alphabetic[0].key)
        and = "\(alphabetic[3].key) \(alphabetic[8].key)"
        rare = String(alphabetic.last { $0.value >= 3 && $0.value <= 5 && $0.key.count >= 5 }?.key ?? alphabetic.last!.key)
        let bigram = pairs.max { $0.value != $1.value ? $0.value < $1.value : $0.key > $1.key }?.key ?? "\(alphabetic[0].key) \(alphabetic[1].key)"
        phrase = "\"\(bigram)\""
        prefix = String((alphabetic.first { $0.key.count >= 6 }?.key ?? alphabetic[0].key).prefix(3)) + "*"
    }

    static func words(_ text: String) -> [Substring] {
        text.lowercased().split { c in !(c.isASCII && (c.isLetter || c.isNumber)) }
    }
}
