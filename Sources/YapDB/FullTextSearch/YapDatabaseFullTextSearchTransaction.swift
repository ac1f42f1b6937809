import Foundation
import YapDBEngine
import YapDBFullText

/// A transaction's handle on a full-text index (`transaction.ext(name) as?
/// YapDatabaseFullTextSearchTransaction`): runs queries against the index as of the
/// transaction's snapshot (a read-write transaction sees its own writes).
///
/// Two families of calls:
/// - YapDatabase's `enumerate…(matching:…)` forms, with an `UnsafeMutablePointer<ObjCBool>`
///   stop flag: a malformed query is logged and gives no rows, as in YapDatabase.
/// - Swift-native forms: `search(_:limit:using:)`, `searchRanked(_:weights:limit:using:)` and
///   `numberOfMatches(_:)` throw `YapDatabaseError.invalidQuery(offset:reason:)` for a malformed
///   query (the character offset of the problem in the query text); `iterate…(matching:…)` take
///   an `inout Bool` stop flag.
///
/// Rows come in row id order (about insertion order), or best first by bm25 in the `Bm25` /
/// ranked forms. Objects and metadata are read only for the rows handed out. A write inside the
/// block is a programming error unless the block then stops.
///
/// Threading: valid only inside its transaction's block, on the thread running it.
public final class YapDatabaseFullTextSearchTransaction {
    let fullTextSearch: YapDatabaseFullTextSearch
    let name: String
    /// The database transaction this handle reads through.
    public let databaseTransaction: YapDatabaseReadTransaction
    let stateKey: String
    /// The last query text parsed, and its parse.
    private var lastParse: (text: String, query: FTSQuery)?

    init(fullTextSearch: YapDatabaseFullTextSearch, name: String, transaction: YapDatabaseReadTransaction) {
        self.fullTextSearch = fullTextSearch
        self.name = name
        databaseTransaction = transaction
        stateKey = YapDatabaseFullTextSearch.stateKey(name)
    }

    // MARK: Core

    /// The index as of the transaction.
    func state() throws(YapDatabaseError) -> FullTextState {
        databaseTransaction.checkValid()
        guard var state = databaseTransaction.extensionState(stateKey) as? FullTextState else {
            throw .corrupted(offset: 0, reason: "full-text search \(name) has no stored state")
        }
        // Rows inserted in this transaction may still wait to be merged: merge, store, read.
        if state.hasPending, let readWrite = databaseTransaction as? YapDatabaseReadWriteTransaction {
            fullTextSearch.mergePending(name, readWrite)
            if let pendingFailure = readWrite.pendingFailure { throw pendingFailure }
            guard let merged = databaseTransaction.extensionState(stateKey) as? FullTextState else {
                throw .corrupted(offset: 0, reason: "full-text search \(name) has no stored state")
            }
            state = merged
        }
        return state
    }

    /// `text` parsed with the index's columns and tokenizer.
    /// - Throws: `.invalidQuery` with the character offset of the problem.
    func parse(_ text: String) throws(YapDatabaseError) -> FTSQuery {
        if let lastParse, lastParse.text == text { return lastParse.query }
        do throws(FTSError) {
            let query = try FTSQuery.parse(text, columnNames: fullTextSearch.columnNames, tokenizer: fullTextSearch.tokenizer)
            lastParse = (text, query)
            return query
        } catch {
            throw Self.invalidQuery(error, in: text)
        }
    }

    /// An `FTSError` as the public error: its UTF-8 offset becomes a character offset.
    static func invalidQuery(_ error: FTSError, in text: String) -> YapDatabaseError {
        let prefix = text.utf8.prefix(max(error.offset, 0))
        return .invalidQuery(offset: String(decoding: prefix, as: UTF8.self).count, reason: error.message)
    }

    /// A searcher for `text` over the transaction's index.
    func searcher(_ text: String) throws(YapDatabaseError) -> FullTextSearcher {
        FullTextSearcher(state: try state(), query: try parse(text))
    }

    func damaged(_ error: EngineError) -> YapDatabaseError {
        .corrupted(offset: 0, reason: "full-text search \(name): \(error); run verify()")
    }

    /// Logs `error` (the compatible forms give no rows).
    func report(_ error: YapDatabaseError) {
        YapDatabaseLogging.log(.error, "full-text search \(name): \(error)")
    }

    /// Calls `body` with each matching row (row id, collection, key), in row id order, or by
    /// bm25 when `weights` is given, at most `limit`, until it sets its stop flag.
    func run(_ text: String, weights: [Double]? = nil, limit: Int? = nil,
             _ body: (UInt64, String, String, inout Bool) -> Void) throws(YapDatabaseError) {
        let searcher = try searcher(text)
        var failure: EngineError?
        databaseTransaction.iterate { stop in
            func hand(_ rowid: UInt64) -> Bool {
                guard let owner = databaseTransaction.owner(ofRowid: rowid) else { return true }
                body(rowid, owner.collection, owner.key, &stop)
                return databaseTransaction.afterStep(stop)
            }
            do throws(EngineError) {
                guard let weights else {
                    var handed = 0
                    try searcher.forEachMatch { rowid in
                        if let limit, handed >= limit { return false }
                        handed += 1
                        return hand(rowid)
                    }
                    return
                }
                // Rank a first page with the blocks' skip data; only a caller that reads past it
                // pays for ranking every match.
                let page = limit.map { min($0, Self.firstRankedPage) } ?? Self.firstRankedPage
                let first = try searcher.ranked(weights: weights, limit: page).matches
                for match in first where !stop { guard hand(match.rowid) else { return } }
                guard !stop, first.count == page, limit.map({ $0 > page }) ?? true else { return }
                let rest = try searcher.ranked(weights: weights, limit: limit).matches.dropFirst(page)
                for match in rest { guard hand(match.rowid) else { return } }
            } catch {
                failure = error
            }
        }
        if let failure { throw damaged(failure) }
    }

