import Foundation
import Synchronization
import YapDBEngine
import YapDBFullText

/// The `ftsVersion` of an index made as SQLite's FTS5 would (`"fts5"`).
public let YapDatabaseFullTextSearchFTS5Version = "fts5"
/// The `ftsVersion` of an index made as SQLite's FTS4 would (`"fts4"`, the default).
public let YapDatabaseFullTextSearchFTS4Version = "fts4"
/// The `ftsVersion` of an index made as SQLite's FTS3 would (`"fts3"`).
public let YapDatabaseFullTextSearchFTS3Version = "fts3"

/// The `options` key of `YapDatabaseFullTextSearch.pendingBytesLimit` (an `Int` or `NSNumber`).
public let YapDatabaseFullTextSearchPendingBytesLimitOption = "pendingBytesLimit"

/// A full-text index of text the handler extracts from rows (YapDatabase's
/// `YapDatabaseFullTextSearch`): queries in SQLite FTS5's syntax (words, `"phrases"`, `pre*`
/// prefixes, `AND`/`OR`/`NOT`, `NEAR`, `col:` filters, `^` first token), in row order or ranked
/// by bm25, with snippets, answered from postings on index pages that change in the same commit
/// as the rows.
///
/// ```swift
/// let handler = YapDatabaseFullTextSearchHandler.withObjectBlock { _, dict, _, _, object in
///     if let message = object as? Message { dict["content"] = message.body }
/// }
/// let fts = YapDatabaseFullTextSearch(columnNames: ["content"], options: nil, handler: handler,
///                                     ftsVersion: YapDatabaseFullTextSearchFTS5Version, versionTag: "1")
/// database.register(fts, withName: "fts")
/// ```
///
/// Text is split into tokens by the tokenizer the `options` name (`["tokenize": "porter"]`,
/// `"trigram"`, `"unicode61 remove_diacritics 0"`, …); by default Unicode case and diacritics
/// are folded ("resume" finds "Résumé"), the same at index and at query time. `ftsVersion`
/// changes nothing in how queries, ranking or snippets behave (all work in every mode); it is
/// recorded, and changing it, the tag, the columns or the tokenizer rebuilds the index.
///
/// `@unchecked Sendable`: every stored property is immutable.
open class YapDatabaseFullTextSearch: YapDatabaseExtension, @unchecked Sendable {
    /// The columns, in order (the order of bm25 weights).
    public let columnNames: [String]
    /// The options the index was made with (`"tokenize"` and
    /// `YapDatabaseFullTextSearchPendingBytesLimitOption` are read; other keys are ignored).
    public let options: [AnyHashable: Any]?
    /// The block that reads each row's text.
    public let handler: YapDatabaseFullTextSearchHandler
    /// The version tag ("" when nil was given): a different tag at registration rebuilds.
    public let versionTag: String
    /// The FTS version named at creation (`"fts4"` when nil was given).
    public let ftsVersion: String

    /// The memory, in bytes, this index may use in one read-write transaction for the postings
    /// of the rows the transaction inserts before it writes them into its trees. Inserted rows'
    /// postings are gathered in memory and written a term at a time (one dictionary update and
    /// whole postings blocks per term, not per row); past this many bytes they are written at
    /// once, inside the transaction, so a transaction inserting millions of rows holds at most
    /// about this much here. Larger: fewer, cheaper merges (a faster bulk load); smaller: less
    /// memory. Set with the `options` key `YapDatabaseFullTextSearchPendingBytesLimitOption`;
    /// `defaultPendingBytesLimit` otherwise. Not part of the index's format: changing it
    /// rebuilds nothing.
    public let pendingBytesLimit: Int
    /// 8 MiB.
    public static let defaultPendingBytesLimit = 8 << 20

    /// The `tokenize` option as given (nil: the default tokenizer).
    let tokenizeOption: String?
    /// The tokenizer's configuration, or why the `tokenize` option was refused.
    let tokenizerConfig: Result<FTSTokenizerConfig, FTSError>
    /// The tokenizer (the default one when the option was refused: registration then fails).
    let tokenizer: FTSTokenizer

