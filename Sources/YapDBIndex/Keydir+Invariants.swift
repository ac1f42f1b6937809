// Keydir+Invariants: the self-check used by tests and `verify()`.

extension Keydir {
    /// Checks the directory and traps (`precondition`) with a description of the first violation:
    /// each map's own invariants, no empty collection, `count` equals the sum of the collection
    /// counts, and the row-id map holds exactly one entry per row, pointing back at that row.
    /// O(n). For tests and verification; never on a hot path.
    package func checkInvariants() {
        byCollection.checkInvariants()
        byRowid.checkInvariants()
        var total = 0
        byCollection.forEach { collection, rows in
            rows.checkInvariants()
            precondition(!rows.isEmpty, "Keydir: collection \"\(collection)\" is empty but still listed")
            total += rows.count
            rows.forEach { key, entry in
                let back = byRowid[entry.rowid]
                precondition(back == CollectionKeyPair(collection: collection, key: key),
                             "Keydir: rowid \(entry.rowid) of \(collection)/\(key) maps back to \(String(describing: back))")
                return true
            }
            return true
        }
        precondition(total == rowCount, "Keydir: count \(rowCount) but the collections hold \(total) rows")
        precondition(byRowid.count == rowCount,
                     "Keydir: \(byRowid.count) rowid entries for \(rowCount) rows")
    }
}
