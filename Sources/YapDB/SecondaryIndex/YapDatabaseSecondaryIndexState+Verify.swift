import YapDBIndex

/// `YapDatabase.verify()`'s checks of a secondary index: the engine checks its trees' pages
/// (`validatePages`), the extension that they hold exactly what a rebuild from the handler holds.
extension SecondaryIndexState {
    /// Every page of every tree, and one entry per indexed row in each column tree.
    func validatePages() throws(PageError) {
        for tree in trees { try tree.validate() }
        for tree in columns where tree.count != rowCount {
            throw .corrupt(page: .none, reason: .subtreeCountMismatch(expected: rowCount, found: tree.count))
        }
    }

    /// The most differences reported for one index (the count of the rest is added).
    static let reportedDifferences = 20

    /// The ways this index differs from `expected` (a rebuild), one line each; empty when equal.
    /// (Tree shapes are `validatePages`'s.)
    /// - Throws: `PageError` when a page of either cannot be read.
    func differences(from expected: SecondaryIndexState) throws(PageError) -> [String] {
        var problems: [String] = []
        let stored = try rowBytes(), rebuilt = try expected.rowBytes()
        for (rowid, bytes) in rebuilt.sorted(by: { $0.key < $1.key }) where stored[rowid] != bytes {
            problems.append(stored[rowid] == nil ? "row \(rowid) is missing" : "row \(rowid) holds other values")
        }
        for rowid in stored.keys.sorted() where rebuilt[rowid] == nil {
            problems.append("row \(rowid) is indexed but should not be")
        }
        for i in columns.indices where i < expected.columns.count {
            if try !Self.sameEntries(columns[i], expected.columns[i]) {
                problems.append("column \(i) entries differ from a rebuild (\(columns[i].count), expected \(expected.columns[i].count))")
            }
        }
        guard problems.count > Self.reportedDifferences else { return problems }
        return Array(problems.prefix(Self.reportedDifferences)) + ["… and \(problems.count - Self.reportedDifferences) more"]
    }

    /// Every indexed row's encoded values, by row id.
    func rowBytes() throws(PageError) -> [UInt64: [UInt8]] {
        var result: [UInt64: [UInt8]] = [:]
        try rows.forEach { key, value in
            let rowid = OrderedKeyEncoding.rowid(ofKey: UnsafeRawBufferPointer(rebasing: key[..<OrderedKeyEncoding.rowidSize]))
            result[rowid, default: []].append(contentsOf: value)
            return true
        }
        return result
    }

    /// Whether two trees hold the same entries (keys, and the row keys they carry).
    static func sameEntries(_ a: PagedBTree, _ b: PagedBTree) throws(PageError) -> Bool {
        guard a.count == b.count else { return false }
        var entries: [(key: [UInt8], value: [UInt8])] = []
        entries.reserveCapacity(a.count)
        try a.forEach { key, value in entries.append((Array(key), Array(value))); return true }
        var i = 0, same = true
        try b.forEach { key, value in
            same = entries[i].key.elementsEqual(key) && entries[i].value.elementsEqual(value)
            i += 1
            return same
        }
        return same
    }
}
