import ArgumentParser
import Foundation
import YapDB

/// `yapdb search PATH EXTENSION QUERY`.
struct Search: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Search a full-text index as the last index checkpoint stored it (no handler needed).",
        discussion: """
        QUERY uses SQLite FTS5's syntax: words, "phrases", pre* prefixes, AND/OR/NOT, NEAR(a b, 3), col:word.
        Rows written after the last checkpoint are not searched; their number is shown.
        """)
    @Argument(help: "The database's main file.") var path: String
    @Argument(help: "The name the full-text index was registered under.") var extensionName: String
    @Argument(help: "The query.") var query: String
    @Flag(help: "Order by bm25 (best first) and show scores.") var ranked = false
    @Option(help: "Show at most this many rows.") var limit: Int?

    func run() throws {
        try reportingFailures {
            let database = try openExisting(path)
            let result: (matches: [StoredSearchMatch], unsearchedRows: Int, stats: YapDatabaseFullTextSearchStats)
            do throws(YapDatabaseError) {
                result = try database.searchStoredFullTextIndex(extensionName, query: query, ranked: ranked, limit: limit)
            } catch {
                if case .fileNotFound = error { throw ToolFailure("no full-text index named \(extensionName) is stored in \(path)", code: 2) }
                if case .invalidQuery(let offset, let reason) = error { throw ToolFailure("malformed query at character \(offset): \(reason)", code: 1) }
                throw ToolFailure(error, path: path)
            }
            for match in result.matches {
                let score = match.score.map { String(format: "%.4f  ", $0) } ?? ""
                print("\(score)\(match.collection)\t\(match.key)")
            }
            print("\(result.matches.count) match(es); index: \(result.stats.documents) rows, \(result.stats.terms) terms, "
                  + "\(result.stats.postingsBlocks) postings blocks (\(result.stats.postingsBytes) bytes), positions \(result.stats.positionsBytes) bytes")
            if result.unsearchedRows > 0 {
                print("note: \(result.unsearchedRows) row(s) written after the last checkpoint were not searched")
            }
        }
    }
}