    /// Rows the ranked forms order before they know whether the caller reads on.
    static let firstRankedPage = 64

    /// `weights` as numbers (YapDatabase passes `NSNumber`s; nil or empty: every column 1).
    static func weights(_ numbers: [NSNumber]?) -> [Double] { (numbers ?? []).map(\.doubleValue) }

    /// The snippet of row (collection, key) for `query`: the handler runs again on the row (its
    /// text is not stored twice) and the excerpt is cut around the matches.
    func snippet(_ query: FTSQuery, collection: String, key: String,
                 options: YapDatabaseFullTextSearchSnippetOptions?) -> String {
        let options = options ?? YapDatabaseFullTextSearchSnippetOptions()
        guard let texts = fullTextSearch.texts(collection: collection, key: key, transaction: databaseTransaction, name: name) else {
            return ""
        }
        var column: Int?
        if let columnName = options.columnName {
            column = fullTextSearch.columnIndex(columnName)
            if column == nil {
                YapDatabaseLogging.log(.warning, "full-text search \(name): snippet column \(columnName) is not a column; any column is used")
            }
        }
        let settings = FTSSnippetSettings(start: options.startMatchText, end: options.endMatchText, ellipses: options.ellipsesText,
                                          column: column, tokens: options.effectiveTokens)
        let document = FTSDocument(texts: texts, tokenizer: fullTextSearch.tokenizer)
        return FTSSnippet.make(texts: texts, document: document, query: query, settings: settings)
    }

    // MARK: Swift-native forms

    /// Calls `block` with the collection and key of each row matching `query`, in row id order
    /// (about insertion order), at most `limit` rows, until it sets `stop`.
    /// - Parameters:
    ///   - query: the query, in SQLite FTS5's syntax.
    ///   - limit: the most rows to report (nil: all).
    ///   - block: gets each row's collection and key; set the `inout Bool` to stop.
    /// - Throws: `.invalidQuery(offset:reason:)` for a malformed query (nothing was read);
    ///   `.corrupted` when the index cannot be read.
    public func search(_ query: String, limit: Int? = nil, using block: (String, String, inout Bool) -> Void) throws(YapDatabaseError) {
        try run(query, limit: limit) { _, collection, key, stop in block(collection, key, &stop) }
    }

    /// Calls `block` with the collection, key and bm25 score (higher is better) of the rows
    /// matching `query`, best first (equal scores in row id order), at most `limit` rows, until
    /// it sets `stop`. With a `limit`, a one-word query skips the postings blocks that cannot
    /// reach the top `limit`.
    /// - Parameters:
    ///   - query: the query, in SQLite FTS5's syntax.
    ///   - weights: one per column, in `columnNames` order (nil or missing: 1).
    ///   - limit: the most rows to report (nil: all).
    ///   - block: gets each row's collection, key and score; set the `inout Bool` to stop.
    /// - Throws: as `search`.
    public func searchRanked(_ query: String, weights: [Double]? = nil, limit: Int? = nil,
                             using block: (String, String, Double, inout Bool) -> Void) throws(YapDatabaseError) {
        let searcher = try searcher(query)
        let ranked: [FullTextSearcher.Ranked]
        do throws(EngineError) { ranked = try searcher.ranked(weights: weights ?? [], limit: limit).matches } catch {
            throw damaged(error)
        }
        databaseTransaction.iterate { stop in
            for match in ranked {
                guard let owner = databaseTransaction.owner(ofRowid: match.rowid) else { continue }
                block(owner.collection, owner.key, match.score, &stop)
                guard databaseTransaction.afterStep(stop) else { return }
            }
        }
    }

    /// The number of rows matching `query`, read from the index alone (no row is loaded).
    /// - Throws: as `search`.
    public func numberOfMatches(_ query: String) throws(YapDatabaseError) -> Int {
        let searcher = try searcher(query)
        do throws(EngineError) { return try searcher.count() } catch { throw damaged(error) }
    }

    /// The snippet of row (collection, key) for `query` with `options` (nil: the defaults), or
    /// nil when the row does not match.
    /// - Throws: as `search`.
    public func snippet(forKey key: String, inCollection collection: String?, matching query: String,
                        with options: YapDatabaseFullTextSearchSnippetOptions? = nil) throws(YapDatabaseError) -> String? {
        let searcher = try searcher(query)
        let collection = collection ?? ""
        guard let entry = databaseTransaction.entry(collection: collection, key: key) else { return nil }
        do throws(EngineError) {
            guard try searcher.matches(entry.rowid) else { return nil }
        } catch {
            throw damaged(error)
        }
        return snippet(searcher.query, collection: collection, key: key, options: options)
    }
}
