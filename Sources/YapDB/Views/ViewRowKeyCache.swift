/// Row id → (collection, key) for the rows a write transaction's views compare, so that the
/// sorting's comparands are found without walking the key directory's row-id tree (a walk, a
/// row-key decode and two `String`s per comparison otherwise).
///
/// Why a cached entry is never stale: the engine gives every new row the next row id and an
/// update keeps the row's id, so while a row lives its id names the same collection and key;
/// a removed row's id is never given again. Only the key is kept: the object and metadata the
/// sorting may need are always read through the transaction (which sees its own writes), so
/// nothing here can serve an old value. Entries of rows the views take out for good are dropped
/// (`forget`); the cache lives and dies with its transaction (a rollback or the next
/// transaction starts empty), so another connection's commit never meets it.
///
/// Bounded: past `limit` entries it starts again empty. Rows placed in key order need only the
/// last one placed; random placements reuse the entries near the top of each group's search.
///
/// Not thread-safe: used only on the write transaction's thread, as the transaction is.
final class ViewRowKeyCache {
    /// The most entries kept (about 100 bytes each with short keys).
    static let limit = 1 << 16

    private var owners: [UInt64: (collection: String, key: String)] = [:]

    /// The collection and key of row `rowid`, when cached.
    @inline(__always)
    func owner(of rowid: UInt64) -> (collection: String, key: String)? { owners[rowid] }

    /// Records that row `rowid` is `collection`/`key` (a row that exists in the transaction).
    func note(_ rowid: UInt64, collection: String, key: String) {
        if owners.count >= Self.limit { owners.removeAll(keepingCapacity: true) }
        owners[rowid] = (collection, key)
    }

    /// Drops row `rowid` (being removed).
    func forget(_ rowid: UInt64) { owners[rowid] = nil }

    /// Drops every entry (all rows being removed).
    func forgetAll() { owners.removeAll() }

    /// Entries held (tests).
    var count: Int { owners.count }
}
