import Foundation
import YapDBEngine

/// A full-text index's contents at one snapshot: four key-ordered trees on index pages and two
/// counters. An immutable value stored in the snapshot with the rows (copying it is O(1); a
/// change copies only the touched paths), so every snapshot — and a read-write transaction,
/// with its own writes — reads its own version. docs/format.md §11 "Full-text search trees"
/// gives every byte.
///
/// - `terms`: term (UTF-8) → the number of indexed rows holding it and its id (varints). In
///   key order, so a prefix is a key range. Beside them, before every term, (0x00, id) → the
///   term (FullTextState+TermIDs.swift).
/// - `postings`: (term id, last row id) → a block of up to 128 rows holding the term
///   (`FullTextPostingBlock`: delta row ids, then occurrence counts, with skip data).
/// - `positions`: (term id, last row id, chunk) — a postings block's key and a chunk
///   number → the token positions of each of the block's rows, by column
///   (`FullTextBlockPositions`). Read only by phrases, `NEAR`, `^`, column filters and
///   multi-word ranking, a block at a time beside the postings; a plain query never reads them.
/// - `documents`: (row id, chunk) → the row's length per column and its distinct terms' ids,
///   so an update or removal finds its postings, and ranking finds the row's length.
///
/// Errors: the trees' `EngineError` (a damaged or unreadable page) passes through; a damaged
/// entry is `EngineError.damagedExtensionEntry`.
struct FullTextState: Sendable {
    /// The tag the index was built with.
    var versionTag: String
    /// The columns, the FTS version and the tokenizer: a different one rebuilds the index.
    var signature: String
    var columnCount: Int
    var terms: ExtensionTree
    var postings: ExtensionTree
    var positions: ExtensionTree
    var documents: ExtensionTree
    /// Indexed rows.
    var documentCount: Int = 0
    /// Tokens over every column of every indexed row (bm25's average length).
    var totalLength: Int = 0
    /// Postings of rows inserted in this transaction not yet in the trees (see
    /// FullTextState+Pending.swift). Never written: merged before the commit.
    var pending = FullTextPendingPostings()
    /// The next term id to give (nil: read from the terms tree when first needed).
    var nextTermID: UInt32?
    /// The pending memory (`pendingBytes`) past which `setRow` merges inside the transaction
    /// (`YapDatabaseFullTextSearch.pendingBytesLimit`; tests lower it).
    var pendingLimit = YapDatabaseFullTextSearch.defaultPendingBytesLimit
    /// The most short trailing blocks a term keeps before a merge writes them again together
    /// (FullTextState+Merge.swift; tests raise it).
    var tailLimit = FullTextState.defaultTailLimit

    /// An empty index, each tree a copy of `empty` (an empty tree in the page format the
    /// index's pages have).
    init(versionTag: String, signature: String, columnCount: Int, empty: ExtensionTree = ExtensionTree()) {
        self.versionTag = versionTag
        self.signature = signature
        self.columnCount = columnCount
        terms = empty
        postings = empty
        positions = empty
        documents = empty
    }

    /// The largest key plus value an entry of the trees may hold (bytes).
    var maximumEntrySize: Int { terms.maximumEntrySize }

    /// The longest term indexed, in UTF-8 bytes: a longer token is not indexed (it could not
    /// share a tree entry with its postings). 255 with 4 KiB pages.
    var maximumTermBytes: Int { Self.maximumTermBytes(maximumEntrySize: maximumEntrySize) }

    static func maximumTermBytes(maximumEntrySize: Int) -> Int { min(255, maximumEntrySize / 4) }

    /// Whether `term` can be a key (not empty, no NUL byte — the separator —, short enough).
    func isIndexable(_ term: String) -> Bool {
        let utf8 = term.utf8
        return !utf8.isEmpty && utf8.count <= maximumTermBytes && !utf8.contains(0)
    }

    // MARK: Keys

    /// The first byte of a term id entry's key in the terms tree (no term holds it).
    static let separator: UInt8 = 0