    /// A full-text index of `columnNames` filled by `handler`, with the default options.
    public convenience init(columnNames: [String], handler: YapDatabaseFullTextSearchHandler) {
        self.init(columnNames: columnNames, options: nil, handler: handler, ftsVersion: nil, versionTag: nil)
    }

    /// A full-text index of `columnNames` filled by `handler`, tagged `versionTag`.
    public convenience init(columnNames: [String], handler: YapDatabaseFullTextSearchHandler, versionTag: String?) {
        self.init(columnNames: columnNames, options: nil, handler: handler, ftsVersion: nil, versionTag: versionTag)
    }

    /// A full-text index with `options` (`"tokenize"`), tagged `versionTag`.
    public convenience init(columnNames: [String], options: [AnyHashable: Any]?, handler: YapDatabaseFullTextSearchHandler,
                            versionTag: String?) {
        self.init(columnNames: columnNames, options: options, handler: handler, ftsVersion: nil, versionTag: versionTag)
    }

    /// A full-text index of `columnNames` filled by `handler`.
    /// - Parameters:
    ///   - columnNames: the columns, at least one, unique, none containing `"`; their order is
    ///     that of bm25 weights (misuse stops the program).
    ///   - options: `["tokenize": "…"]` chooses the tokenizer (`unicode61` with its arguments,
    ///     `ascii`, `porter …`, `trigram …`); an option the tokenizer refuses makes registration
    ///     fail (logged with the reason). `YapDatabaseFullTextSearchPendingBytesLimitOption`
    ///     sets `pendingBytesLimit` (clamped to 0…1 GiB).
    ///   - handler: fills each row's text per column.
    ///   - ftsVersion: `YapDatabaseFullTextSearchFTS5Version` etc. (nil: FTS4); recorded only.
    ///   - versionTag: change it when the handler changes (nil: "").
    public init(columnNames: [String], options: [AnyHashable: Any]?, handler: YapDatabaseFullTextSearchHandler,
                ftsVersion: String?, versionTag: String?) {
        precondition(!columnNames.isEmpty, "YapDatabaseFullTextSearch: columnNames is empty")
        precondition(Set(columnNames).count == columnNames.count, "YapDatabaseFullTextSearch: columnNames repeats a name")
        precondition(!columnNames.contains { $0.contains("\"") || $0.isEmpty },
                     "YapDatabaseFullTextSearch: a column name is empty or contains a quote")
        self.columnNames = columnNames
        self.options = options
        self.handler = handler
        self.versionTag = versionTag ?? ""
        self.ftsVersion = ftsVersion ?? YapDatabaseFullTextSearchFTS4Version
        let limit = options?[YapDatabaseFullTextSearchPendingBytesLimitOption].flatMap { ($0 as? Int) ?? ($0 as? NSNumber)?.intValue }
        pendingBytesLimit = min(max(limit ?? Self.defaultPendingBytesLimit, 0), 1 << 30)
        let option = options?["tokenize"].flatMap { ($0 as? String) ?? ($0 as? NSString).map { $0 as String } }
        tokenizeOption = option
        do throws(FTSError) {
            let config = try FTSTokenizerConfig(tokenizeOption: option)
            tokenizerConfig = .success(config)
            tokenizer = FTSTokenizer(config)
        } catch {
            tokenizerConfig = .failure(error)
            tokenizer = FTSTokenizer(.default)
        }
        super.init()
    }

    static func stateKey(_ name: String) -> String { "fullTextSearch:" + name }

    /// What the stored index must have been built with to be reused: the columns, the FTS
    /// version, the tokenize option as given and the tokenizer's own signature (docs/format.md
    /// §11), so a tool can read the index without the extension (`FullTextSignature`).
    var signature: String {
        FullTextSignature(columns: columnNames, ftsVersion: ftsVersion, tokenizeOption: tokenizeOption,
                          tokenizer: (try? tokenizerConfig.get())?.signature ?? "").text
    }

