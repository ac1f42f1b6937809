import ArgumentParser
import Foundation
import YapDB

/// `yapdb search PATH EXTENSION QUERY`.
struct Search: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Search a full-text index (no handler needed): every committed row is searched or listed.",
        discussion: """
        QUERY uses SQLite FTS5's syntax: words, "phrases", pre* prefixes, AND/OR/NOT, NEAR(a b, 3), col:word.
        The index is read as the last checkpoint stored it (a clean close writes one). Rows written after \
        that checkpoint (a process that stopped without closing) are searched by their text when their \
        object is a string, marked "~" (taken as every column: the app's handler may index otherwise); \
        any other such row is listed as not searched.
        """)
    @Argument(help: "The database's main file.") var path: String
    @Argument(help: "The name the full-text index was registered under.") var extensionName: String
    @Argument(help: "The query.") var query: String
    @Flag(help: "Order by bm25 (best first) and show scores.") var ranked = false
    @Option(help: "Show at most this many rows.") var limit: Int?
    @OptionGroup var lock: ReadLockOptions
    @OptionGroup var cipher: KeyOptions

    func run() throws {
        try reportingFailures {
            let database = try openExisting(path, readOnly: true, busyTimeout: lock.busyTimeout, key: try cipher.key())
            let result: StoredSearchResult
            do throws(YapDatabaseError) {
                result = try database.searchStoredFullTextIndex(extensionName, query: query, ranked: ranked, limit: limit)
            } catch {
                if case .fileNotFound = error { throw ToolFailure("no full-text index named \(extensionName) is stored in \(path)", code: 2) }
                if case .invalidQuery(let offset, let reason) = error { throw ToolFailure("malformed query at character \(offset): \(reason)", code: 1) }
                throw ToolFailure(error, path: path)
            }
            for match in result.matches {
                let score = match.score.map { String(format: "%.4f  ", $0) } ?? (ranked ? "        " : "")
                print("\(match.byRowText ? "~ " : "")\(score)\(match.collection)\t\(match.key)")
            }
            let stats = result.stats
            print("\(result.matches.count) match(es); index: \(stats.documents) rows, \(stats.terms) terms, "
                  + "\(stats.postingsBlocks) postings blocks (\(stats.postingsBytes) bytes), positions \(stats.positionsBytes) bytes")
            let byText = result.matches.filter(\.byRowText).count
            if byText > 0 {
                print("note: \(byText) match(es) marked ~ were written after the last checkpoint and matched by their text, not by the index")
            }
            if !result.unsearched.isEmpty {
                print("note: \(result.unsearched.count) row(s) written after the last checkpoint are not text and were not searched "
                      + "(register the index in the app, or close it cleanly, to index them):")
                for row in result.unsearched { print("  \(row.collection)\t\(row.key)") }
            }
        }
    }
}