    /// A term id's 4 bytes, big-endian: the start of the term's postings and positions keys.
    static func termPrefix(_ id: UInt32) -> [UInt8] {
        [UInt8(id >> 24), UInt8(truncatingIfNeeded: id >> 16), UInt8(truncatingIfNeeded: id >> 8), UInt8(truncatingIfNeeded: id)]
    }

    /// The bytes of a postings key: the term id (4) and the block's last row id (8).
    static let postingsKeySize = 12

    static func postingsKey(_ id: UInt32, lastRowid: UInt64) -> [UInt8] {
        var key = termPrefix(id)
        key.reserveCapacity(postingsKeySize)
        OrderedKeyEncoding.appendRowid(lastRowid, to: &key)
        return key
    }

    /// The term id in the first 4 bytes of a postings or positions key.
    static func termID(ofKey key: UnsafeRawBufferPointer) -> UInt32 {
        UInt32(key[0]) << 24 | UInt32(key[1]) << 16 | UInt32(key[2]) << 8 | UInt32(key[3])
    }

    static func documentKey(_ rowid: UInt64, chunk: UInt8) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(9)
        OrderedKeyEncoding.appendRowid(rowid, to: &key)
        key.append(chunk)
        return key
    }

    /// The row id in the last 8 bytes of a postings key.
    static func lastRowid(ofKey key: UnsafeRawBufferPointer) -> UInt64 {
        OrderedKeyEncoding.rowid(ofKey: UnsafeRawBufferPointer(rebasing: key[(key.count - 8)...]))
    }

    /// Whether `key` starts with `prefix` and has exactly `tail` more bytes.
    static func key(_ key: UnsafeRawBufferPointer, hasPrefix prefix: [UInt8], tail: Int) -> Bool {
        key.count == prefix.count + tail && prefix.withUnsafeBytes { p in memcmp(key.baseAddress!, p.baseAddress!, p.count) == 0 }
    }

    /// Bytes of a chunked value per entry (documents and positions).
    var chunkSize: Int { maximumEntrySize - 9 - maximumTermBytes - 1 }

    /// The most bytes a postings block may take (an entry's limit less its key).
    var blockLimit: Int { maximumEntrySize - Self.postingsKeySize }

    // MARK: Chunked values

    /// The value stored in chunks under `key(0)`, `key(1)`, … (every chunk but the last full).
    static func chunked(_ tree: ExtensionTree, chunkSize: Int, _ key: (UInt8) -> [UInt8]) throws(EngineError) -> [UInt8]? {
        guard var bytes = try tree.value(forKey: key(0)) else { return nil }
        var chunk: UInt8 = 1, last = bytes.count
        while last == chunkSize, chunk < 255, let next = try tree.value(forKey: key(chunk)) {
            bytes += next
            last = next.count
            chunk += 1
        }
        return bytes
    }

    static func storeChunked(_ tree: inout ExtensionTree, _ bytes: [UInt8], chunkSize: Int, _ key: (UInt8) -> [UInt8]) throws(EngineError) {
        var chunk: UInt8 = 0, offset = 0
        repeat {
            let end = min(bytes.count, offset + chunkSize)
            _ = try tree.upsert(key(chunk), Array(bytes[offset..<end]))
            offset = end
            chunk += 1
        } while offset < bytes.count && chunk < 255
    }

    static func removeChunked(_ tree: inout ExtensionTree, _ key: (UInt8) -> [UInt8]) throws(EngineError) {
        var chunk: UInt8 = 0
        while chunk < 255, try tree.remove(key(chunk)) != nil { chunk += 1 }
    }
}

extension FullTextState {
    /// Whether `a`'s UTF-8 bytes sort before `b`'s (the trees' key order), by `memcmp` on the
    /// strings' own storage when it is contiguous UTF-8 (native strings), else byte by byte.
    static func utf8Precedes(_ a: String, _ b: String) -> Bool {
        let fast = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y -> Bool in
                let shared = Swift.min(x.count, y.count)
                if shared > 0, let p = x.baseAddress, let q = y.baseAddress {
                    let order = memcmp(p, q, shared)
                    if order != 0 { return order < 0 }
                }
                return x.count < y.count
            }
        }
        if let fast, let result = fast { return result }
        return a.utf8.lexicographicallyPrecedes(b.utf8)
    }
}
