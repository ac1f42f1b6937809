// Keydir+Invariants: the self-check used by tests and `verify()`.

extension Keydir {
    /// `validate()`, trapping (`preconditionFailure`) with the violation's description.
    /// Tests call it after every mutation. O(n).
    package func checkInvariants() { trapOnViolation(validate) }

    /// Checks the directory and throws an `InvariantViolation` describing the first violation:
    /// each map's own invariants, no empty collection, `count` equals the sum of the collection
    /// counts, and the row-id map holds exactly one entry per row, pointing back at that row.
    /// O(n). For tests and verification; never on a hot path.
    package func validate() throws {
        try byCollection.validate()
        try byRowid.validate()
        var total = 0
        try byCollection.forEach { collection, rows in
            try rows.validate()
            try require(!rows.isEmpty, "Keydir: collection \"\(collection)\" is empty but still listed")
            total += rows.count
            try rows.forEach { key, entry in
                let back = byRowid[entry.rowid]
                try require(back == CollectionKeyPair(collection: collection, key: key),
                             "Keydir: rowid \(entry.rowid) of \(collection)/\(key) maps back to \(String(describing: back))")
                return true
            }
            return true
        }
        try require(total == rowCount, "Keydir: count \(rowCount) but the collections hold \(total) rows")
        try require(byRowid.count == rowCount,
                     "Keydir: \(byRowid.count) rowid entries for \(rowCount) rows")
    }
}