    /// The column index of `name`, or nil.
    func columnIndex(_ name: String) -> Int? { columnNames.firstIndex(of: name) }

    /// The row's text per column from the handler, or nil when it sets nothing.
    func texts(collection: String, key: String, transaction: YapDatabaseReadTransaction, name: String) -> [String?]? {
        handler.texts(transaction, collection: collection, key: key, columns: columnNames, indexName: name)
    }

    /// The row's tokens grouped as the index stores them.
    func analysis(_ texts: [String?], state: FullTextState) -> FullTextAnalysis {
        let document = FTSDocument(texts: texts, tokenizer: tokenizer)
        return FullTextAnalysis(document: document.columns, indexable: state.isIndexable)
    }

    // MARK: Extension hooks

    override func prepare(name: String, transaction: YapDatabaseReadWriteTransaction) -> Bool {
        if case .failure(let error) = tokenizerConfig {
            YapDatabaseLogging.log(.error, "full-text search \(name): the tokenize option is refused: \(error.message)")
            return false
        }
        let key = Self.stateKey(name)
        if let existing = transaction.extensionState(key) as? FullTextState,
           existing.versionTag == versionTag, existing.signature == signature {
            return true
        }
        // The trees the last checkpoint recorded, if the tag and setup match: open them (no
        // page is read) and index again only the rows changed since.
        if let claimed = transaction.connection.database.engine.claimExtensionRoots(key),
           var state = FullTextState(claimed: claimed), state.versionTag == versionTag, state.signature == signature,
           state.columnCount == columnNames.count,
           (try? catchUp(&state, claimed.catchUp, name: name, transaction: transaction)) != nil {
            transaction.setExtensionState(state, forKey: key)
            if claimed.catchUp.isEmpty {
                transaction.publishExtensionsWithoutCommit()
            } else {
                transaction.markChanged()
            }
            return true
        }
        do throws(EngineError) {
            let state = try rebuild(name: name, transaction: transaction)
            transaction.setExtensionState(state, forKey: key)
            transaction.markChanged()
            return true
        } catch {
            YapDatabaseLogging.log(.error, "full-text search \(name) could not be built: \(error)")
            return false
        }
    }

    func catchUp(_ state: inout FullTextState, _ changes: ExtensionCatchUp, name: String,
                 transaction: YapDatabaseReadWriteTransaction) throws(EngineError) {
        if changes.removedAll { state.removeAll() }
        for rowid in changes.removedRowids { try state.removeRow(rowid) }
        for pair in changes.changedKeys {
            try reindex(collection: pair.collection, key: pair.key, name: name, in: &state, transaction: transaction)
        }
    }

    /// The index built from every row of the transaction (the handler decides which rows).
    func rebuild(name: String, transaction: YapDatabaseReadTransaction) throws(EngineError) -> FullTextState {
        var state = FullTextState(versionTag: versionTag, signature: signature, columnCount: columnNames.count,
                                  empty: ExtensionTree(emptyLike: transaction.keydir))
        var failure: EngineError?
        for collection in transaction.collectionNames() {
            transaction.forEachKey(inCollection: collection) { key, entry in
                guard let texts = texts(collection: collection, key: key, transaction: transaction, name: name) else { return true }
                do throws(EngineError) {
                    try state.setRow(entry.rowid, analysis(texts, state: state))
                } catch {
                    failure = error
                    return false
                }
                return true
            }
            if let failure { throw failure }
        }
        return state
    }

    /// Reads the row through the handler again and indexes it (or takes it out when it is gone
    /// or the handler sets nothing — YapDatabase left such a row matching its old text).
    /// `inserted`: the row was just inserted (its row id is the highest yet).
    func reindex(collection: String, key: String, name: String, in state: inout FullTextState,
                 transaction: YapDatabaseReadTransaction, inserted: Bool = false) throws(EngineError) {
        guard let entry = transaction.entry(collection: collection, key: key) else { return }
        if let texts = texts(collection: collection, key: key, transaction: transaction, name: name) {
            try state.setRow(entry.rowid, analysis(texts, state: state), newest: inserted)
        } else {
            try state.removeRow(entry.rowid)
        }
    }

