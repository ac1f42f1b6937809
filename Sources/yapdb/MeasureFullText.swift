import ArgumentParser
import Foundation
import YapDB

/// `yapdb measure-fts`: full-text indexing and query costs on a synthetic corpus (a Zipf
/// vocabulary), measured in one run (build with -c release).
struct MeasureFullText: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "measure-fts",
        abstract: "Measure full-text index builds and queries on a synthetic Zipf corpus.",
        shouldDisplay: false)

    @Option(help: "Documents in the corpus.") var documents = 100_000
    @Option(help: "Words per document.") var words = 12
    @Option(help: "Vocabulary size.") var vocabulary = 20_000
    @Option(help: "Repetitions per query figure.") var repetitions = 20
    @Option(help: "One-document updates measured, a transaction each (0: none).") var updates = 100
    @Option(help: "Documents per transaction of the build.") var batch = 10_000

    /// The bytes of the files in `folder`.
    static func folderBytes(_ folder: URL) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.reduce(0) { total, name in
            let size = (try? FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(name).path)[.size] as? Int) ?? 0
            return total + size
        }
    }

    func run() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("yapdb-measure-fts-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let options = YapDatabaseOptions()
        options.durability = .normal
        let database = try YapDatabase.open(url: folder.appendingPathComponent("m.yapdb"), options: options)
        let handler = YapDatabaseFullTextSearchHandler.withObjectBlock { _, dict, _, _, object in
            if let text = object as? String { dict["content"] = text }
        }
        guard database.register(YapDatabaseFullTextSearch(columnNames: ["content"], options: nil, handler: handler,
                                                          ftsVersion: YapDatabaseFullTextSearchFTS5Version, versionTag: "1"),
                                withName: "fts") else { throw ToolFailure("registration failed", code: 1) }
        // Zipf(1) over "w0" … "wN": word i has weight 1/(i+1).
        var cumulative: [Double] = []
        var total = 0.0
        for i in 0..<vocabulary { total += 1 / Double(i + 1); cumulative.append(total) }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func random() -> Double {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Double(state >> 11) / Double(1 << 53)
        }
        func word() -> String {
            let target = random() * total
            var lo = 0, hi = cumulative.count - 1
            while lo < hi { let mid = (lo + hi) / 2; if cumulative[mid] < target { lo = mid + 1 } else { hi = mid } }
            return "w\(lo)"
        }
        let writer = database.newConnection()
        let buildStart = DispatchTime.now().uptimeNanoseconds
        var written = 0
        while written < documents {
            let batch = min(max(1, self.batch), documents - written)
            try writer.write { tx in
                for i in written..<(written + batch) {
                    tx.setObject((0..<words).map { _ in word() }.joined(separator: " "), forKey: "d\(i)", inCollection: "docs")
                }
            }
            written += batch
        }
        let build = Double(DispatchTime.now().uptimeNanoseconds - buildStart) / 1e9
        try database.checkpoint()
        let update = updates == 0 ? 0 : time(updates) {
            try? writer.write { tx in tx.setObject("w1 w2 w3 w999 updated", forKey: "d\(Int(random() * Double(documents)))", inCollection: "docs") }
        }
        print("build: \(documents) documents of \(words) words in transactions of \(batch): \(String(format: "%.2f", build)) s (\(String(format: "%.1f", build * 1e6 / Double(documents))) µs per document)")
        print("incremental update of one document (a transaction each): \(String(format: "%.1f", update / 1000)) µs")
        let reader = database.newConnection()
        try reader.read { tx in
            guard let fts = tx.ext("fts") as? YapDatabaseFullTextSearchTransaction else { return }
            let stats = try fts.stats()
            print("index: \(stats.terms) terms, \(stats.postingsBlocks) postings blocks, \(stats.postingsBytes) postings bytes, \(stats.positionsBytes) positions bytes, "
                  + "\(stats.termsBytes) terms bytes, \(stats.documentsBytes) documents bytes; its pages \(stats.pageBytes) bytes; "
                  + "the database's files \(Self.folderBytes(folder)) bytes")
            let rare = "w\(vocabulary - 7)", frequent = "w0"
            for (label, query) in [("rare term", rare), ("frequent term", frequent), ("two-term AND", "w3 w5"),
                                   ("phrase", "\"w0 w1\""), ("3-letter prefix", "w12*")] {
                var matches = 0
                let keys = time(repetitions) {
                    matches = 0
                    try? fts.search(query) { _, _, _ in matches += 1 }
                }
                let count = time(repetitions) { _ = try? fts.numberOfMatches(query) }
                print("\(label) (\(query)): \(matches) matches, keys \(String(format: "%.1f", keys / 1000)) µs, count \(String(format: "%.1f", count / 1000)) µs")
            }
            let top = time(repetitions) { try? fts.searchRanked(frequent, limit: 10) { _, _, _, _ in } }
            let all = time(max(1, repetitions / 10)) { try? fts.searchRanked(frequent) { _, _, _, _ in } }
            print("bm25 top-10 of the frequent term: \(String(format: "%.1f", top / 1000)) µs (ranking every match: \(String(format: "%.1f", all / 1000)) µs)")
            let options = YapDatabaseFullTextSearchSnippetOptions()
            let snippets = time(repetitions) {
                var n = 0
                fts.enumerateKeys(matching: "w5", with: options) { _, _, _, stop in n += 1; if n == 20 { stop.pointee = true } }
            }
            print("snippets for the first 20 matches: \(String(format: "%.1f", snippets / 1000)) µs")
        }
        let checkpointed = Self.folderBytes(folder)
        try database.compact()
        print("the database's files after the checkpoint: \(checkpointed) bytes; after compact(): \(Self.folderBytes(folder)) bytes")
        try database.close()
    }

    func time(_ n: Int, _ body: () -> Void) -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<n { body() }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / Double(n)
    }
}
