// The key directory's self-check: `verify()`'s walk of both trees, and the tests' trap.

extension Keydir {
    /// Checks both trees page by page (checksums, order, counts, depth), that they hold the
    /// same number of rows, and that every row's row id maps back to it and every row key
    /// decodes. O(n log n). `verify()`'s walk of the directory.
    /// - Throws: `PageError` naming the first problem.
    package func validate() throws(PageError) {
        try rows.validate()
        try rowids.validate()
        guard rows.count == rowids.count else {
            throw .corrupt(page: .none, reason: .subtreeCountMismatch(expected: rows.count, found: rowids.count))
        }
        var failure: PageError?
        try rows.forEach { keyBytes, valueBytes in
            guard RowKey.decode(keyBytes) != nil, let entry = KeydirEntry(pageEncoded: valueBytes) else {
                failure = .corrupt(page: .none, reason: .badEntry)
                return false
            }
            do throws(PageError) {
                var matches = false
                let found = try rowids.withValue(forKey: RowKey.rowid(entry.rowid)) { back in
                    matches = back.elementsEqual(keyBytes)
                }
                guard found, matches else {
                    failure = .corrupt(page: .none, reason: .badEntry)
                    return false
                }
            } catch {
                failure = error
                return false
            }
            return true
        }
        if let failure { throw failure }
    }

    /// Traps with the violation if `validate()` fails (tests).
    package func checkInvariants() {
        do { try validate() } catch { preconditionFailure("Keydir: \(error)") }
    }
}