    override func dropState(name: String, transaction: YapDatabaseReadWriteTransaction) {
        transaction.setExtensionState(nil, forKey: Self.stateKey(name))
        transaction.markChanged()
    }

    override func makeConnection(name: String, connection: YapDatabaseConnection) -> AnyObject? {
        YapDatabaseFullTextSearchConnection(fullTextSearch: self, name: name, connection: connection)
    }

    override func makeTransaction(name: String, extensionConnection: AnyObject?, transaction: YapDatabaseReadTransaction) -> AnyObject? {
        YapDatabaseFullTextSearchTransaction(fullTextSearch: self, name: name, transaction: transaction)
    }

    override func didChangeRow(name: String, collection: String, key: String, change: RowChange,
                               transaction: YapDatabaseReadWriteTransaction) {
        guard handler.blockInvokeOptions.runs(for: change) else { return }
        update(name, transaction) { state throws(EngineError) in
            try reindex(collection: collection, key: key, name: name, in: &state, transaction: transaction, inserted: change.isInsert)
        }
    }

    override func didTouchRow(name: String, collection: String, key: String, change: RowChange,
                              transaction: YapDatabaseReadWriteTransaction) {
        didChangeRow(name: name, collection: collection, key: key, change: change, transaction: transaction)
    }

    /// Merges the postings of the rows inserted in the transaction (FullTextState+Pending.swift).
    override func willCommit(name: String, transaction: YapDatabaseReadWriteTransaction) {
        mergePending(name, transaction)
    }

    /// Merges the transaction's pending postings into its state, if any wait.
    func mergePending(_ name: String, _ transaction: YapDatabaseReadWriteTransaction) {
        guard let state = transaction.extensionState(Self.stateKey(name)) as? FullTextState, state.hasPending else { return }
        update(name, transaction) { state throws(EngineError) in try state.mergePending() }
    }

    override func willRemoveRow(name: String, collection: String, key: String, transaction: YapDatabaseReadWriteTransaction) {
        guard let entry = transaction.entry(collection: collection, key: key) else { return }
        update(name, transaction) { state throws(EngineError) in try state.removeRow(entry.rowid) }
    }

    override func willRemoveCollection(name: String, collection: String, transaction: YapDatabaseReadWriteTransaction) {
        let rowids = transaction.rowids(inCollection: collection)
        update(name, transaction) { state throws(EngineError) in
            for rowid in rowids { try state.removeRow(rowid) }
        }
    }

    override func willRemoveAll(name: String, transaction: YapDatabaseReadWriteTransaction) {
        update(name, transaction) { state in state.removeAll() }
    }

    /// Runs `body` on the transaction's state of this index (taken out so it is uniquely
    /// referenced and changes in place), then puts it back. A damaged page fails the transaction.
    func update(_ name: String, _ transaction: YapDatabaseReadWriteTransaction,
                _ body: (inout FullTextState) throws(EngineError) -> Void) {
        let limit = pendingBytesLimit
        transaction.updateExtensionState(Self.stateKey(name), as: FullTextState.self, label: "full-text search \(name)") { state throws(EngineError) in
            state.pendingLimit = limit
            try body(&state)
        }
    }

    // MARK: Verification

    override func verifyState(name: String, transaction: YapDatabaseReadTransaction) -> [String] {
        guard var stored = transaction.extensionState(Self.stateKey(name)) as? FullTextState else {
            return ["full-text search \(name): no stored index"]
        }
        do throws(EngineError) {
            try stored.mergePending()
            let rebuilt = try rebuild(name: name, transaction: transaction)
            return try stored.differences(from: rebuilt).map { "full-text search \(name): \($0)" }
        } catch {
            return ["full-text search \(name): \(error)"]
        }
    }
}
