import Foundation
import YapDBFullText

// YapDatabase's twelve enumerations (YapDatabaseFullTextSearchTransaction.h as Swift imports
// it: no Swift overlay refines them, so these are the real spellings), and the Swift-native
// `iterate…` forms beside them. A malformed query is logged and gives no rows in both
// families (`search`, `searchRanked` and `numberOfMatches` throw it instead).

extension YapDatabaseFullTextSearchTransaction {
    /// Runs `body` per match (see `run`); a bad query or a damaged index is logged.
    private func each(_ query: String, weights: [Double]? = nil, _ body: (UInt64, String, String, inout Bool) -> Void) {
        do throws(YapDatabaseError) { try run(query, weights: weights, body) } catch { report(error) }
    }

    /// Runs `body` per match with the row's snippet.
    private func eachSnippet(_ query: String, _ options: YapDatabaseFullTextSearchSnippetOptions?,
                             _ body: (String, String, String, inout Bool) -> Void) {
        let parsed: FTSQueryBox
        do throws(YapDatabaseError) { parsed = FTSQueryBox(try parse(query)) } catch { return report(error) }
        // The options' values as the enumeration starts.
        let options = (options?.copy() as? YapDatabaseFullTextSearchSnippetOptions) ?? YapDatabaseFullTextSearchSnippetOptions()
        each(query) { _, collection, key, stop in
            body(snippet(parsed.query, collection: collection, key: key, options: options), collection, key, &stop)
        }
    }

    private func object(_ collection: String, _ key: String) -> Any? {
        databaseTransaction.object(forKey: key, inCollection: collection)
    }

