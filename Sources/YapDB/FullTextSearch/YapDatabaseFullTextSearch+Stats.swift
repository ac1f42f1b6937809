import Foundation
import YapDBEngine
import YapDBFullText

/// What a full-text index holds (`YapDatabaseFullTextSearchTransaction.stats()`).
public struct YapDatabaseFullTextSearchStats: Sendable, Equatable {
    /// Distinct terms in the term dictionary.
    public var terms: Int
    /// Postings blocks (up to 128 rows of one term each).
    public var postingsBlocks: Int
    /// Bytes of postings entries (keys and blocks).
    public var postingsBytes: Int
    /// Bytes of positions entries (keys and values).
    public var positionsBytes: Int
    /// Indexed rows.
    public var documents: Int
    /// Bytes of the term dictionary's entries (terms with their counts and ids, and the id
    /// entries).
    public var termsBytes: Int = 0
    /// Bytes of the per-row document entries (lengths and term ids).
    public var documentsBytes: Int = 0
    /// Bytes of the index pages the four trees occupy (pages × page size; not yet written ones
    /// included): the index's live share of the index files, whose other pages are free or
    /// hold copies that later checkpoints superseded.
    public var pageBytes: Int = 0
}

extension YapDatabaseFullTextSearchTransaction {
    /// The index's size as of this transaction: terms, postings and positions bytes, rows.
    /// Walks the postings and positions trees (O(size)).
    /// - Throws: `.corrupted` when a page cannot be read.
    public func stats() throws(YapDatabaseError) -> YapDatabaseFullTextSearchStats {
        let state = try state()
        do throws(EngineError) {
            let figures = try state.figures()
            return figures
        } catch {
            throw damaged(error)
        }
    }
}

/// The signature a full-text index is stored with: the columns, the FTS version, the tokenize
/// option as given and the tokenizer's signature, separated by 0x1E (columns by 0x1F).
struct FullTextSignature: Equatable {
    var columns: [String]
    var ftsVersion: String
    var tokenizeOption: String?
    var tokenizer: String

    var text: String {
        [columns.joined(separator: "\u{1F}"), ftsVersion, tokenizeOption ?? "", tokenizer].joined(separator: "\u{1E}")
    }

    init(columns: [String], ftsVersion: String, tokenizeOption: String?, tokenizer: String) {
        self.columns = columns
        self.ftsVersion = ftsVersion
        self.tokenizeOption = tokenizeOption
        self.tokenizer = tokenizer
    }