    private func metadata(_ collection: String, _ key: String) -> Any? {
        databaseTransaction.metadata(forKey: key, inCollection: collection)
    }
    // MARK: YapDatabase's forms
    /// Calls `block` with the collection and key of each row matching `query` (SQLite FTS5 syntax),
    /// in row id order, until it sets `stop`. A malformed query is logged and gives no rows.
    public func enumerateKeys(matching query: String, using block: (String, String, UnsafeMutablePointer<ObjCBool>) -> Void) {
        each(query) { _, collection, key, flag in
            withObjCStop(&flag) { stop in
            block(collection, key, stop)
            }
        }
    }
    /// Calls `block` with the collection, key and metadata of each row matching `query` (SQLite FTS5 syntax),
    /// in row id order, until it sets `stop`. A malformed query is logged and gives no rows.
    public func enumerateKeysAndMetadata(matching query: String, using block: (String, String, Any?, UnsafeMutablePointer<ObjCBool>) -> Void) {
        each(query) { _, collection, key, flag in
            withObjCStop(&flag) { stop in
            block(collection, key, metadata(collection, key), stop)
            }
        }
    }
    /// Calls `block` with the collection, key and object of each row matching `query` (SQLite FTS5 syntax),
    /// in row id order, until it sets `stop`. A malformed query is logged and gives no rows.
    public func enumerateKeysAndObjects(matching query: String, using block: (String, String, Any, UnsafeMutablePointer<ObjCBool>) -> Void) {
        each(query) { _, collection, key, flag in
            withObjCStop(&flag) { stop in
            guard let object = object(collection, key) else { return }
            block(collection, key, object, stop)
            }
        }
    }
    /// Calls `block` with the collection, key, object and metadata of each row matching `query` (SQLite FTS5 syntax),
    /// in row id order, until it sets `stop`. A malformed query is logged and gives no rows.
    public func enumerateRows(matching query: String, using block: (String, String, Any, Any?, UnsafeMutablePointer<ObjCBool>) -> Void) {
        each(query) { _, collection, key, flag in
            withObjCStop(&flag) { stop in
            guard let object = object(collection, key) else { return }
            block(collection, key, object, metadata(collection, key), stop)
            }
        }
    }
    /// Calls `block` with the collection and key of each row matching `query`, best first by bm25
    /// with per-column `weights` (nil: every column 1), until it sets `stop`. Works whatever
    /// the index's `ftsVersion`.
    public func enumerateBm25OrderedKeys(matching query: String, withWeights weights: [NSNumber]?,
                                        using block: (String, String, UnsafeMutablePointer<ObjCBool>) -> Void) {
        each(query, weights: Self.weights(weights)) { _, collection, key, flag in
            withObjCStop(&flag) { stop in
            block(collection, key, stop)
            }
        }
    }
    /// Calls `block` with the collection, key and metadata of each row matching `query`, best first by bm25
    /// with per-column `weights` (nil: every column 1), until it sets `stop`. Works whatever
    /// the index's `ftsVersion`.
    public func enumerateBm25OrderedKeysAndMetadata(matching query: String, withWeights weights: [NSNumber]?,
                                        using block: (String, String, Any?, UnsafeMutablePointer<ObjCBool>) -> Void) {
        each(query, weights: Self.weights(weights)) { _, collection, key, flag in
            withObjCStop(&flag) { stop in
            block(collection, key, metadata(collection, key), stop)
            }
        }
    }
    /// Calls `block` with the collection, key and object of each row matching `query`, best first by bm25
    /// with per-column `weights` (nil: every column 1), until it sets `stop`. Works whatever
    /// the index's `ftsVersion`.
    public func enumerateBm25OrderedKeysAndObjects(matching query: String, withWeights weights: [NSNumber]?,
                                        using block: (String, String, Any, UnsafeMutablePointer<ObjCBool>) -> Void) {
        each(query, weights: Self.weights(weights)) { _, collection, key, flag in
            withObjCStop(&flag) { stop in
            guard let object = object(collection, key) else { return }
            block(collection, key, object, stop)
            }
        }
    }
    /// Calls `block` with the collection, key, object and metadata of each row matching `query`, best first by bm25
    /// with per-column `weights` (nil: every column 1), until it sets `stop`. Works whatever
    /// the index's `ftsVersion`.
    public func enumerateBm25OrderedRows(matching query: String, withWeights weights: [NSNumber]?,
                                        using block: (String, String, Any, Any?, UnsafeMutablePointer<ObjCBool>) -> Void) {
        each(query, weights: Self.weights(weights)) { _, collection, key, flag in
            withObjCStop(&flag) { stop in
            guard let object = object(collection, key) else { return }
            block(collection, key, object, metadata(collection, key), stop)
            }
        }
    }
    /// Calls `block` with the snippet, collection and key of each row matching `query`, in row id
    /// order, until it sets `stop`; `options` (nil: the defaults) say how snippets look.
    public func enumerateKeys(matching query: String, with options: YapDatabaseFullTextSearchSnippetOptions?,
                               using block: (String, String, String, UnsafeMutablePointer<ObjCBool>) -> Void) {
        eachSnippet(query, options) { snippet, collection, key, flag in
            withObjCStop(&flag) { stop in
            block(snippet, collection, key, stop)
            }
        }
    }
    /// Calls `block` with the snippet, collection, key and metadata of each row matching `query`, in row id
    /// order, until it sets `stop`; `options` (nil: the defaults) say how snippets look.
    public func enumerateKeysAndMetadata(matching query: String, with options: YapDatabaseFullTextSearchSnippetOptions?,
                               using block: (String, String, String, Any?, UnsafeMutablePointer<ObjCBool>) -> Void) {
        eachSnippet(query, options) { snippet, collection, key, flag in
            withObjCStop(&flag) { stop in
            block(snippet, collection, key, metadata(collection, key), stop)
            }
        }
    }
    /// Calls `block` with the snippet, collection, key and object of each row matching `query`, in row id
    /// order, until it sets `stop`; `options` (nil: the defaults) say how snippets look.
    public func enumerateKeysAndObjects(matching query: String, with options: YapDatabaseFullTextSearchSnippetOptions?,
                               using block: (String, String, String, Any, UnsafeMutablePointer<ObjCBool>) -> Void) {
        eachSnippet(query, options) { snippet, collection, key, flag in
            withObjCStop(&flag) { stop in
            guard let object = object(collection, key) else { return }
            block(snippet, collection, key, object, stop)
            }
        }
    }
    /// Calls `block` with the snippet, collection, key, object and metadata of each row matching `query`, in row id
    /// order, until it sets `stop`; `options` (nil: the defaults) say how snippets look.
    public func enumerateRows(matching query: String, with options: YapDatabaseFullTextSearchSnippetOptions?,
                               using block: (String, String, String, Any, Any?, UnsafeMutablePointer<ObjCBool>) -> Void) {
        eachSnippet(query, options) { snippet, collection, key, flag in
            withObjCStop(&flag) { stop in
            guard let object = object(collection, key) else { return }
            block(snippet, collection, key, object, metadata(collection, key), stop)
            }
        }
    }
    // MARK: Swift-native forms
    /// Calls `block` with the collection and key of each row matching `query`, in row id order, until
    /// it sets `stop`. A malformed query is logged and gives no rows (`search` throws it).
    public func iterateKeys(matching query: String, using block: (String, String, inout Bool) -> Void) {
        each(query) { _, collection, key, stop in
            block(collection, key, &stop)
        }
    }
    /// Calls `block` with the collection, key and metadata of each row matching `query`, in row id order, until
    /// it sets `stop`. A malformed query is logged and gives no rows (`search` throws it).
    public func iterateKeysAndMetadata(matching query: String, using block: (String, String, Any?, inout Bool) -> Void) {
        each(query) { _, collection, key, stop in
            block(collection, key, metadata(collection, key), &stop)
        }
    }
    /// Calls `block` with the collection, key and object of each row matching `query`, in row id order, until
    /// it sets `stop`. A malformed query is logged and gives no rows (`search` throws it).
    public func iterateKeysAndObjects(matching query: String, using block: (String, String, Any, inout Bool) -> Void) {
        each(query) { _, collection, key, stop in
            guard let object = object(collection, key) else { return }
            block(collection, key, object, &stop)
        }
    }
    /// Calls `block` with the collection, key, object and metadata of each row matching `query`, in row id order, until
    /// it sets `stop`. A malformed query is logged and gives no rows (`search` throws it).
    public func iterateRows(matching query: String, using block: (String, String, Any, Any?, inout Bool) -> Void) {
        each(query) { _, collection, key, stop in
            guard let object = object(collection, key) else { return }
            block(collection, key, object, metadata(collection, key), &stop)
        }
    }
    /// Calls `block` with the snippet, collection and key of each row matching `query`, in row id
    /// order, until it sets `stop`.
    public func iterateKeys(matching query: String, with options: YapDatabaseFullTextSearchSnippetOptions?,
                             using block: (String, String, String, inout Bool) -> Void) {
        eachSnippet(query, options) { snippet, collection, key, stop in
            block(snippet, collection, key, &stop)
        }
    }
    /// Calls `block` with the snippet, collection, key and metadata of each row matching `query`, in row id
    /// order, until it sets `stop`.
    public func iterateKeysAndMetadata(matching query: String, with options: YapDatabaseFullTextSearchSnippetOptions?,
                             using block: (String, String, String, Any?, inout Bool) -> Void) {
        eachSnippet(query, options) { snippet, collection, key, stop in
            block(snippet, collection, key, metadata(collection, key), &stop)
        }
    }
    /// Calls `block` with the snippet, collection, key and object of each row matching `query`, in row id
    /// order, until it sets `stop`.
    public func iterateKeysAndObjects(matching query: String, with options: YapDatabaseFullTextSearchSnippetOptions?,
                             using block: (String, String, String, Any, inout Bool) -> Void) {
        eachSnippet(query, options) { snippet, collection, key, stop in
            guard let object = object(collection, key) else { return }
            block(snippet, collection, key, object, &stop)
        }
    }
    /// Calls `block` with the snippet, collection, key, object and metadata of each row matching `query`, in row id
    /// order, until it sets `stop`.
    public func iterateRows(matching query: String, with options: YapDatabaseFullTextSearchSnippetOptions?,
                             using block: (String, String, String, Any, Any?, inout Bool) -> Void) {
        eachSnippet(query, options) { snippet, collection, key, stop in
            guard let object = object(collection, key) else { return }
            block(snippet, collection, key, object, metadata(collection, key), &stop)
        }
    }
}

/// Carries a parsed query into a closure.
private struct FTSQueryBox {
    let query: FTSQuery
    init(_ query: FTSQuery) { self.query = query }
}