    /// Reads `text`; nil when it is not a signature.
    init?(_ text: String) {
        let parts = text.split(separator: "\u{1E}", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 4, !parts[0].isEmpty else { return nil }
        self.init(columns: parts[0].split(separator: "\u{1F}", omittingEmptySubsequences: false).map(String.init),
                  ftsVersion: parts[1], tokenizeOption: parts[2].isEmpty ? nil : parts[2], tokenizer: parts[3])
    }
}

/// One row `YapDatabase.searchStoredFullTextIndex` found.
package struct StoredSearchMatch: Sendable {
    package var collection: String
    package var key: String
    /// The bm25 score when ranked (nil for a row matched by its text).
    package var score: Double?
    /// Written after the last checkpoint, so not in the stored index: matched by its object's
    /// text (stored as a `String`) taken as every column's, not by the app's handler.
    package var byRowText = false
}

/// What `YapDatabase.searchStoredFullTextIndex` returns.
package struct StoredSearchResult: Sendable {
    /// The matching rows: the index's (best first when ranked), then those matched by their text.
    package var matches: [StoredSearchMatch]
    /// Rows written after the last checkpoint whose object is not text: they could not be
    /// searched without the app's handler.
    package var unsearched: [YapCollectionKey]
    /// The stored index's figures.
    package var stats: YapDatabaseFullTextSearchStats
}

extension YapDatabase {
    /// Searches the full-text index registered as `name` as the last index checkpoint stored
    /// it, without registering the extension (for `yapdb search`, which has no handler), and
    /// every row committed since, so that no committed row is missed: rows removed or rewritten
    /// since leave the index's answer; a row written since whose object is a `String` is matched
    /// by that text (in every column) with the index's tokenizer; any other row written since is
    /// returned as unsearched (only the app's handler knows its text). Call on a database no
    /// extension registered on since opening (the stored roots are claimed once).
    /// - Throws: `.invalidQuery` for a malformed query; `.corrupted` for damaged pages or
    ///   stored bytes that are not a full-text index; `.fileNotFound` when no index of that
    ///   name is stored.
    package func searchStoredFullTextIndex(_ name: String, query text: String, ranked: Bool, limit: Int?) throws(YapDatabaseError)
        -> StoredSearchResult {
        // Claimed inside a write transaction; with nothing to catch up the trees are published
        // back unchanged (no commit), so the next checkpoint records them again and the app's
        // registration still finds them.
        let key = YapDatabaseFullTextSearch.stateKey(name)
        var claimedRoots: ClaimedExtensionRoots?
        do {
            try newConnection().write { tx in
                claimedRoots = engine.claimExtensionRoots(key)
                if let claimed = claimedRoots, claimed.catchUp.isEmpty, let state = FullTextState(claimed: claimed) {
                    tx.setExtensionState(state, forKey: key)
                    tx.publishExtensionsWithoutCommit()
                }
            }
        } catch {
            throw (error as? YapDatabaseError) ?? .corrupted(offset: 0, reason: "\(error)")
        }
        guard let claimed = claimedRoots else { throw .fileNotFound }
        guard let state = FullTextState(claimed: claimed), let signature = FullTextSignature(state.signature) else {
            throw .corrupted(offset: 0, reason: "full-text search \(name): the stored roots are not a full-text index")
        }
        let tokenizer: FTSTokenizer
        let query: FTSQuery
        do throws(FTSError) {
            tokenizer = FTSTokenizer(try FTSTokenizerConfig(tokenizeOption: signature.tokenizeOption))
            query = try FTSQuery.parse(text, columnNames: signature.columns, tokenizer: tokenizer)
        } catch {
            throw YapDatabaseFullTextSearchTransaction.invalidQuery(error, in: text)
        }
        let searcher = FullTextSearcher(state: state, query: query)
        let connection = newConnection()
        var matches: [StoredSearchMatch] = []
        do throws(EngineError) {
            let figures = try state.figures()
            let stats = figures
            let catchUp = claimed.catchUp
            var unsearched: [YapCollectionKey] = []
            // The rows the stored index answers for: none after a clear of everything; never
            // one removed or written since (it is checked below, as it is now).
            var stale: Set<UInt64> = catchUp.removedRowids
            connection.read { tx in
                for pair in catchUp.changedKeys {
                    if let entry = tx.entry(collection: pair.collection, key: pair.key) { stale.insert(entry.rowid) }
                }
            }
            var found: [(UInt64, Double?)] = []
            if !catchUp.removedAll {
                // Ranked with a limit: ask for enough more to make up for stale rows dropped.
                if ranked {
                    found = try searcher.ranked(weights: [], limit: limit.map { $0 + stale.count }).matches.map { ($0.rowid, $0.score) }
                } else {
                    try searcher.forEachMatch { rowid in
                        if !stale.contains(rowid) { found.append((rowid, nil)) }
                        return limit.map { found.count < $0 } ?? true
                    }
                }
            }
            connection.read { tx in
                for (rowid, score) in found where !stale.contains(rowid) {
                    guard let owner = tx.owner(ofRowid: rowid) else { continue }
                    matches.append(StoredSearchMatch(collection: owner.collection, key: owner.key, score: score))
                }
                if let limit, matches.count > limit { matches.removeLast(matches.count - limit) }
                // Rows written since: by their text when it is text, else reported.
                let written = catchUp.changedKeys.sorted { ($0.collection, $0.key) < ($1.collection, $1.key) }
                for pair in written where tx.entry(collection: pair.collection, key: pair.key) != nil {
                    guard let text = tx.object(forKey: pair.key, inCollection: pair.collection) as? String else {
                        unsearched.append(YapCollectionKey(collection: pair.collection, key: pair.key))
                        continue
                    }
                    let document = FTSDocument(texts: Array(repeating: text, count: signature.columns.count), tokenizer: tokenizer)
                    guard FTSMatcher.matches(query, document), limit.map({ matches.count < $0 }) ?? true else { continue }
                    matches.append(StoredSearchMatch(collection: pair.collection, key: pair.key, score: nil, byRowText: true))
                }
            }
            return StoredSearchResult(matches: matches, unsearched: unsearched, stats: stats)
        } catch {
            throw .corrupted(offset: 0, reason: "full-text search \(name): \(error); run verify()")
        }
    }
}
